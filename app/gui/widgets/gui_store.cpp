// The GUI's store, reached through the ImGui context it belongs to (gui_store.h).
#include "app/gui/widgets/gui_store.h"

#include <cstdio>
#include <cstdlib>

namespace tilescope::gui {

void attach_gui_store(GuiStore* store) {
  ImGui::GetIO().UserData = store;
}

GuiStore& gui_store() {
  auto* store = static_cast<GuiStore*>(ImGui::GetIO().UserData);
  if (!store) {
    std::fprintf(stderr, "tilescope: internal error: drawing with no GuiStore attached\n");
    std::abort();
  }
  return *store;
}

}  // namespace tilescope::gui

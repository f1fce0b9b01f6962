// The fixed-panel window wrapper every view draws into.
#include "app/gui/views/views.h"

#include <imgui.h>

namespace tilescope::gui {

bool begin_panel(const char* id, const Rect& rect, bool padded) {
  ImGui::SetNextWindowPos(ImVec2(rect.x, rect.y));
  ImGui::SetNextWindowSize(ImVec2(rect.w, rect.h));
  if (!padded) ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  const bool open = ImGui::Begin(id, nullptr, flags);
  if (!padded) ImGui::PopStyleVar();
  return open;
}

void end_panel() {
  ImGui::End();
}

}  // namespace tilescope::gui

// The fixed-panel window wrapper every view draws into.
#include "app/gui/views/views.h"

#include <imgui.h>

namespace tilescope::gui {

using namespace tilescope::core;

bool begin_panel(const char* id, const Rect& rect, bool padded) {
  ImGui::SetNextWindowPos(ImVec2(rect.x, rect.y));
  ImGui::SetNextWindowSize(ImVec2(rect.w, rect.h));
  if (!padded) ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(0, 0));
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 // The frame is cleared to the window colour already, and the
                                 // panels tile the window without overlap: a background quad per
                                 // panel would shade every pixel a second time (on llvmpipe that
                                 // was ~40% of a frame's fragment work).
                                 ImGuiWindowFlags_NoBackground;
  const bool open = ImGui::Begin(id, nullptr, flags);
  if (!padded) ImGui::PopStyleVar();
  return open;
}

void end_panel() {
  ImGui::End();
}

std::vector<WidgetRect>& widget_rects() {
  return gui_store().widget_rects;
}

void note_widget(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  const ImVec2 c((a.x + b.x) / 2, (a.y + b.y) / 2);
  const bool visible = ImGui::IsRectVisible(ImVec2(c.x - 1, c.y - 1), ImVec2(c.x + 1, c.y + 1));
  widget_rects().push_back({name, Rect{a.x, a.y, b.x - a.x, b.y - a.y}, visible});
}

void section_heading(const ViewContext& ctx, const char* text) {
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(text);
  ImGui::PopFont();
  ImGui::Separator();
}

}  // namespace tilescope::gui

// The centre's tab strip (keys 1-6 switch views) and small helpers the workbench views share.
#include "app/gui/views/views.h"

#include <imgui.h>

#include <string>

namespace tilescope::gui {

Command command_from(const std::string& line) {
  return parse_command(line);
}

void job_progress_line(ViewContext& ctx, const char* what, double fraction,
                       const std::string& phase) {
  ImGui::TextUnformatted(what);
  const float em = ImGui::GetFontSize();
  ImGui::ProgressBar(static_cast<float>(fraction), ImVec2(em * 12, 0),
                     phase.empty() ? nullptr : phase.c_str());
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ctx.push(command_from("cancel"));
}

void draw_tabs_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.bench;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(ImGui::GetFontSize() * 0.5f, (rect.h - ImGui::GetFrameHeight()) / 2));
  const bool open = begin_panel("Tabs", rect);
  ImGui::PopStyleVar();
  if (!open) {
    end_panel();
    return;
  }
  int number = 1;
  for (ViewTab t : kAllViewTabs) {
    const bool active = wb.tab == t;
    if (active) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    const std::string label = std::to_string(number) + "  " + view_tab_title(t);
    if (ImGui::Button(label.c_str())) ctx.push(command_from(std::string("view ") + view_tab_name(t)));
    if (active) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("key %d  ·  command: view %s", number, view_tab_name(t));
    ImGui::SameLine();
    ++number;
  }
  // What the schedule views act on, at the right end of the strip.
  if (const schedule::Kernel* k = wb.kernel()) {
    const std::string right = "kernel " + k->name + "  ·  step " +
                              std::to_string(wb.history->size()) + "/" +
                              std::to_string(wb.step_texts.size());
    const float w = ImGui::CalcTextSize(right.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), rect.w - w - ImGui::GetFontSize() * 0.6f));
    ImGui::AlignTextToFramePadding();
    ImGui::TextDisabled("%s", right.c_str());
  }
  // Keys 1-6 switch views, unless the user is typing in the editor.
  if (!ImGui::GetIO().WantTextInput) {
    for (int i = 0; i < 6; ++i) {
      if (ImGui::IsKeyPressed('1' + i, false)) {
        ctx.push(command_from(std::string("view ") + view_tab_name(kAllViewTabs[i])));
      }
    }
    const ImGuiIO& io = ImGui::GetIO();
    if (io.KeyCtrl && ImGui::IsKeyPressed('Z', false)) ctx.push(command_from("undo"));
    if (io.KeyCtrl && ImGui::IsKeyPressed('Y', false)) ctx.push(command_from("redo"));
  }
  end_panel();
}

}  // namespace tilescope::gui

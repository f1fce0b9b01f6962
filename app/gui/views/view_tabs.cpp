// The centre's tab strip (keys 1-6 switch views) and small helpers the workbench views share.
#include "app/gui/views/views.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <ctime>
#include <iterator>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

Command command_from(const std::string& line) {
  return parse_command(line);
}

void push_control(ViewContext& ctx, const char* name, const std::string& value) {
  Command c;
  c.kind = CommandKind::Control;
  c.text = std::string(name) + " " + value;
  ctx.push(std::move(c));
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

bool held_job_lines(ViewContext& ctx, const core::HeldJob& held, const char* anyway) {
  if (held.refused) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("Not started: %s", held.message.c_str());
    ImGui::PopStyleColor();
    return false;
  }
  text_wrapped("Not started yet: %s", held.message.c_str());
  const bool pressed = ImGui::Button(anyway);
  note_widget("job.anyway");
  return pressed;
}

void handle_global_keys(ViewContext& ctx) {
  // GLFW key codes (what the ImGui GLFW backend indexes KeysDown with); views include no GLFW.
  constexpr int kSpace = 32, kEscape = 256, kRight = 262, kLeft = 263, kF5 = 294, kF11 = 300,
                kF12 = 301;
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;  // typing in the editor: keys are text
  constexpr int kTabs = static_cast<int>(std::size(kAllViewTabs));
  for (int i = 0; i < kTabs; ++i) {
    if (ImGui::IsKeyPressed('1' + i, false))
      ctx.push(command_from(std::string("view ") + view_tab_name(kAllViewTabs[i])));
  }
  // The lesson's steps: Alt+arrows anywhere, N / P as one-handed keys (not while typing).
  const bool lesson = ctx.state.lessons.is_open();
  if (lesson && io.KeyAlt && ImGui::IsKeyPressed(kRight, false))
    ctx.push(command_from("lesson next"));
  if (lesson && io.KeyAlt && ImGui::IsKeyPressed(kLeft, false))
    ctx.push(command_from("lesson prev"));
  if (lesson && !io.KeyCtrl && !io.KeyAlt && ImGui::IsKeyPressed('N', false))
    ctx.push(command_from("lesson next"));
  if (lesson && !io.KeyCtrl && !io.KeyAlt && ImGui::IsKeyPressed('P', false))
    ctx.push(command_from("lesson prev"));
  if (io.KeyCtrl && ImGui::IsKeyPressed('Z', false)) ctx.push(command_from("undo"));
  if (io.KeyCtrl && ImGui::IsKeyPressed('Y', false)) ctx.push(command_from("redo"));
  if (ImGui::IsKeyPressed(kF5, false)) ctx.push(command_from("present"));
  // Esc leaves presentation mode (the hint on screen says so); it has no other global meaning.
  if (ctx.state.presentation && ImGui::IsKeyPressed(kEscape, false))
    ctx.push(command_from("present off"));
  if (ImGui::IsKeyPressed(kF11, false)) ctx.push(command_from("fullscreen"));
  if (ImGui::IsKeyPressed(kF12, false)) {
    char name[64];
    const std::time_t t = std::time(nullptr);
    std::strftime(name, sizeof name, "tilescope-%Y%m%d-%H%M%S.png", std::localtime(&t));
    ctx.push(command_from(std::string("screenshot ") + name));
  }
  if (ctx.state.presentation && lesson) {
    // Presenting a lesson: the arrows walk its steps, R reveals the step's prediction to the
    // class (teacher mode keeps answers off the projector until then).
    if (!io.KeyAlt && ImGui::IsKeyPressed(kLeft, false)) ctx.push(command_from("lesson prev"));
    if (!io.KeyAlt && ImGui::IsKeyPressed(kRight, false)) ctx.push(command_from("lesson next"));
    if (ImGui::IsKeyPressed('R', false)) ctx.push(command_from("lesson reveal"));
  } else if (ctx.state.presentation) {
    // One step per press, no auto-repeat: on slow frames (software OpenGL) a short press lasts
    // past ImGui's repeat delay and skipped steps in front of the class.
    if (ImGui::IsKeyPressed(kLeft, false)) ctx.push(command_from("undo"));
    if (ImGui::IsKeyPressed(kRight, false)) ctx.push(command_from("redo"));
    if (ImGui::IsKeyPressed(kSpace, false))
      ctx.push(command_from(ctx.state.workbench.tiles_playing ? "tiles pause" : "tiles play"));
  }
}

void draw_tabs_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(ImGui::GetFontSize() * 0.5f, (rect.h - ImGui::GetFrameHeight()) / 2));
  const bool open = begin_panel("Tabs", rect);
  ImGui::PopStyleVar();
  if (!open) {
    end_panel();
    return;
  }
  // "1  Graph" … "7  Lessons"; where the strip is too narrow for all (a lesson's text beside a
  // 1280-pixel window) the key numbers go, then (UI scale 200 %, the projector theme) the titles
  // too — the key numbers alone always fit, and the tooltips still name every view.
  const auto strip_width = [&](int form) {
    float w = -ImGui::GetStyle().ItemSpacing.x;  // none after the last
    for (ViewTab t : kAllViewTabs) {
      const std::string label = form == 0   ? std::string("7  ") + view_tab_title(t)
                                : form == 1 ? std::string(view_tab_title(t))
                                            : std::string("7");
      w += ImGui::CalcTextSize(label.c_str()).x + ImGui::GetStyle().FramePadding.x * 2 +
           ImGui::GetStyle().ItemSpacing.x;
    }
    return w;
  };
  const float avail = ImGui::GetContentRegionAvail().x;
  const int form = strip_width(0) <= avail ? 0 : strip_width(1) <= avail ? 1 : 2;
  int number = 1;
  for (ViewTab t : kAllViewTabs) {
    const bool active = wb.tab == t;
    if (active)
      ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    const std::string label = form == 0   ? std::to_string(number) + "  " + view_tab_title(t)
                              : form == 1 ? std::string(view_tab_title(t))
                                          : std::to_string(number) + "##" + view_tab_name(t);
    if (ImGui::Button(label.c_str()))
      ctx.push(command_from(std::string("view ") + view_tab_name(t)));
    if (active) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s  ·  key %d  ·  command: view %s", view_tab_title(t), number,
                        view_tab_name(t));
    if (number < static_cast<int>(std::size(kAllViewTabs))) ImGui::SameLine();
    note_widget(std::string("tab.") + view_tab_name(t));
    ++number;
  }
  const float buttons_end = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x;
  // What the schedule views act on, at the right end of the strip.
  if (const schedule::Kernel* k = wb.kernel()) {
    const std::string right = "kernel " + k->name + "  ·  step " +
                              std::to_string(wb.history->size()) + "/" +
                              std::to_string(wb.step_texts.size());
    const float w = ImGui::CalcTextSize(right.c_str()).x;
    if (buttons_end + w + ImGui::GetFontSize() * 1.2f <= rect.w) {
      ImGui::SameLine(rect.w - w - ImGui::GetFontSize() * 0.6f);
      ImGui::AlignTextToFramePadding();
      ImGui::TextDisabled("%s", right.c_str());
    }
  }
  end_panel();
}

}  // namespace tilescope::gui

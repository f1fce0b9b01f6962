// The model text panel: the editable model source, its parse status, and the error's line marked.
#include "app/gui/views/views.h"
#include "app/gui/widgets/text_mask.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

constexpr const char* kEditorLabel = "##model_text";

// InputTextMultiline draws into a child window; find it to mark the error line on top of the
// text at the child's current scroll. ImGui 1.86 names the child "<parent>/<label>_<id>".
ImGuiWindow* editor_child_window() {
  ImGuiWindow* parent = ImGui::GetCurrentWindow();
  const ImGuiID id = parent->GetID(kEditorLabel);
  char name[256];
  std::snprintf(name, sizeof name, "%s/%s_%08X", parent->Name, kEditorLabel, id);
  return ImGui::FindWindowByName(name);
}

// The width of the parser's caret mark ("^~~~" on the last line of the full message), in bytes;
// 0 when the message has none. It is the exact span the parser blames.
size_t caret_width(const std::string& full) {
  const size_t nl = full.rfind('\n');
  if (nl == std::string::npos) return 0;
  const std::string_view last = std::string_view(full).substr(nl + 1);
  const size_t caret = last.find('^');
  if (caret == std::string_view::npos) return 0;
  size_t end = caret;
  while (end < last.size() && (last[end] == '^' || last[end] == '~')) ++end;
  return end - caret;
}

void mark_error_line(const ViewContext& ctx, const ModelError& err, const std::string& text) {
  ImGuiWindow* child = editor_child_window();
  if (!child || err.line < 1) return;
  const ImGuiStyle& style = ImGui::GetStyle();
  ImFont* font = ctx.fonts.mono;
  const float lh = font->FontSize;
  const float y = child->Pos.y + style.FramePadding.y - child->Scroll.y + (err.line - 1) * lh;
  const float x0 = child->Pos.x;
  const float x1 = child->Pos.x + child->Size.x;
  ImDrawList* dl = child->DrawList;
  dl->PushClipRect(child->Pos, ImVec2(x1, child->Pos.y + child->Size.y), true);
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + lh), ctx.palette.error_bg);
  dl->AddRectFilled(ImVec2(x0, y), ImVec2(x0 + 3, y + lh), ctx.palette.error);
  // A squiggle under the offending token, from the error column to the next space.
  const std::string_view line = line_of(text, err.line);
  if (err.col >= 1 && static_cast<size_t>(err.col - 1) <= line.size()) {
    const size_t start = static_cast<size_t>(err.col - 1);
    // The parser's own span when it marked one, else up to the next separator.
    size_t end = line.find_first_of(" \t,)]", start + 1);
    if (const size_t w = caret_width(err.full); w > 0) end = start + w;
    if (end == std::string_view::npos || end > line.size()) end = line.size();
    const float tx = child->Pos.x + style.FramePadding.x - child->Scroll.x;
    const float sx = tx + font->CalcTextSizeA(lh, FLT_MAX, 0, line.data(), line.data() + start).x;
    float ex = tx + font->CalcTextSizeA(lh, FLT_MAX, 0, line.data(), line.data() + end).x;
    if (ex - sx < lh * 0.5f) ex = sx + lh * 0.6f;
    const float uy = y + lh - 1.5f;
    // A wave: alternate down and up strokes, so it reads as "wrong here" like a spell checker's.
    for (float x = sx; x < ex; x += 4.0f) {
      dl->AddLine(ImVec2(x, uy), ImVec2(std::min(x + 2.0f, ex), uy - 2.0f), ctx.palette.error,
                  1.5f);
      if (x + 2.0f < ex)
        dl->AddLine(ImVec2(x + 2.0f, uy - 2.0f), ImVec2(std::min(x + 4.0f, ex), uy),
                    ctx.palette.error, 1.5f);
    }
    // The message itself at the end of the line, where the eye already is (the full text with
    // its location stays under the editor).
    const float lx = tx +
                     font->CalcTextSizeA(lh, FLT_MAX, 0, line.data(), line.data() + line.size()).x +
                     lh * 1.5f;
    if (lx < x1 - lh * 4) {
      ImFont* ui = ctx.fonts.ui;
      dl->AddText(ui, ui->FontSize * 0.9f, ImVec2(lx, y + (lh - ui->FontSize * 0.9f) / 2),
                  ctx.palette.error, err.message.c_str(), nullptr);
    }
  }
  dl->PopClipRect();
}

}  // namespace

void draw_model_text_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  const ModelDoc& doc = state.model;
  if (!begin_panel("Model text", rect)) {
    end_panel();
    return;
  }
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Model");
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s", doc.path.empty() ? "built-in example" : doc.path.c_str());
  if (state.lessons.is_open()) {
    // The lesson is open but its text was put aside for the model: the way back.
    ImGui::SameLine();
    if (ImGui::SmallButton("Back to the lesson")) ctx.push(command_from("lesson panel text"));
    note_widget("lesson.panel.text");
  }

  // Status block under the editor: its height is known up front so the editor fills the rest.
  const float line_h = ImGui::GetTextLineHeightWithSpacing();
  const float wrap_w = ImGui::GetContentRegionAvail().x;
  std::string status_text;
  if (doc.error) {
    const ModelError& err = *doc.error;
    status_text = err.line > 0 ? "line " + std::to_string(err.line) + ", col " +
                                     std::to_string(err.col) + ": " + err.message
                               : err.message;
  }
  const float status_h =
      doc.error ? ImGui::CalcTextSize(status_text.c_str(), nullptr, false, wrap_w).y + line_h * 2.4f
                : line_h * 2.2f;
  const float editor_h = std::max(line_h * 4, ImGui::GetContentRegionAvail().y - status_h);

  // The editor edits a copy; the change travels as a command like any other action.
  std::string buffer = doc.text;
  ImGui::PushFont(ctx.fonts.mono);
  const TextMaskPause typed;  // the model text is the learner's: shapes are never masked
  // ImGui's text field reverts every edit since it was clicked when Esc leaves it. Here Esc
  // only leaves: the edits already travelled as commands, so the revert is not passed on (issue
  // #26). Ctrl+Z inside the field undoes one edit at a time.
  const bool escaping = ImGui::GetActiveID() == ImGui::GetID(kEditorLabel) &&
                        ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false);
  const bool changed = ImGui::InputTextMultiline(kEditorLabel, &buffer, ImVec2(-FLT_MIN, editor_h),
                                                 ImGuiInputTextFlags_AllowTabInput) &&
                       !escaping;
  note_widget("model.editor");
  if (doc.error) mark_error_line(ctx, *doc.error, doc.text);
  ImGui::PopFont();
  if (changed) {
    Command c;
    c.kind = CommandKind::EditModelText;
    c.text = std::move(buffer);
    ctx.push(std::move(c));
  }

  if (doc.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    ImGui::PushFont(ctx.fonts.ui_bold);
    ImGui::TextUnformatted("Parse error");
    ImGui::PopFont();
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextUnformatted(status_text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", doc.error->full.c_str());
    if (doc.graph) disabled_wrapped("The graph shows the last version that parsed.");
  } else if (const graph::Graph* g = state.graph()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.ok));
    ImGui::Text("Parsed: %zu ops, %zu tensors", g->ops().size(), g->tensors().size());
    ImGui::PopStyleColor();
    ImGui::TextDisabled(doc.reparse_pending ? "Editing..." : "Edits re-parse after a short pause.");
  } else {
    disabled_wrapped("Type a model above; it is parsed as you type.");
  }
  end_panel();
}

}  // namespace tilescope::gui

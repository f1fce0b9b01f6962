// The status bar: which model is open, whether it parses, the last command's message, the theme.
#include "app/gui/views/views.h"

#include <imgui.h>

#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

void draw_status_bar_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(ImGui::GetFontSize() * 0.6f, (rect.h - ImGui::GetFontSize()) / 2));
  const bool open = begin_panel("Status bar", rect);
  ImGui::PopStyleVar();
  if (!open) {
    end_panel();
    return;
  }
  const ModelDoc& doc = state.model;
  ImGui::TextUnformatted(doc.path.empty() ? "built-in example" : doc.path.c_str());
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  if (doc.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    if (doc.error->line > 0) {
      ImGui::Text("parse error at line %d, col %d", doc.error->line, doc.error->col);
    } else {
      ImGui::TextUnformatted("parse error");
    }
    ImGui::PopStyleColor();
  } else if (const graph::Graph* g = state.graph()) {
    ImGui::Text("%zu ops, %zu tensors", g->ops().size(), g->tensors().size());
  } else {
    ImGui::TextDisabled("no model");
  }
  if (!state.status_message.empty()) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    if (state.status_is_error) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    }
    ImGui::TextUnformatted(state.status_message.c_str());
    if (state.status_is_error) ImGui::PopStyleColor();
  }
  const std::string right = std::string("theme: ") + theme_name(state.theme);
  const float w = ImGui::CalcTextSize(right.c_str()).x;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), rect.w - w - ImGui::GetFontSize() * 0.6f));
  ImGui::TextDisabled("%s", right.c_str());
  end_panel();
}

}  // namespace tilescope::gui

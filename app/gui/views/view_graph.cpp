// The graph canvas panel: the layered DAG with zoom (wheel), pan (drag), fit (F) and selection.
#include "app/gui/views/views.h"

#include "app/gui/format.h"
#include "app/gui/widgets/graph_canvas.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace tilescope::gui {
namespace {

void centred_text(const Rect& rect, const char* line1, const char* line2, ImU32 col, ImU32 col2) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 s1 = ImGui::CalcTextSize(line1);
  const ImVec2 s2 = ImGui::CalcTextSize(line2);
  const float cy = rect.y + rect.h / 2;
  dl->AddText(ImVec2(rect.x + (rect.w - s1.x) / 2, cy - s1.y - 2), col, line1);
  dl->AddText(ImVec2(rect.x + (rect.w - s2.x) / 2, cy + 4), col2, line2);
}

void draw_grid(ImDrawList* dl, const Rect& rect, const CanvasView& view, const Palette& p) {
  float step = 32.0f * view.zoom;
  while (step < 12.0f) step *= 2;  // keep the dots apart when zoomed out
  const float ox = std::fmod(view.pan_x, step), oy = std::fmod(view.pan_y, step);
  for (float y = rect.y + oy; y < rect.y + rect.h; y += step)
    for (float x = rect.x + ox; x < rect.x + rect.w; x += step)
      dl->AddRectFilled(ImVec2(x, y), ImVec2(x + 1.5f, y + 1.5f), p.grid);
}

// A colour key for the categories on screen, along the bottom edge (wrapping upwards when the
// canvas is narrow). Returns the top of the legend and the x where its top row ends.
ImVec2 draw_legend(ImDrawList* dl, const Rect& rect, const GraphScene& scene, const Palette& p) {
  std::set<int> present;
  for (const SceneNode& n : scene.nodes) present.insert(static_cast<int>(n.category));
  const float lh = ImGui::GetTextLineHeight();
  const float left = rect.x + lh * 0.8f, right = rect.x + rect.w - lh * 0.8f;
  // Lay the entries out in rows first, then draw the rows bottom-up.
  std::vector<std::vector<int>> rows(1);
  float x = left;
  for (int c : present) {
    const float w = lh * 0.85f + ImGui::CalcTextSize(category_name(NodeCategory(c))).x + lh * 0.9f;
    if (x + w > right && !rows.back().empty()) {
      rows.emplace_back();
      x = left;
    }
    rows.back().push_back(c);
    x += w;
  }
  float y = rect.y + rect.h - lh * 1.6f - (rows.size() - 1) * lh * 1.3f;
  const float top = y;
  float top_row_end = left;
  for (size_t r = 0; r < rows.size(); ++r, y += lh * 1.3f) {
    x = left;
    for (int c : rows[r]) {
      const char* name = category_name(static_cast<NodeCategory>(c));
      const ImU32 col = category_colour(p, static_cast<NodeCategory>(c));
      dl->AddRectFilled(ImVec2(x, y + lh * 0.2f), ImVec2(x + lh * 0.6f, y + lh * 0.8f), col, 2.0f);
      x += lh * 0.85f;
      dl->AddText(ImVec2(x, y), p.subtext, name);
      x += ImGui::CalcTextSize(name).x + lh * 0.9f;
    }
    if (r == 0) top_row_end = x;
  }
  return ImVec2(top_row_end, top);
}

}  // namespace

void draw_graph_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  if (!begin_panel("Graph", rect, false)) {
    end_panel();
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + rect.h), p.canvas_bg);
  const float lh = ImGui::GetTextLineHeight();
  const float pad = lh * 0.8f;

  if (!state.scene) {
    // Empty state first: nothing parsed yet, or the first parse failed.
    if (state.model.error) {
      centred_text(rect, "No graph: the model has an error.", "See the message under the editor.",
                   p.error, p.subtext);
    } else {
      centred_text(rect, "No graph yet.", "Type a model in the left panel.", p.text, p.subtext);
    }
    end_panel();
    return;
  }
  const GraphScene& scene = *state.scene;
  draw_grid(dl, rect, state.view, p);

  // Input: one invisible button over the whole canvas takes clicks, drags and the wheel.
  ImGui::SetCursorScreenPos(ImVec2(rect.x, rect.y));
  ImGui::InvisibleButton("##canvas", ImVec2(std::max(rect.w, 1.0f), std::max(rect.h, 1.0f)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  CanvasTransform xf;
  xf.origin = ImVec2(rect.x + state.view.pan_x, rect.y + state.view.pan_y);
  xf.zoom = state.view.zoom;
  const ImVec2 world = xf.to_world(io.MousePos);
  const int under_mouse = hovered ? hit_test(scene, world.x, world.y) : -1;

  if (ImGui::IsItemActive()) {
    for (int button = 0; button < 3; ++button) {
      if (ImGui::IsMouseDragging(button, 2.0f) && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
        Command c;
        c.kind = CommandKind::Pan;
        c.a = io.MouseDelta.x;
        c.b = io.MouseDelta.y;
        ctx.push(c);
        break;
      }
    }
  }
  // A click is a press and release without a drag.
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f).x == 0.0f &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f).y == 0.0f) {
    Command c;
    if (under_mouse < 0) {
      c.kind = CommandKind::ClearSelection;
    } else {
      const SceneNode& n = scene.nodes[size_t(under_mouse)];
      c.kind = n.kind == SceneNode::Kind::Op ? CommandKind::SelectOp : CommandKind::SelectTensor;
      c.text = n.name;
    }
    ctx.push(c);
  }
  if (hovered && io.MouseWheel != 0.0f) {
    Command c;
    c.kind = CommandKind::Zoom;
    c.a = std::pow(1.15, io.MouseWheel);
    c.c = io.MousePos.x - rect.x;
    c.d = io.MousePos.y - rect.y;
    c.anchored = true;
    ctx.push(c);
  }
  // ImGui 1.86 indexes keys by the backend's codes; GLFW's letter keys are their ASCII capitals.
  if (!io.WantTextInput && ImGui::IsKeyPressed('F', false)) {
    Command c;
    c.kind = CommandKind::Fit;
    ctx.push(c);
  }

  CanvasStyle style;
  style.palette = &p;
  style.fonts = &ctx.fonts;
  style.hovered = under_mouse;
  if (state.selection.kind == Selection::Kind::Op) {
    style.selected = scene.find(state.selection.name, SceneNode::Kind::Op);
  } else if (state.selection.kind == Selection::Kind::Tensor) {
    style.selected = scene.find(state.selection.name, SceneNode::Kind::Source);
    if (style.selected < 0)
      style.selected = scene.find(state.selection.name, SceneNode::Kind::Output);
  }
  dl->PushClipRect(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + rect.h), true);
  draw_graph_scene(dl, scene, xf, style);

  // Overlays: title and totals (top), stale-graph banner, legend and hints (bottom).
  const graph::Graph* g = state.graph();
  const graph::OpCost total = g->total_cost();
  // Translucent bands behind the overlays keep them readable when the graph is panned under them.
  const ImU32 band = (p.canvas_bg & ~IM_COL32_A_MASK) | (215u << IM_COL32_A_SHIFT);
  dl->AddRectFilled(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + pad * 1.2f + lh),
                    band);
  ImGui::PushFont(ctx.fonts.ui_bold);
  dl->AddText(ImVec2(rect.x + pad, rect.y + pad * 0.6f), p.text, "Graph");
  const float title_w = ImGui::CalcTextSize("Graph").x;
  ImGui::PopFont();
  const std::string summary = std::to_string(g->ops().size()) + " ops \xC2\xB7 " +
                              format_flops(total.flops) + " \xC2\xB7 " +
                              format_bytes(total.bytes()) + " moved at minimum";
  dl->AddText(ImVec2(rect.x + pad + title_w + lh * 0.6f, rect.y + pad * 0.6f), p.subtext,
              summary.c_str());
  if (state.model.error) {
    const char* msg = "Showing the last graph that parsed: the text has an error.";
    const ImVec2 s = ImGui::CalcTextSize(msg);
    const ImVec2 a(rect.x + (rect.w - s.x) / 2 - lh * 0.6f, rect.y + pad * 0.6f + lh * 1.5f);
    dl->AddRectFilled(a, ImVec2(a.x + s.x + lh * 1.2f, a.y + s.y + lh * 0.6f), p.stale_bg, 4.0f);
    dl->AddRect(a, ImVec2(a.x + s.x + lh * 1.2f, a.y + s.y + lh * 0.6f), p.error, 4.0f);
    dl->AddText(ImVec2(a.x + lh * 0.6f, a.y + lh * 0.3f), p.text, msg);
  }
  dl->ChannelsSplit(2);  // 1: legend and hint text; 0: their band, sized once they are placed
  dl->ChannelsSetCurrent(1);
  const ImVec2 legend = draw_legend(dl, rect, scene, p);
  char hint[96];
  std::snprintf(hint, sizeof hint, "wheel: zoom \xC2\xB7 drag: pan \xC2\xB7 F: fit \xC2\xB7 %.0f%%",
                state.view.zoom * 100.0f);
  const ImVec2 hs = ImGui::CalcTextSize(hint);
  const float hint_x = rect.x + rect.w - hs.x - pad;
  const bool single_row = legend.y >= rect.y + rect.h - lh * 1.7f;
  const float hint_y = single_row && hint_x >= legend.x ? legend.y : legend.y - lh * 1.3f;
  dl->AddText(ImVec2(hint_x, hint_y), p.subtext, hint);
  dl->ChannelsSetCurrent(0);
  dl->AddRectFilled(ImVec2(rect.x, std::min(hint_y, legend.y) - lh * 0.4f),
                    ImVec2(rect.x + rect.w, rect.y + rect.h), band);
  dl->ChannelsMerge();
  dl->PopClipRect();

  if (under_mouse >= 0) {
    const SceneNode& n = scene.nodes[size_t(under_mouse)];
    ImGui::SetTooltip("%s (%s)\nclick to inspect", n.title.c_str(), n.kind_label.c_str());
  }
  end_panel();
}

}  // namespace tilescope::gui

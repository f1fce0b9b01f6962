// Draws a GraphScene (layered DAG of ops and tensors) on an ImDrawList, and hit-tests it.
#include "app/gui/widgets/graph_canvas.h"

#include "app/core/format.h"
#include "app/gui/widgets/bars.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

ImU32 with_alpha(ImU32 c, unsigned alpha) {
  return (c & ~IM_COL32_A_MASK) | (static_cast<ImU32>(alpha) << IM_COL32_A_SHIFT);
}

float text_width(ImFont* font, float px, const std::string& s) {
  return font->CalcTextSizeA(px, FLT_MAX, 0.0f, s.c_str(), s.c_str() + s.size()).x;
}

void draw_edges(ImDrawList* dl, const GraphScene& scene, const CanvasTransform& xf,
                const CanvasStyle& style) {
  const Palette& p = *style.palette;
  const float z = xf.zoom;
  const float lw = std::max(1.0f, 1.4f * z * p.line_scale);
  const float arrow = std::max(4.0f, 7.0f * z * p.line_scale);
  for (const SceneEdge& e : scene.edges) {
    if (e.points.size() < 2) continue;
    const bool highlighted = e.from == style.selected || e.to == style.selected;
    const ImU32 col = highlighted ? p.selection : p.edge;
    const float w = highlighted ? lw * 1.6f : lw;
    for (size_t k = 0; k + 1 < e.points.size(); ++k) {
      ImVec2 a = xf.to_screen(e.points[k].x, e.points[k].y);
      ImVec2 b = xf.to_screen(e.points[k + 1].x, e.points[k + 1].y);
      const bool last = k + 2 == e.points.size();
      if (last) b.y -= arrow;  // the arrow head covers the rest
      const float dy = (b.y - a.y) * 0.5f;
      dl->AddBezierCubic(a, ImVec2(a.x, a.y + dy), ImVec2(b.x, b.y - dy), b, col, w);
      if (last) {
        const ImVec2 tip(b.x, b.y + arrow);
        dl->AddTriangleFilled(ImVec2(b.x - arrow * 0.6f, b.y), ImVec2(b.x + arrow * 0.6f, b.y), tip,
                              col);
      }
    }
  }
}

void draw_edge_labels(ImDrawList* dl, const GraphScene& scene, const CanvasTransform& xf,
                      const CanvasStyle& style) {
  const Palette& p = *style.palette;
  const float px = scene.font_px * xf.zoom * 0.9f;
  if (px < 6.0f) return;  // unreadable; the inspector has the shapes
  ImFont* font = style.fonts->mono;
  for (const SceneEdge& e : scene.edges) {
    if (e.label.empty() || e.points.size() < 2) continue;
    // Label the first segment, beside its midpoint, so it reads as "what flows out of this op".
    const ImVec2 a = xf.to_screen(e.points[0].x, e.points[0].y);
    const ImVec2 b = xf.to_screen(e.points[1].x, e.points[1].y);
    const ImVec2 mid((a.x + b.x) / 2, (a.y + b.y) / 2);
    const float tw = text_width(font, px, e.label);
    const ImVec2 pos(mid.x + 6.0f * xf.zoom, mid.y - px / 2);
    dl->AddRectFilled(ImVec2(pos.x - 2, pos.y - 1), ImVec2(pos.x + tw + 2, pos.y + px + 1),
                      p.label_bg, 2.0f);
    dl->AddText(font, px, pos, p.edge_label, e.label.c_str());
  }
}

void draw_node(ImDrawList* dl, const SceneNode& n, const GraphScene& scene,
               const CanvasTransform& xf, const CanvasStyle& style, int index) {
  const Palette& p = *style.palette;
  const FontSet& fonts = *style.fonts;
  const float z = xf.zoom;
  const NodeMetrics m(scene.font_px);
  const ImVec2 a = xf.to_screen(n.x, n.y);
  const ImVec2 b = xf.to_screen(n.x + n.w, n.y + n.h);
  const ImU32 cat = category_colour(p, n.category);
  const float px = scene.font_px * z;
  const bool show_text = px >= 5.0f;
  const float border = std::max(1.0f, 1.3f * z * p.line_scale);

  if (index == style.selected || index == style.hovered) {
    const float grow = 3.5f * z * p.line_scale;
    const ImU32 ring = index == style.selected ? p.selection : with_alpha(p.hover, 170);
    dl->AddRect(ImVec2(a.x - grow, a.y - grow), ImVec2(b.x + grow, b.y + grow), ring, 8.0f * z, 0,
                std::max(2.0f, 2.5f * z * p.line_scale));
  }

  if (n.kind == SceneNode::Kind::Op) {
    const float rounding = 5.0f * z;
    const float strip = std::max(3.0f, 5.0f * z);
    dl->AddRectFilled(a, b, p.node_bg, rounding);
    dl->AddRectFilled(a, ImVec2(a.x + strip, b.y), cat, rounding, ImDrawFlags_RoundCornersLeft);
    dl->AddRect(a, b, with_alpha(cat, 220), rounding, 0, border);
    const float x0 = a.x + m.pad * z;
    const float x1 = b.x - m.pad * z;
    const float y0 = a.y + m.pad * z;
    if (show_text) {
      dl->AddText(fonts.ui_bold, px, ImVec2(x0, y0), p.text, n.title.c_str());
      const float kw = text_width(fonts.ui, px, n.kind_label);
      dl->AddText(fonts.ui, px, ImVec2(x1 - kw, y0), p.subtext, n.kind_label.c_str());
      dl->AddText(fonts.ui, px, ImVec2(x0, y0 + m.line * z), p.subtext, n.detail.c_str());
      const std::string share = format_percent(n.flop_share);
      const float sw = text_width(fonts.ui, px, share);
      dl->AddText(fonts.ui_bold, px, ImVec2(x1 - sw, y0 + m.line * z), p.text, share.c_str());
    }
    const float by = y0 + 2 * m.line * z + m.pad * 0.15f * z;
    draw_share_bar(dl, ImVec2(x0, by), ImVec2(x1, by + m.bar * z), n.flop_share, p.bar_bg, cat,
                   2.0f * z);
  } else {
    // Tensors that enter or leave the graph: a pill tinted with their role's colour.
    const float rounding = std::min((b.y - a.y) / 2, 12.0f * z);
    dl->AddRectFilled(a, b, p.node_bg, rounding);
    dl->AddRectFilled(a, b, with_alpha(cat, 70), rounding);
    dl->AddRect(a, b, cat, rounding, 0, border);
    if (show_text) {
      const float x0 = a.x + m.pad * z;
      const float x1 = b.x - m.pad * z;
      const float y0 = a.y + m.pad * 0.75f * z;
      dl->AddText(fonts.ui_bold, px, ImVec2(x0, y0), p.text, n.title.c_str());
      const float kw = text_width(fonts.ui, px, n.kind_label);
      dl->AddText(fonts.ui, px, ImVec2(x1 - kw, y0), p.subtext, n.kind_label.c_str());
      dl->AddText(fonts.mono, px, ImVec2(x0, y0 + m.line * z), p.text, n.detail.c_str());
    }
  }
}

}  // namespace

void draw_graph_scene(ImDrawList* dl, const GraphScene& scene, const CanvasTransform& xf,
                      const CanvasStyle& style) {
  draw_edges(dl, scene, xf, style);
  draw_edge_labels(dl, scene, xf, style);
  for (size_t i = 0; i < scene.nodes.size(); ++i)
    draw_node(dl, scene.nodes[i], scene, xf, style, static_cast<int>(i));
}

int hit_test(const GraphScene& scene, float x, float y) {
  // Last drawn is on top, so search backwards.
  for (size_t i = scene.nodes.size(); i-- > 0;) {
    const SceneNode& n = scene.nodes[i];
    if (x >= n.x && x < n.x + n.w && y >= n.y && y < n.y + n.h) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace tilescope::gui

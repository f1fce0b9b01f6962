// Where the fixed panels go (model text, graph canvas, inspector, status bar), from the window
// size.
//
// ImGui 1.86 has no docking, so the layout is a pure function of the window size and the font
// size, recomputed every frame. Commands (fit-to-view, zoom about the centre) and the
// --layout-json writer use the same function, so tests know exactly where each panel is.
#pragma once

#include <string>
#include <vector>

namespace tilescope::core {

struct Rect {
  float x = 0.0f, y = 0.0f, w = 0.0f, h = 0.0f;
  bool contains(float px, float py) const { return px >= x && py >= y && px < x + w && py < y + h; }
};

struct PanelLayout {
  Rect model_text;
  Rect tabs;   // the centre view's tab strip (Graph, Schedule, Tiles, Memory, Roofline, Timings)
  Rect graph;  // the centre view under the tabs (the graph canvas, or the chosen view)
  Rect inspector;
  Rect status_bar;
  // (name, rect) pairs in a stable order: "model_text", "tabs", "graph", "inspector",
  // "status_bar".
  std::vector<std::pair<std::string, Rect>> named() const;
};

// `font_px` scales the side panels and the status bar so large type still fits its labels.
// `reading`: a lesson's text fills the left panel, which is then wider (about a third of the
// window) so a line holds ~55 characters at 1280 pixels and the centre keeps its numbers.
PanelLayout compute_panel_layout(float window_w, float window_h, float font_px,
                                 bool reading = false);

// Presentation mode (F5): the centre view takes the whole window above the status bar; the side
// panels and the tabs have zero width. While `reading` a lesson, its text keeps the left 40%.
PanelLayout compute_presentation_layout(float window_w, float window_h, float font_px,
                                        bool reading = false);

}  // namespace tilescope::core

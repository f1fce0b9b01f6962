// Where the fixed panels go (model text, graph canvas, inspector, status bar), from the window
// size.
#include "app/core/panel_layout.h"

#include <algorithm>
#include <cmath>

namespace tilescope::core {

std::vector<std::pair<std::string, Rect>> PanelLayout::named() const {
  return {{"model_text", model_text},
          {"tabs", tabs},
          {"graph", graph},
          {"inspector", inspector},
          {"status_bar", status_bar}};
}

PanelLayout compute_panel_layout(float window_w, float window_h, float font_px, bool reading) {
  const float w = std::max(window_w, 1.0f);
  const float h = std::max(window_h, 1.0f);
  const float em = std::max(font_px, 1.0f);
  PanelLayout layout;
  const float status_h = std::min(std::round(em * 1.9f), h * 0.2f);
  const float body_h = h - status_h;
  // Side panels want room for ~32 characters of model text and a two-column inspector table;
  // on a narrow window (or in large type: the projector theme at 200 %) every panel shrinks in
  // proportion so the centre keeps at least 40% — the view the class looks at, and the Lessons
  // list, whose titles wrapped one letter a line in 30%.
  float left = reading ? std::clamp(w * 0.33f, em * 24.0f, em * 40.0f)
                       : std::clamp(w * 0.27f, em * 22.0f, em * 34.0f);
  float right = std::clamp(w * 0.25f, em * 20.0f, em * 30.0f);
  const float max_sides = w * 0.6f;
  if (left + right > max_sides) {
    const float k = max_sides / (left + right);
    left *= k;
    right *= k;
  }
  left = std::round(left);
  right = std::round(right);
  layout.model_text = {0.0f, 0.0f, left, body_h};
  const float tabs_h = std::min(std::round(em * 2.2f), body_h * 0.2f);
  layout.tabs = {left, 0.0f, w - left - right, tabs_h};
  layout.graph = {left, tabs_h, w - left - right, body_h - tabs_h};
  layout.inspector = {w - right, 0.0f, right, body_h};
  layout.status_bar = {0.0f, body_h, w, status_h};
  return layout;
}

PanelLayout compute_presentation_layout(float window_w, float window_h, float font_px,
                                        bool reading) {
  PanelLayout layout = compute_panel_layout(window_w, window_h, font_px);
  const float w = std::max(window_w, 1.0f);
  const float body_h = layout.status_bar.y;
  const float text_w = reading ? std::round(w * 0.4f) : 0.0f;
  layout.model_text = {0.0f, 0.0f, text_w, body_h};
  layout.tabs = {text_w, 0.0f, w - text_w, 0.0f};
  layout.graph = {text_w, 0.0f, w - text_w, body_h};
  layout.inspector = {w, 0.0f, 0.0f, body_h};
  return layout;
}

}  // namespace tilescope::core

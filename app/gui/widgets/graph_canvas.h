// Draws a GraphScene (layered DAG of ops and tensors) on an ImDrawList, and hit-tests it.
#pragma once

#include "app/core/graph_scene.h"
#include "app/gui/theme.h"

#include <imgui.h>

namespace tilescope::gui {

struct CanvasTransform {
  ImVec2 origin;  // screen position of world (0, 0)
  float zoom = 1.0f;
  ImVec2 to_screen(float x, float y) const {
    return ImVec2(origin.x + x * zoom, origin.y + y * zoom);
  }
  ImVec2 to_world(ImVec2 s) const {
    return ImVec2((s.x - origin.x) / zoom, (s.y - origin.y) / zoom);
  }
};

struct CanvasStyle {
  const Palette* palette = nullptr;
  const FontSet* fonts = nullptr;
  int selected = -1;  // node index
  int hovered = -1;
};

void draw_graph_scene(ImDrawList* dl, const core::GraphScene& scene, const CanvasTransform& xf,
                      const CanvasStyle& style);

// Index of the node under world point (x, y), or -1.
int hit_test(const core::GraphScene& scene, float x, float y);

}  // namespace tilescope::gui

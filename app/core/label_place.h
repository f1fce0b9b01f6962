// Where to put the labels of points on a chart so that none covers another (the Roofline view's
// trail of steps: several steps at nearly the same intensity used to print on top of each other).
// Greedy, in the order given (put the most important label first): each label tries the four
// corners around its point, then the same a line further out, and takes the first spot inside the
// bounds that overlaps no label placed before it and no obstacle; a label with no free spot is
// left out (its point stays, and says itself on hover).
//
// Pure C++ (no ImGui): tests/gui checks it without a display.
#pragma once

#include "app/core/panel_layout.h"

#include <optional>
#include <vector>

namespace tilescope::core {

struct LabelWish {
  float x = 0.0f, y = 0.0f;  // the point it labels
  float w = 0.0f, h = 0.0f;  // the text's size
};

// One spot per wish (nullopt = left out). `gap` is the distance kept from the point.
std::vector<std::optional<Rect>> place_labels(const std::vector<LabelWish>& wishes,
                                              const std::vector<Rect>& obstacles,
                                              const Rect& bounds, float gap);

bool rects_overlap(const Rect& a, const Rect& b);

}  // namespace tilescope::core

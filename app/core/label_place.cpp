// Labels beside chart points without overlaps (label_place.h).
#include "app/core/label_place.h"

namespace tilescope::core {

bool rects_overlap(const Rect& a, const Rect& b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

std::vector<std::optional<Rect>> place_labels(const std::vector<LabelWish>& wishes,
                                              const std::vector<Rect>& obstacles,
                                              const Rect& bounds, float gap) {
  std::vector<std::optional<Rect>> out(wishes.size());
  std::vector<Rect> taken = obstacles;
  const auto inside = [&](const Rect& r) {
    return r.x >= bounds.x && r.y >= bounds.y && r.x + r.w <= bounds.x + bounds.w &&
           r.y + r.h <= bounds.y + bounds.h;
  };
  for (size_t i = 0; i < wishes.size(); ++i) {
    const LabelWish& l = wishes[i];
    const float right = l.x + gap, left = l.x - gap - l.w;
    const float below = l.y + gap * 0.6f, above = l.y - gap * 0.6f - l.h;
    for (int ring = 0; ring < 3 && !out[i]; ++ring) {
      const float out_y = ring * l.h;  // each ring a line further from the point
      const Rect spots[] = {{right, below + out_y, l.w, l.h},
                            {left, below + out_y, l.w, l.h},
                            {right, above - out_y, l.w, l.h},
                            {left, above - out_y, l.w, l.h}};
      for (const Rect& s : spots) {
        if (!inside(s)) continue;
        bool free = true;
        for (const Rect& t : taken) free = free && !rects_overlap(s, t);
        if (!free) continue;
        out[i] = s;
        taken.push_back(s);
        break;
      }
    }
  }
  return out;
}

}  // namespace tilescope::core

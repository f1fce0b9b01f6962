// What changed on screen between two frames (issue #16's partial redraw, partial_redraw.h): each
// ImGui draw list compared with the last frame's, the rectangles to redraw. Pure CPU over ImGui's
// draw data structures: tests build draw data by hand.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::gui {

// A rectangle of the framebuffer, in pixels, y down (ImGui's orientation); x1, y1 exclusive.
struct PixelRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool empty() const { return x1 <= x0 || y1 <= y0; }
  int64_t area() const { return empty() ? 0 : int64_t(x1 - x0) * int64_t(y1 - y0); }
};

// Marks a texture's pixels changed (RgbaTexture::upload calls it), so draw lists sampling it count
// as changed even when their vertices did not move.
void note_texture_changed(ImTextureID id);

// What changed between two frames' draw data. A draw list is known by its owner window's name
// (and its place among lists of that name); it changed when its vertices, indices, commands,
// clip rectangles or sampled textures' contents differ. Its rectangle is the union of its
// commands' clip rectangles. Pure CPU: tests drive it with hand-made draw data.
class FrameDamage {
 public:
  // The rectangles to redraw this frame: for each changed list its old and new rectangle,
  // overlapping ones merged, more than kMaxRects merged into their bounding box. The whole
  // framebuffer when `full` (first frame, fonts rebuilt, window exposed), when the size changed,
  // or when lists appeared, vanished or changed order (their overlaps may have changed). Empty:
  // nothing to draw.
  std::vector<PixelRect> update(const ImDrawData& dd, int fb_w, int fb_h, bool full);

  static constexpr size_t kMaxRects = 4;

 private:
  struct ListPrint {
    std::string key;
    uint64_t hash = 0;
    PixelRect rect;
  };
  std::vector<ListPrint> m_last;
  int m_w = 0, m_h = 0;
};

// Merges overlapping (or touching) rectangles until none overlap; more than `max_rects` left
// become their one bounding box.
std::vector<PixelRect> merge_rects(std::vector<PixelRect> rects, size_t max_rects);

}  // namespace tilescope::gui

// Partial redraw for software OpenGL (issue #16). While the Tiles view animates only its panel
// changes, yet a whole frame at 1440×900 costs llvmpipe ~8 ms — most of it the triangle setup and
// shading of text that did not change (the schedule panel alone: 5 800 vertices, ~2.5 ms). So the
// frame compares each ImGui draw list with the last frame's, redraws only the rectangles whose
// lists changed, and shows them with glXCopySubBufferMESA instead of a swap: the back buffer is
// never swapped, so it keeps the last frame's pixels everywhere else (GL leaves the back buffer
// defined until a swap). The result is the same image, pixel for pixel, as drawing it whole.
//
// Used only where it pays and is safe: a software rasteriser (llvmpipe, softpipe, swrast) with
// GLX_MESA_copy_sub_buffer. Elsewhere — a GPU, Wayland, TILESCOPE_FULL_REDRAW=1 — every frame is
// drawn whole and swapped as before.
#pragma once

#include "app/gui/widgets/frame_damage.h"

#include <imgui.h>

#include <string>
#include <vector>

namespace tilescope::gui {

// Draws the parts of `dd` inside `rects` through the ImGui OpenGL3 backend: each rectangle is
// cleared to `clear` and every command is drawn with its clip rectangle cut to it (commands
// outside are skipped, so their triangles cost nothing). `dd`'s clip rectangles are restored.
void render_rects(ImDrawData& dd, const std::vector<PixelRect>& rects, int fb_h, ImVec4 clear);

// Shows a frame on the window: the damaged rectangles with glXCopySubBufferMESA (partial mode) or
// the whole frame with a swap.
class FramePresenter {
 public:
  // Picks the mode for the current context; `why` says which and why (printed by --bench-frames).
  void init(void* glfw_window);
  bool partial() const { return m_copy_sub_buffer != nullptr; }
  const std::string& why() const { return m_why; }
  // Partial mode: copies `rects` to the window; otherwise swaps.
  void present(const std::vector<PixelRect>& rects, int fb_h);

 private:
  void* m_window = nullptr;
  void* m_display = nullptr;
  unsigned long m_drawable = 0;
  void* m_copy_sub_buffer = nullptr;  // glXCopySubBufferMESA, nullptr: swap whole frames
  std::string m_why;
};

}  // namespace tilescope::gui

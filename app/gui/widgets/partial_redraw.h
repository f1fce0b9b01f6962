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
//
// A size change is the one thing a copy cannot follow (issue #25: growing the window ended the
// app in X_ShmPutImage BadValue, shrinking left a shifted frame). Mesa learns the window's new
// size only when a swap invalidates its drawable, so until then its back buffer keeps the old
// size while the frame is laid out for the new one, and a copy reaches outside that buffer. So a
// frame whose size differs from the last swap's is drawn whole and swapped, and the frame after
// a swap is drawn whole again (the resized buffer holds nothing yet). An X error while
// presenting (a resize racing the copy) is caught, not fatal: the next frame swaps.
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
  // Partial mode: true when this frame must be drawn whole — its size differs from the last
  // swap's, the last frame was swapped, or presenting it raised an X error.
  bool must_draw_whole(int fb_w, int fb_h) const;
  // Partial mode: copies `rects` to the window, or swaps when must_draw_whole() said so (then
  // `rects` must cover the frame); otherwise swaps.
  void present(const std::vector<PixelRect>& rects, int fb_w, int fb_h);
  // Frames swapped in partial mode because of a size change or an X error (for tests).
  int resize_swaps() const { return m_resize_swaps; }

 private:
  void* m_window = nullptr;
  void* m_display = nullptr;
  unsigned long m_drawable = 0;
  void* m_copy_sub_buffer = nullptr;  // glXCopySubBufferMESA, nullptr: swap whole frames
  std::string m_why;
  int m_swapped_w = -1, m_swapped_h = -1;  // the framebuffer's size at the last swap
  bool m_last_swapped = true;              // the last frame was swapped (or none was shown)
  int m_x_errors_seen = 0;                 // x_error_count() when the last frame was presented
  int m_resize_swaps = 0;
};

// Reads what the display shows in the window (the X server's pixels, after the frame was
// presented) and writes it as a PNG: the check that partial redraw put the right pixels on
// screen, which a read of the back buffer cannot see (issue #25: a grown window showed a shifted
// frame). Returns "" or an error message.
std::string save_screen_shot(const std::string& path, void* glfw_window);

}  // namespace tilescope::gui

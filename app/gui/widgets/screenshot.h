// Screenshots: the back buffer just rendered, written as a PNG — the whole window (the
// `screenshot` command, --screenshot) or one rectangle of it (File > Export > this view).
#pragma once

#include <optional>
#include <string>

namespace tilescope::gui {

// A rectangle of the framebuffer, top-left origin, in pixels.
struct PixelBox {
  int x = 0, y = 0, w = 0, h = 0;
};

// Reads the width × height back buffer and writes `crop` of it (clamped to the buffer; the whole
// buffer without one) to `path`. Returns "" or why not.
std::string save_screenshot(const std::string& path, int width, int height,
                            std::optional<PixelBox> crop = std::nullopt);

}  // namespace tilescope::gui

// Screenshots of the back buffer as PNG (screenshot.h).
#include "app/gui/widgets/screenshot.h"

#include <GLFW/glfw3.h>
#include <stb_image_write.h>

#include <algorithm>
#include <vector>

namespace tilescope::gui {

std::string save_screenshot(const std::string& path, int width, int height,
                            std::optional<PixelBox> crop) {
  std::vector<unsigned char> pixels(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  PixelBox box = crop.value_or(PixelBox{0, 0, width, height});
  box.x = std::clamp(box.x, 0, std::max(width - 1, 0));
  box.y = std::clamp(box.y, 0, std::max(height - 1, 0));
  box.w = std::clamp(box.w, 1, width - box.x);
  box.h = std::clamp(box.h, 1, height - box.y);
  // Rows flipped (GL starts at the bottom) and cut to the box.
  const size_t stride = static_cast<size_t>(width) * 4, out_stride = static_cast<size_t>(box.w) * 4;
  std::vector<unsigned char> out(out_stride * static_cast<size_t>(box.h));
  for (int y = 0; y < box.h; ++y)
    std::copy_n(pixels.data() + static_cast<size_t>(height - 1 - (box.y + y)) * stride +
                    static_cast<size_t>(box.x) * 4,
                out_stride, out.data() + static_cast<size_t>(y) * out_stride);
  // Drop alpha: the window is opaque, and an RGB PNG looks the same in every viewer.
  for (size_t i = 3; i < out.size(); i += 4) out[i] = 255;
  if (!stbi_write_png(path.c_str(), box.w, box.h, 4, out.data(), static_cast<int>(out_stride)))
    return "cannot write screenshot '" + path + "'";
  return {};
}

}  // namespace tilescope::gui

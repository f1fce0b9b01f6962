// Small RGBA images drawn every frame (the Tiles view's heat grids): one textured quad instead of a
// rectangle per cell, drawn without blending — on a software rasteriser the per-triangle setup
// and the blend are most of a frame.
#pragma once

#include <imgui.h>

#include <cstdint>

namespace tilescope::gui {

// An OpenGL texture holding w×h pixels in ImGui's colour layout (IM_COL32), sampled nearest, so
// each pixel shows as one sharp block when stretched. Uses the GL context: create, upload and draw
// it while a frame is being built. The texture is never deleted (views live as long as the context
// and the app reuses each one).
class RgbaTexture {
 public:
  void upload(int width, int height, const uint32_t* pixels);
  ImTextureID id() const;
  bool empty() const { return m_name == 0; }

 private:
  unsigned int m_name = 0;
  int m_width = 0, m_height = 0;
};

// Draws `texture` stretched over [a, b], with blending off: for images whose every pixel is opaque.
void draw_opaque_image(ImDrawList* dl, const RgbaTexture& texture, ImVec2 a, ImVec2 b);

}  // namespace tilescope::gui

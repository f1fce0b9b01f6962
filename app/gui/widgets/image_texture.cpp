// RgbaTexture and draw_opaque_image (image_texture.h): OpenGL 1.1 texture calls and two draw-list
// callbacks around one textured quad.
#include "app/gui/widgets/image_texture.h"

#include "app/gui/widgets/frame_damage.h"

#include <GLFW/glfw3.h>

#include <cstdint>

namespace tilescope::gui {

void RgbaTexture::upload(int width, int height, const uint32_t* pixels) {
  if (m_name == 0) {
    GLuint name = 0;
    glGenTextures(1, &name);
    m_name = name;
    glBindTexture(GL_TEXTURE_2D, m_name);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  } else {
    glBindTexture(GL_TEXTURE_2D, m_name);
  }
  // IM_COL32 keeps red in the lowest byte: in memory R, G, B, A, which is GL_RGBA bytes.
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  if (width != m_width || height != m_height) {
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
    m_width = width;
    m_height = height;
  } else {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  }
  note_texture_changed(id());  // lists drawing it are redrawn (frame_damage.h)
}

ImTextureID RgbaTexture::id() const {
  return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(m_name));
}

namespace {

void blend_off(const ImDrawList*, const ImDrawCmd*) {
  glDisable(GL_BLEND);
}

}  // namespace

void draw_opaque_image(ImDrawList* dl, const RgbaTexture& texture, ImVec2 a, ImVec2 b) {
  if (texture.empty()) return;
  dl->AddCallback(blend_off, nullptr);
  dl->AddImage(texture.id(), a, b);
  // The backend sets up its whole state again, blending included.
  dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

}  // namespace tilescope::gui

// FrameDamage, render_rects and FramePresenter (partial_redraw.h).
#include "app/gui/widgets/partial_redraw.h"

#include <GLFW/glfw3.h>
#if TILESCOPE_HAVE_GLX
#include <GL/glx.h>
#endif
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tilescope::gui {

void render_rects(ImDrawData& dd, const std::vector<PixelRect>& rects, int fb_h, ImVec4 clear) {
  const ImVec2 off = dd.DisplayPos, scale = dd.FramebufferScale;
  std::vector<ImVec4> saved;
  for (int l = 0; l < dd.CmdListsCount; ++l)
    for (const ImDrawCmd& cmd : dd.CmdLists[l]->CmdBuffer) saved.push_back(cmd.ClipRect);
  for (const PixelRect& r : rects) {
    if (r.empty()) continue;
    glEnable(GL_SCISSOR_TEST);
    glScissor(r.x0, fb_h - r.y1, r.x1 - r.x0, r.y1 - r.y0);
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    glDisable(GL_SCISSOR_TEST);
    // The rectangle in ImGui's coordinates; each command's clip cut to it (an empty cut is
    // skipped by the backend).
    const ImVec4 cut(r.x0 / scale.x + off.x, r.y0 / scale.y + off.y, r.x1 / scale.x + off.x,
                     r.y1 / scale.y + off.y);
    size_t k = 0;
    for (int l = 0; l < dd.CmdListsCount; ++l)
      for (ImDrawCmd& cmd : dd.CmdLists[l]->CmdBuffer) {
        const ImVec4& c = saved[k++];
        cmd.ClipRect = ImVec4(std::max(c.x, cut.x), std::max(c.y, cut.y), std::min(c.z, cut.z),
                              std::min(c.w, cut.w));
      }
    ImGui_ImplOpenGL3_RenderDrawData(&dd);
  }
  size_t k = 0;
  for (int l = 0; l < dd.CmdListsCount; ++l)
    for (ImDrawCmd& cmd : dd.CmdLists[l]->CmdBuffer) cmd.ClipRect = saved[k++];
}

void FramePresenter::init(void* glfw_window) {
  m_window = glfw_window;
  m_copy_sub_buffer = nullptr;
  const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const std::string r = renderer ? renderer : "";
  const bool software = r.find("llvmpipe") != std::string::npos ||
                        r.find("softpipe") != std::string::npos ||
                        r.find("swrast") != std::string::npos;
  if (const char* env = std::getenv("TILESCOPE_FULL_REDRAW"); env && *env && std::string(env) != "0") {
    m_why = "whole frames (TILESCOPE_FULL_REDRAW is set)";
    return;
  }
  if (!software) {
    m_why = "whole frames (" + (r.empty() ? std::string("unknown renderer") : r) +
            " is not a software rasteriser)";
    return;
  }
#if TILESCOPE_HAVE_GLX
  Display* display = glXGetCurrentDisplay();
  const GLXDrawable drawable = glXGetCurrentDrawable();
  const char* extensions =
      display ? glXQueryExtensionsString(display, DefaultScreen(display)) : nullptr;
  if (!display || !drawable || !extensions ||
      !std::strstr(extensions, "GLX_MESA_copy_sub_buffer")) {
    m_why = "whole frames (no GLX_MESA_copy_sub_buffer on this display)";
    return;
  }
  void* fn = reinterpret_cast<void*>(
      glXGetProcAddressARB(reinterpret_cast<const GLubyte*>("glXCopySubBufferMESA")));
  if (!fn) {
    m_why = "whole frames (glXCopySubBufferMESA not found)";
    return;
  }
  m_display = display;
  m_drawable = drawable;
  m_copy_sub_buffer = fn;
  m_why = "changed rectangles only (" + r.substr(0, r.find(' ')) + ", glXCopySubBufferMESA)";
#else
  m_why = "whole frames (built without GLX)";
#endif
}

void FramePresenter::present(const std::vector<PixelRect>& rects, int fb_h) {
#if TILESCOPE_HAVE_GLX
  if (m_copy_sub_buffer) {
    using CopySubBuffer = void (*)(Display*, GLXDrawable, int, int, int, int);
    const auto copy = reinterpret_cast<CopySubBuffer>(m_copy_sub_buffer);
    for (const PixelRect& r : rects)
      if (!r.empty())
        copy(static_cast<Display*>(m_display), m_drawable, r.x0, fb_h - r.y1, r.x1 - r.x0,
             r.y1 - r.y0);
    return;
  }
#else
  (void)rects;
  (void)fb_h;
#endif
  glfwSwapBuffers(static_cast<GLFWwindow*>(m_window));
}

}  // namespace tilescope::gui

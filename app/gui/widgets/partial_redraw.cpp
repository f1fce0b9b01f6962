// FrameDamage, render_rects and FramePresenter (partial_redraw.h).
#include "app/gui/widgets/partial_redraw.h"

#include <GLFW/glfw3.h>
#if TILESCOPE_HAVE_GLX
#include <GL/glx.h>
#include <X11/Xutil.h>
// GLFW's X11 accessors (glfw3native.h declares them, but it also includes Xrandr.h, a header
// Debian keeps in another package).
extern "C" Display* glfwGetX11Display(void);
extern "C" Window glfwGetX11Window(GLFWwindow* window);
#endif
#include <stb_image_write.h>
#include <backends/imgui_impl_opengl3.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace tilescope::gui {

namespace {

#if TILESCOPE_HAVE_GLX
// X errors seen while presenting in partial mode. Xlib's default handler ends the process; a
// failed copy only costs a frame, so this one counts it and the next frame is swapped whole.
std::atomic<int> g_x_errors{0};

int on_x_error(Display* display, XErrorEvent* e) {
  if (g_x_errors.fetch_add(1) == 0) {
    char text[256] = {};
    XGetErrorText(display, e->error_code, text, sizeof text);
    std::fprintf(stderr,
                 "tilescope: X error while presenting a frame (%s, request %d.%d); drawing the "
                 "next frame whole\n",
                 text, e->request_code, e->minor_code);
  }
  return 0;
}
#endif

int x_error_count() {
#if TILESCOPE_HAVE_GLX
  return g_x_errors.load();
#else
  return 0;
#endif
}

}  // namespace

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

bool FramePresenter::must_draw_whole(int fb_w, int fb_h) const {
  if (!partial()) return true;
  return m_last_swapped || fb_w != m_swapped_w || fb_h != m_swapped_h ||
         x_error_count() != m_x_errors_seen;
}

void FramePresenter::present(const std::vector<PixelRect>& rects, int fb_w, int fb_h) {
#if TILESCOPE_HAVE_GLX
  if (m_copy_sub_buffer) {
    const bool swap = fb_w != m_swapped_w || fb_h != m_swapped_h ||
                      x_error_count() != m_x_errors_seen;
    // GLFW puts Xlib's default handler (which exits) back after each of its own X calls that
    // watch for errors, so ours goes in again before every present.
    XSetErrorHandler(on_x_error);
    m_x_errors_seen = x_error_count();
    if (swap) {
      // The swap makes Mesa re-read the window's size: the next frame draws at the new one.
      glfwSwapBuffers(static_cast<GLFWwindow*>(m_window));
      if (m_swapped_w >= 0) ++m_resize_swaps;
      m_swapped_w = fb_w;
      m_swapped_h = fb_h;
      m_last_swapped = true;
      return;
    }
    using CopySubBuffer = void (*)(Display*, GLXDrawable, int, int, int, int);
    const auto copy = reinterpret_cast<CopySubBuffer>(m_copy_sub_buffer);
    for (const PixelRect& r : rects) {
      // Never past the frame, whatever the rectangles say: outside it Mesa's buffer ends.
      const int x0 = std::clamp(r.x0, 0, fb_w), x1 = std::clamp(r.x1, 0, fb_w);
      const int y0 = std::clamp(r.y0, 0, fb_h), y1 = std::clamp(r.y1, 0, fb_h);
      if (x1 > x0 && y1 > y0)
        copy(static_cast<Display*>(m_display), m_drawable, x0, fb_h - y1, x1 - x0, y1 - y0);
    }
    m_last_swapped = false;
    return;
  }
#else
  (void)rects;
  (void)fb_w;
  (void)fb_h;
#endif
  glfwSwapBuffers(static_cast<GLFWwindow*>(m_window));
}

std::string save_screen_shot(const std::string& path, void* glfw_window) {
  auto* window = static_cast<GLFWwindow*>(glfw_window);
#if TILESCOPE_HAVE_GLX
  Display* display = glfwGetX11Display();
  const Window xwindow = glfwGetX11Window(window);
  if (!display || !xwindow) return "screenshot-screen: no X11 window to read";
  glFinish();
  XSync(display, False);
  XWindowAttributes attributes{};
  if (!XGetWindowAttributes(display, xwindow, &attributes))
    return "screenshot-screen: cannot read the window's size";
  const int width = attributes.width, height = attributes.height;
  XImage* image = XGetImage(display, xwindow, 0, 0, static_cast<unsigned>(width),
                            static_cast<unsigned>(height), AllPlanes, ZPixmap);
  if (!image) return "screenshot-screen: the X server gave no image of the window";
  std::vector<unsigned char> rgba(static_cast<size_t>(width) * static_cast<size_t>(height) * 4);
  // A 24-bit TrueColor visual: the masks say where each channel sits in a pixel.
  const auto channel = [](unsigned long pixel, unsigned long mask) {
    int shift = 0;
    while (mask && !(mask & 1)) {
      mask >>= 1;
      ++shift;
    }
    return static_cast<unsigned char>((pixel >> shift) & 0xFF);
  };
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const unsigned long p = XGetPixel(image, x, y);
      unsigned char* out = &rgba[(static_cast<size_t>(y) * width + x) * 4];
      out[0] = channel(p, image->red_mask);
      out[1] = channel(p, image->green_mask);
      out[2] = channel(p, image->blue_mask);
      out[3] = 255;
    }
  XDestroyImage(image);
  if (!stbi_write_png(path.c_str(), width, height, 4, rgba.data(), width * 4))
    return "cannot write screenshot '" + path + "'";
  return {};
#else
  (void)path;
  (void)window;
  return "screenshot-screen needs an X11 build (GLX)";
#endif
}

}  // namespace tilescope::gui

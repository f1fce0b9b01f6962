// Decodes lesson images with stb_image into GL textures, cached by path.
#include "app/gui/widgets/image_cache.h"
#include "app/gui/widgets/gui_store.h"

#include <GLFW/glfw3.h>
#include <stb_image.h>

#include <filesystem>
#include <map>

namespace tilescope::gui {

const LoadedImage& load_image(const std::string& path, const std::string& base_dir) {
  std::map<std::string, LoadedImage>& cache = gui_store().images;
  const std::string key = base_dir + "\n" + path;
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  LoadedImage& img = cache[key];
  std::error_code ec;
  std::string file = path;
  if (!std::filesystem::is_regular_file(file, ec) && !base_dir.empty())
    file = (std::filesystem::path(base_dir) / path).string();
  if (path.find("://") != std::string::npos) {
    img.error = "image " + path + " is on the web; the app shows only local files";
    return img;
  }
  if (!std::filesystem::is_regular_file(file, ec)) {
    img.error = "image " + path + " not found";
    return img;
  }
  int w = 0, h = 0, channels = 0;
  unsigned char* pixels = stbi_load(file.c_str(), &w, &h, &channels, 4);
  if (!pixels) {
    img.error = "image " + path + " cannot be read: " + stbi_failure_reason();
    return img;
  }
  GLuint tex = 0;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels);
  stbi_image_free(pixels);
  img.texture = reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex));
  img.width = w;
  img.height = h;
  return img;
}

}  // namespace tilescope::gui

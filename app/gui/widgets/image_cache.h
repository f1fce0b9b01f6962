// Images a lesson shows (PNG/JPEG from assets/), decoded by stb_image once and kept as OpenGL
// textures for the rest of the run. A missing or unreadable file is remembered with its reason
// and drawn as that text, never retried every frame.
#pragma once

#include <imgui.h>

#include <string>

namespace tilescope::gui {

struct LoadedImage {
  ImTextureID texture = nullptr;  // nullptr when it could not be loaded
  int width = 0, height = 0;
  std::string error;  // why it could not be loaded
};

// The image at `path` (tried as given, then under `base_dir`). Needs the GL context current.
const LoadedImage& load_image(const std::string& path, const std::string& base_dir);

}  // namespace tilescope::gui

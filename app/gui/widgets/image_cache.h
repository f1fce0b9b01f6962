// Images a lesson shows (PNG/JPEG from assets/), decoded by stb_image once and kept as OpenGL
// textures for the rest of the run. A missing or unreadable file is remembered with its reason
// and drawn as that text, never retried every frame.
#pragma once

#include "app/gui/widgets/gui_store.h"

#include <string>

namespace tilescope::gui {

// The image at `path` (tried as given, then under `base_dir`). Needs the GL context current.
const LoadedImage& load_image(const std::string& path, const std::string& base_dir);

}  // namespace tilescope::gui

// The desktop app's platform layer: window, OpenGL, ImGui, the frame loop, screenshots.
#pragma once

#include "app/gui/app_options.h"

namespace tilescope::gui {

// Runs the app; returns the process exit status (0 on success, 1 on any error, with a message
// on stderr that says what went wrong).
int run_app(const AppOptions& options);

}  // namespace tilescope::gui

// Command-line flags of the desktop app, parsed without touching the display (testable).
#pragma once

#include "app/core/app_state.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::gui {

struct AppOptions {
  std::string model_path;  // --model FILE ("" = the built-in example)
  int frames = 0;          // --frames N: run N frames then exit (0 = until closed)
  int bench_frames = 0;    // --bench-frames N: after the script, time N frames, print p50/p95, exit
  std::string screenshot;  // --screenshot FILE: PNG of the window after the last frame
  std::string script;      // --script FILE: commands to replay
  int width = 1440;        // --size WxH
  int height = 900;
  core::Theme theme = core::Theme::Light;  // --theme NAME
  std::string layout_json;   // --layout-json FILE: panel and node rects, written at exit
  std::string state_json;    // --state-json FILE: view, schedule history, results, at exit
  bool no_session = false;   // --no-session: neither restore nor autosave the session
  std::string session_path;  // --session FILE: restore and autosave FILE (scripted runs too)
  bool teacher = false;      // --teacher: the lesson player shows predict answers at once
  std::string lessons_dir;   // --lessons DIR: the lesson catalogue's folder (default lessons/)
  int frame_delay_ms = 0;    // --frame-delay MS: sleep MS after every frame (slow frames, tests)
  bool help = false;
};

class OptionsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// args excludes the program name. Throws OptionsError saying which flag is wrong and why.
AppOptions parse_app_options(const std::vector<std::string>& args);

std::string app_usage();

}  // namespace tilescope::gui

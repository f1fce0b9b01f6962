// tilescope desktop app entry point: parse flags, then hand over to the frame loop.
#include "app/gui/app.h"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace tilescope::gui;
  AppOptions options;
  try {
    options = parse_app_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const OptionsError& e) {
    std::fprintf(stderr, "tilescope: error: %s\n%s", e.what(), app_usage().c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(app_usage().c_str(), stdout);
    return 0;
  }
  return run_app(options);
}

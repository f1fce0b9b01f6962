// Command-line flags of the desktop app, parsed without touching the display (testable).
#include "app/gui/app_options.h"

#include <charconv>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

int parse_int(const std::string& flag, const std::string& value, int min, int max) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size() || v < min ||
      v > max) {
    throw OptionsError(flag + ": expected a whole number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", got '" + value + "'");
  }
  return v;
}

}  // namespace

std::string app_usage() {
  return "usage: tilescope [options]\n"
         "  --model FILE        open a model file (default: the built-in y = relu(x @ W.T + b))\n"
         "  --script FILE       replay commands from FILE, one per line (see app/core/commands.h)\n"
         "  --frames N          run N frames, then exit\n"
         "  --bench-frames N    after the script (if any) has run, time N frames and print\n"
         "                      the median, p95 and worst frame time and the time to the\n"
         "                      first frame, then exit\n"
         "  --screenshot FILE   save a PNG of the window after the last frame\n"
         "  --layout-json FILE  write each panel's name and pixel rect (and graph nodes) at exit\n"
         "  --state-json FILE   write the workbench state (view, steps, results) at exit\n"
         "  --size WxH          window size in pixels (default 1440x900)\n"
         "  --theme NAME        light, dark or projector\n"
         "  --no-session        do not restore or autosave ~/.local/state/tilescope/session.json\n"
         "                      (scripted and --frames runs never use the session)\n"
         "  --session FILE      restore from and autosave to FILE instead (also in scripted and\n"
         "                      --frames runs)\n"
         "  --lessons DIR       the folder of lessons the Lessons view lists (default: lessons)\n"
         "  --teacher           teacher mode: the lesson player shows predict answers at once\n"
         "                      (hidden again in presentation mode until R reveals them)\n"
         "  --frame-delay MS    sleep MS milliseconds after every frame: slow frames on purpose, "
         "as\n"
         "                      under software OpenGL (tests: no key press may be lost)\n"
         "  --help              show this text\n";
}

AppOptions parse_app_options(const std::vector<std::string>& args) {
  AppOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--help" || flag == "-h") {
      o.help = true;
      continue;
    }
    if (flag == "--no-session") {
      o.no_session = true;
      continue;
    }
    if (flag == "--teacher") {
      o.teacher = true;
      continue;
    }
    // Accept both "--flag value" and "--flag=value".
    std::string name = flag, value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = flag.substr(0, eq);
      value = flag.substr(eq + 1);
      has_value = true;
    }
    auto take = [&]() -> std::string {
      if (!has_value) {
        if (i + 1 >= args.size()) throw OptionsError(name + ": needs a value");
        value = args[++i];
      }
      if (value.empty()) throw OptionsError(name + ": the value is empty");
      return value;
    };
    if (name == "--model") {
      o.model_path = take();
    } else if (name == "--lessons") {
      o.lessons_dir = take();
    } else if (name == "--session") {
      o.session_path = take();
    } else if (name == "--script") {
      o.script = take();
    } else if (name == "--frames") {
      o.frames = parse_int(name, take(), 1, 100000000);
    } else if (name == "--frame-delay") {
      o.frame_delay_ms = parse_int(name, take(), 0, 10000);
    } else if (name == "--bench-frames") {
      o.bench_frames = parse_int(name, take(), 1, 1000000);
    } else if (name == "--screenshot") {
      o.screenshot = take();
    } else if (name == "--layout-json") {
      o.layout_json = take();
    } else if (name == "--state-json") {
      o.state_json = take();
    } else if (name == "--size") {
      const std::string v = take();
      const size_t x = v.find('x');
      if (x == std::string::npos)
        throw OptionsError("--size: expected WxH such as 1600x1000, got '" + v + "'");
      o.width = parse_int("--size (width)", v.substr(0, x), 200, kMaxWindowSide);
      o.height = parse_int("--size (height)", v.substr(x + 1), 150, kMaxWindowSide);
    } else if (name == "--theme") {
      const std::string v = take();
      const auto t = theme_from_name(v);
      if (!t)
        throw OptionsError("--theme: unknown theme '" + v + "' (use light, dark or projector)");
      o.theme = *t;
    } else {
      throw OptionsError("unknown option '" + flag + "' (try --help)");
    }
  }
  return o;
}

}  // namespace tilescope::gui

// Named commands: parsing script lines and printing them back (commands_apply.cpp applies them).
#include "app/core/commands.h"

#include "app/core/exports.h"
#include "app/core/commands_impl.h"

#include "app/core/autotune_jobs.h"
#include "app/core/files.h"
#include "app/core/graph_edit.h"
#include "app/core/lesson_commands.h"
#include "app/core/memory_model.h"
#include "app/core/session.h"
#include "sim/io/input.h"
#include "sim/pipeline.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tilescope::core {
namespace {

// [SECTION] Lexing helpers

// Splits off the first whitespace-delimited word.
std::string_view take_word(std::string_view& rest) {
  rest = trim(rest);
  size_t end = rest.find_first_of(" \t");
  std::string_view word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view{} : trim(rest.substr(end));
  return word;
}

double parse_number(std::string_view word, std::string_view name, std::string_view verb) {
  double value = 0.0;
  const auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || ec != std::errc() || ptr != word.data() + word.size() ||
      !std::isfinite(value)) {
    throw CommandError(std::string(verb) + ": " + std::string(name) + " must be a number, got '" +
                       std::string(word) + "'");
  }
  return value;
}

// A window pixel coordinate (click, drag, scroll): ImGui and the GPU get floats, and a double
// past float's range (1e308) does not convert to one; no window is this large anyway.
constexpr double kMaxPixelCoordinate = 1e5;

double parse_pixel(std::string_view word, std::string_view name, std::string_view verb) {
  const double v = parse_number(word, name, verb);
  if (std::abs(v) > kMaxPixelCoordinate) {
    throw CommandError(std::string(verb) + ": " + std::string(name) +
                       " must be a window pixel from -100000 to 100000, got '" + std::string(word) +
                       "'");
  }
  return v;
}

int parse_positive_int(std::string_view word, std::string_view name, std::string_view verb) {
  const double v = parse_number(word, name, verb);
  if (v < 1 || v != std::floor(v) || v > 1e9) {
    throw CommandError(std::string(verb) + ": " + std::string(name) +
                       " must be a whole number >= 1, got '" + std::string(word) + "'");
  }
  return static_cast<int>(v);
}

std::string unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char n = s[++i];
      out.push_back(n == 'n' ? '\n' : n == 't' ? '\t' : n);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n')
      out += "\\n";
    else if (ch == '\t')
      out += "\\t";
    else if (ch == '\\')
      out += "\\\\";
    else
      out.push_back(ch);
  }
  return out;
}

void expect_end(std::string_view rest, std::string_view verb) {
  if (!trim(rest).empty()) {
    throw CommandError(std::string(verb) + ": unexpected '" + std::string(trim(rest)) +
                       "' at the end");
  }
}

std::string require_rest(std::string_view rest, std::string_view verb, std::string_view what) {
  rest = trim(rest);
  if (rest.empty()) throw CommandError(std::string(verb) + ": needs " + std::string(what));
  return std::string(rest);
}

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

// [SECTION] Shared with commands_apply.cpp (commands_impl.h)

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string check_window_size(double w, double h) {
  for (const double side : {w, h}) {
    if (!(side >= kMinWindowSide && side <= kMaxWindowSide)) {
      return "resize: each side must be " + std::to_string(kMinWindowSide) + " to " +
             std::to_string(kMaxWindowSide) + " pixels, got " +
             std::to_string(static_cast<long long>(std::clamp(side, -1e18, 1e18))) +
             " (a larger window needs gigabytes of frame and screenshot buffers)";
    }
  }
  return {};
}

namespace {

// [SECTION] The verbs

// The command language's verbs: each row parses the words after its verb into a Command. The
// unknown-verb message lists the rows' verbs, and command_reference() prints the help rows below,
// so neither drifts from what parse_command accepts (a test holds the two tables together).
struct VerbRow {
  std::array<std::string_view, 5> verbs;  // the verbs the row parses ("" fills the rest)
  void (*parse)(Command& c, std::string_view verb, std::string_view& rest);
};

constexpr VerbRow kVerbRows[] = {
    {{"set-model-file"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::SetModelFile;
       c.text = require_rest(rest, verb, "a file path");
     }},
    {{"set-model-text", "edit-model-text"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "set-model-text" ? CommandKind::SetModelText : CommandKind::EditModelText;
       c.text = unescape(trim(rest));
     }},
    {{"replace-line"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::ReplaceLine;
       c.a = parse_positive_int(take_word(rest), "line number", verb);
       c.text = unescape(rest);
     }},
    {{"select-op", "select-tensor"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "select-op" ? CommandKind::SelectOp : CommandKind::SelectTensor;
       c.text = std::string(take_word(rest));
       if (c.text.empty()) throw CommandError(std::string(verb) + ": needs a name");
       expect_end(rest, verb);
     }},
    {{"clear-selection", "fit", "quit"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "fit"    ? CommandKind::Fit
                : verb == "quit" ? CommandKind::Quit
                                 : CommandKind::ClearSelection;
       expect_end(rest, verb);
     }},
    {{"zoom"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Zoom;
       c.a = parse_number(take_word(rest), "factor", verb);
       if (c.a <= 0) throw CommandError("zoom: factor must be > 0, got " + fmt(c.a));
       if (!trim(rest).empty()) {
         c.c = parse_pixel(take_word(rest), "anchor x", verb);
         c.d = parse_pixel(take_word(rest), "anchor y", verb);
         c.anchored = true;
       }
       expect_end(rest, verb);
     }},
    {{"pan"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Pan;
       c.a = parse_number(take_word(rest), "dx", verb);
       c.b = parse_number(take_word(rest), "dy", verb);
       expect_end(rest, verb);
     }},
    {{"theme"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::SetTheme;
       c.text = std::string(take_word(rest));
       if (!theme_from_name(c.text)) {
         throw CommandError("theme: unknown theme '" + c.text + "' (use light, dark or projector)");
       }
       expect_end(rest, verb);
     }},
    {{"screenshot", "screenshot-screen"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "screenshot" ? CommandKind::Screenshot : CommandKind::ScreenshotScreen;
       c.text = require_rest(rest, verb, "an output .png path");
     }},
    {{"wait-frames"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::WaitFrames;
       c.a = parse_positive_int(take_word(rest), "frame count", verb);
       expect_end(rest, verb);
     }},
    {{"click"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Click;
       c.a = parse_pixel(take_word(rest), "x", verb);
       c.b = parse_pixel(take_word(rest), "y", verb);
       expect_end(rest, verb);
     }},
    {{"click-node"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::ClickNode;
       c.text = std::string(take_word(rest));
       if (c.text.empty()) throw CommandError("click-node: needs a node name");
       expect_end(rest, verb);
     }},
    {{"drag"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Drag;
       c.a = parse_pixel(take_word(rest), "x1", verb);
       c.b = parse_pixel(take_word(rest), "y1", verb);
       c.c = parse_pixel(take_word(rest), "x2", verb);
       c.d = parse_pixel(take_word(rest), "y2", verb);
       expect_end(rest, verb);
     }},
    {{"scroll"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Scroll;
       c.a = parse_pixel(take_word(rest), "x", verb);
       c.b = parse_pixel(take_word(rest), "y", verb);
       c.c = parse_number(take_word(rest), "notches", verb);
       if (std::abs(c.c) > 100) throw CommandError("scroll: notches must be from -100 to 100");
       expect_end(rest, verb);
     }},
    {{"key"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Key;
       c.text = std::string(take_word(rest));
       if (!parse_key_chord(c.text)) {
         throw CommandError(
             "key: expected a letter or digit such as F or 2, or a key name (Left, "
             "Right, Up, Down, Enter, Escape, Tab, Space, Backspace, F1-F12) with "
             "optional Ctrl+, Alt+, Shift+; got '" +
             c.text + "'");
       }
       if (c.text.size() == 1)
         c.text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(c.text[0])));
       expect_end(rest, verb);
     }},
    {{"wait-resize"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::WaitResize;
       const std::string_view word = take_word(rest);
       c.a = word.empty() ? 30.0 : parse_number(word, "seconds", verb);
       if (c.a <= 0 || c.a > 3600) throw CommandError("wait-resize: expected 0 to 3600 seconds");
       expect_end(rest, verb);
     }},
    {{"wait-seconds"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::WaitSeconds;
       c.a = parse_number(take_word(rest), "seconds", verb);
       if (c.a < 0 || c.a > 3600) throw CommandError("wait-seconds: expected 0 to 3600 seconds");
       expect_end(rest, verb);
     }},
    {{"type"},
     [](Command& c, std::string_view /*verb*/, std::string_view& rest) {
       c.kind = CommandKind::Type;
       c.text = unescape(trim(rest));
       if (c.text.empty()) throw CommandError("type: needs the text to type");
     }},
    {{"resize"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Resize;
       c.a = parse_positive_int(take_word(rest), "width", verb);
       c.b = parse_positive_int(take_word(rest), "height", verb);
       if (std::string e = check_window_size(c.a, c.b); !e.empty()) throw CommandError(e);
       expect_end(rest, verb);
     }},
    {{"view"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::SetView;
       c.text = std::string(take_word(rest));
       if (!view_tab_from_name(c.text)) {
         throw CommandError("view: unknown view '" + c.text +
                            "' (use graph, schedule, tiles, memory, roofline, timings or lessons)");
       }
       expect_end(rest, verb);
     }},
    {{"apply"},
     [](Command& c, std::string_view /*verb*/, std::string_view& rest) {
       c.kind = CommandKind::Apply;
       std::string_view steps = trim(rest);
       if (steps.size() >= 2 && steps.front() == '"' && steps.back() == '"')
         steps = steps.substr(1, steps.size() - 2);
       c.text = unescape(steps);
       if (trim(c.text).empty()) throw CommandError("apply: needs a step such as \"tile(i, 16)\"");
     }},
    {{"simulate", "run-cpu"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "simulate" ? CommandKind::Simulate : CommandKind::RunCpu;
       c.text = std::string(take_word(rest));
       const bool exact = verb == "simulate" && c.text == "exactly";
       if (!c.text.empty() && c.text != "anyway" && !exact)
         throw CommandError(
             std::string(verb) + ": expected nothing or 'anyway' (start a long job)" +
             (verb == "simulate" ? " or 'exactly' (every access, not a sample)" : "") + ", got '" +
             c.text + "'");
       expect_end(rest, verb);
     }},
    {{"run-gpu"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::RunGpu;
       expect_end(rest, verb);
     }},
    {{"undo", "redo", "cancel", "wait-jobs"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "undo"     ? CommandKind::Undo
                : verb == "redo"   ? CommandKind::Redo
                : verb == "cancel" ? CommandKind::Cancel
                                   : CommandKind::WaitJobs;
       expect_end(rest, verb);
     }},
    {{"goto-step"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::GoToStep;
       const double n = parse_number(take_word(rest), "entry", verb);
       if (n < 0 || n != std::floor(n) || n > 1e6)
         throw CommandError("goto-step: entry must be a whole number >= 0");
       c.a = n;
       expect_end(rest, verb);
     }},
    {{"tiles"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Tiles;
       c.text = std::string(take_word(rest));
       if (c.text == "seek" || c.text == "speed") {
         c.a = parse_number(take_word(rest), c.text == "seek" ? "frame" : "frames per second", verb);
       } else if (c.text == "record") {
         const std::string_view more = take_word(rest);
         if (more == "anyway") {
           c.text = "record anyway";
         } else if (!more.empty()) {
           throw CommandError("tiles record: expected nothing or 'anyway', got '" + std::string(more) +
                              "'");
         }
       } else if (c.text == "gpu") {
         const std::string_view v = take_word(rest);
         if (v != "on" && v != "off")
           throw CommandError("tiles gpu: expected on or off, got '" + std::string(v) + "'");
         c.a = v == "on" ? 1 : 0;
       } else if (c.text == "block" || c.text == "warp") {
         c.a = parse_number(take_word(rest), c.text == "block" ? "block (launch index)" : "warp",
                            verb);
         if (c.a < 0 || c.a != std::floor(c.a) || c.a > 1e9)
           throw CommandError("tiles " + c.text + ": expected a whole number >= 0");
       } else if (c.text != "play" && c.text != "pause" && c.text != "step" && c.text != "back") {
         throw CommandError(
             "tiles: expected record, play, pause, step, back, seek N, speed X, gpu on|off, "
             "block N or warp N, got '" + c.text + "'");
       }
       expect_end(rest, verb);
     }},
    {{"present"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Present;
       c.text = std::string(take_word(rest));
       if (!c.text.empty() && c.text != "on" && c.text != "off")
         throw CommandError("present: expected on, off or nothing (toggle), got '" + c.text + "'");
       expect_end(rest, verb);
     }},
    {{"lesson"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Lesson;
       c.text = unescape(require_rest(rest, verb,
                                      "open, next, prev, goto, focus, draft, predict, "
                                      "reveal, apply, show-me, load-model, "
                                      "restore-model, reset, panel, close or reload"));
       if (std::string e = check_lesson_command(c.text); !e.empty()) throw CommandError(e);
     }},
    {{"start-here"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::StartHere;
       c.text = std::string(take_word(rest));
       if (c.text != "on" && c.text != "off")
         throw CommandError("start-here: expected on or off, got '" + c.text + "'");
       expect_end(rest, verb);
     }},
    {{"teacher"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Teacher;
       c.text = std::string(take_word(rest));
       if (!c.text.empty() && c.text != "on" && c.text != "off")
         throw CommandError("teacher: expected on, off or nothing (toggle), got '" + c.text + "'");
       expect_end(rest, verb);
     }},
    {{"write-state", "write-frame-text", "write-layout", "open-session", "drop"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "write-state"        ? CommandKind::WriteState
                : verb == "write-frame-text" ? CommandKind::WriteFrameText
                : verb == "write-layout"     ? CommandKind::WriteLayout
                : verb == "open-session"     ? CommandKind::OpenSession
                                             : CommandKind::Drop;
       c.text = require_rest(rest, verb, "a file path");
     }},
    {{"save-model", "save-session"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "save-model" ? CommandKind::SaveModel : CommandKind::SaveSession;
       c.text = std::string(trim(rest));
     }},
    {{"ui-scale"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::UiScale;
       c.a = parse_number(take_word(rest), "scale", verb);
       if (!(c.a >= kMinUiScale && c.a <= kMaxUiScale))
         throw CommandError("ui-scale: expected a scale from " + fmt(kMinUiScale) + " to " +
                            fmt(kMaxUiScale) + ", got " + fmt(c.a));
       expect_end(rest, verb);
     }},
    {{"open-trace", "trace"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = verb == "open-trace" ? CommandKind::OpenTrace : CommandKind::Trace;
       c.text = require_rest(rest, verb, verb == "open-trace" ? "a file path" : "select N or clear");
     }},
    {{"files"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Files;
       c.text = require_rest(rest, verb,
                             "open-model, save-model, open-session, save-session, cd, name, ok or "
                             "close");
     }},
    {{"palette"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Palette;
       c.text = require_rest(rest, verb, "input, weight, add or delete and their arguments");
     }},
    {{"control"},
     [](Command& c, std::string_view /*verb*/, std::string_view& rest) {
       // Checked now against scratch controls, so a script's bad line fails before it runs.
       c.kind = CommandKind::Control;
       const std::string name(take_word(rest));
       if (name.empty()) throw CommandError("control: needs a name (" + panel_control_names() + ")");
       const std::string value = unescape(trim(rest));
       PanelControls scratch;
       if (std::string e = set_panel_control(scratch, name, value); !e.empty()) throw CommandError(e);
       c.text = name + " " + value;
     }},
    {{"autotune"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Autotune;
       c.text = require_rest(rest, verb, "sim, cpu, show, hide or loops A B");
       const std::string sub = c.text.substr(0, c.text.find(' '));
       if (sub != "sim" && sub != "cpu" && sub != "show" && sub != "hide" && sub != "loops")
         throw CommandError("autotune: expected sim, cpu, show, hide or loops A B, got '" + sub + "'");
     }},
    {{"fullscreen"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Fullscreen;
       expect_end(rest, verb);
     }},
    {{"memory"},
     [](Command& c, std::string_view /*verb*/, std::string_view& rest) {
       c.kind = CommandKind::MemoryFormula;
       if (take_word(rest) != "formula")
         throw CommandError("memory: expected formula LEVEL [TENSOR] or formula off");
       c.text = std::string(trim(rest));
       if (c.text.empty())
         throw CommandError(
             "memory formula: needs a level such as L1 (then optionally a tensor), or off");
     }},
    {{"baseline"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Baseline;
       c.text = std::string(take_word(rest));
       c.a = -1;  // pin: the current schedule
       if (c.text == "pin-recorded") {
         const double n = parse_number(take_word(rest), "recorded run", verb);
         if (n < 0 || n != std::floor(n) || n > 1e6)
           throw CommandError("baseline pin-recorded: the run must be a whole number >= 0");
         c.a = n;
       } else if (c.text == "pin" && !trim(rest).empty()) {
         const double n = parse_number(take_word(rest), "history entry", verb);
         if (n < 0 || n != std::floor(n) || n > 1e6)
           throw CommandError("baseline pin: the history entry must be a whole number >= 0");
         c.a = n;
       } else if (c.text != "pin" && c.text != "clear" && c.text != "run-cpu") {
         throw CommandError("baseline: expected pin [N], pin-recorded N, clear or run-cpu, got '" +
                            c.text + "'");
       }
       expect_end(rest, verb);
     }},
    {{"machine-edit"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::MachineEdit;
       c.text = unescape(trim(rest));
       const std::string first = c.text.substr(0, c.text.find(' '));
       if (first != "start" && first != "set" && first != "cancel" && first != "save")
         throw CommandError(std::string(verb) +
                            ": expected start, set SECTION KEY VALUE, cancel or save PATH");
     }},
    {{"export"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::Export;
       const std::string name(take_word(rest));
       const std::string path = unescape(trim(rest));
       if (name.empty() || path.empty())
         throw CommandError("export: expected a table (" + export_names() + ") and a file path");
       bool known = false;
       for (const ExportEntry& e : export_entries()) known = known || name == e.name;
       if (!known)
         throw CommandError("export: unknown table '" + name + "' (" + export_names() + ")");
       c.text = name + " " + path;
       (void)verb;
     }},
    {{"machine"},
     [](Command& c, std::string_view verb, std::string_view& rest) {
       c.kind = CommandKind::SetMachine;
       c.text = std::string(take_word(rest));
       if (c.text.empty()) throw CommandError("machine: needs a preset name such as host or h200");
       expect_end(rest, verb);
     }},
};

struct HelpRow {
  std::string_view usage;  // the verb first: "zoom FACTOR [X Y]"
  std::string_view help;
};

constexpr HelpRow kHelpRows[] = {
    {"set-model-file PATH",
     "open a model file (parsed at once)"},
    {"set-model-text TEXT",
     "replace the model text; \"\\n\" in TEXT is a newline (parsed at once)"},
    {"edit-model-text TEXT",
     "as set-model-text, but parsed after the typing debounce (the editor)"},
    {"replace-line N TEXT",
     "replace line N (1-based) of the model text (parsed at once)"},
    {"select-op NAME",
     "select an op (the inspector shows it)"},
    {"select-tensor NAME",
     "select a graph input, weight or output tensor"},
    {"clear-selection",
     "clear the selection"},
    {"zoom FACTOR [X Y]",
     "multiply the canvas zoom, about canvas point X Y (default: the centre)"},
    {"pan DX DY",
     "move the canvas content by DX DY pixels"},
    {"fit",
     "fit the whole graph in the canvas (key F)"},
    {"theme light|dark|projector",
     "the colour theme"},
    {"screenshot FILE",
     "save a PNG of the window after the next frame renders"},
    {"screenshot-screen FILE",
     "save a PNG of what the display shows in the window, read back from the X server after the frame is presented (what a user sees)"},
    {"wait-frames N",
     "let N frames pass before the next script line"},
    {"wait-seconds S",
     "let S seconds pass (e.g. the typing debounce) before the next line"},
    {"wait-resize [SECONDS]",
     "let frames pass until the window's size differs from the one the last wait-resize saw (at first: the script's first frame's): a window manager's maximise, xdotool from outside, F11; an error after SECONDS (30)"},
    {"resize W H",
     "resize the window (each side 16 to 8192 pixels)"},
    {"click X Y",
     "click the left button at window pixel X Y (as a user would)"},
    {"click-node NAME",
     "click the centre of a graph node (op or tensor) on the canvas"},
    {"drag X1 Y1 X2 Y2",
     "drag with the left button from one window pixel to another"},
    {"scroll X Y NOTCHES",
     "turn the wheel at window pixel X Y (positive zooms in)"},
    {"key K",
     "press and release a key: a letter or digit (F: fit), or Left, Right, Up, Down, Home, End, PageUp, PageDown, Enter, Escape, Tab, Space, Backspace, Delete, F1-F12, with Ctrl+, Alt+, Shift+ in front (Alt+Right: the next lesson step)"},
    {"type TEXT",
     "type TEXT into the focused widget (\"\\n\" is Enter)"},
    {"quit",
     "close the app"},
    {"view graph|schedule|tiles|memory|roofline|timings|lessons",
     "show a centre view (keys 1-7)"},
    {"apply STEPS",
     "apply schedule steps, e.g. apply \"tile(i, 16)\" (quotes optional)"},
    {"undo",
     "step back in the schedule history (Ctrl+Z)"},
    {"redo",
     "step forward in the schedule history (Ctrl+Y)"},
    {"goto-step N",
     "go to history entry N (0 = the default lowering)"},
    {"machine NAME",
     "machine preset for the memory simulation (host, h200, tiny, ...)"},
    {"simulate [anyway]",
     "simulate the current kernel's trace on the machine (background); sized first: a run longer than ~10 s waits for `simulate anyway`, one that cannot fit in memory is refused with what it needs"},
    {"run-cpu [anyway]",
     "JIT-compile, verify and time the current kernel on this CPU (sized as simulate)"},
    {"run-gpu",
     "run the current kernel on this computer's GPU (NVRTC, verified, timed beside cuBLAS) through the GPU bench; needs the CUDA build"},
    {"cancel",
     "cancel the background jobs"},
    {"wait-jobs",
     "let frames pass until no background job is running (the lesson player's included)"},
    {"present [on|off]",
     "presentation mode (F5): one large view; arrows step the history"},
    {"fullscreen",
     "toggle a full-screen window (F11)"},
    {"tiles record [anyway]|play|pause|step|back|seek N|speed X",
     "record (sized as simulate) or drive the Tiles animation"},
    {"machine-edit start|set SECTION KEY VALUE|cancel|save PATH",
     "edit a copy of the machine's file (the parser checks each value); save it and use it"},
    {"export TABLE PATH",
     "write a view's table as CSV (.json: JSON) or the centre view as PNG (TABLE view); File > Export"},
    {"baseline pin [N]|pin-recorded N|clear|run-cpu",
     "pin the current schedule (or history entry N, or run N of the machine's counters recording) as baseline A; forget it; run A on this CPU"},
    {"memory formula LEVEL [TENSOR]|off",
     "the Memory view's \"why this number\" popup: the analytic formula of LEVEL's misses (of TENSOR), or main memory's bytes"},
    {"autotune sim|cpu|show|hide",
     "sweep two tile sizes: predicted on the machine or timed on this CPU (background); show or hide the sweep in the Timings view"},
    {"autotune loops A B|auto",
     "the two loops to sweep (default: the two innermost)"},
    {"palette input NAME DIMS [dtype]",
     "add a graph input `NAME: [DIMS]` to the model text"},
    {"palette weight NAME DIMS [dtype]",
     "add a weight `NAME: [DIMS] weight`"},
    {"palette add OP A [B [C]] [key=value ...] [as NAME]",
     "append `t1 = OP(A, ...)` (graph_edit.h)"},
    {"palette delete NAME",
     "remove the line defining NAME when nothing uses it"},
    {"palette pick NAME / unpick",
     "choose operands B, C after the selection (Shift+click)"},
    {"control NAME [VALUE]",
     "set a side panel's control (panel_controls.h), e.g. control schedule.tile-log2 5, control palette.open on, control timings.report 2; a text VALUE may be empty"},
    {"lesson open N|ID | next | prev | goto STEP | focus ID | draft ID TEXT | predict ID INPUT | show-answer ID | tries N | reveal [ID] | apply STEPS_ID | show-me CHECKPOINT_ID | load-model ID | restore-model | reset [ID] | panel text|model | close | reload",
     "the lesson player (lesson_player.h); show-answer gives up (the answer shown, graded as revealed); tries N is 0 to 5"},
    {"teacher [on|off]",
     "teacher mode: predict answers visible (a toggle when bare)"},
    {"start-here on|off",
     "the \"New to tilescope?\" card shown or dismissed"},
    {"write-state FILE",
     "write the state JSON (as --state-json) after the next frame"},
    {"write-frame-text FILE",
     "write every text the next frame draws, as drawn (masked), one per line: what a test asserts is nowhere on screen"},
    {"write-layout FILE",
     "write the layout JSON (as --layout-json) after the next frame, with the texts it cut off at their clip rectangle"},
    {"ui-scale X",
     "scale the UI's type (0.75 to 2.5; fonts re-rasterised at that size)"},
    {"save-model [FILE]",
     "save the model text (to its own file when FILE is left out)"},
    {"open-session FILE",
     "open a session file (a hand-out: model, steps, machine, view, lesson)"},
    {"save-session [FILE]",
     "save the session to FILE (a hand-out); bare: keep this work as the autosaved session (after --model, which leaves it alone)"},
    {"drop FILE",
     "a file dropped on the window: .json opens as a session, else a model"},
    {"files open-model|save-model|open-session|save-session|open-trace [DIR] | cd DIR | name TEXT | ok | close",
     "the in-app file browser (files.h)"},
    {"open-trace FILE",
     "open a PyTorch profiler trace of the model; the Trace view shows what ran for each node"},
    {"trace select N | trace clear",
     "pick node N (a row of the Trace view) to see its operators and kernels"},
};

}  // namespace

// [SECTION] Parsing and printing

std::vector<std::string> command_verbs() {
  std::vector<std::string> out;
  for (const VerbRow& row : kVerbRows)
    for (std::string_view v : row.verbs)
      if (!v.empty()) out.emplace_back(v);
  return out;
}

std::string command_reference() {
  std::string out;
  for (const HelpRow& row : kHelpRows) {
    out += "  " + std::string(row.usage);
    out += row.usage.size() < 28 ? std::string(28 - row.usage.size(), ' ') : "\n" + std::string(30, ' ');
    out += std::string(row.help) + "\n";
  }
  return out;
}

Command parse_command(std::string_view line) {
  std::string_view rest = line;
  const std::string_view verb = take_word(rest);
  if (verb.empty()) throw CommandError("empty command");
  for (const VerbRow& row : kVerbRows)
    for (std::string_view v : row.verbs)
      if (!v.empty() && v == verb) {
        Command c;
        row.parse(c, verb, rest);
        return c;
      }
  std::string known;
  for (const std::string& v : command_verbs()) known += (known.empty() ? "" : ", ") + v;
  throw CommandError("unknown command '" + std::string(verb) + "' (known: " + known + ")");
}


std::string command_to_string(const Command& c) {
  switch (c.kind) {
    case CommandKind::SetModelFile:
      return "set-model-file " + c.text;
    case CommandKind::SetModelText:
      return "set-model-text " + escape(c.text);
    case CommandKind::EditModelText:
      return "edit-model-text " + escape(c.text);
    case CommandKind::ReplaceLine:
      return "replace-line " + fmt(c.a) + " " + escape(c.text);
    case CommandKind::SelectOp:
      return "select-op " + c.text;
    case CommandKind::SelectTensor:
      return "select-tensor " + c.text;
    case CommandKind::ClearSelection:
      return "clear-selection";
    case CommandKind::Zoom:
      return "zoom " + fmt(c.a) + (c.anchored ? " " + fmt(c.c) + " " + fmt(c.d) : "");
    case CommandKind::Pan:
      return "pan " + fmt(c.a) + " " + fmt(c.b);
    case CommandKind::Fit:
      return "fit";
    case CommandKind::SetTheme:
      return "theme " + c.text;
    case CommandKind::Screenshot:
      return "screenshot " + c.text;
    case CommandKind::ScreenshotScreen:
      return "screenshot-screen " + c.text;
    case CommandKind::WaitFrames:
      return "wait-frames " + fmt(c.a);
    case CommandKind::Resize:
      return "resize " + fmt(c.a) + " " + fmt(c.b);
    case CommandKind::Click:
      return "click " + fmt(c.a) + " " + fmt(c.b);
    case CommandKind::ClickNode:
      return "click-node " + c.text;
    case CommandKind::Drag:
      return "drag " + fmt(c.a) + " " + fmt(c.b) + " " + fmt(c.c) + " " + fmt(c.d);
    case CommandKind::Scroll:
      return "scroll " + fmt(c.a) + " " + fmt(c.b) + " " + fmt(c.c);
    case CommandKind::Key:
      return "key " + c.text;
    case CommandKind::Type:
      return "type " + escape(c.text);
    case CommandKind::WaitSeconds:
      return "wait-seconds " + fmt(c.a);
    case CommandKind::Quit:
      return "quit";
    case CommandKind::SetView:
      return "view " + c.text;
    case CommandKind::Apply:
      return "apply \"" + escape(c.text) + "\"";
    case CommandKind::Undo:
      return "undo";
    case CommandKind::Redo:
      return "redo";
    case CommandKind::GoToStep:
      return "goto-step " + fmt(c.a);
    case CommandKind::SetMachine:
      return "machine " + c.text;
    case CommandKind::Simulate:
      return c.text.empty() ? "simulate" : "simulate " + c.text;
    case CommandKind::RunCpu:
      return c.text.empty() ? "run-cpu" : "run-cpu " + c.text;
    case CommandKind::RunGpu:
      return "run-gpu";
    case CommandKind::Cancel:
      return "cancel";
    case CommandKind::WaitJobs:
      return "wait-jobs";
    case CommandKind::WaitResize:
      return "wait-resize " + fmt(c.a);
    case CommandKind::Present:
      return c.text.empty() ? "present" : "present " + c.text;
    case CommandKind::Fullscreen:
      return "fullscreen";
    case CommandKind::MemoryFormula:
      return "memory formula " + c.text;
    case CommandKind::Baseline:
      return "baseline " + c.text +
             ((c.text == "pin" || c.text == "pin-recorded") && c.a >= 0 ? " " + fmt(c.a) : "");
    case CommandKind::MachineEdit:
      return "machine-edit " + escape(c.text);
    case CommandKind::Export:
      return "export " + c.text.substr(0, c.text.find(' ')) + " " +
             escape(c.text.substr(c.text.find(' ') + 1));
    case CommandKind::Palette:
      return "palette " + c.text;
    case CommandKind::Autotune:
      return "autotune " + c.text;
    case CommandKind::Control: {
      const size_t space = c.text.find(' ');
      const std::string value = space == std::string::npos ? "" : c.text.substr(space + 1);
      return "control " + c.text.substr(0, space) + (value.empty() ? "" : " " + escape(value));
    }
    case CommandKind::Tiles:
      if (c.text == "gpu") return std::string("tiles gpu ") + (c.a != 0 ? "on" : "off");
      return "tiles " + c.text +
             (c.text == "seek" || c.text == "speed" || c.text == "block" || c.text == "warp"
                  ? " " + fmt(c.a)
                  : "");
    case CommandKind::Lesson:
      return "lesson " + escape(c.text);
    case CommandKind::Teacher:
      return c.text.empty() ? "teacher" : "teacher " + c.text;
    case CommandKind::StartHere:
      return "start-here " + c.text;
    case CommandKind::WriteState:
      return "write-state " + c.text;
    case CommandKind::WriteFrameText:
      return "write-frame-text " + c.text;
    case CommandKind::WriteLayout:
      return "write-layout " + c.text;
    case CommandKind::UiScale:
      return "ui-scale " + fmt(c.a);
    case CommandKind::SaveModel:
      return c.text.empty() ? "save-model" : "save-model " + c.text;
    case CommandKind::OpenSession:
      return "open-session " + c.text;
    case CommandKind::SaveSession:
      return c.text.empty() ? "save-session" : "save-session " + c.text;
    case CommandKind::Drop:
      return "drop " + c.text;
    case CommandKind::Files:
      return "files " + c.text;
    case CommandKind::OpenTrace:
      return "open-trace " + c.text;
    case CommandKind::Trace:
      return "trace " + c.text;
  }
  return "quit";
}

std::vector<ScriptLine> parse_script(std::string_view text, const std::string& file) {
  std::vector<ScriptLine> out;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    const std::string_view line = trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.front() == '#') continue;
    try {
      out.push_back({line_no, parse_command(line)});
    } catch (const CommandError& e) {
      throw CommandError(file + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
  return out;
}

std::optional<KeyChord> parse_key_chord(std::string_view name) {
  KeyChord k;
  // Modifiers first, each ending in '+' ("Ctrl+Shift+Z").
  for (;;) {
    const size_t plus = name.find('+');
    if (plus == std::string_view::npos || plus + 1 == name.size()) break;
    const std::string_view mod = name.substr(0, plus);
    if (mod == "Ctrl")
      k.ctrl = true;
    else if (mod == "Alt")
      k.alt = true;
    else if (mod == "Shift")
      k.shift = true;
    else
      return std::nullopt;
    name.remove_prefix(plus + 1);
  }
  if (name.size() == 1 && std::isalnum(static_cast<unsigned char>(name[0]))) {
    k.code = std::toupper(static_cast<unsigned char>(name[0]));  // GLFW's letters and digits
    return k;
  }
  // GLFW key codes (glfw3.h); the core includes no GLFW.
  static const std::pair<std::string_view, int> kNamed[] = {
      {"Space", 32},  {"Escape", 256}, {"Enter", 257}, {"Tab", 258}, {"Backspace", 259},
      {"Delete", 261}, {"Home", 268},  {"End", 269},   {"PageUp", 266}, {"PageDown", 267},
      {"Right", 262}, {"Left", 263},   {"Down", 264},  {"Up", 265},  {"F1", 290},
      {"F2", 291},    {"F3", 292},     {"F4", 293},    {"F5", 294},  {"F6", 295},
      {"F7", 296},    {"F8", 297},     {"F9", 298},    {"F10", 299}, {"F11", 300},
      {"F12", 301}};
  for (const auto& [n, code] : kNamed)
    if (n == name) {
      k.code = code;
      return k;
    }
  return std::nullopt;
}

std::string read_text_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  io::TextInput in = io::read_text_input(path, max_bytes, what);
  if (!in.ok) throw CommandError(in.error);
  return std::move(in.text);
}

}  // namespace tilescope::core

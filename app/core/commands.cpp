// Named commands: parsing script lines, printing them back, and applying them to the AppState.
#include "app/core/commands.h"

#include "app/core/autotune_jobs.h"
#include "app/core/files.h"
#include "app/core/graph_edit.h"
#include "app/core/lesson_commands.h"
#include "app/core/memory_model.h"
#include "app/core/session.h"
#include "sim/io/input.h"
#include "sim/pipeline.h"

#include <algorithm>
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

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

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

// "" or why a resize to w x h is refused (parse time for scripts, apply time for the rest).
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

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

// [SECTION] Parsing and printing

Command parse_command(std::string_view line) {
  std::string_view rest = line;
  const std::string_view verb = take_word(rest);
  Command c;
  if (verb == "set-model-file") {
    c.kind = CommandKind::SetModelFile;
    c.text = require_rest(rest, verb, "a file path");
  } else if (verb == "set-model-text" || verb == "edit-model-text") {
    c.kind = verb == "set-model-text" ? CommandKind::SetModelText : CommandKind::EditModelText;
    c.text = unescape(trim(rest));
  } else if (verb == "replace-line") {
    c.kind = CommandKind::ReplaceLine;
    c.a = parse_positive_int(take_word(rest), "line number", verb);
    c.text = unescape(rest);
  } else if (verb == "select-op" || verb == "select-tensor") {
    c.kind = verb == "select-op" ? CommandKind::SelectOp : CommandKind::SelectTensor;
    c.text = std::string(take_word(rest));
    if (c.text.empty()) throw CommandError(std::string(verb) + ": needs a name");
    expect_end(rest, verb);
  } else if (verb == "clear-selection" || verb == "fit" || verb == "quit") {
    c.kind = verb == "fit"    ? CommandKind::Fit
             : verb == "quit" ? CommandKind::Quit
                              : CommandKind::ClearSelection;
    expect_end(rest, verb);
  } else if (verb == "zoom") {
    c.kind = CommandKind::Zoom;
    c.a = parse_number(take_word(rest), "factor", verb);
    if (c.a <= 0) throw CommandError("zoom: factor must be > 0, got " + fmt(c.a));
    if (!trim(rest).empty()) {
      c.c = parse_pixel(take_word(rest), "anchor x", verb);
      c.d = parse_pixel(take_word(rest), "anchor y", verb);
      c.anchored = true;
    }
    expect_end(rest, verb);
  } else if (verb == "pan") {
    c.kind = CommandKind::Pan;
    c.a = parse_number(take_word(rest), "dx", verb);
    c.b = parse_number(take_word(rest), "dy", verb);
    expect_end(rest, verb);
  } else if (verb == "theme") {
    c.kind = CommandKind::SetTheme;
    c.text = std::string(take_word(rest));
    if (!theme_from_name(c.text)) {
      throw CommandError("theme: unknown theme '" + c.text + "' (use light, dark or projector)");
    }
    expect_end(rest, verb);
  } else if (verb == "screenshot" || verb == "screenshot-screen") {
    c.kind = verb == "screenshot" ? CommandKind::Screenshot : CommandKind::ScreenshotScreen;
    c.text = require_rest(rest, verb, "an output .png path");
  } else if (verb == "wait-frames") {
    c.kind = CommandKind::WaitFrames;
    c.a = parse_positive_int(take_word(rest), "frame count", verb);
    expect_end(rest, verb);
  } else if (verb == "click") {
    c.kind = CommandKind::Click;
    c.a = parse_pixel(take_word(rest), "x", verb);
    c.b = parse_pixel(take_word(rest), "y", verb);
    expect_end(rest, verb);
  } else if (verb == "click-node") {
    c.kind = CommandKind::ClickNode;
    c.text = std::string(take_word(rest));
    if (c.text.empty()) throw CommandError("click-node: needs a node name");
    expect_end(rest, verb);
  } else if (verb == "drag") {
    c.kind = CommandKind::Drag;
    c.a = parse_pixel(take_word(rest), "x1", verb);
    c.b = parse_pixel(take_word(rest), "y1", verb);
    c.c = parse_pixel(take_word(rest), "x2", verb);
    c.d = parse_pixel(take_word(rest), "y2", verb);
    expect_end(rest, verb);
  } else if (verb == "scroll") {
    c.kind = CommandKind::Scroll;
    c.a = parse_pixel(take_word(rest), "x", verb);
    c.b = parse_pixel(take_word(rest), "y", verb);
    c.c = parse_number(take_word(rest), "notches", verb);
    if (std::abs(c.c) > 100) throw CommandError("scroll: notches must be from -100 to 100");
    expect_end(rest, verb);
  } else if (verb == "key") {
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
  } else if (verb == "wait-resize") {
    c.kind = CommandKind::WaitResize;
    const std::string_view word = take_word(rest);
    c.a = word.empty() ? 30.0 : parse_number(word, "seconds", verb);
    if (c.a <= 0 || c.a > 3600) throw CommandError("wait-resize: expected 0 to 3600 seconds");
    expect_end(rest, verb);
  } else if (verb == "wait-seconds") {
    c.kind = CommandKind::WaitSeconds;
    c.a = parse_number(take_word(rest), "seconds", verb);
    if (c.a < 0 || c.a > 3600) throw CommandError("wait-seconds: expected 0 to 3600 seconds");
    expect_end(rest, verb);
  } else if (verb == "type") {
    c.kind = CommandKind::Type;
    c.text = unescape(trim(rest));
    if (c.text.empty()) throw CommandError("type: needs the text to type");
  } else if (verb == "resize") {
    c.kind = CommandKind::Resize;
    c.a = parse_positive_int(take_word(rest), "width", verb);
    c.b = parse_positive_int(take_word(rest), "height", verb);
    if (std::string e = check_window_size(c.a, c.b); !e.empty()) throw CommandError(e);
    expect_end(rest, verb);
  } else if (verb == "view") {
    c.kind = CommandKind::SetView;
    c.text = std::string(take_word(rest));
    if (!view_tab_from_name(c.text)) {
      throw CommandError("view: unknown view '" + c.text +
                         "' (use graph, schedule, tiles, memory, roofline, timings or lessons)");
    }
    expect_end(rest, verb);
  } else if (verb == "apply") {
    c.kind = CommandKind::Apply;
    std::string_view steps = trim(rest);
    if (steps.size() >= 2 && steps.front() == '"' && steps.back() == '"')
      steps = steps.substr(1, steps.size() - 2);
    c.text = unescape(steps);
    if (trim(c.text).empty()) throw CommandError("apply: needs a step such as \"tile(i, 16)\"");
  } else if (verb == "simulate" || verb == "run-cpu") {
    c.kind = verb == "simulate" ? CommandKind::Simulate : CommandKind::RunCpu;
    c.text = std::string(take_word(rest));
    if (!c.text.empty() && c.text != "anyway")
      throw CommandError(std::string(verb) +
                         ": expected nothing or 'anyway' (start a long job), got '" + c.text + "'");
    expect_end(rest, verb);
  } else if (verb == "run-gpu") {
    c.kind = CommandKind::RunGpu;
    expect_end(rest, verb);
  } else if (verb == "undo" || verb == "redo" || verb == "cancel" || verb == "wait-jobs") {
    c.kind = verb == "undo"     ? CommandKind::Undo
             : verb == "redo"   ? CommandKind::Redo
             : verb == "cancel" ? CommandKind::Cancel
                                : CommandKind::WaitJobs;
    expect_end(rest, verb);
  } else if (verb == "goto-step") {
    c.kind = CommandKind::GoToStep;
    const double n = parse_number(take_word(rest), "entry", verb);
    if (n < 0 || n != std::floor(n) || n > 1e6)
      throw CommandError("goto-step: entry must be a whole number >= 0");
    c.a = n;
    expect_end(rest, verb);
  } else if (verb == "tiles") {
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
  } else if (verb == "present") {
    c.kind = CommandKind::Present;
    c.text = std::string(take_word(rest));
    if (!c.text.empty() && c.text != "on" && c.text != "off")
      throw CommandError("present: expected on, off or nothing (toggle), got '" + c.text + "'");
    expect_end(rest, verb);
  } else if (verb == "lesson") {
    c.kind = CommandKind::Lesson;
    c.text = unescape(require_rest(rest, verb,
                                   "open, next, prev, goto, focus, draft, predict, "
                                   "reveal, apply, show-me, load-model, "
                                   "restore-model, reset, panel, close or reload"));
    if (std::string e = check_lesson_command(c.text); !e.empty()) throw CommandError(e);
  } else if (verb == "start-here") {
    c.kind = CommandKind::StartHere;
    c.text = std::string(take_word(rest));
    if (c.text != "on" && c.text != "off")
      throw CommandError("start-here: expected on or off, got '" + c.text + "'");
    expect_end(rest, verb);
  } else if (verb == "teacher") {
    c.kind = CommandKind::Teacher;
    c.text = std::string(take_word(rest));
    if (!c.text.empty() && c.text != "on" && c.text != "off")
      throw CommandError("teacher: expected on, off or nothing (toggle), got '" + c.text + "'");
    expect_end(rest, verb);
  } else if (verb == "write-state" || verb == "write-frame-text" || verb == "write-layout" ||
             verb == "open-session" || verb == "drop") {
    c.kind = verb == "write-state"        ? CommandKind::WriteState
             : verb == "write-frame-text" ? CommandKind::WriteFrameText
             : verb == "write-layout"     ? CommandKind::WriteLayout
             : verb == "open-session"     ? CommandKind::OpenSession
                                          : CommandKind::Drop;
    c.text = require_rest(rest, verb, "a file path");
  } else if (verb == "save-model" || verb == "save-session") {
    c.kind = verb == "save-model" ? CommandKind::SaveModel : CommandKind::SaveSession;
    c.text = std::string(trim(rest));
  } else if (verb == "ui-scale") {
    c.kind = CommandKind::UiScale;
    c.a = parse_number(take_word(rest), "scale", verb);
    if (!(c.a >= kMinUiScale && c.a <= kMaxUiScale))
      throw CommandError("ui-scale: expected a scale from " + fmt(kMinUiScale) + " to " +
                         fmt(kMaxUiScale) + ", got " + fmt(c.a));
    expect_end(rest, verb);
  } else if (verb == "files") {
    c.kind = CommandKind::Files;
    c.text = require_rest(rest, verb,
                          "open-model, save-model, open-session, save-session, cd, name, ok or "
                          "close");
  } else if (verb == "palette") {
    c.kind = CommandKind::Palette;
    c.text = require_rest(rest, verb, "input, weight, add or delete and their arguments");
  } else if (verb == "control") {
    // Checked now against scratch controls, so a script's bad line fails before it runs.
    c.kind = CommandKind::Control;
    const std::string name(take_word(rest));
    if (name.empty()) throw CommandError("control: needs a name (" + panel_control_names() + ")");
    const std::string value = unescape(trim(rest));
    PanelControls scratch;
    if (std::string e = set_panel_control(scratch, name, value); !e.empty()) throw CommandError(e);
    c.text = name + " " + value;
  } else if (verb == "autotune") {
    c.kind = CommandKind::Autotune;
    c.text = require_rest(rest, verb, "sim, cpu, show, hide or loops A B");
    const std::string sub = c.text.substr(0, c.text.find(' '));
    if (sub != "sim" && sub != "cpu" && sub != "show" && sub != "hide" && sub != "loops")
      throw CommandError("autotune: expected sim, cpu, show, hide or loops A B, got '" + sub + "'");
  } else if (verb == "fullscreen") {
    c.kind = CommandKind::Fullscreen;
    expect_end(rest, verb);
  } else if (verb == "memory") {
    c.kind = CommandKind::MemoryFormula;
    if (take_word(rest) != "formula")
      throw CommandError("memory: expected formula LEVEL [TENSOR] or formula off");
    c.text = std::string(trim(rest));
    if (c.text.empty())
      throw CommandError(
          "memory formula: needs a level such as L1 (then optionally a tensor), or off");
  } else if (verb == "machine") {
    c.kind = CommandKind::SetMachine;
    c.text = std::string(take_word(rest));
    if (c.text.empty()) throw CommandError("machine: needs a preset name such as host or h200");
    expect_end(rest, verb);
  } else if (verb.empty()) {
    throw CommandError("empty command");
  } else {
    throw CommandError("unknown command '" + std::string(verb) +
                       "' (known: set-model-file, set-model-text, edit-model-text, replace-line, "
                       "select-op, select-tensor, clear-selection, zoom, pan, fit, theme, "
                       "screenshot, screenshot-screen, wait-frames, wait-seconds, wait-resize, resize, click, click-node, drag, "
                       "scroll, key, type, quit, view, apply, undo, redo, goto-step, "
                       "machine, simulate, run-cpu, run-gpu, cancel, wait-jobs, palette, autotune, "
                       "control, lesson, teacher)");
  }
  return c;
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

// [SECTION] Applying

namespace {

SyntheticInput pointer_at(float x, float y, bool down, float wheel = 0.0f) {
  SyntheticInput in;
  in.x = x;
  in.y = y;
  in.down = down;
  in.wheel = wheel;
  return in;
}

// A click as the devices would deliver it: hover, press, release, each on its own frame.
void queue_click(AppState& state, float x, float y) {
  auto& in = state.requests.input;
  in.push_back(pointer_at(x, y, false));
  in.push_back(pointer_at(x, y, true));
  in.push_back(pointer_at(x, y, false));
}

}  // namespace

std::string apply_command(AppState& state, const Command& c) {
  const graph::Graph* g = state.graph();
  switch (c.kind) {
    case CommandKind::SetModelFile: {
      std::string text;
      try {
        text = pipeline::read_model_file(c.text).text;
      } catch (const graph::GraphError& e) {
        return e.message();
      }
      state.model.text = std::move(text);
      state.model.loaded_text = state.model.text;
      state.model.path = c.text;
      state.model.path_chosen = true;
      state.view.fit_pending = true;
      reparse_model(state);
      return {};
    }
    case CommandKind::SetModelText:
      state.model.text = c.text;
      reparse_model(state);
      return {};
    case CommandKind::EditModelText:
      state.model.text = c.text;
      state.model.reparse_pending = true;
      state.model.edit_time = state.now;
      return {};
    case CommandKind::ReplaceLine: {
      const int target = static_cast<int>(c.a);
      std::string& text = state.model.text;
      size_t start = 0;
      for (int l = 1; l < target; ++l) {
        const size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
          return "replace-line: the model has only " + std::to_string(l) + " lines, not " +
                 std::to_string(target);
        }
        start = nl + 1;
      }
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      text.replace(start, end - start, c.text);
      reparse_model(state);
      return {};
    }
    case CommandKind::SelectOp:
      if (!g) return "select-op: no model is loaded";
      if (!g->find_op(c.text)) return "select-op: the graph has no op named '" + c.text + "'";
      state.selection = {Selection::Kind::Op, c.text};
      return {};
    case CommandKind::SelectTensor:
      if (!g) return "select-tensor: no model is loaded";
      if (!g->find_tensor(c.text))
        return "select-tensor: the graph has no tensor named '" + c.text + "'";
      state.selection = {Selection::Kind::Tensor, c.text};
      return {};
    case CommandKind::ClearSelection:
      state.selection = {};
      return {};
    case CommandKind::Zoom: {
      // Views push zooms too (the wheel), so the factor is checked here as well as when parsed.
      if (!(std::isfinite(c.a) && c.a > 0)) return "zoom: factor must be a finite number > 0";
      const Rect canvas = state.panels().graph;
      zoom_view(state, c.a, c.anchored ? c.c : canvas.w / 2, c.anchored ? c.d : canvas.h / 2);
      return {};
    }
    case CommandKind::Pan:
      if (!std::isfinite(c.a) || !std::isfinite(c.b)) return "pan: dx and dy must be finite";
      pan_view(state, c.a, c.b);
      return {};
    case CommandKind::Fit:
      state.view.fit_pending = true;  // done by refresh_scene, once the scene matches the font
      state.view.fit_whole = true;
      return {};
    case CommandKind::SetTheme:
      state.theme = *theme_from_name(c.text);
      state.view.fit_pending = true;  // new type size, new scene size
      return {};
    case CommandKind::Screenshot:
      state.requests.screenshot_path = c.text;
      return {};
    case CommandKind::ScreenshotScreen:
      state.requests.screen_shot_path = c.text;
      return {};
    case CommandKind::Resize:
      if (std::string e = check_window_size(c.a, c.b); !e.empty()) return e;
      state.requests.resize_w = static_cast<int>(c.a);
      state.requests.resize_h = static_cast<int>(c.b);
      return {};  // the view follows the canvas's new size (follow_canvas_size)
    case CommandKind::Click:
      queue_click(state, static_cast<float>(c.a), static_cast<float>(c.b));
      return {};
    case CommandKind::ClickNode: {
      if (!state.scene || state.bench.tab != ViewTab::Graph)
        return "click-node: no graph is on screen (use: view graph)";
      int index = -1;
      for (size_t i = 0; i < state.scene->nodes.size(); ++i)
        if (state.scene->nodes[i].name == c.text) index = static_cast<int>(i);
      if (index < 0) return "click-node: the graph has no node named '" + c.text + "'";
      const SceneNode& n = state.scene->nodes[size_t(index)];
      const Rect canvas = state.panels().graph;
      const float x = canvas.x + state.view.pan_x + (n.x + n.w / 2) * state.view.zoom;
      const float y = canvas.y + state.view.pan_y + (n.y + n.h / 2) * state.view.zoom;
      if (!canvas.contains(x, y)) {
        return "click-node: '" + c.text + "' is outside the visible canvas (try fit first)";
      }
      queue_click(state, x, y);
      return {};
    }
    case CommandKind::Drag: {
      auto& in = state.requests.input;
      const float x1 = static_cast<float>(c.a), y1 = static_cast<float>(c.b);
      const float x2 = static_cast<float>(c.c), y2 = static_cast<float>(c.d);
      in.push_back(pointer_at(x1, y1, false));
      in.push_back(pointer_at(x1, y1, true));
      constexpr int kSteps = 8;  // a hand moves over several frames
      for (int s = 1; s <= kSteps; ++s) {
        const float t = static_cast<float>(s) / kSteps;
        in.push_back(pointer_at(x1 + (x2 - x1) * t, y1 + (y2 - y1) * t, true));
      }
      in.push_back(pointer_at(x2, y2, false));
      return {};
    }
    case CommandKind::Scroll: {
      auto& in = state.requests.input;
      const float x = static_cast<float>(c.a), y = static_cast<float>(c.b);
      in.push_back(pointer_at(x, y, false));
      in.push_back(pointer_at(x, y, false, static_cast<float>(c.c)));
      return {};
    }
    case CommandKind::Key: {
      SyntheticInput press;
      press.x = -1.0f;  // pointer off the window: a key press does not hover anything
      press.y = -1.0f;
      const std::optional<KeyChord> chord = parse_key_chord(c.text);
      if (!chord) return "key: unknown key '" + c.text + "'";
      press.key = chord->code;
      press.ctrl = chord->ctrl;
      press.alt = chord->alt;
      press.shift = chord->shift;
      state.requests.input.push_back(press);
      return {};
    }
    case CommandKind::Quit:
      state.requests.quit = true;
      return {};
    case CommandKind::Type: {
      // Pointer off the window so it hovers nothing; the focused widget receives the characters.
      SyntheticInput typing;
      typing.x = -1.0f;
      typing.y = -1.0f;
      typing.text = c.text;
      state.requests.input.push_back(typing);
      return {};
    }
    case CommandKind::SetView:
      state.bench.tab = *view_tab_from_name(c.text);
      if (state.bench.tab == ViewTab::Lessons) {
        state.start_here = false;  // found them
        lesson_ensure_catalogue(state.lessons);
      }
      if (state.bench.tab == ViewTab::Graph) state.view.fit_pending = true;  // the canvas moved
      return {};
    case CommandKind::Apply:
      return workbench_apply(state.bench, c.text);
    case CommandKind::Undo:
      return workbench_undo(state.bench) ? std::string() : "undo: nothing to undo";
    case CommandKind::Redo:
      return workbench_redo(state.bench) ? std::string() : "redo: nothing to redo";
    case CommandKind::GoToStep:
      return workbench_go_to(state.bench, static_cast<size_t>(c.a));
    case CommandKind::SetMachine:
      return workbench_set_machine(state.bench, c.text);
    case CommandKind::Simulate:
      return workbench_simulate(state.bench, c.text == "anyway");
    case CommandKind::RunCpu:
      return workbench_run_cpu(state.bench, c.text == "anyway");
    case CommandKind::RunGpu:
      return workbench_run_gpu(state.bench);
    case CommandKind::Cancel:
      workbench_cancel(state.bench);
      return {};
    case CommandKind::Present:
      state.presentation = c.text.empty() ? !state.presentation : c.text == "on";
      state.view.fit_pending = true;  // the canvas changed size
      return {};
    case CommandKind::Fullscreen:
      state.requests.toggle_fullscreen = true;
      return {};
    case CommandKind::Palette: {
      // `pick NAME` / `unpick` choose the operands after the selection (B, C); no text changes.
      if (c.text.rfind("pick ", 0) == 0) {
        const std::string name(trim(std::string_view(c.text).substr(5)));
        const std::vector<std::string> named = named_tensors(outline_model(state.model.text));
        if (std::find(named.begin(), named.end(), name) == named.end())
          return "palette pick: no line of the model text names a tensor '" + name + "'";
        // With nothing selected the first pick is operand A (the selection), as a click on its
        // node would make it: "pick y" on a fresh palette used to fill B and leave A empty.
        if (state.selection.kind == Selection::Kind::None) {
          if (const graph::Graph* g = state.graph()) {
            if (const auto t = g->find_tensor(name)) {
              const graph::Tensor& tensor = g->tensor(*t);
              if (tensor.producer >= 0)
                state.selection = {Selection::Kind::Op, g->op(tensor.producer).name};
              else
                state.selection = {Selection::Kind::Tensor, name};
              return {};
            }
          }
        }
        auto& picks = state.palette_picks;
        picks.erase(std::remove(picks.begin(), picks.end(), name), picks.end());
        picks.push_back(name);
        if (picks.size() > 2) picks.erase(picks.begin());
        return {};
      }
      if (trim(c.text) == "unpick") {
        // "clear" starts the operands over: A (the selection) as well as B and C.
        state.palette_picks.clear();
        state.selection = {};
        return {};
      }
      // The palette edits the text the editor shows, so a pending debounced edit is parsed first.
      if (state.model.reparse_pending) reparse_model(state);
      TextEdit edit = apply_palette_command(state.model.text, c.text);
      state.palette_note = edit.message;
      state.palette_note_ok = edit.ok;
      if (!edit.ok) return "palette: " + edit.message;
      const bool deleted = c.text.rfind("delete", 0) == 0;
      state.model.text = std::move(edit.text);
      reparse_model(state);
      state.palette_picks.clear();
      if (deleted) {
        if (state.selection.name == edit.name) state.selection = {};
      } else if (!state.model.error && state.graph() && state.graph()->find_tensor(edit.name)) {
        state.selection = {Selection::Kind::Tensor, edit.name};  // the next op chains from it
      }
      return {};
    }
    case CommandKind::Autotune:
      return autotune_command(state.bench, c.text);
    case CommandKind::Control: {
      const size_t space = c.text.find(' ');
      return set_panel_control(state.controls, std::string_view(c.text).substr(0, space),
                               space == std::string::npos
                                   ? std::string_view()
                                   : std::string_view(c.text).substr(space + 1));
    }
    case CommandKind::MemoryFormula:
      return workbench_memory_formula(state.bench, c.text);
    case CommandKind::Lesson:
      return lesson_command(state, c.text);
    case CommandKind::Teacher:
      return teacher_command(state, c.text.empty() ? !state.lessons.teacher : c.text == "on");
    case CommandKind::StartHere:
      state.start_here = c.text == "on";
      return {};
    case CommandKind::WriteState:
      state.requests.state_json_path = c.text;
      return {};
    case CommandKind::WriteFrameText:
      state.requests.frame_text_path = c.text;
      return {};
    case CommandKind::WriteLayout:
      state.requests.layout_json_path = c.text;
      return {};
    case CommandKind::UiScale:
      state.ui_scale = static_cast<float>(c.a);
      state.view.fit_pending = true;  // new type size, new scene size
      return {};
    case CommandKind::SaveModel:
      return save_model_file(state, c.text);
    case CommandKind::OpenSession:
      return open_session_file(state, c.text);
    case CommandKind::SaveSession:
      if (!c.text.empty()) return save_session_file(state, c.text);
      // Bare: keep this work as the autosaved session, the choice --model leaves to the learner.
      if (state.session_path.empty())
        return "save-session: no session file to keep (started with --no-session); give a path";
      state.autosave_paused = false;
      return {};
    case CommandKind::Drop:
      return open_dropped_file(state, c.text);
    case CommandKind::Files:
      return file_browser_command(state, c.text);
    case CommandKind::Tiles:
      if (c.text == "record" || c.text == "record anyway")
        return state.bench.tiles_gpu
                   ? workbench_record_gpu_tiles(state.bench, c.text == "record anyway")
                   : workbench_record_tiles(state.bench, c.text == "record anyway");
      return workbench_tiles_control(state.bench, c.text, c.a);
    case CommandKind::WaitFrames:
    case CommandKind::WaitSeconds:
    case CommandKind::WaitResize:
    case CommandKind::WaitJobs:
      return {};
  }
  return {};
}

}  // namespace tilescope::core

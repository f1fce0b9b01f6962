// Every user action as a named command: parsed from --script lines, pushed by views, applied
// between frames. A command's text form is what a script line holds, so anything a user does can
// be replayed.
//
// The verbs and what each takes are two tables in commands.cpp: the parsers (one row per verb) and
// the help (usage and one line each); command_reference() prints the help, and a test holds the
// two tables to the same verbs. commands_apply.cpp applies a parsed Command.
#pragma once

#include "app/core/app_state.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

enum class CommandKind {
  SetModelFile,
  SetModelText,
  EditModelText,
  ReplaceLine,
  SelectOp,
  SelectTensor,
  ClearSelection,
  Zoom,
  Pan,
  Fit,
  SetTheme,
  Screenshot,
  ScreenshotScreen,
  WaitFrames,
  WaitSeconds,
  WaitResize,
  Resize,
  Click,
  ClickNode,
  Drag,
  Scroll,
  Key,
  Type,
  Quit,
  SetView,
  Apply,
  Undo,
  Redo,
  GoToStep,
  SetMachine,
  Simulate,
  RunCpu,
  RunGpu,
  Cancel,
  WaitJobs,
  Tiles,
  Present,
  Fullscreen,
  MemoryFormula,
  Baseline,
  Export,
  MachineEdit,
  Palette,
  Autotune,
  Control,
  Lesson,
  Teacher,
  StartHere,
  WriteState,
  WriteFrameText,
  WriteLayout,
  UiScale,
  SaveModel,
  OpenSession,
  SaveSession,
  Drop,
  Files,
  OpenTrace,
  Trace,
};

struct Command {
  CommandKind kind = CommandKind::Quit;
  std::string text;  // path, model text, name, theme; Control: "NAME VALUE"
  double a = 0.0;    // zoom factor / dx / width / line / frame count
  double b = 0.0;    // dy / height
  double c = 0.0;    // zoom anchor x
  double d = 0.0;    // zoom anchor y / drag end y
  bool anchored = false;
};

class CommandError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One script line → a command. Throws CommandError saying what is wrong with the line.
Command parse_command(std::string_view line);
// Every verb parse_command accepts, in its table's order.
std::vector<std::string> command_verbs();
// The command language's reference: each command's usage and what it does, one per line.
std::string command_reference();

// A command back to its script line (round-trips through parse_command).
std::string command_to_string(const Command& command);

struct ScriptLine {
  int line = 0;  // 1-based line in the script file
  Command command;
};

// A whole script: one command per line, '#' comments and blank lines skipped. Throws CommandError
// with "file:line: " in front of the first bad line's message.
std::vector<ScriptLine> parse_script(std::string_view text, const std::string& file);

// Applies one command to the state. Returns "" on success or a message saying why it could not
// be applied (unknown op name, unreadable file); the state is then unchanged.
// WaitFrames, WaitSeconds and WaitJobs are the script runner's business and do nothing here.
std::string apply_command(AppState& state, const Command& command);

// A `key` command's key as GLFW sees it: the key code and the modifiers held ("Alt+Right" →
// 262 with alt). nullopt for a name it does not know.
struct KeyChord {
  int code = 0;
  bool ctrl = false, alt = false, shift = false;
};
std::optional<KeyChord> parse_key_chord(std::string_view name);

// Reads a whole file of at most `max_bytes` through io::read_text_input; throws CommandError
// naming the file and `what` it should be when it cannot be read (a directory, /dev/zero).
std::string read_text_file(const std::string& path, uint64_t max_bytes, std::string_view what);

}  // namespace tilescope::core

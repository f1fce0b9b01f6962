// Every user action as a named command: parsed from --script lines, pushed by views, applied
// between frames. A command's text form is what a script line holds, so anything a user does can
// be replayed.
//
//   set-model-file PATH        open a model file (parsed at once)
//   set-model-text TEXT        replace the model text; "\n" in TEXT is a newline (parsed at once)
//   edit-model-text TEXT       as set-model-text, but parsed after the typing debounce (the editor)
//   replace-line N TEXT        replace line N (1-based) of the model text (parsed at once)
//   select-op NAME             select an op (inspector shows it)
//   select-tensor NAME         select a graph input, weight or output tensor
//   clear-selection
//   zoom FACTOR [X Y]          multiply the canvas zoom, about canvas point X Y (default: centre)
//   pan DX DY                  move the canvas content by DX DY pixels
//   fit                        fit the whole graph in the canvas (key F)
//   theme light|dark|projector
//   screenshot FILE            save a PNG of the window after the next frame renders
//   screenshot-screen FILE     save a PNG of what the display shows in the window, read back from
//                              the X server after the frame is presented (what a user sees)
//   wait-frames N              let N frames pass before the next script line
//   wait-seconds S             let S seconds pass (e.g. the typing debounce) before the next line
//   wait-resize [SECONDS]      let frames pass until the window's size differs from the one the
//                              last wait-resize saw (at first: the script's first frame's) — a
//                              window manager's maximise, xdotool from outside, F11; an error
//                              after SECONDS (30)
//   resize W H                 resize the window (each side 16 to 8192 pixels)
//   click X Y                  click the left button at window pixel X Y (as a user would)
//   click-node NAME            click the centre of a graph node (op or tensor) on the canvas
//   drag X1 Y1 X2 Y2           drag with the left button from one window pixel to another
//   scroll X Y NOTCHES         turn the wheel at window pixel X Y (positive zooms in)
//   key K                      press and release a key: a letter or digit (F: fit), or Left,
//                              Right, Up, Down, Home, End, PageUp, PageDown, Enter, Escape, Tab, Space,
//                              Backspace, Delete, F1-F12,
//                              with Ctrl+, Alt+, Shift+ in front (Alt+Right: the next lesson step)
//   type TEXT                  type TEXT into the focused widget ("\n" is Enter)
//   quit
//   view graph|schedule|tiles|memory|roofline|timings|lessons   show a centre view (keys 1-7)
//   apply STEPS                apply schedule steps, e.g. apply "tile(i, 16)" (quotes optional)
//   undo / redo                step back / forward in the schedule history (Ctrl+Z / Ctrl+Y)
//   goto-step N                go to history entry N (0 = the default lowering)
//   machine NAME               machine preset for the memory simulation (host, h200, tiny, ...)
//   simulate [anyway]          simulate the current kernel's trace on the machine (background);
//                              sized first: a run longer than ~10 s waits for `simulate anyway`,
//                              one that cannot fit in memory is refused with what it needs
//   run-cpu [anyway]           JIT-compile, verify and time the current kernel on this CPU (sized
//                              as simulate)
//   run-gpu                    run the current kernel on this computer's GPU (NVRTC, verified,
//                              timed beside cuBLAS) through the GPU bench; needs the CUDA build
//   cancel                     cancel the background jobs
//   wait-jobs                  let frames pass until no background job is running (the
//                              lesson player's included)
//   present [on|off]           presentation mode (F5): one large view; arrows step the history
//   fullscreen                 toggle a full-screen window (F11)
//   tiles record [anyway]|play|pause|step|back|seek N|speed X   record (sized as simulate) /
//                              drive the Tiles animation
//   memory formula LEVEL [TENSOR]|off   the Memory view's "why this number" popup: the analytic
//                              formula of LEVEL's misses (of TENSOR), or main memory's bytes
//   autotune sim|cpu|show|hide  sweep two tile sizes: predicted on the machine / timed on this
//                              CPU (background); show or hide the sweep in the Timings view
//   autotune loops A B|auto     the two loops to sweep (default: the two innermost)
//   palette input NAME DIMS [dtype]   add a graph input `NAME: [DIMS]` to the model text
//   palette weight NAME DIMS [dtype]  add a weight `NAME: [DIMS] weight`
//   palette add OP A [B [C]] [key=value ...] [as NAME]   append `t1 = OP(A, ...)` (graph_edit.h)
//   palette delete NAME               remove the line defining NAME when nothing uses it
//   palette pick NAME / unpick        choose operands B, C after the selection (Shift+click)
//   control NAME [VALUE]              set a side panel's control (panel_controls.h), e.g.
//                                     control schedule.tile-log2 5, control palette.open on,
//                                     control palette.name x2; a text VALUE may be empty
//   lesson open N|ID | next | prev | goto STEP | focus ID | draft ID TEXT | predict ID INPUT
//          | show-answer ID (give up: the answer shown, graded revealed) | tries N (0-5)
//          | reveal [ID] | apply STEPS_ID | show-me CHECKPOINT_ID | load-model ID
//          | restore-model | reset [ID] | panel text|model | close | reload
//                                     the lesson player (lesson_player.h)
//   teacher [on|off]                  teacher mode: predict answers visible (toggle when bare)
//   start-here on|off                 the "New to tilescope?" card shown or dismissed
//   write-state FILE           write the state JSON (as --state-json) after the next frame
//   write-frame-text FILE      write every text the next frame draws, as drawn (masked), one per
//                              line: what a test asserts is nowhere on screen
//   write-layout FILE          write the layout JSON (as --layout-json) after the next frame,
//                              with the texts it cut off at their clip rectangle
//   ui-scale X                 scale the UI's type (0.75 to 2.5; fonts re-rasterised at that size)
//   save-model [FILE]          save the model text (to its own file when FILE is left out)
//   open-session FILE          open a session file (a hand-out: model, steps, machine, view,
//   lesson) save-session [FILE]        save the session to FILE (a hand-out); bare: keep this work
//   as the
//                              autosaved session (after --model, which leaves it alone)
//   drop FILE                  a file dropped on the window: .json opens as a session, else a model
//   files open-model|save-model|open-session|save-session [DIR] | cd DIR | name TEXT | ok | close
//                              the in-app file browser (files.h)
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

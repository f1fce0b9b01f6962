// Sessions: the model text, the schedule steps, the machine, the view, the side panels'
// controls (panel_controls.h) and the lesson player (open lesson, step, teacher mode, progress of
// every lesson touched), autosaved to ~/.local/state/tilescope/session.json (or
// $XDG_STATE_HOME/tilescope) and restored on start, so closing the app loses nothing. Scripted and
// --frames runs and --no-session never touch it
// (--session FILE names one explicitly, also for scripted runs).
//
// A session file is user data the app did not necessarily write (an older or newer version, a
// hand edit, a crash, a disk error), so restoring never trusts it: every field is type-checked,
// a file that cannot be read at all is moved aside (never overwritten by the next autosave), and
// nothing that happens while restoring can stop the app from starting.
#pragma once

#include "app/core/app_state.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::core {

inline constexpr const char* kSessionSchema = "tilescope-session/1";
// Panel controls a session may set; past this many the rest are skipped with one message.
inline constexpr size_t kMaxSessionControls = 256;

// $XDG_STATE_HOME/tilescope/session.json, else $HOME/.local/state/tilescope/session.json; "" when
// neither variable is set.
std::string default_session_path();

nlohmann::json session_to_json(const AppState& state);
// The file's text: session_to_json as indented JSON, invalid UTF-8 in the model text (a Latin-1
// model file) replaced rather than thrown. The autosave compares it to decide whether to write.
std::string session_text(const AppState& state);

// The fields of a session document after the type checks, before anything is applied. Pure (no
// AppState), so the checks can be tested and fuzzed on their own.
struct SessionFields {
  std::string unreadable;            // why nothing can be restored; "" for a session to restore
  std::vector<std::string> skipped;  // fields of the wrong type, by name ("steps is an array, …")
  std::optional<std::string> model_text, model_path, steps, machine, view, theme;
  std::optional<std::string> trace_path;  // the profiler trace open in the Trace view ("" none)
  std::optional<std::string> redo;  // undone steps past the cursor, "; "-separated
  std::optional<double> ui_scale;   // checked against kMinUiScale … kMaxUiScale when applied
  std::vector<std::string> recent;  // recent files, newest first (strings only, capped)
  // The panel controls' (name, script text), checked against the controls' table only when
  // applied; empty when the document has none (a session older than them).
  std::vector<std::pair<std::string, std::string>> controls;
  // The lesson player's fields (lesson_player.h), checked field by field when applied; absent in
  // a session older than the player.
  std::optional<nlohmann::json> lesson, lesson_progress;
  // Baseline A (baseline.h): its steps, machine and label, all strings.
  struct BaselineFields {
    std::string steps, machine, label;
    std::optional<std::pair<std::string, size_t>> recording;  // a recorded A: file and run
  };
  std::optional<BaselineFields> baseline;
};
SessionFields check_session_fields(const nlohmann::json& j);

// Restores a saved session into the state (model parsed, steps replayed, machine, view). Returns
// "" or a message saying what could not be restored (fields of the wrong type are named and
// skipped); what could be restored stays. A document that is not a session changes nothing.
// May throw whatever the model parser or the workbench throws; restore_session catches it.
std::string session_from_json(AppState& state, const nlohmann::json& j);

// Writes the session atomically: a fresh temp file beside it (O_EXCL, so a symlink planted there
// is never followed and two instances never share one), fsync'd, renamed over `path`, and the
// folder fsync'd. Creates the folder. Returns "" or an error message.
std::string save_session(const AppState& state, const std::string& path);
// The same atomic write for any text (a model file saved from the editor); `what` names the file
// in messages ("cannot write model 'x.model': …"). A symlink at `path` is followed (the file it
// names is replaced, the link stays); a `path` that holds anything but a regular file (a device,
// a FIFO, a folder) is refused.
std::string write_file_atomically(const std::string& text, const std::string& path,
                                  const std::string& what);

struct SessionRestore {
  std::string message;      // for the status bar: "" when everything came back (or no file)
  bool is_error = false;    // the message reports a problem, not just a notice
  std::string moved_to;     // where an unreadable session was moved ("" when it stayed)
  bool autosave_ok = true;  // false when a bad session could not be moved aside: autosaving
                            // would overwrite the only copy, so this run must not save
};

// The start-up restore: reads `path` (capped at io::kMaxSessionBytes), checks it and applies it.
// A file that cannot be read, parsed or restored (wrong type, other schema, too large, an
// exception while restoring, or a crash while the last start restored it) is renamed to
// `path.bad-<UTC time>`, the state is left with the default model, and the message says so.
// A missing file is not a problem: the state stays as it is and the message is "".
SessionRestore restore_session(AppState& state, const std::string& path);

// `path.bad-YYYYMMDDTHHMMSSZ` (with -2, -3, … when taken): where a bad session is moved.
std::string bad_session_path(const std::string& path);

}  // namespace tilescope::core

// Files a learner or teacher opens and saves from the app: model files, session files to hand out
// (model, steps, machine, view, lesson position), recent files, files dropped on the window, and
// the in-app file browser's folder listing (ImGui 1.86 has no file dialog).
//
// Pure C++ (no ImGui): the `files`, `save-model`, `open-session`, `save-session` and `drop`
// commands call these, and the tests drive them without a display.
#pragma once

#include "app/core/app_state.h"

#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

struct FolderEntry {
  std::string name;
  bool folder = false;
};

// The browser's list of `dir`: folders first, then the files whose name ends in one of
// `extensions` (every file when it is empty), each group sorted by name; names starting with a dot
// are left out. A folder that cannot be read gives no entries and `error` says why.
std::vector<FolderEntry> list_folder(const std::string& dir,
                                     const std::vector<std::string>& extensions,
                                     std::string& error);

// What the browser lists in a mode: model files (.model, .txt), sessions (.json) or grades
// (.csv, .json).
std::vector<std::string> browser_extensions(FileBrowser::Mode mode);

// The modes that write a file (Save model as, Save session as, Export my grade).
bool browser_saves(FileBrowser::Mode mode);

// Puts `path` (made absolute) at the front of the recent files, once, at most kMaxRecentFiles.
void note_recent_file(AppState& state, const std::string& path);

// Writes the model text to `path` ("" = the file it came from; the built-in example has none, so
// that is refused with a message) and makes it the model's path. Returns "" or why not.
std::string save_model_file(AppState& state, const std::string& path);

// Opens a model file into the editor (parsed at once). When that would replace a schedule's steps
// or text the learner edited, the file waits in state.pending_open for choose_open_model instead.
// Returns "" or why not (state unchanged).
// The model file an opened file's text is saved to: the file itself, or for an imported ONNX
// file NAME.model beside it (never the .onnx; the learner confirms where: path_chosen false).
std::string model_path_of(const std::string& opened);

// Opens a profiler trace (trace_doc.h), maps it onto the model and shows the Trace view; "" or
// the message.
std::string open_trace_file(AppState& state, const std::string& path);

std::string open_model_file(AppState& state, const std::string& path);

// The learner's answer to a waiting open: "replay" (the schedule's steps on the new model, as far
// as they apply), "drop" (the new model without steps) or "cancel" (nothing changes). The model
// replaced is kept for restore_replaced_model.
std::string choose_open_model(AppState& state, std::string_view choice);

// Brings back the model (text, path, steps) the last open replaced; the one it replaces is kept
// in turn.
std::string restore_replaced_model(AppState& state);

// A session file to hand out: the session (session.h) without this computer's recent files.
std::string save_session_file(const AppState& state, const std::string& path);

// Opens a session file (a teacher's hand-out): model, steps, machine, view and lesson position
// come from it; the learner's theme, UI scale and recent files stay. A file that is not a session
// changes nothing and the message says why.
std::string open_session_file(AppState& state, const std::string& path);

// The learner's grade (lesson_grade.h: one row per lesson) to `path`: CSV, or JSON when the name
// ends in .json — the rows `tilescope-cli lesson grade` gives a teacher for this session.
std::string save_grade_file(AppState& state, const std::string& path);

// A path dropped on the window: a .json file opens as a session, anything else as a model file.
std::string open_dropped_file(AppState& state, const std::string& path);

// The browser's verbs: `open-model|save-model|open-session|save-session|save-grade [DIR]` shows it (in DIR,
// else the current model's folder, else the working folder), `cd DIR` (a name in the listed
// folder, "..", or a path), `name TEXT` sets the path field, `ok` opens or saves the field's path,
// `close` hides it, `open-choice replay|drop|cancel` answers a waiting open, `restore-model`
// brings back what the last open replaced. Returns "" or why not.
std::string file_browser_command(AppState& state, std::string_view args);

// The path the browser's field names: the field itself when absolute, else inside `dir`.
std::string browser_target(const FileBrowser& browser);

}  // namespace tilescope::core

// Opening and saving model and session files, recent files, drops and the file browser's folder
// listing (files.h).
#include "app/core/files.h"

#include "app/core/exports.h"

#include "app/core/lesson_grade.h"
#include "app/core/session.h"
#include "sim/import/onnx.h"
#include "sim/io/input.h"
#include "sim/io/json.h"
#include "sim/pipeline.h"

#include <algorithm>
#include <filesystem>

namespace tilescope::core {

namespace fs = std::filesystem;

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return ec ? path : abs.lexically_normal().string();
}

}  // namespace

std::vector<FolderEntry> list_folder(const std::string& dir,
                                     const std::vector<std::string>& extensions,
                                     std::string& error) {
  error.clear();
  std::vector<FolderEntry> folders, files;
  std::error_code ec;
  fs::directory_iterator it(dir.empty() ? "." : dir, ec);
  if (ec) {
    error = "cannot list '" + dir + "': " + ec.message();
    return {};
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) {
      error = "cannot list '" + dir + "': " + ec.message();
      break;
    }
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code type_ec;
    if (it->is_directory(type_ec)) {
      folders.push_back({name, true});
    } else if (extensions.empty() ||
               std::any_of(extensions.begin(), extensions.end(),
                           [&](const std::string& e) { return ends_with(name, e); })) {
      files.push_back({name, false});
    }
  }
  const auto by_name = [](const FolderEntry& a, const FolderEntry& b) { return a.name < b.name; };
  std::sort(folders.begin(), folders.end(), by_name);
  std::sort(files.begin(), files.end(), by_name);
  folders.insert(folders.end(), files.begin(), files.end());
  return folders;
}

std::vector<std::string> browser_extensions(FileBrowser::Mode mode) {
  switch (mode) {
    case FileBrowser::Mode::OpenModel:
      return {".model", ".txt", ".onnx"};  // an ONNX file opens as its imported model text
    case FileBrowser::Mode::SaveModel:
      return {".model", ".txt"};
    case FileBrowser::Mode::OpenSession:
    case FileBrowser::Mode::SaveSession:
      return {".json"};
    case FileBrowser::Mode::SaveGrade:
      return {".csv", ".json"};
    case FileBrowser::Mode::OpenTrace:
      return {".json"};
    case FileBrowser::Mode::Export:
      return {".csv", ".json", ".png"};
    case FileBrowser::Mode::SaveMachine:
      return {".machine"};
    case FileBrowser::Mode::Closed:
      break;
  }
  return {};
}

bool browser_saves(FileBrowser::Mode mode) {
  return mode == FileBrowser::Mode::SaveModel || mode == FileBrowser::Mode::SaveSession ||
         mode == FileBrowser::Mode::SaveGrade || mode == FileBrowser::Mode::Export ||
         mode == FileBrowser::Mode::SaveMachine;
}

void note_recent_file(AppState& state, const std::string& path) {
  const std::string abs = absolute_path(path);
  auto& r = state.recent_files;
  r.erase(std::remove(r.begin(), r.end(), abs), r.end());
  r.insert(r.begin(), abs);
  if (r.size() > kMaxRecentFiles) r.resize(kMaxRecentFiles);
}

std::string save_model_file(AppState& state, const std::string& path) {
  const std::string target = path.empty() ? state.model.path : path;
  if (target.empty())
    return "save-model: the built-in example has no file yet; give a path (Save as…)";
  if (path.empty() && !state.model.path_chosen) {
    // The path came with a session, hand-out or lesson: the learner picks it (or another).
    file_browser_command(state, "save-model");
    return "save-model: '" + io::printable(target) +
           "' came from a session, a lesson or an ONNX import, not from you; choose where to save "
           "the "
           "model "
           "(Save as… is open)";
  }
  std::string text = state.model.text;
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (std::string e = write_file_atomically(text, target, "model"); !e.empty()) return e;
  state.model.loaded_text = state.model.text;
  state.model.path = target;
  state.model.path_chosen = true;
  note_recent_file(state, target);
  state.notice = "saved the model to " + target;
  return {};
}

namespace {

std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The model as it stands (text, path, applied steps), to keep before something replaces it.
ReplacedModel current_model(const AppState& state) {
  return {state.model.text, state.model.path, state.model.path_chosen,
          state.workbench.applied_steps()};
}

// Puts a model file's text into the editor; with `keep_steps` the schedule's steps are replayed
// on it (as far as they apply: update_state does it), else it starts without steps. What it
// replaces is kept in state.replaced_model.
void install_model(AppState& state, const std::string& path, std::string text, bool keep_steps) {
  Workbench& wb = state.workbench;
  ReplacedModel old = current_model(state);
  const size_t applied = old.steps.size();
  const bool worth_keeping = model_text_edited(state) || applied > 0;
  if (worth_keeping) state.replaced_model = std::move(old);
  if (!keep_steps) workbench_clear_schedule(wb);
  state.model.text = std::move(text);
  state.model.loaded_text = state.model.text;
  // An ONNX file is imported: its model text is saved beside it as NAME.model, never over it,
  // and the learner confirms where (Save opens Save as…).
  const bool imported = import::is_onnx_path(path);
  state.model.path = model_path_of(path);
  state.model.path_chosen = !imported;
  state.model.reparse_pending = false;
  state.view.fit_pending = true;
  reparse_model(state);
  update_state(state);  // lowers the new graph now (and replays the kept steps on it)
  note_recent_file(state, path);
  std::string said = (imported ? "imported " : "opened ") + path;
  if (keep_steps && applied > 0) {
    const size_t now = wb.history ? wb.history->size() : 0;
    said += "; replayed " + std::to_string(now) + " of " + plural(applied, "step", "steps");
    if (now < applied && wb.last && !wb.last->ok)
      said += " (step " + std::to_string(now + 1) + " '" + wb.last->step +
              "' did not apply: " + wb.last->explanation + ")";
  }
  if (worth_keeping) said += "; what it replaced is kept (File menu: Restore the previous model)";
  state.notice = said;
}

}  // namespace

std::string open_trace_file(AppState& state, const std::string& path) {
  if (std::string e = open_trace(state.trace, path); !e.empty()) return e;
  refresh_trace(state);  // the Trace view has its rows in the same frame
  state.workbench.tab = ViewTab::Trace;
  state.notice = "opened the trace " + path;
  return {};
}

std::string model_path_of(const std::string& opened) {
  return import::is_onnx_path(opened) ? opened.substr(0, opened.size() - 5) + ".model" : opened;
}

std::string open_model_file(AppState& state, const std::string& path) {
  // As set-model-file does (commands.h includes this file, so it is not called from here).
  pipeline::ModelText in;
  try {
    in = pipeline::read_model_file(path);
  } catch (const graph::GraphError& e) {
    return e.message();
  }
  const size_t steps = state.workbench.history ? state.workbench.history->size() : 0;
  const bool edited = model_text_edited(state);
  if (steps == 0 && !edited) {
    install_model(state, path, std::move(in.text), false);
    return {};
  }
  // A schedule or the learner's own text would be replaced: ask first, with what replaying the
  // schedule would do.
  PendingOpen p;
  p.path = path;
  p.text = io::editor_safe_text(in.text);
  p.text_edited = edited;
  try {
    const auto g = pipeline::parse({p.text, path});
    p.trial = workbench_trial_replay(state.workbench, g);
  } catch (const std::exception& e) {
    p.parse_error = e.what();
    p.trial.steps = steps;
  }
  state.pending_open = std::move(p);
  state.files.mode = FileBrowser::Mode::Closed;
  return {};
}

std::string choose_open_model(AppState& state, std::string_view choice) {
  if (!state.pending_open) return "files open-choice: no opened model waits for a choice";
  if (choice == "cancel") {
    state.notice = "kept the model you had; " + state.pending_open->path + " was not opened";
    state.pending_open.reset();
    return {};
  }
  if (choice != "replay" && choice != "drop")
    return "files open-choice: choose replay (the schedule's steps on the new model), drop (the "
           "new model without steps) or cancel, not '" +
           io::printable(std::string(choice), 40) + "'";
  PendingOpen p = std::move(*state.pending_open);
  state.pending_open.reset();
  install_model(state, p.path, std::move(p.text), choice == "replay");
  return {};
}

std::string restore_replaced_model(AppState& state) {
  if (!state.replaced_model) return "files restore-model: no open has replaced a model yet";
  ReplacedModel back = std::move(*state.replaced_model);
  state.replaced_model.reset();
  Workbench& wb = state.workbench;
  // The model it replaces is kept in turn, so a restore can be undone the same way.
  state.replaced_model = current_model(state);
  workbench_clear_schedule(wb);
  state.model.text = std::move(back.text);
  state.model.path = std::move(back.path);
  state.model.path_chosen = back.path_chosen;
  state.model.reparse_pending = false;
  state.view.fit_pending = true;
  reparse_model(state);
  update_state(state);
  const size_t replayed = workbench_replay(wb, back.steps);
  state.notice = "restored the previous model" +
                 (back.steps.empty() ? std::string()
                                     : " and " + std::to_string(replayed) + " of its " +
                                           plural(back.steps.size(), "step", "steps"));
  return {};
}

namespace {

// What a hand-out must not carry (issue #26): the teacher's answers, reveals and grades (every
// lesson's progress), teacher mode, and this computer's file names. It carries the task: model,
// steps, machine, view, the open lesson and its step, and the tries a teacher set.
void strip_to_task(nlohmann::json& j) {
  j.erase("recent");
  j.erase("lesson_progress");
  if (const auto it = j.find("lesson"); it != j.end() && it->is_object()) it->erase("teacher");
}

}  // namespace

std::string save_session_file(const AppState& state, const std::string& path) {
  nlohmann::json j = session_to_json(state);
  strip_to_task(j);
  if (std::string e = write_file_atomically(
          j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", path, "session");
      !e.empty())
    return e;
  return {};
}

std::string open_session_file(AppState& state, const std::string& path) {
  const io::TextInput in = io::read_text_input(path, io::kMaxSessionBytes, "a session file");
  if (!in.ok) return in.error;
  const io::JsonInput parsed = io::parse_json(in.text);
  if (!parsed.ok)
    return "open-session: '" + io::printable(path) + "' is not JSON (" +
           io::printable(parsed.error, 200) + ")";
  nlohmann::json j = parsed.value;
  if (const SessionFields f = check_session_fields(j); !f.unreadable.empty())
    return "open-session: '" + path + "' is " + f.unreadable;
  // A hand-out from before they were stripped may still hold a teacher's progress: the learner
  // keeps their own, and starts the lesson as a learner.
  strip_to_task(j);
  // The learner's own settings stay: a hand-out brings the work, not the teacher's screen.
  const bool teacher = state.lessons.teacher;
  const Theme theme = state.theme;
  const float scale = state.ui_scale;
  const std::vector<std::string> recent = state.recent_files;
  std::string problems;
  try {
    problems = session_from_json(state, j);
  } catch (const std::exception& e) {
    problems = std::string("stopped restoring: ") + e.what();
  }
  state.theme = theme;
  state.ui_scale = scale;
  state.recent_files = recent;
  state.lessons.teacher = teacher;
  state.view.fit_pending = true;
  note_recent_file(state, path);
  state.notice = "opened session " + path;
  return problems.empty() ? std::string() : "open-session '" + path + "': " + problems;
}

std::string save_grade_file(AppState& state, const std::string& path) {
  // The learner's own rows, as `tilescope-cli lesson grade` writes a class's: named after the
  // session file (alice.json → alice), or "me" without one.
  std::map<std::string, nlohmann::json> progress;
  const nlohmann::json all = lesson_progress_json(state.lessons);
  for (const auto& [id, value] : all.items()) progress[id] = value;
  lesson_ensure_catalogue(state.lessons);
  const std::string learner =
      state.session_path.empty() ? "me" : fs::path(state.session_path).stem().string();
  std::vector<std::string> problems;
  const std::vector<GradeRow> rows =
      grade_rows(learner, progress, state.lessons.catalogue, problems);
  const std::string text =
      ends_with(path, ".json") ? grade_json(rows).dump(2) + "\n" : grade_csv(rows);
  if (std::string e = write_file_atomically(text, path, "grade"); !e.empty()) return e;
  note_recent_file(state, path);
  state.notice = "saved your grade (" + std::to_string(rows.size()) + " lessons) to " + path +
                 (problems.empty() ? "" : "; left out: " + problems.front());
  return {};
}

std::string open_dropped_file(AppState& state, const std::string& path) {
  if (ends_with(path, ".json") && looks_like_trace(path)) return open_trace_file(state, path);
  return ends_with(path, ".json") ? open_session_file(state, path) : open_model_file(state, path);
}

std::string browser_target(const FileBrowser& browser) {
  if (browser.name.empty()) return {};
  const fs::path name(browser.name);
  if (name.is_absolute()) return name.lexically_normal().string();
  return (fs::path(browser.dir.empty() ? "." : browser.dir) / name).lexically_normal().string();
}

std::string file_browser_command(AppState& state, std::string_view args) {
  FileBrowser& b = state.files;
  const size_t space = args.find(' ');
  const std::string verb(args.substr(0, space));
  const std::string rest =
      space == std::string_view::npos ? "" : std::string(args.substr(space + 1));
  using Mode = FileBrowser::Mode;
  const auto show = [&](Mode mode, const std::string& dir) {
    b.mode = mode;
    if (!dir.empty()) {
      b.dir = dir;
    } else if (!state.model.path.empty()) {
      b.dir = fs::path(absolute_path(state.model.path)).parent_path().string();
    } else if (b.dir.empty()) {
      b.dir = absolute_path(".");
    }
    const bool saving = browser_saves(mode);
    b.name = !saving ? ""
             : mode == Mode::SaveModel && !state.model.path.empty()
                 ? fs::path(state.model.path).filename().string()
             : mode == Mode::SaveModel ? "model.model"
             : mode == Mode::SaveGrade ? "grade.csv"
             : mode == Mode::Export    ? export_default_name(state, b.export_name)
             : mode == Mode::SaveMachine && state.workbench.machine_draft
                 ? machine_draft_file_name(*state.workbench.machine_draft)
                 : "session.json";
    return std::string();
  };
  if (verb == "open-model") return show(Mode::OpenModel, rest);
  if (verb == "save-model") return show(Mode::SaveModel, rest);
  if (verb == "open-session") return show(Mode::OpenSession, rest);
  if (verb == "save-session") return show(Mode::SaveSession, rest);
  if (verb == "save-grade") return show(Mode::SaveGrade, rest);
  if (verb == "open-trace") return show(Mode::OpenTrace, rest);
  if (verb == "save-machine") {
    if (!state.workbench.machine_draft) return "files save-machine: no machine copy is open";
    return show(Mode::SaveMachine, rest);
  }
  if (verb == "export") {
    // `files export NAME [DIR]`: NAME first, the folder (if any) after it.
    const size_t gap = rest.find(' ');
    const std::string name = rest.substr(0, gap);
    bool known = false;
    for (const ExportEntry& e : export_entries()) known = known || name == e.name;
    if (!known) return "files export: unknown table '" + name + "' (" + export_names() + ")";
    b.export_name = name;
    return show(Mode::Export, gap == std::string::npos ? "" : rest.substr(gap + 1));
  }
  if (verb == "close") {
    b.mode = Mode::Closed;
    return {};
  }
  if (verb == "open-choice") return choose_open_model(state, rest);
  if (verb == "restore-model") return restore_replaced_model(state);
  if (verb == "name") {
    b.name = rest;
    return {};
  }
  if (verb == "cd") {
    if (rest.empty()) return "files cd: needs a folder";
    fs::path next = fs::path(rest).is_absolute() ? fs::path(rest) : fs::path(b.dir) / rest;
    next = next.lexically_normal();
    if (next.has_filename() == false && next.has_parent_path() && next != next.root_path())
      next = next.parent_path();
    std::error_code ec;
    if (!fs::is_directory(next, ec)) return "files cd: '" + next.string() + "' is not a folder";
    b.dir = next.string();
    return {};
  }
  if (verb == "ok") {
    const std::string target = browser_target(b);
    if (target.empty()) return "files ok: no file named (type a name or click one)";
    std::string e;
    switch (b.mode) {
      case Mode::OpenModel:
        e = open_model_file(state, target);
        break;
      case Mode::SaveModel:
        e = save_model_file(state, target);
        break;
      case Mode::OpenSession:
        e = open_session_file(state, target);
        break;
      case Mode::SaveSession:
        e = save_session_file(state, target);
        if (e.empty()) {
          note_recent_file(state, target);
          state.notice = "saved the session to " + target + " (hand it out: Open session…)";
        }
        break;
      case Mode::SaveGrade:
        e = save_grade_file(state, target);
        break;
      case Mode::OpenTrace:
        e = open_trace_file(state, target);
        break;
      case Mode::SaveMachine:
        e = workbench_machine_edit(state.workbench, "save " + target);
        break;
      case Mode::Export:
        e = b.export_name == "grade" ? save_grade_file(state, target)
                                     : export_to_file(state, b.export_name, target);
        break;
      case Mode::Closed:
        return "files ok: the file browser is not open";
    }
    // A failed open or save keeps the browser open, so the learner can pick again.
    if (e.empty()) b.mode = Mode::Closed;
    return e;
  }
  return "files: unknown verb '" + verb +
         "' (open-model, save-model, open-session, save-session, save-grade, open-trace, export, "
         "save-machine, cd, name, ok, close, open-choice, restore-model)";
}

}  // namespace tilescope::core

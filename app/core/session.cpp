// Saving and restoring a session (model text, steps, machine, view, panel controls) as JSON,
// defensively.
//
// Index:
//   [SECTION] Fields: type checks before anything is applied
//   [SECTION] Writing: fresh temp file, fsync, rename
//   [SECTION] Start-up restore: moving bad sessions aside, surviving what restoring throws
#include "app/core/session.h"

#include "app/core/baseline.h"

#include "app/core/lesson_commands.h"

#include "sim/lang/parser.h"
#include "sim/io/input.h"
#include "sim/io/json.h"
#include "sim/schedule/transform.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

namespace tilescope::core {

namespace fs = std::filesystem;

std::string default_session_path() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tilescope/session.json";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/state/tilescope/session.json";
  return {};
}

namespace {

// The panel controls as {"schedule.tile-log2": "4", ...}: their script text, which
// set_panel_control reads back.
nlohmann::json controls_json(const PanelControls& controls) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : panel_control_values(controls)) j[name] = value;
  return j;
}

}  // namespace

namespace {

// Baseline A as the session keeps it: what is needed to simulate it again (null when none).
nlohmann::json baseline_session_json(const Workbench& wb) {
  if (!wb.baseline) return nullptr;
  nlohmann::json j = {{"steps", wb.baseline->steps},
                      {"machine", wb.baseline->machine},
                      {"label", wb.baseline->label}};
  if (const auto& rc = wb.baseline->recording)
    j["recording"] = {{"file", rc->file}, {"run", rc->run}};
  return j;
}

// The undone steps past the history's cursor ("; "-separated), so redo survives a restart.
std::string redo_text(const Workbench& wb) {
  std::string out;
  const size_t cursor = wb.history ? wb.history->size() : 0;
  for (size_t i = cursor; i < wb.step_texts.size(); ++i)
    out += (out.empty() ? "" : "; ") + wb.step_texts[i];
  return out;
}

}  // namespace

nlohmann::json session_to_json(const AppState& state) {
  return {{"schema", kSessionSchema},
          {"model_text", state.model.text},
          {"model_path", state.model.path},
          {"steps", state.workbench.steps_text()},
          {"redo", redo_text(state.workbench)},
          {"ui_scale", state.ui_scale},
          {"recent", state.recent_files},
          {"machine", state.workbench.machine_name},
          {"view", view_tab_name(state.workbench.tab)},
          {"trace_path", state.trace.path},
          {"theme", theme_name(state.theme)},
          {"controls", controls_json(state.controls)},
          {"lesson", lesson_session_json(state.lessons)},
          {"lesson_progress", lesson_progress_json(state.lessons)},
          {"baseline", baseline_session_json(state.workbench)}};
}

std::string session_text(const AppState& state) {
  return session_to_json(state).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

// [SECTION] Fields: type checks before anything is applied

namespace {

// nlohmann's json::value() and get<>() throw type_error on a field of another type, and that
// exception used to end the app on every start; each field is looked at by hand instead.
void string_field(const nlohmann::json& j, const char* name, std::optional<std::string>& out,
                  std::vector<std::string>& skipped) {
  const auto it = j.find(name);
  if (it == j.end()) return;
  if (it->is_string()) {
    out = it->get<std::string>();
  } else {
    skipped.push_back(std::string(name) + " is " +
                      (it->is_array() || it->is_object() ? "an " : "a ") + it->type_name() +
                      ", not a string");
  }
}

}  // namespace

SessionFields check_session_fields(const nlohmann::json& j) {
  SessionFields f;
  if (!j.is_object()) {
    f.unreadable = std::string("not a ") + kSessionSchema + " file (the document is a" +
                   (j.is_array() || j.is_object() ? "n " : " ") + j.type_name() +
                   ", not an object)";
    return f;
  }
  const auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string()) {
    f.unreadable = std::string("not a ") + kSessionSchema + " file (no \"schema\" string)";
    return f;
  }
  if (schema->get_ref<const std::string&>() != kSessionSchema) {
    // A newer version's session is kept whole for that version, not half-read by this one.
    f.unreadable = std::string("not a ") + kSessionSchema + " file (its schema is '" +
                   io::printable(schema->get_ref<const std::string&>(), 60) + "')";
    return f;
  }
  string_field(j, "model_text", f.model_text, f.skipped);
  string_field(j, "model_path", f.model_path, f.skipped);
  string_field(j, "steps", f.steps, f.skipped);
  string_field(j, "machine", f.machine, f.skipped);
  string_field(j, "view", f.view, f.skipped);
  string_field(j, "trace_path", f.trace_path, f.skipped);
  string_field(j, "theme", f.theme, f.skipped);
  string_field(j, "redo", f.redo, f.skipped);
  if (const auto it = j.find("ui_scale"); it != j.end()) {
    if (it->is_number())
      f.ui_scale = it->get<double>();
    else
      f.skipped.push_back(std::string("ui_scale is ") +
                          (it->is_array() || it->is_object() ? "an " : "a ") + it->type_name() +
                          ", not a number");
  }
  if (const auto it = j.find("recent"); it != j.end()) {
    if (!it->is_array()) {
      f.skipped.push_back(std::string("recent is ") + (it->is_object() ? "an " : "a ") +
                          it->type_name() + ", not an array");
    } else {
      size_t not_strings = 0;
      for (const auto& v : *it) {
        if (!v.is_string())
          ++not_strings;
        else if (f.recent.size() < kMaxRecentFiles)
          f.recent.push_back(v.get<std::string>());
      }
      if (not_strings > 0)
        f.skipped.push_back("recent files: " + std::to_string(not_strings) + " of " +
                            std::to_string(it->size()) + " entries are not file names (strings)");
    }
  }
  if (const auto it = j.find("baseline"); it != j.end() && !it->is_null()) {
    const auto str = [&](const char* k) {
      const auto v = it->find(k);
      return v != it->end() && v->is_string() ? std::optional(v->get<std::string>()) : std::nullopt;
    };
    if (it->is_object() && str("steps") && str("machine") && str("label"))
      f.baseline = SessionFields::BaselineFields{*str("steps"), *str("machine"), *str("label"), {}};
    else
      f.skipped.push_back("baseline is not an object of the strings steps, machine and label");
    if (const auto rc = it->find("recording"); f.baseline && rc != it->end()) {
      const auto file = rc->is_object() ? rc->find("file") : rc->end();
      const auto run = rc->is_object() ? rc->find("run") : rc->end();
      if (file != rc->end() && file->is_string() && run != rc->end() && run->is_number_unsigned())
        f.baseline->recording = std::pair(file->get<std::string>(), run->get<size_t>());
      else
        f.skipped.push_back(
            "baseline's recording is not an object of a file (string) and a run (a "
            "whole number)");
    }
  }
  if (const auto it = j.find("controls"); it != j.end()) {
    if (!it->is_object()) {
      f.skipped.push_back(std::string("controls is ") + (it->is_array() ? "an " : "a ") +
                          it->type_name() + ", not an object");
    } else {
      // The app has a few dozen controls; a file with 300,000 is not one it wrote, and naming
      // each in the status bar built a 68 MB message. The first kMaxSessionControls are read.
      size_t past = 0;
      for (const auto& [name, value] : it->items()) {
        if (f.controls.size() >= kMaxSessionControls) {
          ++past;
        } else if (value.is_string()) {
          f.controls.emplace_back(name, value.get<std::string>());
        } else {
          f.skipped.push_back("control " + io::printable(name, 40) + " is " +
                              (value.is_array() || value.is_object() ? "an " : "a ") +
                              value.type_name() + ", not a string");
        }
      }
      if (past > 0)
        f.skipped.push_back(std::to_string(past) + " controls past the first " +
                            std::to_string(kMaxSessionControls) + " (more than the app has)");
    }
  }
  if (const auto it = j.find("lesson"); it != j.end()) f.lesson = *it;
  if (const auto it = j.find("lesson_progress"); it != j.end()) f.lesson_progress = *it;
  return f;
}

namespace {

// What a restore could not bring back, for the status bar: the first kShown problems in full,
// then how many more (a file can hold any number of bad values; the message stays readable).
class Problems {
 public:
  static constexpr size_t kShown = 8;
  void add(std::string problem) {
    if (m_count++ < kShown) m_text += (m_text.empty() ? "" : "; ") + std::move(problem);
  }
  std::string text() const {
    if (m_count <= kShown) return m_text;
    return m_text + "; and " + std::to_string(m_count - kShown) + " more";
  }

 private:
  std::string m_text;
  size_t m_count = 0;
};

// The steps of `text` from the `first`-th on (0-based), as the history prints them: the ones a
// restore dropped after a step that no longer applies.
std::string steps_from(const std::string& text, size_t first) {
  std::vector<schedule::TransformStep> steps;
  try {
    steps = schedule::parse_steps(text);
  } catch (const std::exception&) {
    return {};
  }
  std::string out;
  for (size_t i = first; i < steps.size(); ++i) {
    if (i >= first + 6) {
      out += ", and " + std::to_string(steps.size() - i) + " more";
      break;
    }
    out += (out.empty() ? "" : ", ") + steps[i].to_string();
  }
  return out;
}

}  // namespace

std::string session_from_json(AppState& state, const nlohmann::json& j) {
  const SessionFields f = check_session_fields(j);
  if (!f.unreadable.empty()) return "session: " + f.unreadable;
  Problems problems;
  for (const std::string& s : f.skipped) problems.add("skipped " + s);
  if (f.model_text) state.model.text = *f.model_text;
  state.model.path = f.model_path.value_or("");
  state.model.path_chosen = false;  // written only after the learner picks it (app_state.h)
  reparse_model(state);
  update_state(state);  // lowers the graph
  // The machine first: steps are checked against its target, so a session's shared-memory
  // stages on a GPU machine were refused against the default CPU machine and dropped.
  if (std::string e = workbench_set_machine(state.workbench, f.machine.value_or("host")); !e.empty())
    problems.add(e);
  if (f.steps && !f.steps->empty()) {
    if (std::string e = workbench_apply(state.workbench, *f.steps); !e.empty()) problems.add(e);
    if (state.workbench.last && !state.workbench.last->ok) {
      // Steps apply in order, so the ones after a refused step are dropped too: name them all.
      const size_t applied = state.workbench.history ? state.workbench.history->size() : 0;
      std::string dropped = "step " + std::to_string(applied + 1) + ", " +
                            state.workbench.last->step + ", no longer applies (" +
                            io::printable(state.workbench.last->explanation, 200) + ")";
      if (const std::string after = steps_from(*f.steps, applied + 1); !after.empty())
        dropped += "; not restored after it: " + after;
      problems.add(dropped);
    }
  }
  // The undone steps: applied, then undone again, so Ctrl+Y brings them back as before.
  if (f.redo && !f.redo->empty() && state.workbench.history) {
    const size_t cursor = state.workbench.history->size();
    workbench_apply(state.workbench, *f.redo);
    if (state.workbench.last && !state.workbench.last->ok)
      problems.add("redo step " + state.workbench.last->step + " no longer applies");
    while (state.workbench.history->size() > cursor && workbench_undo(state.workbench)) {
    }
    state.workbench.last.reset();
  }
  // Baseline A, simulated again on its machine (after the history: it replays on the same model).
  state.workbench.baseline.reset();
  if (f.baseline) {
    const auto& rc = f.baseline->recording;
    if (std::string e =
            rc ? workbench_pin_recorded(state.workbench, rc->first, rc->second, f.baseline->machine)
               : workbench_pin_baseline(state.workbench, f.baseline->steps, f.baseline->machine,
                                        f.baseline->label);
        !e.empty())
      problems.add("baseline A was not restored: " + io::printable(e, 200));
  }
  // The profiler trace the learner had open, mapped onto the restored model again.
  if (f.trace_path && !f.trace_path->empty()) {
    if (std::string e = open_trace(state.trace, *f.trace_path); !e.empty())
      problems.add("the trace was not reopened: " + io::printable(e, 200));
    else
      refresh_trace(state);
  }
  if (f.view) {
    if (auto v = view_tab_from_name(*f.view))
      state.workbench.tab = *v;
    else
      problems.add("skipped view '" + io::printable(*f.view, 40) + "' (not a view)");
  }
  if (f.theme) {
    if (auto t = theme_from_name(*f.theme))
      state.theme = *t;
    else
      problems.add("skipped theme '" + io::printable(*f.theme, 40) + "' (not a theme)");
  }
  if (f.ui_scale) {
    if (*f.ui_scale >= kMinUiScale && *f.ui_scale <= kMaxUiScale)
      state.ui_scale = static_cast<float>(*f.ui_scale);
    else
      problems.add("skipped ui_scale " + std::to_string(*f.ui_scale) + " (not from " +
                   std::to_string(kMinUiScale) + " to " + std::to_string(kMaxUiScale) + ")");
  }
  if (!f.recent.empty()) state.recent_files = f.recent;
  // Each control on its own: one out of range (or from a newer version) is skipped, not all.
  for (const auto& [name, value] : f.controls)
    if (std::string e = set_panel_control(state.controls, name, value); !e.empty())
      problems.add("skipped " + io::printable(e, 200));
  // Last: the open lesson comes back at its step without loading its models over the restored
  // model text.
  if (f.lesson || f.lesson_progress) {
    if (std::string e = restore_lesson_session(state, f.lesson ? &*f.lesson : nullptr,
                                               f.lesson_progress ? &*f.lesson_progress : nullptr);
        !e.empty())
      problems.add(e);
  }
  return problems.text();
}

// [SECTION] Writing: fresh temp file, fsync, rename

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

}  // namespace

std::string save_session(const AppState& state, const std::string& path) {
  return write_file_atomically(session_text(state), path, "session");
}

std::string write_file_atomically(const std::string& text, const std::string& given,
                                  const std::string& what) {
  std::error_code ec;
  // A symlink the user made (a session kept in a dotfiles folder) stays a symlink: the file it
  // points at is the one replaced. A link someone else owns (planted in a shared folder) is
  // replaced itself, never written through.
  std::string path = given;
  struct stat link {};
  if (::lstat(given.c_str(), &link) == 0 && S_ISLNK(link.st_mode) && link.st_uid == ::geteuid()) {
    const fs::path resolved = fs::weakly_canonical(given, ec);
    if (ec)
      return "cannot write " + what + " '" + io::printable(given) + "': its link cannot be followed (" +
             ec.message() + ")";
    path = resolved.string();
  }
  // Only a regular file (or none) is ever replaced: a name that holds a device, a FIFO or a
  // folder is a mistake, and renaming over /dev/zero as root would remove the device.
  if (const fs::file_status st = fs::status(path, ec);
      fs::exists(st) && !fs::is_regular_file(st))
    return "cannot write " + what + " '" + io::printable(given) + "': it is " +
           (fs::is_directory(st) ? "a folder" : "not a regular file") +
           "; choose another name";
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty()) fs::create_directories(folder, ec);
  // A name of this write's own (mkstemp: O_CREAT|O_EXCL, so nothing that already exists there, a
  // planted symlink included, is ever opened), in the same folder so the rename is atomic.
  std::string tmp = path + ".tmp-XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "cannot write " + what + " '" + path + "': " + errno_text();
  // The data must be on disk before the rename makes it the session, or a power cut can leave
  // an empty session.json where a good one was.
  const bool written = io::write_all(fd, text) && ::fsync(fd) == 0;
  const std::string write_error = errno_text();
  if (::close(fd) != 0 || !written) {
    ::unlink(tmp.c_str());
    return "cannot write " + what + " '" + tmp + "': " + write_error;
  }
  // rename() replaces the entry at `path` itself (the link's target, resolved above).
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    return "cannot replace " + what + " '" + path + "': " + e;
  }
  // The rename lives in the folder's entry, which needs its own fsync to survive a power cut;
  // where the folder cannot be opened the session is still whole, just maybe the older one.
  const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return {};
}

// [SECTION] Start-up restore: moving bad sessions aside, surviving what restoring throws

std::string bad_session_path(const std::string& path) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  const std::string base = path + ".bad-" + stamp;
  std::string candidate = base;
  std::error_code ec;
  for (int n = 2; fs::exists(fs::symlink_status(candidate, ec)); ++n)
    candidate = base + "-" + std::to_string(n);
  return candidate;
}

namespace {

// A crash while restoring (a stack overflow in the model parser, say) cannot be caught, and it
// would happen again on every start. So a start writes this marker, holding its pid, before it
// restores, and removes it after: finding one whose process is gone means the last start died
// while restoring, and that session must not be tried again.
std::string marker_path(const std::string& path) {
  return path + ".restoring";
}

void write_marker(const std::string& marker) {
  const int fd =
      ::open(marker.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;  // without a marker a crash is just not remembered
  io::write_all(fd, std::to_string(::getpid()) + "\n");
  ::close(fd);
}

bool died_while_restoring(const std::string& marker) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(marker, ec))) return false;
  const io::TextInput in = io::read_text_input(marker, 64, "a session marker");
  long pid = 0;
  if (in.ok) std::from_chars(in.text.data(), in.text.data() + in.text.size(), pid);
  // Another instance restoring this very moment is alive: its marker is not a crash.
  if (pid > 0 && pid != ::getpid() && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM))
    return false;
  return true;
}

// After a restore that failed halfway the state holds part of the bad session: back to the
// built-in model, no steps, the default machine and view, as on a first start.
void start_with_default_model(AppState& state) {
  workbench_clear_schedule(state.workbench);  // the new graph does not replay the bad session's steps
  state.model.text = std::string(lang::default_model_text());
  state.model.path.clear();
  state.model.error.reset();
  state.model.reparse_pending = false;
  reparse_model(state);
  update_state(state);
  workbench_set_machine(state.workbench, "host");
  state.workbench.tab = ViewTab::Graph;
  state.selection = {};
  state.controls = {};
  state.lessons.open = -1;  // a half-restored lesson is closed; its progress stays saved
  state.lessons.lesson.reset();
  state.lessons.progress.reset();
}

// Renames the session out of the autosave's way and says so.
SessionRestore move_aside(const std::string& path, const std::string& why) {
  SessionRestore r;
  r.is_error = true;
  const std::string target = bad_session_path(path);
  std::error_code ec;
  fs::rename(path, target, ec);
  if (ec) {
    r.autosave_ok = false;
    r.message = "session '" + io::printable(path) + "' cannot be restored (" + why +
                ") nor moved aside (" + ec.message() + "); this run will not autosave";
    return r;
  }
  r.moved_to = target;
  r.message = "session could not be restored (" + why + "); moved it to '" + io::printable(target) +
              "' and started with the default model";
  return r;
}

}  // namespace

SessionRestore restore_session(AppState& state, const std::string& path) {
  std::error_code ec;
  const std::string marker = marker_path(path);
  if (!fs::exists(fs::symlink_status(path, ec))) {
    fs::remove(marker, ec);
    return {};
  }
  if (died_while_restoring(marker)) {
    fs::remove(marker, ec);
    return move_aside(path, "the last start stopped while restoring it");
  }
  // The marker goes down before the file is even read: whatever crashes from here on (parsing,
  // checking, restoring) is remembered, and the next start moves the session aside.
  write_marker(marker);
  const io::TextInput in = io::read_text_input(path, io::kMaxSessionBytes, "a session file");
  if (!in.ok) {
    fs::remove(marker, ec);
    return move_aside(path, in.error);
  }
  const io::JsonInput parsed = io::parse_json(in.text);
  if (!parsed.ok) {
    fs::remove(marker, ec);
    return move_aside(path, "it is not valid JSON: " + io::printable(parsed.error, 200));
  }
  const nlohmann::json& j = parsed.value;
  const SessionFields fields = check_session_fields(j);
  if (!fields.unreadable.empty()) {
    fs::remove(marker, ec);
    return move_aside(path, fields.unreadable);
  }
  std::string problems, thrown;
  try {
    problems = session_from_json(state, j);
  } catch (const std::exception& e) {
    thrown = std::string("restoring it threw: ") + e.what();
  } catch (...) {
    thrown = "restoring it threw an unknown exception";
  }
  fs::remove(marker, ec);
  if (!thrown.empty()) {
    start_with_default_model(state);
    return move_aside(path, thrown);
  }
  SessionRestore r;
  if (problems.empty()) return r;
  r.is_error = true;
  r.message = "session: " + problems;
  // The next autosave writes only what was restored: a copy keeps what was not (skipped fields,
  // dropped steps), whatever the reason.
  const std::string copy = bad_session_path(path);
  if (fs::copy_file(path, copy, ec))
    r.message += "; the file as it was is kept at '" + io::printable(copy) + "'";
  else
    r.message += "; the file could not be copied aside (" + ec.message() + ")";
  return r;
}

}  // namespace tilescope::core

// Saving and restoring a session (model text, steps, machine, view) as JSON.
#include "app/gui/session.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tilescope::gui {

std::string default_session_path() {
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tilescope/session.json";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.local/state/tilescope/session.json";
  return {};
}

nlohmann::json session_to_json(const AppState& state) {
  return {{"schema", "tilescope-session/1"},     {"model_text", state.model.text},
          {"model_path", state.model.path},      {"steps", state.bench.steps_text()},
          {"machine", state.bench.machine_name}, {"view", view_tab_name(state.bench.tab)},
          {"theme", theme_name(state.theme)}};
}

std::string session_from_json(AppState& state, const nlohmann::json& j) {
  if (!j.is_object() || j.value("schema", "") != "tilescope-session/1")
    return "session: not a tilescope-session/1 file";
  state.model.text = j.value("model_text", state.model.text);
  state.model.path = j.value("model_path", "");
  reparse_model(state);
  update_state(state);  // lowers the graph
  std::string problems;
  if (const std::string steps = j.value("steps", ""); !steps.empty()) {
    if (std::string e = workbench_apply(state.bench, steps); !e.empty()) problems += e + "; ";
    if (state.bench.last && !state.bench.last->ok)
      problems += "step " + state.bench.last->step + " no longer applies; ";
  }
  if (std::string e = workbench_set_machine(state.bench, j.value("machine", "host")); !e.empty())
    problems += e + "; ";
  if (auto v = view_tab_from_name(j.value("view", "graph"))) state.bench.tab = *v;
  if (auto t = theme_from_name(j.value("theme", "light"))) state.theme = *t;
  return problems;
}

std::string save_session(const AppState& state, const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  // Write then rename, so a crash mid-write never leaves half a session.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) return "cannot write session '" + tmp + "'";
    out << session_to_json(state).dump(2) << "\n";
    if (!out) return "cannot write session '" + tmp + "'";
  }
  std::filesystem::rename(tmp, path, ec);
  return ec ? "cannot replace session '" + path + "': " + ec.message() : std::string();
}

std::string load_session(AppState& state, const std::string& path) {
  std::ifstream in(path);
  if (!in) return "no session at '" + path + "'";
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    return "session '" + path + "' does not parse: " + e.what();
  }
  return session_from_json(state, j);
}

}  // namespace tilescope::gui

// Sessions: the model text, the schedule steps, the machine and the view, autosaved to
// ~/.local/state/tilescope/session.json (or $XDG_STATE_HOME/tilescope) and restored on start, so
// closing the app loses nothing. Scripted and --frames runs and --no-session never touch it.
#pragma once

#include "app/gui/app_state.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tilescope::gui {

// $XDG_STATE_HOME/tilescope/session.json, else $HOME/.local/state/tilescope/session.json; "" when
// neither variable is set.
std::string default_session_path();

nlohmann::json session_to_json(const AppState& state);
// Restores a saved session into the state (model parsed, steps replayed, machine, view). Returns
// "" or a message saying what could not be restored; what could be restored stays.
std::string session_from_json(AppState& state, const nlohmann::json& j);

// Write / read the file. Writing creates the folder. Both return "" or an error message.
std::string save_session(const AppState& state, const std::string& path);
std::string load_session(AppState& state, const std::string& path);

}  // namespace tilescope::gui

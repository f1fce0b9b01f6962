// The lesson player's commands and session fields, over the whole AppState: entering a step drives
// the workbench (the step's model loaded into the model text, its machine chosen, its view brought
// forward), predictions are graded, progress comes back from the session, and the state JSON says
// what is on screen. The player's own state and logic are in lesson_player.h.
#pragma once

#include "app/core/lesson_player.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tilescope::core {

struct AppState;

// [SECTION] Commands (app/core/commands.h dispatches `lesson ...` and `teacher on|off` here)

//   lesson open N|ID        open lesson N of the catalogue (1-based) or by id / file stem
//   lesson close            close it (progress stays)
//   lesson next | prev      the next / previous step; moving past a step with nothing to do
//                           marks it done
//   lesson goto STEP        a step by id or 1-based number
//   lesson draft ID [TEXT]  what the learner has typed into ID's field so far (no grade)
//   lesson predict ID INPUT the learner's prediction for predict block ID ("2.5 MiB", "B")
//   lesson reveal [ID]      reveal a prediction to the class (default: the current step's)
//   lesson apply STEPS_ID   load the steps block's model and apply its steps
//   lesson show-me ID       apply checkpoint ID's solution ("Show me"; not recorded as reached)
//   lesson load-model ID    load a model block of the lesson (the learner's text is kept)
//   lesson restore-model    put back the learner's text a load replaced
//   lesson focus ID         scroll the text to a block (a predict, checkpoint, model or steps id)
//   lesson reset [ID]       forget the progress of a lesson (default: the open one)
//   lesson panel text|model what the left panel shows while a lesson is open
//   lesson reload           re-read the lessons folder
std::string lesson_command(AppState& state, std::string_view args);
std::string teacher_command(AppState& state, bool on);
// Checks a `lesson ...` line's shape when a script is parsed (sub-command and arity), so a bad
// script line fails before it runs; throws nothing, returns "" or the message.
std::string check_lesson_command(std::string_view args);

// [SECTION] Session restore and state JSON

// Restores what lesson_session_json and lesson_progress_json wrote; each bad field or lesson is
// skipped by name, the message lists them ("" when all came back). The open lesson is reopened
// without driving the workbench (the session restores the model and machine the learner had).
std::string restore_lesson_session(AppState& state, const nlohmann::json* lesson,
                                   const nlohmann::json* progress);
// What a test reads off the screen: the open lesson, its steps, predictions (answers only when
// visible), checks, the catalogue.
nlohmann::json lesson_state_json(const AppState& state);

}  // namespace tilescope::core

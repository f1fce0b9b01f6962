// The profiler trace a learner opened (File ▸ Open trace…, a dropped trace, `open-trace`), and
// its mapping onto the current model, kept up to date as the model or the machine changes. The
// Trace view draws it (app/gui/views/view_trace.cpp).
#pragma once

#include "sim/import/trace.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

namespace tilescope::core {

struct AppState;

struct TraceDoc {
  std::string path;                                    // "" = none opened
  std::shared_ptr<const import::ProfilerTrace> trace;  // null when none, or it did not read
  std::string error;                                   // why the last open failed
  // The mapping, for the model text and machine it was made for.
  std::shared_ptr<const import::TraceMapping> mapping;
  std::string mapped_text, mapped_machine;
  int selected = -1;  // the node (index into mapping->nodes) the learner picked; -1 none
};

// Opens a trace; "" on success, else the message (the trace already open stays).
std::string open_trace_file(AppState& state, const std::string& path);
// Remaps when the model text or the machine changed since the last mapping (update_state).
void refresh_trace_mapping(AppState& state);
// True when the file at `path` looks like a profiler trace rather than a session (a drop).
bool looks_like_trace(const std::string& path);
// `trace select N` / `trace clear`: "" or the message.
std::string trace_command(AppState& state, std::string_view args);
// The state JSON's "trace" object (tests read it).
nlohmann::json trace_state_json(const AppState& state);

}  // namespace tilescope::core

// The profiler trace a learner opened (File ▸ Open trace…, a dropped trace, `open-trace`), and
// its mapping onto the current model, kept up to date as the model or the machine changes. The
// Trace view draws it (app/gui/views/view_trace.cpp). Knows nothing of the AppState: its callers
// (files.cpp, app_state.cpp, commands_apply.cpp) pass the model and the machine.
#pragma once

#include "sim/graph/graph.h"
#include "sim/import/trace.h"
#include "sim/predict/machine.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace tilescope::core {

struct TraceDoc {
  std::string path;                                    // "" = none opened
  std::shared_ptr<const import::ProfilerTrace> trace;  // null when none, or it did not read
  std::string error;                                   // why the last open failed
  // The mapping, for the model text and machine it was made for.
  std::shared_ptr<const import::TraceMapping> mapping;
  std::string mapped_text, mapped_machine;
  int selected = -1;  // the node (index into mapping->nodes) the learner picked; -1 none
};

// Reads a trace into `doc` (the mapping follows at the next refresh); "" on success, else the
// message, and the trace already open stays.
std::string open_trace(TraceDoc& doc, const std::string& path);
// Remaps when the model text or the machine changed since the last mapping.
void refresh_trace_mapping(TraceDoc& doc, const graph::Graph* graph, const std::string& text,
                           const predict::Machine* machine, const std::string& machine_name);
// True when the file at `path` looks like a profiler trace rather than a session (a drop).
bool looks_like_trace(const std::string& path);
// `trace select N` / `trace clear`: "" or the message; `op` is set to the picked node's main op.
std::string trace_command(TraceDoc& doc, const graph::Graph* graph, std::string_view args,
                          std::string& op);
// The state JSON's "trace" object (tests read it).
nlohmann::json trace_state_json(const TraceDoc& doc);

}  // namespace tilescope::core

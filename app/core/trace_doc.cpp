// The opened profiler trace and its mapping onto the model (trace_doc.h).
#include "app/core/trace_doc.h"

#include "app/core/app_state.h"
#include "sim/io/input.h"

#include <fstream>

namespace tilescope::core {

std::string open_trace_file(AppState& state, const std::string& path) {
  try {
    auto trace =
        std::make_shared<const import::ProfilerTrace>(import::read_profiler_trace_file(path));
    state.trace = TraceDoc{};
    state.trace.path = path;
    state.trace.trace = std::move(trace);
    refresh_trace_mapping(state);
    state.workbench.tab = ViewTab::Trace;
    state.notice = "opened the trace " + path;
    return {};
  } catch (const graph::GraphError& e) {
    state.trace.error = e.what();
    return e.what();
  }
}

void refresh_trace_mapping(AppState& state) {
  TraceDoc& t = state.trace;
  const graph::Graph* g = state.graph();
  if (!t.trace || !g) {
    t.mapping.reset();
    return;
  }
  const std::string& machine_name = state.workbench.machine_name;
  if (t.mapping && t.mapped_text == state.model.graph_text && t.mapped_machine == machine_name)
    return;
  if (!state.workbench.machine) return;
  t.mapping = std::make_shared<const import::TraceMapping>(
      import::map_trace(*g, state.model.graph_text, *t.trace, *state.workbench.machine));
  t.mapped_text = state.model.graph_text;
  t.mapped_machine = machine_name;
  if (t.selected >= int(t.mapping->nodes.size())) t.selected = -1;
}

bool looks_like_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), std::streamsize(head.size()));
  head.resize(size_t(in.gcount()));
  if (head.find("tilescope-session") != std::string::npos) return false;
  const size_t first = head.find_first_not_of(" \t\r\n");
  return head.find("\"traceEvents\"") != std::string::npos ||
         (first != std::string::npos && head[first] == '[');
}

std::string trace_command(AppState& state, std::string_view args) {
  TraceDoc& t = state.trace;
  if (args == "clear") {
    t.selected = -1;
    return {};
  }
  if (args.rfind("select ", 0) != 0) return "trace: expected 'select N' or 'clear'";
  if (!t.mapping) return "trace select: no trace is open (File ▸ Open trace…)";
  const std::string n(args.substr(7));
  char* end = nullptr;
  const long i = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end || i < 0 || i >= long(t.mapping->nodes.size()))
    return "trace select: expected a node number from 0 to " +
           std::to_string(t.mapping->nodes.size() - 1) + ", got '" + n + "'";
  t.selected = int(i);
  // The graph view follows: the node's main op is selected there too.
  const auto& node = t.mapping->nodes[size_t(i)];
  if (const graph::Graph* g = state.graph(); g && !node.ops.empty()) {
    state.selection.kind = Selection::Kind::Op;
    state.selection.name = g->op(node.ops.front()).name;
  }
  return {};
}

nlohmann::json trace_state_json(const AppState& state) {
  const TraceDoc& t = state.trace;
  nlohmann::json j;
  j["path"] = t.path;
  j["error"] = t.error;
  j["selected"] = t.selected;
  if (t.mapping) {
    j["mapped_time_share"] = t.mapping->mapped_time_share;
    j["time_basis"] = t.mapping->time_basis;
    j["nodes"] = t.mapping->nodes.size();
    j["fusions"] = t.mapping->fusions.size();
    if (t.selected >= 0) {
      const auto& n = t.mapping->nodes[size_t(t.selected)];
      nlohmann::json ops = nlohmann::json::array();
      for (int ti : n.trace_ops) ops.push_back(t.trace->ops[size_t(ti)].name);
      j["selected_node"] = {
          {"tensor", n.tensor}, {"framework_ops", ops}, {"measured_us", n.measured_us}};
    }
  }
  return j;
}

}  // namespace tilescope::core

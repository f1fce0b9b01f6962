// The opened profiler trace and its mapping onto the model (trace_doc.h).
#include "app/core/trace_doc.h"

#include <cstdlib>
#include <fstream>

namespace tilescope::core {

std::string open_trace(TraceDoc& doc, const std::string& path) {
  try {
    auto trace =
        std::make_shared<const import::ProfilerTrace>(import::read_profiler_trace_file(path));
    doc = TraceDoc{};
    doc.path = path;
    doc.trace = std::move(trace);
    return {};
  } catch (const graph::GraphError& e) {
    doc.error = e.what();
    return e.what();
  }
}

void refresh_trace_mapping(TraceDoc& doc, const graph::Graph* graph, const std::string& text,
                           const predict::Machine* machine, const std::string& machine_name) {
  if (!doc.trace || !graph || !machine) {
    doc.mapping.reset();
    return;
  }
  if (doc.mapping && doc.mapped_text == text && doc.mapped_machine == machine_name) return;
  doc.mapping = std::make_shared<const import::TraceMapping>(
      import::map_trace(*graph, text, *doc.trace, *machine));
  doc.mapped_text = text;
  doc.mapped_machine = machine_name;
  if (doc.selected >= int(doc.mapping->nodes.size())) doc.selected = -1;
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

std::string trace_command(TraceDoc& doc, const graph::Graph* graph, std::string_view args,
                          std::string& op) {
  if (args == "clear") {
    doc.selected = -1;
    return {};
  }
  if (args.rfind("select ", 0) != 0) return "trace: expected 'select N' or 'clear'";
  if (!doc.mapping) return "trace select: no trace is open (File ▸ Open trace…)";
  const std::string n(args.substr(7));
  char* end = nullptr;
  const long i = std::strtol(n.c_str(), &end, 10);
  if (n.empty() || *end || i < 0 || i >= long(doc.mapping->nodes.size()))
    return "trace select: expected a node number from 0 to " +
           std::to_string(doc.mapping->nodes.size() - 1) + ", got '" + n + "'";
  doc.selected = int(i);
  const auto& node = doc.mapping->nodes[size_t(i)];
  if (graph && !node.ops.empty()) op = graph->op(node.ops.front()).name;
  return {};
}

nlohmann::json trace_state_json(const TraceDoc& doc) {
  nlohmann::json j;
  j["path"] = doc.path;
  j["error"] = doc.error;
  j["selected"] = doc.selected;
  if (doc.mapping) {
    j["mapped_time_share"] = doc.mapping->mapped_time_share;
    j["time_basis"] = doc.mapping->time_basis;
    j["nodes"] = doc.mapping->nodes.size();
    j["fusions"] = doc.mapping->fusions.size();
    if (doc.selected >= 0) {
      const auto& n = doc.mapping->nodes[size_t(doc.selected)];
      nlohmann::json ops = nlohmann::json::array();
      for (int ti : n.trace_ops) ops.push_back(doc.trace->ops[size_t(ti)].name);
      j["selected_node"] = {
          {"tensor", n.tensor}, {"framework_ops", ops}, {"measured_us", n.measured_us}};
    }
  }
  return j;
}

}  // namespace tilescope::core

// The check language's trace functions: a PyTorch profiler trace (assets/recorded/traces/…) mapped
// onto a lesson's model by the import room's map_trace, and what a lesson says about it — the
// time each line of the model took, which line dominated, how many kernels ran for it, what its
// longest kernel is, and the element-wise chains a fusion would remove.
#include "sim/lesson/check_call.h"
#include "sim/lesson/check_functions.h"

#include "sim/import/trace.h"

#include <algorithm>

namespace tilescope::lesson::detail {

// A trace read and mapped onto one model, as the session caches it (checker.h's m_traces).
struct MappedTrace {
  import::ProfilerTrace trace;
  import::TraceMapping map;
};

namespace {

// The machine a trace's predicted shares are of: the call's or block's, else the GPU the
// recorded traces were made on (only trace_predicted_share reads the predictions).
std::string trace_machine(const CheckCall& call) {
  const std::string m = call.machine_for();
  return m.empty() ? "h200" : m;
}

// The node (line of the model text) that holds op `name`.
const import::NodeTime& node_of(const MappedTrace& t, const graph::Graph& g,
                                const std::string& name) {
  for (const import::NodeTime& n : t.map.nodes)
    for (graph::OpId id : n.ops)
      if (g.op(id).name == name) return n;
  throw EvalError{"op '" + name + "' is on no line of the model"};
}

// Kernels (GPU trace) or operators (CPU trace) that ran for a node.
double launches_of(const MappedTrace& t, const import::NodeTime& n) {
  double k = 0;
  for (int i : n.trace_ops) k += import::launches(t.trace, t.trace.ops[size_t(i)]);
  return k;
}

// The name of the longest kernel that ran for a node (GPU), or of the operator that did the work
// of its longest operator (CPU: "aten::mkldnn_convolution" under aten::conv2d).
std::string longest_of(const MappedTrace& t, const import::NodeTime& n) {
  std::string best;
  double best_us = -1;
  for (int i : n.trace_ops) {
    const import::TraceOp& op = t.trace.ops[size_t(i)];
    if (t.trace.gpu) {
      for (int k : op.kernels)
        if (t.trace.kernels[size_t(k)].dur_us > best_us) {
          best_us = t.trace.kernels[size_t(k)].dur_us;
          best = t.trace.kernels[size_t(k)].name;
        }
    } else if (op.dur_us > best_us) {
      best_us = op.dur_us;
      best = op.worker().empty() ? op.name : op.worker();
    }
  }
  if (best.empty())
    throw EvalError{"no " + std::string(t.trace.gpu ? "kernel" : "operator") +
                    " of the trace ran for " + n.tensor};
  return best;
}

}  // namespace

const MappedTrace& CheckCall::trace(const std::string& file) {
  const std::string model_id = model_for();
  const std::string machine_name = trace_machine(*this);
  const std::string key = file + "|" + model_id + "|" + machine_name;
  if (auto it = session.m_traces.find(key); it != session.m_traces.end()) return *it->second;
  auto t = std::make_shared<MappedTrace>();
  try {
    t->trace = import::read_profiler_trace_file(resolve_lesson_path(file, lesson_file()));
  } catch (const std::exception& e) {
    throw EvalError{e.what()};
  }
  const std::string text = session.model_text(model_id);
  if (text.empty())
    throw EvalError{"model " + model_id + " has no text of its own to map a trace onto"};
  t->map = import::map_trace(graph_of(model_id), text, t->trace, machine(machine_name));
  session.m_traces[key] = t;
  return *t;
}

Value eval_trace(CheckCall& call) {
  const MappedTrace& t = call.trace(call.str(0));
  const std::string& f = call.name();
  const bool has_op = call.e.positional() > 1;
  // The line holding the call's op (its second argument).
  auto node = [&]() -> const import::NodeTime& {
    return node_of(t, call.graph_of(call.model_for()), call.e.args[1].text);
  };
  if (f == "trace_time") return Value::of(1e-6 * (has_op ? node().measured_us : t.map.total_us));
  if (f == "trace_share") return Value::of(node().measured_share);
  if (f == "trace_predicted_share") return Value::of(node().predicted_share);
  if (f == "trace_launches") {
    if (has_op) return Value::of(launches_of(t, node()));
    return Value::of(double(t.trace.gpu ? t.trace.kernels.size() : t.trace.ops.size()));
  }
  if (f == "trace_kernel") return Value::of(longest_of(t, node()));
  if (f == "trace_library") return Value::of(import::explain_kernel(longest_of(t, node())).library);
  if (f == "trace_heaviest") {
    if (t.map.nodes.empty()) throw EvalError{"the model has no ops"};
    const auto heaviest =
        std::max_element(t.map.nodes.begin(), t.map.nodes.end(),
                         [](const import::NodeTime& a, const import::NodeTime& b) {
                           return a.measured_us < b.measured_us;
                         });
    return Value::of(call.graph_of(call.model_for()).op(heaviest->ops.front()).name);
  }
  if (f == "trace_mapped") return Value::of(t.map.mapped_time_share);
  if (f == "trace_gpu") return Value::of(t.trace.gpu ? 1.0 : 0.0);
  if (f == "trace_fusions") return Value::of(double(t.map.fusions.size()));
  // trace_extra_launches: the separate element-wise launches the fusion chains hold.
  double launches = 0;
  for (const import::FusionHint& h : t.map.fusions) launches += h.launches;
  return Value::of(launches);
}

}  // namespace tilescope::lesson::detail

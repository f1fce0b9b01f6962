// A profiler trace's operators mapped onto the model's nodes (trace.h): time shares measured and
// predicted, and the element-wise chains a fusion would remove.
#include "sim/import/trace.h"

#include "sim/io/format.h"
#include "sim/predict/roofline.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilescope::import {

namespace {

using graph::OpKind;

// What a framework operator computes, as tilescope's op kinds, and whether it also runs the bias
// add that the imported model writes as its own node (aten::linear, aten::addmm: x @ W.T + b).
struct OpMeaning {
  std::vector<OpKind> kinds;
  bool takes_bias = false;
};

const OpMeaning* meaning(const std::string& name) {
  static const std::map<std::string, OpMeaning> kTable = {
      {"aten::conv2d", {{OpKind::Conv2D}, false}},
      {"aten::convolution", {{OpKind::Conv2D}, false}},
      {"aten::_convolution", {{OpKind::Conv2D}, false}},
      {"aten::cudnn_convolution", {{OpKind::Conv2D}, false}},
      {"aten::linear", {{OpKind::MatMul}, true}},
      {"aten::addmm", {{OpKind::MatMul}, true}},
      {"aten::matmul", {{OpKind::MatMul}, false}},
      {"aten::mm", {{OpKind::MatMul}, false}},
      {"aten::bmm", {{OpKind::MatMul}, false}},
      {"aten::relu", {{OpKind::ReLU}, false}},
      {"aten::relu_", {{OpKind::ReLU}, false}},
      {"aten::hardtanh", {{OpKind::ReLU6}, false}},
      {"aten::hardtanh_", {{OpKind::ReLU6}, false}},
      {"aten::clamp", {{OpKind::ReLU6, OpKind::ReLU}, false}},
      {"aten::gelu", {{OpKind::GELU}, false}},
      {"aten::sigmoid", {{OpKind::Sigmoid}, false}},
      {"aten::tanh", {{OpKind::Tanh}, false}},
      {"aten::max_pool2d", {{OpKind::MaxPool2D}, false}},
      {"aten::avg_pool2d", {{OpKind::AvgPool2D}, false}},
      {"aten::adaptive_avg_pool2d", {{OpKind::AvgPool2D}, false}},
      {"aten::batch_norm", {{OpKind::BatchNorm}, false}},
      {"aten::layer_norm", {{OpKind::LayerNorm}, false}},
      {"aten::softmax", {{OpKind::Softmax}, false}},
      {"aten::_softmax", {{OpKind::Softmax}, false}},
      {"aten::add", {{OpKind::Add}, false}},
      {"aten::add_", {{OpKind::Add}, false}},
      {"aten::sub", {{OpKind::Sub}, false}},
      {"aten::mul", {{OpKind::Mul, OpKind::Scale}, false}},
      {"aten::div", {{OpKind::Scale}, false}},
      {"aten::flatten", {{OpKind::Reshape}, false}},
      {"aten::reshape", {{OpKind::Reshape}, false}},
      {"aten::view", {{OpKind::Reshape}, false}},
      {"aten::transpose", {{OpKind::Transpose}, false}},
      {"aten::permute", {{OpKind::Transpose}, false}},
      {"aten::cat", {{OpKind::Concat}, false}},
      {"aten::narrow", {{OpKind::Slice}, false}},
      {"aten::split", {{OpKind::Slice}, false}},
      {"aten::mean", {{OpKind::Mean}, false}},
      {"aten::sum", {{OpKind::Sum}, false}},
  };
  auto it = kTable.find(name);
  return it == kTable.end() ? nullptr : &it->second;
}

bool elementwise_after_gemm(OpKind k) {
  return k == OpKind::Add || k == OpKind::ReLU || k == OpKind::ReLU6 || k == OpKind::GELU ||
         k == OpKind::Sigmoid || k == OpKind::Tanh || k == OpKind::Mul || k == OpKind::Scale;
}

std::string line_text(std::string_view text, int line) {
  size_t start = 0;
  for (int l = 1; l < line && start != std::string_view::npos; ++l) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start >= text.size()) return {};
  const size_t end = text.find('\n', start);
  return std::string(text.substr(start, end == std::string_view::npos ? end : end - start));
}

// The main op of a node: the first op of its line (conv2d(x, w, b) emits the Conv2D first).
const graph::Op& main_op(const graph::Graph& g, const NodeTime& n) {
  return g.op(n.ops.front());
}

double roofline_seconds(const graph::Graph& g, graph::OpId id, const predict::Machine& m) {
  const graph::OpCost c = g.op_cost(id);
  predict::LevelBytes bytes;
  bytes.names = {m.memory.name.empty() ? "memory" : m.memory.name};
  bytes.bytes = {double(c.bytes())};
  return predict::roofline(m, double(c.flops), bytes).seconds;
}

// Element-wise work run as its own kernel after a GEMM or convolution: a bias or BatchNorm
// kernel its own operator launched (or a BatchNorm the exporter folded into it, run
// separately), then the element-wise nodes that follow it. Each writes the tensor and the next
// step reads it back: a round trip a fused epilogue does not make.
std::vector<FusionHint> fusion_hints(const graph::Graph& g, const ProfilerTrace& trace,
                                     const std::vector<NodeTime>& nodes) {
  std::vector<FusionHint> hints;
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    const NodeTime& gemm = nodes[ni];
    const OpKind k = main_op(g, gemm).kind;
    if ((k != OpKind::MatMul && k != OpKind::Conv2D) || gemm.trace_ops.empty()) continue;
    FusionHint h;
    h.after = gemm.tensor;
    graph::TensorId prev = g.op(gemm.ops.back()).outputs[0];
    const double out_bytes = double(g.tensor(prev).bytes());
    auto add_step = [&](const std::string& what, int launches) {
      h.steps.push_back(what);
      h.launches += launches;
      h.round_trip_bytes += 2.0 * out_bytes;
    };
    for (int ti : gemm.trace_ops) {
      const TraceOp& op = trace.ops[size_t(ti)];
      if (gemm.folded(ti)) {
        add_step("BatchNorm", launches(trace, op));
        continue;
      }
      for (int kk : op.kernels) {  // GPU: the element-wise kernels of the GEMM's own operator
        const KernelName e = explain_kernel(trace.kernels[size_t(kk)].name);
        if (e.what.rfind("element-wise", 0) == 0)
          add_step(e.what.find("add") != std::string::npos ? "bias"
                   : e.what.size() > 14 ? e.what.substr(14)  // after "element-wise: "
                                        : e.what,
                   1);
      }
    }
    for (size_t nj = ni + 1; nj < nodes.size(); ++nj) {
      const NodeTime& n = nodes[nj];
      const graph::Op& op = main_op(g, n);
      const bool reads_prev = std::count(op.inputs.begin(), op.inputs.end(), prev) > 0;
      if (!reads_prev || !elementwise_after_gemm(op.kind) || g.consumers(prev).size() != 1) break;
      if (!n.shared_with.empty()) {  // run inside the GEMM's own operator: no extra trip
        prev = g.op(n.ops.back()).outputs[0];
        continue;
      }
      if (n.trace_ops.empty()) break;
      h.chain.push_back(n.tensor);
      for (int ti : n.trace_ops) h.launches += launches(trace, trace.ops[size_t(ti)]);
      h.steps.push_back(graph::op_kind_name(op.kind));
      h.round_trip_bytes += 2.0 * double(g.tensor(prev).bytes());
      prev = g.op(n.ops.back()).outputs[0];
    }
    if (h.steps.empty()) continue;
    std::string steps;
    for (const std::string& st : h.steps) steps += (steps.empty() ? "" : " + ") + st;
    const size_t trips = h.steps.size();
    h.text = steps + " after '" + h.after + "' ran separately: " + std::to_string(h.launches) +
             (trace.gpu ? " kernel" : " operator") + (h.launches == 1 ? "" : "s") + ", " +
             std::to_string(trips) + " extra round trip" + (trips > 1 ? "s" : "") + " of " +
             io::format_bytes(h.round_trip_bytes / double(trips)) +
             " that a fused epilogue would not make";
    hints.push_back(h);
  }
  return hints;
}

}  // namespace

TraceMapping map_trace(const graph::Graph& g, std::string_view model_text,
                       const ProfilerTrace& trace, const predict::Machine& machine) {
  TraceMapping out;
  out.time_basis = trace.gpu ? "GPU kernel time" : "CPU operator time";
  out.machine = machine.name;
  // The nodes: one per line of the text that made ops.
  std::map<int, size_t> by_line;
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const graph::Op& op = g.ops()[i];
    const int line = op.loc.line;
    auto [it, fresh] = by_line.emplace(line, out.nodes.size());
    if (fresh) {
      NodeTime n;
      n.line = line;
      n.tensor = g.tensor(op.outputs[0]).name;
      n.text = line_text(model_text, line);
      out.nodes.push_back(n);
    }
    NodeTime& n = out.nodes[it->second];
    n.ops.push_back(graph::OpId(i));
    n.tensor = g.tensor(op.outputs[0]).name;  // the line's last op computes its tensor
  }
  // Operators in time order to the first unmatched node of a kind they compute.
  std::vector<bool> taken(out.nodes.size(), false);
  auto shape_fits = [&](const TraceOp& t, const NodeTime& n) {
    if (t.inputs.empty() || t.inputs[0].empty()) return true;  // no shapes recorded
    const graph::Op& op = main_op(g, n);
    return !op.inputs.empty() && g.tensor(op.inputs[0]).shape == t.inputs[0];
  };
  size_t last = out.nodes.size();  // the node the previous mapped operator went to
  for (size_t ti = 0; ti < trace.ops.size(); ++ti) {
    const TraceOp& t = trace.ops[ti];
    const OpMeaning* m = meaning(t.name);
    size_t pick = out.nodes.size();
    for (size_t ni = 0; m && ni < out.nodes.size() && pick == out.nodes.size(); ++ni) {
      const OpKind k = main_op(g, out.nodes[ni]).kind;
      if (!taken[ni] && std::count(m->kinds.begin(), m->kinds.end(), k) &&
          shape_fits(t, out.nodes[ni]))
        pick = ni;
    }
    if (pick == out.nodes.size()) {
      // Eager PyTorch runs a BatchNorm that the exporter folded into the convolution before it
      // (eval mode): the convolution's node, whose output it reads, owns its time.
      if (m && m->kinds.front() == OpKind::BatchNorm && last < out.nodes.size() &&
          main_op(g, out.nodes[last]).kind == OpKind::Conv2D &&
          (t.inputs.empty() || t.inputs[0].empty() ||
           g.tensor(g.op(out.nodes[last].ops.back()).outputs[0]).shape == t.inputs[0])) {
        out.nodes[last].trace_ops.push_back(int(ti));
        out.nodes[last].folded_ops.push_back(int(ti));
        continue;
      }
      out.unmapped_ops.push_back(int(ti));
      continue;
    }
    last = pick;
    taken[pick] = true;
    out.nodes[pick].trace_ops.push_back(int(ti));
    // aten::linear runs the bias add the ONNX graph writes as the next node.
    if (m->takes_bias && pick + 1 < out.nodes.size() && !taken[pick + 1]) {
      NodeTime& next = out.nodes[pick + 1];
      const graph::Op& add = main_op(g, next);
      const graph::TensorId made = g.op(out.nodes[pick].ops.back()).outputs[0];
      if (add.kind == OpKind::Add && std::count(add.inputs.begin(), add.inputs.end(), made)) {
        taken[pick + 1] = true;
        next.shared_with = out.nodes[pick].tensor;
      }
    }
  }
  // Time: kernels on a GPU, the operators themselves on a CPU.
  auto op_time = [&](const TraceOp& t) {
    if (!trace.gpu) return t.dur_us;
    double us = 0;
    for (int k : t.kernels) us += trace.kernels[size_t(k)].dur_us;
    return us;
  };
  if (trace.gpu) {
    for (const auto& k : trace.kernels) out.total_us += k.dur_us;
  } else {
    for (const auto& t : trace.ops) out.total_us += t.dur_us;
  }
  double predicted_total = 0;
  for (NodeTime& n : out.nodes) {
    for (int ti : n.trace_ops) n.measured_us += op_time(trace.ops[size_t(ti)]);
    out.mapped_us += n.measured_us;
    for (graph::OpId id : n.ops) n.predicted_s += roofline_seconds(g, id, machine);
    predicted_total += n.predicted_s;
  }
  for (NodeTime& n : out.nodes) {
    n.measured_share = out.total_us > 0 ? n.measured_us / out.total_us : 0;
    n.predicted_share = predicted_total > 0 ? n.predicted_s / predicted_total : 0;
  }
  out.mapped_time_share = out.total_us > 0 ? out.mapped_us / out.total_us : 0;

  out.fusions = fusion_hints(g, trace, out.nodes);
  return out;
}

}  // namespace tilescope::import

// What a framework really ran: a PyTorch profiler trace (torch.profiler … export_chrome_trace)
// read, and its operators and kernels mapped onto the nodes of a model tilescope imported.
//
// Two trace formats are read: Kineto's ({"traceEvents": [...]}, torch ≥ 1.8 with Kineto: CPU
// operators as "cpu_op" events with their input shapes, GPU kernels as "kernel" events whose
// correlation id names the cudaLaunchKernel that started them) and the legacy profiler's (a bare
// list of operator events under "CPU functions", as Debian 12's torch 1.13 writes).
//
// Mapping: each top-level framework operator (aten::conv2d, aten::linear …; the operators it
// calls are listed under it) is matched in time order to the first node of the model text of a
// kind it computes, by input shape where the trace has shapes; a node is a line of the imported
// text (one ONNX node). The time of a node is its kernels' time on a GPU and its operators' time
// on a CPU; the time basis is what the shares are of.
#pragma once

#include "sim/graph/graph.h"
#include "sim/predict/machine.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::import {

// A trace's size limit (a profiled forward pass of a small model is well under a megabyte).
inline constexpr uint64_t kMaxTraceBytes = uint64_t{256} << 20;

struct TraceKernel {
  std::string name;
  double dur_us = 0;
  std::array<int64_t, 3> grid{}, block{};  // 0 when the trace does not say
  int op = -1;                             // the top-level operator that launched it; -1: none
};

struct TraceOp {
  std::string name;  // "aten::conv2d"
  double ts_us = 0, dur_us = 0;
  std::vector<graph::Shape> inputs;  // "Input Dims" where recorded (tensors; [] for scalars)
  std::vector<std::string> callees;  // operators it called, in order ("aten::mkldnn_convolution")
  std::vector<double> callee_us;     // their durations
  // The callee that did the work: the last (deepest) one that took at least half of the time
  // ("aten::mkldnn_convolution" under aten::conv2d); "" when none did.
  std::string worker() const;
  std::vector<int> kernels;  // GPU kernels it launched
};

struct ProfilerTrace {
  std::string source;
  std::string format;        // "kineto" or "legacy"
  bool gpu = false;          // has GPU kernels
  std::vector<TraceOp> ops;  // top-level operators, in time order
  std::vector<TraceKernel> kernels;
  // What the reader could not do, for the learner: no GPU kernels (a CPU-only recording), kernels
  // no operator in the trace launched.
  std::vector<std::string> notes;
};

// What one framework operator launched: its GPU kernels, or itself in a CPU-only trace.
int launches(const ProfilerTrace& trace, const TraceOp& op);

// Reads a Chrome trace; graph::GraphError located at `source` for JSON that is not a profiler
// trace (no operator events, malformed).
ProfilerTrace read_profiler_trace(std::string_view json_text, const std::string& source);
ProfilerTrace read_profiler_trace_file(const std::string& path);

// A vendor or framework kernel's name, explained: which library and what it computes, with the
// tile size where the name gives one ("cuBLAS", "GEMM, tiles 128 × 128 × 32"). `library` is ""
// when the name is not recognised.
struct KernelName {
  std::string library;
  std::string what;
};
KernelName explain_kernel(std::string_view name);

// One node of the model (a line of its text) with what ran for it.
struct NodeTime {
  int line = 0;                  // line in the model text
  std::string tensor;            // the tensor the line computes
  std::string text;              // the line, comment included
  std::vector<graph::OpId> ops;  // tilescope's ops of the line
  std::vector<int> trace_ops;    // framework operators mapped to it
  // Those of trace_ops that the exporter folded into this node and the framework ran on their own
  // (an eval-mode aten::batch_norm after a convolution).
  std::vector<int> folded_ops;
  bool folded(int trace_op) const {
    return std::find(folded_ops.begin(), folded_ops.end(), trace_op) != folded_ops.end();
  }
  std::string shared_with;  // "" or the tensor of the node whose operator also ran this one
  double measured_us = 0, measured_share = 0;
  double predicted_s = 0, predicted_share = 0;  // roofline time on the machine, and its share
};

struct FusionHint {
  std::string after;               // the GEMM/conv node's tensor
  std::vector<std::string> chain;  // the element-wise nodes run as separate operators after it
  // Every separate element-wise step, in order: the GEMM operator's own bias kernel ("bias"), a
  // folded BatchNorm run on its own ("BatchNorm"), then the chain's op kinds ("ReLU").
  std::vector<std::string> steps;
  int launches = 0;             // their separate kernels (GPU) or operators (CPU)
  double round_trip_bytes = 0;  // written by one, read back by the next: 2 × each output
  std::string text;  // "bias + ReLU after 'c' ran separately: 2 kernels, 2 extra round trips of …"
};

struct TraceMapping {
  std::string time_basis;  // "GPU kernel time" or "CPU operator time"
  std::vector<NodeTime> nodes;
  std::vector<int> unmapped_ops;  // top-level operators matched to no node
  double total_us = 0, mapped_us = 0;
  double mapped_time_share = 0;  // mapped_us / total_us
  std::string machine;           // what the predicted shares are of
  std::vector<FusionHint> fusions;
};

// Maps `trace` onto the graph parsed from `model_text` (its lines are the nodes); predicted
// shares from each op's roofline time on `machine` (its FLOPs at the fp32 peak, its minimum bytes
// at the memory's bandwidth).
TraceMapping map_trace(const graph::Graph& g, std::string_view model_text,
                       const ProfilerTrace& trace, const predict::Machine& machine);

}  // namespace tilescope::import

// Default lowering: every graph op becomes one Kernel whose loops walk its iteration space in
// order.
#pragma once

#include "sim/graph/graph.h"
#include "sim/schedule/kernel.h"

#include <memory>

namespace tilescope::schedule {

// One kernel per op, in graph order, each with its natural loop nest (spatial axes, then reduction
// axes). Throws ScheduleError naming the op for an op kind with no loop-nest lowering yet.
Program lower_graph(std::shared_ptr<const graph::Graph> graph);

// The kernel of a single op (what lower_graph does per op).
Kernel lower_op(const graph::Graph& graph, graph::OpId op);

// A kernel tensor mirroring a graph tensor.
KernelTensor kernel_tensor(const graph::Tensor& t, graph::TensorId id, TensorRole role);

// Puts inputs before outputs (the argument order of generated code), remapping tensor indices in
// phases and stages.
void normalize_tensor_order(Kernel& k);

// Resets a kernel's schedule to its default: one serial loop per axis, in axis order.
void reset_schedule(Kernel& k);

}  // namespace tilescope::schedule

// Training graphs: the forward graph plus a loss, reverse-mode gradients as graph ops, and SGD.
//
// build_training_graph() copies the forward graph and appends, in order: a "target" input, the
// loss op, one backward op group per forward op (last to first), and one SGDUpdate per weight.
// Every appended op is an ordinary graph op, so costs, the evaluator and schedules treat the
// training step like any forward graph.
#pragma once

#include "sim/graph/graph.h"

#include <optional>

namespace tilescope::graph {

enum class LossKind { MSE, CrossEntropy };
const char* loss_kind_name(LossKind);  // "mse", "cross-entropy"

struct TrainingOptions {
  LossKind loss = LossKind::MSE;
  double learning_rate = 0.01;
  // The tensor the loss compares with the target; by default the forward graph's only output.
  // When it already is a loss (a scalar made by MSELoss / CrossEntropyLoss), it is used as the
  // loss as it stands and no target is added.
  std::optional<TensorId> prediction;
  // Also produce gradients of Input tensors ("dx"): what a learner inspects, though SGD needs only
  // the weights' gradients.
  bool input_gradients = true;
};

// Tensor names: the target "target", the loss "loss", the gradient of tensor t "d<t>" (with
// "d<t>_via_<op>" for each consumer's share when t feeds several ops), updated weights "<w>_next".
// Backward ops carry origin "backward of <forward op>"; updates carry origin "SGD update".
// BatchNorm's mean and var are running statistics, treated as constants (no gradient, no update).
// Throws GraphError when the prediction is ambiguous or unusable, or an op has no gradient.
Graph build_training_graph(const Graph& forward, const TrainingOptions& options);

}  // namespace tilescope::graph

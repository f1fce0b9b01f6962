// The reference evaluator: every op kind as plain loops in double precision — the truth that the
// schedule interpreter and the real kernels are checked against. Obviously correct, not fast.
//
// Values are always in logical row-major order (index [i0, i1, ...] at i0*s0 + i1*s1 + ... with
// row-major strides s), whatever the tensor's layout: layout is about memory order, not values.
#pragma once

#include "sim/graph/graph.h"

#include <cstdint>
#include <map>
#include <vector>

namespace tilescope::graph {

using TensorData = std::vector<double>;

// Runs the whole graph. `feeds` must give a value for every tensor no op produces (inputs and
// weights), each with numel() elements. Returns one TensorData per tensor, indexed by TensorId.
// Throws GraphError for a missing or mis-sized feed, a feed for a computed tensor, or bad data
// (a cross-entropy target that is not a class index).
std::vector<TensorData> evaluate(const Graph& g, const std::map<TensorId, TensorData>& feeds);

// The same in single precision at the interface: feeds widen to double, results round to float.
std::vector<std::vector<float>> evaluate_f32(const Graph& g,
                                             const std::map<TensorId, std::vector<float>>& feeds);

// One op on given input values (in op.inputs order); what evaluate() does per op.
TensorData evaluate_op(const Graph& g, OpId id, const std::vector<const TensorData*>& inputs);

// Deterministic random feeds for every tensor no op produces, identical on every platform (own
// generator, no std:: distributions). Values are never zero: magnitudes in [0.1, 1] with a random
// sign; BatchNorm variances are in [0.5, 1.5]; cross-entropy targets are class indices 0..C-1
// stored as whole numbers.
std::map<TensorId, TensorData> random_feeds(const Graph& g, uint64_t seed);

}  // namespace tilescope::graph

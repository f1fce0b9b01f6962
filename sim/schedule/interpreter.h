// The reference interpreter: runs a schedule's loop tree on small tensors in fp32, exactly in the
// order the tree gives (stage copies, guards, accumulators), so a wrong transformation shows up as
// a wrong number.
#pragma once

#include "sim/schedule/kernel.h"
#include "sim/schedule/loop_tree.h"

#include <map>
#include <string>
#include <vector>

namespace tilescope::schedule {

// Runs one kernel. buffers[i] holds Kernel::tensors[i] in its own memory layout (strides, padding):
// at least alloc_elems() floats. Outputs are written in place.
void interpret_kernel(const LoweredKernel& lk, std::vector<std::vector<float>>& buffers);
void interpret_kernel(const Kernel& k, std::vector<std::vector<float>>& buffers);

// Values in logical row-major order (the convention of graph::evaluate) ⇄ a tensor's memory layout.
std::vector<float> pack_tensor(const KernelTensor& t, const std::vector<float>& logical);
std::vector<float> unpack_tensor(const KernelTensor& t, const std::vector<float>& memory);

// Runs every kernel of the program in order. `feeds` gives logical values of the graph's inputs
// and weights; the result holds every tensor the program wrote, by graph TensorId (scratch
// tensors a transform created are not returned). Throws ScheduleError for a missing feed.
std::map<graph::TensorId, std::vector<float>> run_program(
    const Program& p, const std::map<graph::TensorId, std::vector<float>>& feeds);

// fp32 semantics of the expression operators. FillAbove's fill is the VExpr's value.
float apply_unary(UnaryOp op, float a);
float apply_binary(BinaryOp op, float a, float b, float fill = 0.0f);

}  // namespace tilescope::schedule

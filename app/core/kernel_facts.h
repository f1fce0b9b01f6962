// What the workbench and the autotune sweeps both judge a kernel by: its FLOPs (from the graph's
// cost table) and the tolerance a real run must meet against the interpreter. A header of its
// own so that autotune.cpp need not include workbench.h, which includes autotune.h.
#pragma once

#include "sim/graph/graph.h"
#include "sim/schedule/kernel.h"

#include <cstdint>

namespace tilescope::core {

// Below these the verification tolerance is met (fp32 sums in a different order differ).
inline constexpr double kVerifyTolerance = 1e-4;

// The FLOPs of the kernel's ops, summed from the graph's cost table.
int64_t kernel_flops(const schedule::Kernel& k, const graph::Graph& g);

}  // namespace tilescope::core

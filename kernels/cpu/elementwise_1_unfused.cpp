// Elementwise version 1: the chain as two kernels, T = X + bias, then Y = relu(T).
//
// Changed since version 0: what a framework without fusion runs — one kernel per op, with the
// intermediate T written to memory and read back. Minimum traffic: read X, write T, read T, write Y
// (4 × rows·cols·4 bytes), twice the fused chain's; on a large tensor both are DRAM-bound.
#include "kernels/cpu/elementwise_versions.h"

#include <cstddef>

namespace tilescope::kernels {

void elementwise_1_unfused(const BiasReluArgs& args) {
  bias_cols_pass(args.x, args.bias, args.tmp, args.rows, args.cols);
  relu_pass(args.tmp, args.y, static_cast<std::size_t>(args.rows) * args.cols);
}

}  // namespace tilescope::kernels

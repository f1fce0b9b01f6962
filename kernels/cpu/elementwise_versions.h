// The numbered CPU versions of the elementwise chain Y = relu(X + bias): Eigen, unfused, fused.
#pragma once

#include "kernels/cpu/kernel_args.h"

namespace tilescope::kernels {

void elementwise_0_eigen(const BiasReluArgs&);
void elementwise_1_unfused(const BiasReluArgs&);
void elementwise_2_fused(const BiasReluArgs&);

}  // namespace tilescope::kernels

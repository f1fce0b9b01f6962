// Launchers for the counters run (counters_runner.cu): SGEMM 8 with a chosen block order.
#pragma once

#include "kernels/cuda/gpu_kernels.h"

namespace tilescope::kernels::cuda {

// SGEMM version 8 with its blocks in launch order (group_rows 0) or grouped by 8 or 16 rows of
// blocks (GroupedOrder in sgemm/08_double_buffered.cuh).
void sgemm8_ordered_launch(int group_rows, GemmShape shape, const float* a, const float* b,
                           float* c);

}  // namespace tilescope::kernels::cuda

// Launchers the counters run needs beyond gpu_runner.cu: SGEMM version 8 with its blocks in
// grouped order (the grid-order comparison). Kept apart from the one runner so the comparison's
// kernel instantiations live with the code that uses them.
#include "kernels/cuda/counters_runner.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sgemm/08_double_buffered.cuh"

#include <cuda_runtime.h>

namespace tilescope::kernels::cuda {

void sgemm8_ordered_launch(int group_rows, GemmShape s, const float* a, const float* b, float* c) {
  if (const std::string why = sgemm_unsupported(8, s); !why.empty()) {
    throw GpuError("sgemm 8 (grouped order): " + why);
  }
  const dim3 grid(s.n / sgemm08::kBN, s.m / sgemm08::kBM);
  const LoadADense::Params ap{a, s.k};
  switch (group_rows) {
    case 0:
      sgemm_08_double_buffered<LoadADense, EpilogueStore, LaunchOrder>
          <<<grid, sgemm08::kThreads>>>(s.m, s.n, s.k, ap, b, EpilogueStore::Params{}, c);
      break;
    case 8:
      sgemm_08_double_buffered<LoadADense, EpilogueStore, GroupedOrder<8>>
          <<<grid, sgemm08::kThreads>>>(s.m, s.n, s.k, ap, b, EpilogueStore::Params{}, c);
      break;
    case 16:
      sgemm_08_double_buffered<LoadADense, EpilogueStore, GroupedOrder<16>>
          <<<grid, sgemm08::kThreads>>>(s.m, s.n, s.k, ap, b, EpilogueStore::Params{}, c);
      break;
    default:
      throw GpuError("sgemm 8 (grouped order): groups of 0 (launch order), 8 or 16 rows, not " +
                     std::to_string(group_rows));
  }
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace tilescope::kernels::cuda

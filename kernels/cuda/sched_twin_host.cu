// The nvcc-built side of the schedule twin: sched_twin_gemm.cuh instantiated for the shapes the
// tests and the bench use, its launch configuration, and its resource report.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sched_twin.h"
#include "kernels/cuda/sched_twin_gemm.cuh"

#include <cuda_runtime.h>

#include <string>

namespace tilescope::kernels::cuda {
namespace {

using TwinKernel = void (*)(const float*, const float*, const float*, float*);

struct TwinInstance {
  int m, n, k;
  TwinKernel kernel;
};
// Tests: 197×93×37 (a partial tile in every dim); bench --quick: 1024²×512; bench: 4096²×1024.
template <bool kStrideByBlockDim>
const TwinInstance* find_instance(GemmShape s) {
  static const TwinInstance instances[] = {
      {197, 93, 37, sched_twin_gemm<197, 93, 37, kStrideByBlockDim>},
      {1024, 1024, 512, sched_twin_gemm<1024, 1024, 512, kStrideByBlockDim>},
      {4096, 4096, 1024, sched_twin_gemm<4096, 4096, 1024, kStrideByBlockDim>},
  };
  for (const TwinInstance& t : instances)
    if (t.m == s.m && t.n == s.n && t.k == s.k) return &t;
  return nullptr;
}

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

}  // namespace

LaunchConfig sched_twin_hand_launch_config(GemmShape s) {
  const SchedTwinTiles& t = kSchedTwinTiles;
  LaunchConfig c;
  c.grid[0] = static_cast<unsigned>(ceil_div(s.n, t.block_n));  // j.o → block.x
  c.grid[1] = static_cast<unsigned>(ceil_div(s.m, t.block_m));  // i.o → block.y
  c.block[0] = static_cast<unsigned>(t.block_n / t.thread_n);   // j.i.o → thread.x
  c.block[1] = static_cast<unsigned>(t.block_m / t.thread_m);   // i.i.o → thread.y
  return c;
}

std::string sched_twin_hand_unsupported(GemmShape s) {
  if (find_instance<false>(s)) return {};
  return "the hand-written schedule twin is built for 197×93×37, 1024×1024×512 and "
         "4096×4096×1024 only (got " +
         std::to_string(s.m) + "×" + std::to_string(s.n) + "×" + std::to_string(s.k) + ")";
}

void sched_twin_hand_launch(GemmShape s, const float* x, const float* w, const float* b, float* y,
                            bool stride_by_block_dim) {
  const TwinInstance* t = stride_by_block_dim ? find_instance<true>(s) : find_instance<false>(s);
  if (!t) throw GpuError(sched_twin_hand_unsupported(s));
  const LaunchConfig c = sched_twin_hand_launch_config(s);
  t->kernel<<<dim3(c.grid[0], c.grid[1]), dim3(c.block[0], c.block[1])>>>(x, w, b, y);
  TS_CUDA_CHECK_LAUNCH();
}

std::string sched_twin_hand_resources(GemmShape s, bool stride_by_block_dim) {
  const TwinInstance* t = stride_by_block_dim ? find_instance<true>(s) : find_instance<false>(s);
  if (!t) throw GpuError(sched_twin_hand_unsupported(s));
  cudaFuncAttributes a{};
  TS_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(t->kernel)));
  return std::to_string(a.numRegs) + " registers/thread, " + std::to_string(a.sharedSizeBytes) +
         " B shared, " + std::to_string(a.localSizeBytes) + " B local";
}

}  // namespace tilescope::kernels::cuda

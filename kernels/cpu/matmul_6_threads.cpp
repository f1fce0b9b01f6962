// MatMul version 6: version 5 spread over all hardware threads.
//
// Changed since version 5: the rows of A and Y are split into one contiguous slab per hardware
// thread (a multiple of the micro-kernel's MR rows each); every thread packs its own panels and
// runs the same fused GEMM on its slab. Slabs share no output, so no locks; each thread re-packs
// all of B, a K·N copy that is small next to its M/T·N·K FMAs. This is the only multithreaded
// version: compare it with Eigen (single-threaded) knowing it uses every core.
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/matmul_versions.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tilescope::kernels {

int matmul_thread_count() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void matmul_6_threads(const MatMulArgs& args) {
  const int threads = std::min(matmul_thread_count(), (args.m + gemm::kMR - 1) / gemm::kMR);
  if (threads <= 1) {
    matmul_5_fused_epilogue(args);
    return;
  }
  const int rows_per_slab =
      ((args.m + threads - 1) / threads + gemm::kMR - 1) / gemm::kMR * gemm::kMR;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const int i0 = t * rows_per_slab;
    const int rows = std::min(args.m, i0 + rows_per_slab) - i0;
    if (rows <= 0) break;
    workers.emplace_back([&args, i0, rows] {
      gemm::gemm(args.a + static_cast<std::size_t>(i0) * args.k, args.k, args.b, args.n,
                 args.y + static_cast<std::size_t>(i0) * args.n, args.n, rows, args.n, args.k,
                 gemm::Epilogue::kBiasColsRelu, args.bias);
    });
  }
  for (auto& w : workers) w.join();
}

}  // namespace tilescope::kernels

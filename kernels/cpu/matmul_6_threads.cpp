// MatMul version 6: version 5 spread over several threads.
//
// Changed since version 5: Y is cut into a grid of blocks, one per thread (rows × columns chosen
// so the blocks are as square as the thread count allows), and each thread runs the same fused
// GEMM on its block, packing its own panels of A and B. Blocks share no output, so no locks. A
// grid rather than slabs of rows: with T slabs every thread packs all of B (T copies of K·N); a
// √T × √T grid packs each operand only √T times. The threads are a persistent pool
// (thread_pool.h), so a call does not pay for creating them. Every Y element is computed by the
// same micro-kernel in the same k order as on one thread: the result is bit-identical.
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/matmul_versions.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <thread>

namespace tilescope::kernels {

int matmul_thread_count() {
  return std::max(1u, std::thread::hardware_concurrency());
}

MatMulGrid matmul_thread_grid(int threads, int m, int n, int k) {
  // Rows in multiples of MR and columns in multiples of NR, at least one of each per block.
  const int row_units = std::max(1, (m + gemm::kMR - 1) / gemm::kMR);
  const int col_units = std::max(1, (n + gemm::kNR - 1) / gemm::kNR);
  // As many blocks as threads when the matrix has room for them (else fewer); among the grids of
  // that many blocks, the one that packs least: A is packed once per column of blocks, B once
  // per row of blocks.
  for (int used = std::max(1, threads); used > 1; --used) {
    MatMulGrid best{0, 0};
    double best_packing = 0;
    for (int rows = 1; rows <= used; ++rows) {
      if (used % rows != 0) continue;
      const int cols = used / rows;
      if (rows > row_units || cols > col_units) continue;
      const double packing = double(cols) * m * k + double(rows) * k * n;
      if (best.rows == 0 || packing < best_packing) {
        best = {rows, cols};
        best_packing = packing;
      }
    }
    if (best.rows != 0) return best;
  }
  return {1, 1};
}

void matmul_6_threads(const MatMulArgs& args) {
  const int threads = args.threads > 0 ? args.threads : matmul_thread_count();
  const MatMulGrid grid = matmul_thread_grid(threads, args.m, args.n, args.k);
  if (grid.rows * grid.cols <= 1) {
    matmul_5_fused_epilogue(args);
    return;
  }
  // Block edges on MR / NR multiples, so every block but the last in a row or column is whole
  // micro-tiles.
  const auto edge = [](int total, int parts, int unit, int i) {
    const int units = (total + unit - 1) / unit;
    return std::min(total, (units * i / parts) * unit);
  };
  parallel_tasks(grid.rows * grid.cols, grid.rows * grid.cols, [&](int task) {
    const int br = task / grid.cols, bc = task % grid.cols;
    const int i0 = edge(args.m, grid.rows, gemm::kMR, br);
    const int i1 = edge(args.m, grid.rows, gemm::kMR, br + 1);
    const int j0 = edge(args.n, grid.cols, gemm::kNR, bc);
    const int j1 = edge(args.n, grid.cols, gemm::kNR, bc + 1);
    if (i1 <= i0 || j1 <= j0) return;
    gemm::gemm(args.a + static_cast<std::size_t>(i0) * args.k, args.k, args.b + j0, args.n,
               args.y + static_cast<std::size_t>(i0) * args.n + j0, args.n, i1 - i0, j1 - j0,
               args.k, gemm::Epilogue::kBiasColsRelu, args.bias + j0);
  });
}

}  // namespace tilescope::kernels

// The hand-written twin of a generated CPU schedule: Y = relu(A·B + bias) with the loop nest that
// schedule_twin_steps() builds, written the way a person would, for the "schedule_twin" bench.
//
// It mirrors, step for step (with kSchedTwinTiles: 256, 8, 32):
//   fuse(matmul0, add0, relu0); tile(j, 256); tile(i, 8); tile(j.i, 32);
//   reorder(j.o, i.o, j.i.o, k, i.i, j.i.i); unroll(i.i); vectorize(j.i.i)
// which the schedule module prints as
//   for j.o:                      a 256-column panel of B (1 MiB at K = 1024), meant for L2
//     for i.o:                    8 rows of A (32 KiB at K = 1024), meant for L1
//       for j.i.o:                one 8×32 block of y
//         acc[8][32] = 0          16 AVX-512 registers
//         for k:
//           for i.i (unrolled):   a broadcast of A[i, k]
//             for j.i.i (vector): acc += A[i, k] · B[k, j]      two vector loads of B
//         y = relu(acc + bias)    the fused epilogue: y is written once
// Why Eigen is still faster: B is read in place, 32 floats from each row, and rows are 4 KiB apart
// at N = 1024, so a block's B strip maps onto two L1 sets and streams from L2 on every k step.
// Eigen packs B into contiguous panels first; stage(B, scratchpad, at=k.o) is the schedule's
// packing step, but with emit_cpp as it is GCC 12 then keeps acc in memory, not registers.
// Differences a person makes and the generator does not: the shapes are run-time arguments, not
// constants, and a partial block at the bottom or right edge takes a separate loop with run-time
// bounds instead of a guard on every element.
#include "kernels/cpu/schedule_twin.h"

#include <algorithm>
#include <cstddef>

namespace tilescope::kernels {

namespace {

constexpr int kPanelN = kSchedTwinTiles.panel_n;
constexpr int kRows = kSchedTwinTiles.rows;
constexpr int kCols = kSchedTwinTiles.cols;

// One full kRows×kCols block of y at (i0, j0). Constant trip counts let the compiler unroll the
// rows and keep acc in vector registers for the whole k loop.
inline void full_block(const MatMulArgs& x, int i0, int j0) {
  const std::ptrdiff_t n = x.n, k = x.k;
  float acc[kRows][kCols] = {};
  const float* a_block = x.a + i0 * k;
  const float* b_cols = x.b + j0;
  for (std::ptrdiff_t p = 0; p < k; ++p) {
    const float* b_row = b_cols + p * n;
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float a_rp = a_block[r * k + p];
#pragma GCC ivdep
      for (int c = 0; c < kCols; ++c) acc[r][c] += a_rp * b_row[c];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    float* y_row = x.y + (i0 + r) * n + j0;
    for (int c = 0; c < kCols; ++c) y_row[c] = std::max(acc[r][c] + x.bias[j0 + c], 0.0f);
  }
}

// A partial block at the bottom or right edge: rows × cols of y, bounds known only at run time.
void edge_block(const MatMulArgs& x, int i0, int j0, int rows, int cols) {
  const std::ptrdiff_t n = x.n, k = x.k;
  float acc[kRows][kCols] = {};
  for (std::ptrdiff_t p = 0; p < k; ++p)
    for (int r = 0; r < rows; ++r) {
      const float a_rp = x.a[(i0 + r) * k + p];
      for (int c = 0; c < cols; ++c) acc[r][c] += a_rp * x.b[p * n + j0 + c];
    }
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      x.y[(i0 + r) * n + j0 + c] = std::max(acc[r][c] + x.bias[j0 + c], 0.0f);
}

}  // namespace

void matmul_sched_twin(const MatMulArgs& x) {
  for (int panel = 0; panel < x.n; panel += kPanelN) {  // j.o
    const int panel_end = std::min(x.n, panel + kPanelN);
    for (int i0 = 0; i0 < x.m; i0 += kRows) {  // i.o
      const int rows = std::min(kRows, x.m - i0);
      for (int j0 = panel; j0 < panel_end; j0 += kCols) {  // j.i.o
        const int cols = std::min(kCols, panel_end - j0);
        if (rows == kRows && cols == kCols)
          full_block(x, i0, j0);
        else
          edge_block(x, i0, j0, rows, cols);
      }
    }
  }
}

}  // namespace tilescope::kernels

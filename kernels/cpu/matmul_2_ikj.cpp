// MatMul version 2: loop order i-k-j.
//
// Changed since version 1: the k and j loops are swapped. The inner loop now streams a row of B and
// a row of Y with unit stride, so it vectorises (one broadcast of A[i][p], 16-wide FMAs on AVX-512)
// and every cache line brought in is used whole. What remains: each row i re-reads all of B
// (K·N·4 bytes = 4 MiB at 1024², more than L2), so B comes from L3 M times over.
#include "kernels/cpu/matmul_versions.h"

#include <algorithm>
#include <cstddef>

namespace tilescope::kernels {

void matmul_2_ikj(const MatMulArgs& args) {
  const int m = args.m, n = args.n, k = args.k;
  for (int i = 0; i < m; ++i) {
    float* __restrict y_row = args.y + static_cast<std::size_t>(i) * n;
    std::fill(y_row, y_row + n, 0.0f);
    for (int p = 0; p < k; ++p) {
      const float a_ip = args.a[static_cast<std::size_t>(i) * k + p];
      const float* __restrict b_row = args.b + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; ++j) y_row[j] += a_ip * b_row[j];
    }
  }
  bias_cols_pass(args.y, args.bias, args.y, m, n);
  relu_pass(args.y, args.y, static_cast<std::size_t>(m) * n);
}

}  // namespace tilescope::kernels

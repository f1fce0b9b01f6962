// MatMul version 1: naive i-j-k loops, the contrast every later version is measured against.
//
// Changed since version 0: everything Eigen does is gone. The inner k loop walks a column of B, a
// stride of N floats (4 KiB at N=1024), so every B load touches a new cache line and the dot
// product is a serial chain of dependent adds that cannot be vectorised without reassociating
// floats. Bias and ReLU follow as two separate passes over Y.
#include "kernels/cpu/matmul_versions.h"

#include <cstddef>

namespace tilescope::kernels {

void matmul_1_naive_ijk(const MatMulArgs& args) {
  const int m = args.m, n = args.n, k = args.k;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int p = 0; p < k; ++p) {
        sum += args.a[static_cast<std::size_t>(i) * k + p] *
               args.b[static_cast<std::size_t>(p) * n + j];
      }
      args.y[static_cast<std::size_t>(i) * n + j] = sum;
    }
  }
  bias_cols_pass(args.y, args.bias, args.y, m, n);
  relu_pass(args.y, args.y, static_cast<std::size_t>(m) * n);
}

}  // namespace tilescope::kernels

// The registry of numbered CPU kernel versions, one list per problem family.
#include "kernels/cpu/versions.h"

namespace tilescope::kernels {

const std::vector<KernelVersion<MatMulFn>>& matmul_versions() {
  static const std::vector<KernelVersion<MatMulFn>> versions = {
      {0, "eigen", "the library reference: packed panels, vectorised micro-kernel", matmul_0_eigen},
      {1, "naive_ijk", "textbook i-j-k loops: B read down a column, a serial dot product",
       matmul_1_naive_ijk},
      {2, "ikj", "loops reordered to i-k-j: unit-stride rows of B and Y, vectorised", matmul_2_ikj},
      {3, "tiled", "256×256 tiles of B reused from L2 by every row of A", matmul_3_tiled},
      {4, "microkernel", "packed panels + an MR×NR block of Y kept in registers over k",
       matmul_4_microkernel},
      {5, "fused_epilogue", "bias+ReLU applied in registers on the last store: two passes gone",
       matmul_5_fused_epilogue},
      {6, "threads", "version 5 on several threads, one block of Y each, from a persistent pool",
       matmul_6_threads, true},
      {7, "eigen_threads", "the library reference on version 6's threads (what 6 is compared with)",
       matmul_7_eigen_threads, true},
  };
  return versions;
}

const std::vector<KernelVersion<ConvFn>>& conv_versions() {
  static const std::vector<KernelVersion<ConvFn>> versions = {
      {0, "eigen_im2col", "the reference: im2col, then Eigen's GEMM and fused epilogue",
       conv_0_eigen},
      {1, "direct", "the seven-loop definition: each weight times a whole output plane",
       conv_1_direct},
      {2, "im2col_gemm", "lowered to im2col + the packed micro-kernel GEMM (MatMul v4)",
       conv_2_im2col_gemm},
      {3, "fused", "bias+ReLU fused into the GEMM's final store (MatMul v5)", conv_3_fused},
  };
  return versions;
}

const std::vector<KernelVersion<BiasReluFn>>& elementwise_versions() {
  static const std::vector<KernelVersion<BiasReluFn>> versions = {
      {0, "eigen", "the reference: one Eigen expression, fused by expression templates",
       elementwise_0_eigen},
      {1, "unfused", "two kernels: T = X + bias written to memory, then Y = relu(T)",
       elementwise_1_unfused},
      {2, "fused", "one loop: the intermediate stays in a register", elementwise_2_fused},
  };
  return versions;
}

}  // namespace tilescope::kernels

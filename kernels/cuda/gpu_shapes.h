// The shapes and names the CUDA kernels are called with — a GEMM's M, N, K, a convolution's
// NHWC shape, the 16-bit operand type, a numbered version — apart from the launchers
// (gpu_kernels.h), so a kernel family's own header (hgemm_hopper.h) needs no runner to name them.
#pragma once

#include <string>

namespace tilescope::kernels::cuda {

// One numbered version of a kernel family: what it is and what changed since the previous one.
struct KernelVersion {
  int number = 0;
  std::string name;
  std::string changed;
};

// C = A·B, all fp32 row-major: A is M×K, B is K×N, C is M×N (the model's `x @ W` with W stored
// K×N).
struct GemmShape {
  int m = 0, n = 0, k = 0;
};

// Y = conv2d(X, W) in NHWC (channels last, the layout implicit GEMM wants on a GPU): X is N×H×W×C,
// the filter is stored as an (R·S·C)×K row-major matrix (RSCK), Y is N×P×Q×K. As a GEMM:
// M = N·P·Q, N_gemm = K, K_gemm = R·S·C.
struct ConvShape {
  int n = 1, h = 0, w = 0, c = 0;  // input batch, height, width, channels
  int k = 0, r = 0, s = 0;         // output channels, filter height and width
  int pad = 0, stride = 1;
  int p() const { return (h + 2 * pad - r) / stride + 1; }
  int q() const { return (w + 2 * pad - s) / stride + 1; }
  GemmShape as_gemm() const { return {n * p() * q(), k, r * s * c}; }
};

// The 16-bit input type: fp16 (every version) or bf16 (versions 4–8).
enum class Operand16 { f16, bf16 };

}  // namespace tilescope::kernels::cuda

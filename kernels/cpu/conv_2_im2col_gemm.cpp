// Conv2D version 2: im2col + the packed micro-kernel GEMM of MatMul version 4.
//
// Changed since version 1: the convolution is lowered to one GEMM per image, W (F×CRS) · col
// (CRS×PQ), so the register-blocked micro-kernel does the math and each output element is written
// once per 256-deep k block instead of once per (c, r, s). The price is the col matrix: R·S = 9
// copies of the input (7.2 MiB for 64×56×56, 3×3), written and read once per image.
// Bias and ReLU are two separate passes, as in MatMul version 4.
#include "kernels/cpu/conv_versions.h"
#include "kernels/cpu/gemm_packed.h"

#include <cstddef>
#include <vector>

namespace tilescope::kernels {

void conv_2_im2col_gemm(const ConvArgs& args) {
  const int P = args.p(), Q = args.q(), crs = args.c * args.r * args.s;
  const std::size_t plane = static_cast<std::size_t>(P) * Q;
  thread_local std::vector<float> col;
  col.resize(crs * plane);
  for (int image = 0; image < args.n; ++image) {
    im2col(args, image, col.data());
    float* y = args.y + static_cast<std::size_t>(image) * args.f * plane;
    gemm::gemm(args.w, crs, col.data(), plane, y, plane, args.f, static_cast<int>(plane), crs);
    bias_rows_pass(y, args.bias, y, args.f, static_cast<int>(plane));
  }
  relu_pass(args.y, args.y, static_cast<std::size_t>(args.n) * args.f * plane);
}

}  // namespace tilescope::kernels

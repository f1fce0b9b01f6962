// Conv2D version 3: conv + bias + ReLU fused (im2col + GEMM with the epilogue in the store).
//
// Changed since version 2: the bias (one per filter, i.e. per row of the GEMM's output) and ReLU
// are applied to the accumulators in registers on the last k block's store, as in MatMul version 5,
// removing two full passes over Y (N·F·P·Q floats read and written twice).
#include "kernels/cpu/conv_versions.h"
#include "kernels/cpu/gemm_packed.h"

#include <cstddef>
#include <vector>

namespace tilescope::kernels {

void conv_3_fused(const ConvArgs& args) {
  const int P = args.p(), Q = args.q(), crs = args.c * args.r * args.s;
  const std::size_t plane = static_cast<std::size_t>(P) * Q;
  thread_local std::vector<float> col;
  col.resize(crs * plane);
  for (int image = 0; image < args.n; ++image) {
    im2col(args, image, col.data());
    float* y = args.y + static_cast<std::size_t>(image) * args.f * plane;
    gemm::gemm(args.w, crs, col.data(), plane, y, plane, args.f, static_cast<int>(plane), crs,
               gemm::Epilogue::kBiasRowsRelu, args.bias);
  }
}

}  // namespace tilescope::kernels

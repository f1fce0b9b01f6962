// im2col for the Conv2D versions that lower convolution to one GEMM per image.
#include "kernels/cpu/conv_versions.h"

#include <algorithm>
#include <cstddef>

namespace tilescope::kernels {

void im2col(const ConvArgs& args, int image, float* col) {
  const int P = args.p(), Q = args.q();
  const float* x = args.x + static_cast<std::size_t>(image) * args.c * args.h * args.wd;
  for (int c = 0; c < args.c; ++c) {
    for (int r = 0; r < args.r; ++r) {
      for (int s = 0; s < args.s; ++s) {
        float* row = col + (static_cast<std::size_t>(c) * args.r * args.s + r * args.s + s) * P * Q;
        for (int p = 0; p < P; ++p) {
          const int ih = p * args.stride - args.pad + r;
          float* dst = row + static_cast<std::size_t>(p) * Q;
          if (ih < 0 || ih >= args.h) {
            std::fill(dst, dst + Q, 0.0f);
            continue;
          }
          const float* src = x + (static_cast<std::size_t>(c) * args.h + ih) * args.wd;
          for (int q = 0; q < Q; ++q) {
            const int iw = q * args.stride - args.pad + s;
            dst[q] = (iw >= 0 && iw < args.wd) ? src[iw] : 0.0f;
          }
        }
      }
    }
  }
}

}  // namespace tilescope::kernels

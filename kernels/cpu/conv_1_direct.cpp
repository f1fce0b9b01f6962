// Conv2D version 1: direct convolution, the seven-loop definition.
//
// Changed since version 0: no lowering to GEMM. For each filter f and input channel c, each of the
// R·S weights is broadcast and multiplied into a whole output plane (the q loop is unit-stride at
// stride 1 and vectorises). Each output plane (P·Q floats, 12 KiB at 56×56) is re-read and
// re-written C·R·S times, so the kernel is limited by L1/L2 traffic on Y, not by FMAs.
// Bias and ReLU follow as two separate passes.
#include "kernels/cpu/conv_versions.h"

#include <algorithm>
#include <cstddef>

namespace tilescope::kernels {
namespace {
// Floor division for a possibly negative numerator (C++ `/` truncates toward zero).
int floor_div(int num, int den) {
  return num >= 0 ? num / den : -((-num + den - 1) / den);
}
}  // namespace

void conv_1_direct(const ConvArgs& args) {
  const int P = args.p(), Q = args.q();
  const std::size_t plane = static_cast<std::size_t>(P) * Q;
  for (int image = 0; image < args.n; ++image) {
    const float* x = args.x + static_cast<std::size_t>(image) * args.c * args.h * args.wd;
    float* y_image = args.y + static_cast<std::size_t>(image) * args.f * plane;
    for (int f = 0; f < args.f; ++f) {
      float* __restrict y = y_image + f * plane;
      std::fill(y, y + plane, 0.0f);
      for (int c = 0; c < args.c; ++c) {
        const float* x_plane = x + static_cast<std::size_t>(c) * args.h * args.wd;
        for (int r = 0; r < args.r; ++r) {
          for (int s = 0; s < args.s; ++s) {
            const float w =
                args.w[((static_cast<std::size_t>(f) * args.c + c) * args.r + r) * args.s + s];
            // Output columns whose input column q·stride − pad + s falls inside the image.
            const int q_lo = std::max(0, -floor_div(s - args.pad, args.stride));
            const int q_hi = std::min(Q, floor_div(args.wd - 1 + args.pad - s, args.stride) + 1);
            for (int p = 0; p < P; ++p) {
              const int ih = p * args.stride - args.pad + r;
              if (ih < 0 || ih >= args.h) continue;
              const float* __restrict x_row = x_plane + static_cast<std::size_t>(ih) * args.wd;
              float* __restrict y_row = y + static_cast<std::size_t>(p) * Q;
              if (args.stride == 1) {
                const float* x_shift = x_row - args.pad + s;
                for (int q = q_lo; q < q_hi; ++q) y_row[q] += w * x_shift[q];
              } else {
                for (int q = q_lo; q < q_hi; ++q)
                  y_row[q] += w * x_row[q * args.stride - args.pad + s];
              }
            }
          }
        }
      }
    }
    bias_rows_pass(y_image, args.bias, y_image, args.f, static_cast<int>(plane));
  }
  relu_pass(args.y, args.y, static_cast<std::size_t>(args.n) * args.f * plane);
}

}  // namespace tilescope::kernels

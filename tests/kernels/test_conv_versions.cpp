// Every Conv2D version equals relu(conv2d(X, W) + bias) from a plain double-precision loop, on
// odd sizes, strides, paddings and kernels larger than the image; fused == unfused.
#include "kernel_test_util.h"
#include "kernels/cpu/versions.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tilescope::kernels;
using namespace tilescope::kernels::test;

namespace {

ConvArgs shape(int n, int c, int h, int w, int f, int r, int s, int stride, int pad) {
  ConvArgs a;
  a.n = n, a.c = c, a.h = h, a.wd = w, a.f = f, a.r = r, a.s = s, a.stride = stride, a.pad = pad;
  return a;
}

const ConvArgs kCases[] = {
    shape(1, 1, 1, 1, 1, 1, 1, 1, 0),    // a single multiply
    shape(2, 3, 17, 13, 5, 3, 3, 1, 1),  // "same" 3×3, batch of 2
    shape(1, 4, 10, 9, 3, 3, 3, 2, 0),   // stride 2, no padding
    shape(1, 2, 5, 5, 33, 5, 5, 1, 2),   // 5×5, more filters than the micro-kernel's MR
    shape(1, 1, 1, 1, 2, 3, 3, 2, 1),    // kernel wider than the image: only padding around it
    shape(1, 3, 6, 7, 4, 1, 1, 1, 0),    // 1×1 convolution
};

std::vector<double> reference(const ConvArgs& a) {
  const int P = a.p(), Q = a.q();
  std::vector<double> y(std::size_t(a.n) * a.f * P * Q);
  for (int n = 0; n < a.n; ++n)
    for (int f = 0; f < a.f; ++f)
      for (int p = 0; p < P; ++p)
        for (int q = 0; q < Q; ++q) {
          double sum = a.bias[f];
          for (int c = 0; c < a.c; ++c)
            for (int r = 0; r < a.r; ++r)
              for (int s = 0; s < a.s; ++s) {
                const int ih = p * a.stride - a.pad + r, iw = q * a.stride - a.pad + s;
                if (ih < 0 || ih >= a.h || iw < 0 || iw >= a.wd) continue;
                sum += double(a.x[((n * a.c + c) * a.h + ih) * a.wd + iw]) *
                       a.w[((f * a.c + c) * a.r + r) * a.s + s];
              }
          y[((n * a.f + f) * P + p) * Q + q] = std::max(sum, 0.0);
        }
  return y;
}

}  // namespace

TEST_CASE("every Conv2D version matches the seven-loop double-precision definition") {
  int seed = 10;
  for (ConvArgs args : kCases) {
    const auto x = random_values(std::size_t(args.n) * args.c * args.h * args.wd, seed++);
    const auto w = random_values(std::size_t(args.f) * args.c * args.r * args.s, seed++);
    const auto bias = random_values(args.f, seed++);
    args.x = x.data(), args.w = w.data(), args.bias = bias.data();
    const auto expected = reference(args);
    for (const auto& v : conv_versions()) {
      CAPTURE(v.name);
      CAPTURE(args.c);
      CAPTURE(args.h);
      CAPTURE(args.stride);
      auto y = poisoned(expected.size());
      args.y = y.data();
      v.fn(args);
      CHECK(max_scaled_error(y, expected) <= 1e-6 * (args.c * args.r * args.s + 1));
    }
  }
}

TEST_CASE("fused conv+bias+ReLU gives exactly the two-pass result") {
  ConvArgs args = kCases[1];
  const auto x = random_values(std::size_t(args.n) * args.c * args.h * args.wd, 1);
  const auto w = random_values(std::size_t(args.f) * args.c * args.r * args.s, 2);
  const auto bias = random_values(args.f, 3);
  args.x = x.data(), args.w = w.data(), args.bias = bias.data();
  auto unfused = poisoned(std::size_t(args.n) * args.f * args.p() * args.q());
  auto fused = unfused;
  args.y = unfused.data();
  conv_2_im2col_gemm(args);
  args.y = fused.data();
  conv_3_fused(args);
  CHECK(fused == unfused);
}

TEST_CASE("im2col places each input pixel where the GEMM expects it") {
  // 1 channel 2×2 image [[1,2],[3,4]], 2×2 kernel, pad 0 → one output position; col is the 4
  // pixels in (r, s) order. With pad 1 and stride 1 → 3×3 outputs; row (r=0,s=0) sees the image
  // shifted down-right by one, so its first row is all padding.
  const float image[] = {1, 2, 3, 4};
  ConvArgs a = shape(1, 1, 2, 2, 1, 2, 2, 1, 0);
  a.x = image;
  std::vector<float> col(4);
  im2col(a, 0, col.data());
  CHECK(col == std::vector<float>{1, 2, 3, 4});
  a.pad = 1;
  std::vector<float> padded(4 * 9);
  im2col(a, 0, padded.data());
  const std::vector<float> row_r0_s0(padded.begin(), padded.begin() + 9);
  CHECK(row_r0_s0 == std::vector<float>{0, 0, 0, 0, 1, 2, 0, 3, 4});
}

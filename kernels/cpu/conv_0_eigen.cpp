// Conv2D version 0: im2col + Eigen's GEMM, the reference the other Conv2D versions are checked
// against and compared with.
//
// Changed since nothing — this is the library baseline: Eigen has no NCHW convolution of its own in
// its supported modules, so the reference is the standard lowering (im2col, then W·col with Eigen)
// with bias+ReLU fused by Eigen's expression templates.
#include "kernels/cpu/conv_versions.h"

#include <Eigen/Core>

#include <cstddef>
#include <vector>

namespace tilescope::kernels {

void conv_0_eigen(const ConvArgs& args) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int P = args.p(), Q = args.q(), crs = args.c * args.r * args.s;
  thread_local std::vector<float> col;
  col.resize(static_cast<std::size_t>(crs) * P * Q);
  Eigen::Map<const RowMatrix> w(args.w, args.f, crs);
  Eigen::Map<const Eigen::VectorXf> bias(args.bias, args.f);
  for (int image = 0; image < args.n; ++image) {
    im2col(args, image, col.data());
    Eigen::Map<const RowMatrix> cols(col.data(), crs, P * Q);
    Eigen::Map<RowMatrix> y(args.y + static_cast<std::size_t>(image) * args.f * P * Q, args.f,
                            P * Q);
    y.noalias() = w * cols;
    y = (y.colwise() + bias).cwiseMax(0.0f);
  }
}

}  // namespace tilescope::kernels

// Elementwise version 0: Eigen's array expression for relu(X + bias).
//
// Changed since nothing — the library baseline. Eigen's expression templates turn the whole chain
// into one loop, so the reference is already fused: one read of X, one write of Y.
#include "kernels/cpu/elementwise_versions.h"

#include <Eigen/Core>

namespace tilescope::kernels {

void elementwise_0_eigen(const BiasReluArgs& args) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMatrix> x(args.x, args.rows, args.cols);
  Eigen::Map<const Eigen::RowVectorXf> bias(args.bias, args.cols);
  Eigen::Map<RowMatrix> y(args.y, args.rows, args.cols);
  y = (x.rowwise() + bias).cwiseMax(0.0f);
}

}  // namespace tilescope::kernels

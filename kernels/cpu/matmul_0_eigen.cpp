// MatMul version 0: Eigen, the reference every other version is checked against and compared with.
//
// Changed since the previous version: nothing — this is the library baseline. Eigen packs A and B
// into cache-sized panels and runs a register-blocked, vectorised micro-kernel; its expression
// templates fuse bias+ReLU into one pass over Y after the product.
#include "kernels/cpu/matmul_versions.h"

#include <Eigen/Core>

namespace tilescope::kernels {

void eigen_use_one_thread() {
  Eigen::setNbThreads(1);
}

void matmul_0_eigen(const MatMulArgs& args) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMatrix> a(args.a, args.m, args.k);
  Eigen::Map<const RowMatrix> b(args.b, args.k, args.n);
  Eigen::Map<const Eigen::RowVectorXf> bias(args.bias, args.n);
  Eigen::Map<RowMatrix> y(args.y, args.m, args.n);
  y.noalias() = a * b;
  y = (y.rowwise() + bias).cwiseMax(0.0f);
}

}  // namespace tilescope::kernels

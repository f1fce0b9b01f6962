// MatMul version 7: the library reference again, on the threads version 6 uses.
//
// Changed since version 6: nothing of ours — this is what version 6 is measured against. Eigen's
// product runs on `threads` threads through OpenMP (Eigen::setNbThreads; Eigen parallelises its
// GEMM only when compiled with OpenMP, which kernels/cpu/CMakeLists.txt does where the compiler
// supports it), then the same bias+ReLU pass as version 0.
#include "kernels/cpu/matmul_versions.h"

#include <Eigen/Core>

namespace tilescope::kernels {

bool eigen_threads_available() {
#if defined(EIGEN_HAS_OPENMP)
  return true;
#else
  return false;
#endif
}

void matmul_7_eigen_threads(const MatMulArgs& args) {
  Eigen::setNbThreads(args.threads > 0 ? args.threads : matmul_thread_count());
  matmul_0_eigen(args);
  Eigen::setNbThreads(1);  // versions 0–5 and the conv reference stay on one thread
}

}  // namespace tilescope::kernels

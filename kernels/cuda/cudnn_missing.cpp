// Built instead of cudnn_conv.cpp when CMake found no cuDNN: says so, so the Conv2D suite can fall
// back to im2col + cuBLAS with a visible reason.
#include "kernels/cuda/cudnn_conv.h"

#include "kernels/cuda/cuda_check.h"

namespace tilescope::kernels::cuda {

std::string cudnn_unavailable_reason() {
  return "cuDNN not found at build time (no cudnn.h / libcudnn next to the CUDA toolkit or under "
         "CUDNN_ROOT)";
}

struct CudnnConv::Impl {};

CudnnConv::CudnnConv(ConvShape) {
  throw GpuError(cudnn_unavailable_reason());
}
CudnnConv::~CudnnConv() = default;
void CudnnConv::run(const float*, const float*, float*) const {
  throw GpuError(cudnn_unavailable_reason());
}
const std::string& CudnnConv::algorithm() const {
  static const std::string none = "none";
  return none;
}
std::string CudnnConv::version() const {
  return "none";
}

}  // namespace tilescope::kernels::cuda

// cuDNN's forward convolution (fp32, FMA math: no TF32) as version 0 of the Conv2D suite. Built
// only when CMake found cuDNN (TILESCOPE_HAVE_CUDNN); otherwise cudnn_unavailable_reason() says
// why.
#pragma once

#include "kernels/cuda/gpu_kernels.h"

#include <memory>
#include <string>

namespace tilescope::kernels::cuda {

// Empty when cuDNN is compiled in and loads; otherwise a one-line reason ("cuDNN not found at build
// time", or cuDNN's own error).
std::string cudnn_unavailable_reason();

// NHWC input, KRSC filter (cuDNN's NHWC filter layout), NHWC output, cross-correlation.
class CudnnConv {
 public:
  // Chooses the fastest algorithm by measurement (cudnnFindConvolutionForwardAlgorithm).
  explicit CudnnConv(ConvShape shape);
  ~CudnnConv();
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;
  void run(const float* x, const float* w_krsc, float* y) const;
  const std::string& algorithm() const;
  std::string version() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace tilescope::kernels::cuda

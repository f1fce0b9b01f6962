// cuDNN forward convolution through the legacy descriptor API: the shortest path to "run this conv
// with the library's fastest fp32 algorithm". cuDNN 9 marks that API deprecated in favour of the
// graph API, so its deprecation warnings are silenced for this file only.
#include "kernels/cuda/cudnn_conv.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_memory.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>

namespace tilescope::kernels::cuda {
namespace {

void check_cudnn(cudnnStatus_t status, const char* call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw GpuError(std::string(call) + " failed: " + cudnnGetErrorString(status));
  }
}
#define TS_CUDNN_CHECK(call) check_cudnn((call), #call)

const char* algo_name(cudnnConvolutionFwdAlgo_t a) {
  switch (a) {
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
      return "implicit_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
      return "implicit_precomp_gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
      return "gemm";
    case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
      return "direct";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
      return "fft";
    case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
      return "fft_tiling";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
      return "winograd";
    case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
      return "winograd_nonfused";
    default:
      return "other";
  }
}

}  // namespace

std::string cudnn_unavailable_reason() {
  cudnnHandle_t handle = nullptr;
  const cudnnStatus_t status = cudnnCreate(&handle);
  if (status != CUDNN_STATUS_SUCCESS) {
    return std::string("cuDNN is built in but cudnnCreate failed: ") + cudnnGetErrorString(status);
  }
  cudnnDestroy(handle);
  return {};
}

struct CudnnConv::Impl {
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  cudnnFilterDescriptor_t w_desc = nullptr;
  cudnnConvolutionDescriptor_t conv_desc = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  DeviceBuffer<unsigned char> workspace;
  std::string algo_label;
  ~Impl() {
    if (conv_desc) cudnnDestroyConvolutionDescriptor(conv_desc);
    if (w_desc) cudnnDestroyFilterDescriptor(w_desc);
    if (y_desc) cudnnDestroyTensorDescriptor(y_desc);
    if (x_desc) cudnnDestroyTensorDescriptor(x_desc);
    if (handle) cudnnDestroy(handle);
  }
};

CudnnConv::CudnnConv(ConvShape s) : m_impl(std::make_unique<Impl>()) {
  Impl& m = *m_impl;
  TS_CUDNN_CHECK(cudnnCreate(&m.handle));
  TS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&m.x_desc));
  TS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&m.y_desc));
  TS_CUDNN_CHECK(cudnnCreateFilterDescriptor(&m.w_desc));
  TS_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&m.conv_desc));
  TS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(m.x_desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, s.n, s.c,
                                            s.h, s.w));
  TS_CUDNN_CHECK(cudnnSetFilter4dDescriptor(m.w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, s.k, s.c,
                                            s.r, s.s));
  TS_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(m.conv_desc, s.pad, s.pad, s.stride, s.stride, 1,
                                                 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // Plain fp32 FMA: tensor-core TF32 would compute a different (less precise) function than the
  // fp32 kernels it is compared with.
  TS_CUDNN_CHECK(cudnnSetConvolutionMathType(m.conv_desc, CUDNN_FMA_MATH));
  int n = 0, c = 0, h = 0, w = 0;
  TS_CUDNN_CHECK(
      cudnnGetConvolution2dForwardOutputDim(m.conv_desc, m.x_desc, m.w_desc, &n, &c, &h, &w));
  if (n != s.n || c != s.k || h != s.p() || w != s.q()) {
    throw GpuError("cuDNN computes a different output shape than tilescope for this conv");
  }
  TS_CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(m.y_desc, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, n, c, h, w));
  constexpr int kAlgos = 8;
  cudnnConvolutionFwdAlgoPerf_t perf[kAlgos];
  int returned = 0;
  TS_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(m.handle, m.x_desc, m.w_desc, m.conv_desc,
                                                      m.y_desc, kAlgos, &returned, perf));
  bool chosen = false;
  for (int i = 0; i < returned && !chosen; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType == CUDNN_FMA_MATH) {
      m.algo = perf[i].algo;
      m.workspace = DeviceBuffer<unsigned char>(perf[i].memory);
      m.algo_label = algo_name(perf[i].algo);
      chosen = true;
    }
  }
  if (!chosen) throw GpuError("cuDNN found no fp32 (FMA) algorithm for this convolution");
}

CudnnConv::~CudnnConv() = default;

void CudnnConv::run(const float* x, const float* w_krsc, float* y) const {
  const Impl& m = *m_impl;
  const float alpha = 1.f, beta = 0.f;
  TS_CUDNN_CHECK(cudnnConvolutionForward(m.handle, &alpha, m.x_desc, x, m.w_desc, w_krsc,
                                         m.conv_desc, m.algo, m.workspace.get(),
                                         m.workspace.bytes(), &beta, m.y_desc, y));
}

const std::string& CudnnConv::algorithm() const {
  return m_impl->algo_label;
}

std::string CudnnConv::version() const {
  const size_t v = cudnnGetVersion();  // e.g. 91900 → 9.19.0
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace tilescope::kernels::cuda

#pragma GCC diagnostic pop

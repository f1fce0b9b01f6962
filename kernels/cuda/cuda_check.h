// Error checks for CUDA runtime, driver, cuBLAS and NVRTC calls: every failure becomes a GpuError
// whose message names the call, the file:line and the library's own words.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tilescope::kernels::cuda {

// Thrown for every GPU failure (no device, out of memory, a bad launch, NVRTC rejecting source).
// Callers show what() to the user as it is; it already says what failed and where.
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file,
                                          int line) {
  std::string what = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                     cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) {
    what += " — the GPU is out of memory; try `--quick` for smaller problems";
  }
  throw GpuError(what);
}

}  // namespace tilescope::kernels::cuda

#define TS_CUDA_CHECK(call)                                                             \
  do {                                                                                  \
    const cudaError_t ts_err_ = (call);                                                 \
    if (ts_err_ != cudaSuccess) {                                                       \
      ::tilescope::kernels::cuda::throw_cuda_error(ts_err_, #call, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)

// After every launch: a bad configuration shows at once, a fault in the kernel at the next sync.
#define TS_CUDA_CHECK_LAUNCH() TS_CUDA_CHECK(cudaGetLastError())

// Runs generated CUDA source: compiles a CUDA C++ string with NVRTC for the current device's
// architecture, loads the cubin through the driver API and launches (and times) its `ts_kernel`.
// Plain C++ header: no CUDA types. Every failure throws GpuError (cuda_check.h) with the NVRTC log.
//
// The ABI of generated source: an NVRTC-compilable translation unit (no #include of system headers)
// defining  extern "C" __global__ void ts_kernel(const float* __restrict__ a0, ...,
//                                                float* __restrict__ out)
// with problem sizes baked in as constants. Arguments are device pointers, inputs first, output
// last.
#pragma once

#include "kernels/cuda/gpu_timing.h"

#include <memory>
#include <string>
#include <vector>

namespace tilescope::kernels::cuda {

// The result of one NVRTC compilation; `log` is NVRTC's own text (warnings too), shown to the user.
struct NvrtcCompileResult {
  bool ok = false;
  std::string arch;         // e.g. "sm_90"
  std::string log;          // NVRTC's program log
  std::string error;        // why it failed, in one line (empty when ok)
  std::vector<char> cubin;  // machine code for `arch` when ok
  double compile_ms = 0.0;  // wall time of nvrtcCompileProgram
};

// "sm_XY" for device 0's compute capability X.Y; throws GpuError when there is no usable device.
std::string current_device_arch();

// Compiles `source` for `arch` ("sm_90"); needs no GPU. `options` are extra NVRTC flags
// ("-DTS_M=64").
NvrtcCompileResult nvrtc_compile(const std::string& source, const std::string& arch,
                                 const std::vector<std::string>& options = {});

struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned dynamic_smem_bytes = 0;
};

// A compiled and loaded `ts_kernel`. Move-only; unloads its module when destroyed.
class NvrtcKernel {
 public:
  // Compiles for the current device and loads. Throws GpuError carrying the NVRTC log on failure.
  static NvrtcKernel compile_and_load(const std::string& source,
                                      const std::vector<std::string>& options = {},
                                      const std::string& entry = "ts_kernel");
  NvrtcKernel(NvrtcKernel&&) noexcept;
  NvrtcKernel& operator=(NvrtcKernel&&) noexcept;
  ~NvrtcKernel();

  // Launches on the default stream (asynchronous) and checks the launch.
  void launch(const LaunchConfig& config, const std::vector<const float*>& inputs,
              float* output) const;
  // Warm-up launches, then `repeats` launches each timed with CUDA events; median and minimum.
  KernelTiming time(const LaunchConfig& config, const std::vector<const float*>& inputs,
                    float* output, int warmup, int repeats) const;

  const std::string& log() const;
  const std::string& arch() const;
  double compile_ms() const;
  int registers_per_thread() const;
  int static_smem_bytes() const;

 private:
  struct Impl;
  explicit NvrtcKernel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

}  // namespace tilescope::kernels::cuda

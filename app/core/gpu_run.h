// "Run on this GPU": the current schedule generated as CUDA, compiled with NVRTC, verified and
// timed beside cuBLAS by the GPU bench (kernels/cuda's tilescope-gpu-bench, run as its own
// process so the app and the CLI never load the CUDA libraries), and its JSON answer read back.
// Shared by the Timings view (a job) and `tilescope-cli run --gpu`.
#pragma once

#include "app/core/jobs.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::core {

struct GpuRunResult {
  std::string device;  // the GPU's name, as the CUDA runtime gives it
  bool verified = false;
  std::optional<double> rel_error;  // against the CPU reference, on the same inputs
  std::optional<double> median_ms;  // timed launches (only when verified)
  int repeats = 0;
  int registers = 0;                // per thread, as NVRTC compiled it
  // Each kernel run with the current one (split_k's sum, im2col's copy) and its own median;
  // median_ms is then the whole chain's. One entry for a single kernel.
  struct KernelTime {
    std::string kernel;
    std::optional<double> median_ms;
  };
  std::vector<KernelTime> kernels;
  std::string cublas_what;          // the library call timed beside it, "" when none
  std::optional<double> cublas_ms;  // its median
};

// "" when this build has the GPU bench; otherwise why "Run on this GPU" cannot be offered.
std::string gpu_run_unavailable();

// The GPU bench program: $TILESCOPE_GPU_BENCH, or the one this build made.
std::string gpu_bench_program();

// Reads the bench's --run-schedule JSON; throws std::runtime_error when it is not one.
GpuRunResult parse_gpu_run(const nlohmann::json& j);

// Runs the bench on `model_text` with schedule `steps` (`repeats` timed launches), in a private
// temporary folder (the first of $TMPDIR or the system's, $XDG_CACHE_HOME, ~/.cache that can
// hold one). A cancel kills the bench (JobCancelled). No result — no GPU, a compile error, the
// bench missing — throws std::runtime_error with the bench's own last lines.
GpuRunResult run_schedule_on_gpu(const std::string& model_text, const std::string& steps,
                                 int repeats, JobProgress& progress);

}  // namespace tilescope::core

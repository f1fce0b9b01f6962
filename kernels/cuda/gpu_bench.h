// `tilescope-cli bench --gpu`: runs the CUDA suites (SGEMM progression and tile sweep at 1024–8192,
// tensor-core GEMM progression in fp16 and bf16 at 2048–8192, bias+ReLU fused vs chain, GEMM
// epilogue fused vs unfused, Conv2D, the NVRTC twin, the generated schedule vs its hand-written
// twin) and returns a BenchReport (kernels/bench_types.h, schema tilescope-bench/1, kind "gpu").
// Plain C++ header: no CUDA includes.
#pragma once

#include "kernels/bench_types.h"
#include "kernels/cuda/gpu_bench_options.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tilescope::kernels {

// The suite names run_gpu_bench accepts, in the order it runs them.
std::vector<std::string> gpu_bench_suites();

// True when a CUDA device can be used; otherwise `reason` says why. Never throws.
bool gpu_bench_available(std::string* reason);

// Validates every version against version 0 on fresh random inputs (output poisoned first), then
// times it with CUDA events (warm-up, median of repeats). Progress goes to `log`, one line per
// version. Throws BenchError (an std::invalid_argument) for an unknown suite name, before touching
// the GPU, and std::runtime_error (a cuda::GpuError) when there is no usable GPU or the GPU fails
// in a way that ends the run; a version that fails validation or launch is reported in its result
// (not verified, with a note) and the run goes on.
BenchReport run_gpu_bench(const GpuBenchOptions& options, std::ostream& log);

}  // namespace tilescope::kernels

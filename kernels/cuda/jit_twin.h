// The NVRTC twin (jit_twin_sgemm_bias_relu.cu): its source text, its launch configuration, and the
// same text built ahead of time by nvcc, so the two compilers' code can be timed side by side.
#pragma once

#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/nvrtc_runner.h"

#include <string>
#include <vector>

namespace tilescope::kernels::cuda {

// The exact text NVRTC compiles (embedded at build time from jit_twin_sgemm_bias_relu.cu).
const char* twin_source();
// "-DTS_M=…", "-DTS_N=…", "-DTS_K=…": the sizes the generated-source ABI bakes in.
std::vector<std::string> twin_nvrtc_options(GemmShape shape);
// grid (N/128, M/128), block 256.
LaunchConfig twin_launch_config(GemmShape shape);
// The nvcc build instantiates the twin for a few fixed shapes; empty when `shape` is one of them.
std::string twin_unsupported(GemmShape shape);
// Y = relu(A·B + bias) by the nvcc-built twin.
void twin_nvcc_launch(GemmShape shape, const float* a, const float* b, const float* bias, float* y);

}  // namespace tilescope::kernels::cuda

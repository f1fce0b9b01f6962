// The nvcc-built side of the NVRTC twin: the very text NVRTC compiles, included here with its
// extern "C" entry switched off and instantiated for the shapes the tests and the bench use.
#define TS_TWIN_NO_ENTRY 1
#include "kernels/cuda/jit_twin_sgemm_bias_relu.cu"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/jit_twin.h"
#include "kernels/cuda/jit_twin_text.h"

namespace {

// Same body, same launch bounds as the NVRTC entry point.
template <int M, int N, int K>
__global__ void __launch_bounds__(256)
    ts_twin_nvcc(const float* __restrict__ a0, const float* __restrict__ a1,
                 const float* __restrict__ a2, float* __restrict__ out) {
  ts_twin_body<M, N, K>(a0, a1, a2, out);
}

struct TwinShape {
  int m, n, k;
  void (*kernel)(const float*, const float*, const float*, float*);
};
// tests: 256×256×128; bench --quick: 1024×1024×512; bench: 4096×4096×1024.
const TwinShape kTwinShapes[] = {
    {256, 256, 128, ts_twin_nvcc<256, 256, 128>},
    {1024, 1024, 512, ts_twin_nvcc<1024, 1024, 512>},
    {4096, 4096, 1024, ts_twin_nvcc<4096, 4096, 1024>},
};

}  // namespace

namespace tilescope::kernels::cuda {

const char* twin_source() {
  return kTwinSgemmBiasReluText;
}

std::vector<std::string> twin_nvrtc_options(GemmShape s) {
  return {"-DTS_M=" + std::to_string(s.m), "-DTS_N=" + std::to_string(s.n),
          "-DTS_K=" + std::to_string(s.k)};
}

LaunchConfig twin_launch_config(GemmShape s) {
  LaunchConfig config;
  config.grid[0] = static_cast<unsigned>(s.n / 128);
  config.grid[1] = static_cast<unsigned>(s.m / 128);
  config.block[0] = 256;
  return config;
}

std::string twin_unsupported(GemmShape s) {
  for (const TwinShape& t : kTwinShapes) {
    if (t.m == s.m && t.n == s.n && t.k == s.k) return {};
  }
  return "the nvcc-built twin exists for 256×256×128, 1024×1024×512 and 4096×4096×1024 only (got " +
         std::to_string(s.m) + "×" + std::to_string(s.n) + "×" + std::to_string(s.k) + ")";
}

void twin_nvcc_launch(GemmShape s, const float* a, const float* b, const float* bias, float* y) {
  for (const TwinShape& t : kTwinShapes) {
    if (t.m == s.m && t.n == s.n && t.k == s.k) {
      const LaunchConfig c = twin_launch_config(s);
      t.kernel<<<dim3(c.grid[0], c.grid[1]), dim3(c.block[0])>>>(a, b, bias, y);
      TS_CUDA_CHECK_LAUNCH();
      return;
    }
  }
  throw GpuError(twin_unsupported(s));
}

}  // namespace tilescope::kernels::cuda

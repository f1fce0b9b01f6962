// Shared helpers of the CUDA tests: the skip rule, host-side random data, CPU references.
#pragma once

#include "kernels/cuda/gpu_device.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace tilescope::kernels::cuda::testing {

// GPU cases return early on machines without a GPU, printing why; CTest's SKIP_REGULAR_EXPRESSION
// turns that line into "Skipped" for the cuda_gpu entry.
inline bool gpu_or_skip(const char* test) {
  std::string reason;
  if (gpu_available(&reason)) return true;
  std::printf("SKIPPED: no usable CUDA device for '%s': %s\n", test, reason.c_str());
  return false;
}

// Fresh inputs for each call: uniform in [-1, 1), never all zeros.
inline std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ‖got − want‖ / ‖want‖ in double; infinity if any element of `got` is not finite (unwritten
// outputs stay NaN from the poisoning).
inline double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

// Plain triple loop in double: Y = A·B (+ bias, ReLU). B is K×N, or N×K when `b_is_nk`.
inline std::vector<double> cpu_gemm(const std::vector<float>& a, const std::vector<float>& b,
                                    const float* bias, bool relu, bool b_is_nk, int m, int n,
                                    int k) {
  std::vector<double> y((std::size_t)m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p)
        acc += double(a[(std::size_t)i * k + p]) *
               (b_is_nk ? b[(std::size_t)j * k + p] : b[(std::size_t)p * n + j]);
      if (bias) acc += bias[j];
      y[(std::size_t)i * n + j] = relu ? std::max(acc, 0.0) : acc;
    }
  return y;
}

}  // namespace tilescope::kernels::cuda::testing

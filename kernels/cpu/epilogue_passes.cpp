// The unfused bias and ReLU passes: one sweep over the whole output each, as separate kernels do.
#include "kernels/cpu/kernel_args.h"

#include <algorithm>

namespace tilescope::kernels {

void bias_cols_pass(const float* in, const float* bias, float* out, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    const float* src = in + static_cast<std::size_t>(i) * cols;
    float* dst = out + static_cast<std::size_t>(i) * cols;
    for (int j = 0; j < cols; ++j) dst[j] = src[j] + bias[j];
  }
}

void bias_rows_pass(const float* in, const float* bias, float* out, int rows, int cols) {
  for (int i = 0; i < rows; ++i) {
    const float* src = in + static_cast<std::size_t>(i) * cols;
    float* dst = out + static_cast<std::size_t>(i) * cols;
    const float b = bias[i];
    for (int j = 0; j < cols; ++j) dst[j] = src[j] + b;
  }
}

void relu_pass(const float* in, float* out, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) out[i] = std::max(in[i], 0.0f);
}

}  // namespace tilescope::kernels

// Argument blocks of the three CPU problem families (dense layer, conv layer, bias+ReLU) and the
// plain epilogue passes that the unfused versions share.
#pragma once

#include <cstddef>

namespace tilescope::kernels {

// Y = relu(A·B + bias): A is M×K, B is K×N, bias has N entries, Y is M×N; all fp32, row-major.
// This is the model's dense layer `relu(x @ W + b)`; the epilogue is part of every version so the
// fused-epilogue version is compared on the same problem.
struct MatMulArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int m = 0, n = 0, k = 0;
  int threads = 0;  // the threaded versions (6, 7): how many threads; 0 = every hardware thread
};
using MatMulFn = void (*)(const MatMulArgs&);

// Y = relu(conv2d(X, W) + bias), NCHW: X is N×C×H×W, W is F×C×R×S, bias has F entries,
// Y is N×F×P×Q with P = (H + 2·pad − R)/stride + 1 and Q likewise.
struct ConvArgs {
  const float* x = nullptr;
  const float* w = nullptr;
  const float* bias = nullptr;
  float* y = nullptr;
  int n = 1, c = 0, h = 0, wd = 0;  // input batch, channels, height, width
  int f = 0, r = 0, s = 0;          // filters and kernel height/width
  int stride = 1, pad = 0;
  int p() const { return (h + 2 * pad - r) / stride + 1; }
  int q() const { return (wd + 2 * pad - s) / stride + 1; }
};
using ConvFn = void (*)(const ConvArgs&);

// Y = relu(X + bias) on a rows×cols matrix, bias per column. `tmp` (rows×cols) is the
// intermediate tensor the unfused chain writes between its two passes.
struct BiasReluArgs {
  const float* x = nullptr;
  const float* bias = nullptr;
  float* tmp = nullptr;
  float* y = nullptr;
  int rows = 0, cols = 0;
};
using BiasReluFn = void (*)(const BiasReluArgs&);

// [SECTION] Unfused epilogue passes: each is one full sweep over its output.

// out[i][j] = in[i][j] + bias[j] (in may equal out).
void bias_cols_pass(const float* in, const float* bias, float* out, int rows, int cols);
// out[i][j] = in[i][j] + bias[i] (in may equal out).
void bias_rows_pass(const float* in, const float* bias, float* out, int rows, int cols);
// out[i] = max(in[i], 0) (in may equal out).
void relu_pass(const float* in, float* out, std::size_t count);

}  // namespace tilescope::kernels

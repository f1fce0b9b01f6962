// Helper kernels for harnesses and tests: random fill, fp32↔fp16/bf16 conversion, transpose.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

// splitmix64 of (seed, index): a counter-based generator, so every element is independent of the
// launch shape and a new seed gives fresh inputs.
__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__global__ void fill_uniform_kernel(float* out, size_t n, std::uint64_t seed, float lo, float hi) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) {
    const std::uint64_t h = splitmix64(seed * 0x632BE59BD9B4E019ull + i);
    const float u = (float)(h >> 40) * (1.0f / 16777216.0f);  // 24 random bits → [0, 1)
    out[i] = lo + (hi - lo) * u;
  }
}

__global__ void f32_to_f16_kernel(const float* in, __half* out, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half_rn(in[i]);
}

__global__ void f16_to_f32_kernel(const __half* in, float* out, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(in[i]);
}

__global__ void f32_to_bf16_kernel(const float* in, __nv_bfloat16* out, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void bf16_to_f32_kernel(const __nv_bfloat16* in, float* out, size_t n) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = __bfloat162float(in[i]);
}

// 32×32 tiles through shared memory (padded by one to avoid bank conflicts on the column read).
__global__ void transpose_kernel(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  const int x = blockIdx.x * 32 + threadIdx.x;
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const int y = blockIdx.y * 32 + dy;
    if (x < cols && y < rows) tile[dy][threadIdx.x] = in[(size_t)y * cols + x];
  }
  __syncthreads();
  const int ox = blockIdx.y * 32 + threadIdx.x;
  for (int dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const int oy = blockIdx.x * 32 + dy;
    if (ox < rows && oy < cols) out[(size_t)oy * rows + ox] = tile[threadIdx.x][dy];
  }
}

// SGEMM version 1 — naive: one thread per output element; threadIdx.x walks down a column of C.
// Changed since version 0 (cuBLAS): everything; this is the textbook triple loop mapped onto
// threads. Why it is slow: neighbouring threads (consecutive threadIdx.x) own consecutive ROWS, so
// a warp's 32 loads of A hit 32 different rows (32 sectors for 32 useful floats) and its stores to
// C are strided by N. Every operand is re-read from global memory: 2·K loads per 2·K flops.
// Run: tilescope-gpu-bench --suite sgemm (this is version 1; version 0 is cuBLAS SGEMM).
#pragma once

__global__ void sgemm_01_naive(int M, int N, int K, const float* A, const float* B, float* C) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int col = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

// SGEMM version 2 — global-memory coalescing: consecutive threads own consecutive COLUMNS of C.
// Changed since version 1: only the thread→element map. A warp now reads one A element (broadcast)
// and 32 consecutive B elements (one 128-byte line), and writes 128 contiguous bytes of C.
// Still no reuse: each operand is fetched from L1/L2 once per multiply-add.
// Run: tilescope-gpu-bench --suite sgemm (this is version 2; version 0 is cuBLAS SGEMM).
#pragma once

template <int kBlock>
__global__ void sgemm_02_coalesced(int M, int N, int K, const float* A, const float* B, float* C) {
  const int row = blockIdx.y * kBlock + threadIdx.x / kBlock;
  const int col = blockIdx.x * kBlock + threadIdx.x % kBlock;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
}

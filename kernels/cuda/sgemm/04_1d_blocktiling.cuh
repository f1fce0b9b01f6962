// SGEMM version 4 — 1D register blocking: each thread computes kTM = 8 outputs down a column.
// Changed since version 3: a value of B read from shared memory is kept in a register and used for
// kTM multiply-adds, so shared-memory loads per FMA fall from 2 to about 1.1. Tiles are 64×64 with
// kBK = 8, so 512 threads each load one element of A and one of B per tile.
// Run: tilescope-gpu-bench --suite sgemm (this is version 4; version 0 is cuBLAS SGEMM).
#pragma once

template <int kBM, int kBN, int kBK, int kTM>
__global__ void sgemm_04_1d_blocktiling(int M, int N, int K, const float* A, const float* B,
                                        float* C) {
  __shared__ float As[kBM * kBK];
  __shared__ float Bs[kBK * kBN];
  (void)M;
  const int thread_col = threadIdx.x % kBN;
  const int thread_row = threadIdx.x / kBN;
  const int a_col = threadIdx.x % kBK, a_row = threadIdx.x / kBK;
  const int b_col = threadIdx.x % kBN, b_row = threadIdx.x / kBN;
  A += (size_t)blockIdx.y * kBM * K;
  B += (size_t)blockIdx.x * kBN;
  C += (size_t)blockIdx.y * kBM * N + blockIdx.x * kBN;
  float acc[kTM] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    As[a_row * kBK + a_col] = A[(size_t)a_row * K + a_col];
    Bs[b_row * kBN + b_col] = B[(size_t)b_row * N + b_col];
    __syncthreads();
    A += kBK;
    B += (size_t)kBK * N;
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      const float b = Bs[k * kBN + thread_col];
#pragma unroll
      for (int i = 0; i < kTM; ++i) acc[i] += As[(thread_row * kTM + i) * kBK + k] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i) C[(size_t)(thread_row * kTM + i) * N + thread_col] = acc[i];
}

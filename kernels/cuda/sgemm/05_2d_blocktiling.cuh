// SGEMM version 5 — 2D register blocking: each thread computes an 8×8 block of C from 8 values of A
// and 8 of B held in registers.
// Changed since version 4: an outer product of two register vectors per k, so 16 shared-memory
// loads feed 64 FMAs (0.25 loads per FMA). Block tile 128×128×8, 256 threads, 64 accumulators per
// thread.
// Run: tilescope-gpu-bench --suite sgemm (this is version 5; version 0 is cuBLAS SGEMM).
#pragma once

template <int kBM, int kBN, int kBK, int kTM, int kTN>
__global__ void __launch_bounds__((kBM / kTM) * (kBN / kTN))
    sgemm_05_2d_blocktiling(int M, int N, int K, const float* A, const float* B, float* C) {
  constexpr int kThreads = (kBM / kTM) * (kBN / kTN);
  __shared__ float As[kBM * kBK];
  __shared__ float Bs[kBK * kBN];
  (void)M;
  const int thread_col = threadIdx.x % (kBN / kTN);
  const int thread_row = threadIdx.x / (kBN / kTN);
  const int a_col = threadIdx.x % kBK, a_row = threadIdx.x / kBK;
  constexpr int kStrideA = kThreads / kBK;
  const int b_col = threadIdx.x % kBN, b_row = threadIdx.x / kBN;
  constexpr int kStrideB = kThreads / kBN;
  A += (size_t)blockIdx.y * kBM * K;
  B += (size_t)blockIdx.x * kBN;
  C += (size_t)blockIdx.y * kBM * N + blockIdx.x * kBN;
  float acc[kTM][kTN] = {};
  float reg_m[kTM];
  float reg_n[kTN];
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int off = 0; off < kBM; off += kStrideA)
      As[(a_row + off) * kBK + a_col] = A[(size_t)(a_row + off) * K + a_col];
#pragma unroll
    for (int off = 0; off < kBK; off += kStrideB)
      Bs[(b_row + off) * kBN + b_col] = B[(size_t)(b_row + off) * N + b_col];
    __syncthreads();
    A += kBK;
    B += (size_t)kBK * N;
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
#pragma unroll
      for (int i = 0; i < kTM; ++i) reg_m[i] = As[(thread_row * kTM + i) * kBK + k];
#pragma unroll
      for (int j = 0; j < kTN; ++j) reg_n[j] = Bs[k * kBN + thread_col * kTN + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += reg_m[i] * reg_n[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j)
      C[(size_t)(thread_row * kTM + i) * N + thread_col * kTN + j] = acc[i][j];
}

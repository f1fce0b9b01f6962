// SGEMM version 6 — vectorized loads: 16-byte (float4) global loads and stores, and A stored
// transposed in shared memory so a thread's 8 values of A are contiguous.
// Changed since version 5: one LDG.128 instead of four LDG.32 for each global load; the transpose
// of A happens on the way into shared memory, so the inner loop reads A and B with LDS.128 (4 loads
// per 64 FMAs instead of 16). Same 128×128×8 tiles and 8×8 thread blocks.
// Run: tilescope-gpu-bench --suite sgemm (this is version 6; version 0 is cuBLAS SGEMM).
#pragma once

template <int kBM, int kBN, int kBK, int kTM, int kTN>
__global__ void __launch_bounds__((kBM / kTM) * (kBN / kTN))
    sgemm_06_vectorized(int M, int N, int K, const float* A, const float* B, float* C) {
  constexpr int kThreads = (kBM / kTM) * (kBN / kTN);
  static_assert(kBM * kBK / 4 == kThreads && kBK * kBN / 4 == kThreads,
                "one float4 of A and one of B per thread per tile");
  __shared__ alignas(16) float As[kBK * kBM];  // transposed: As[k][m]
  __shared__ alignas(16) float Bs[kBK * kBN];
  (void)M;
  const int thread_col = threadIdx.x % (kBN / kTN);
  const int thread_row = threadIdx.x / (kBN / kTN);
  const int a_row = threadIdx.x / (kBK / 4), a_col4 = threadIdx.x % (kBK / 4);
  const int b_row = threadIdx.x / (kBN / 4), b_col4 = threadIdx.x % (kBN / 4);
  A += (size_t)blockIdx.y * kBM * K;
  B += (size_t)blockIdx.x * kBN;
  C += (size_t)blockIdx.y * kBM * N + blockIdx.x * kBN;
  float acc[kTM][kTN] = {};
  float reg_m[kTM];
  float reg_n[kTN];
  for (int k0 = 0; k0 < K; k0 += kBK) {
    const float4 a = *reinterpret_cast<const float4*>(&A[(size_t)a_row * K + a_col4 * 4]);
    As[(a_col4 * 4 + 0) * kBM + a_row] = a.x;
    As[(a_col4 * 4 + 1) * kBM + a_row] = a.y;
    As[(a_col4 * 4 + 2) * kBM + a_row] = a.z;
    As[(a_col4 * 4 + 3) * kBM + a_row] = a.w;
    *reinterpret_cast<float4*>(&Bs[b_row * kBN + b_col4 * 4]) =
        *reinterpret_cast<const float4*>(&B[(size_t)b_row * N + b_col4 * 4]);
    __syncthreads();
    A += kBK;
    B += (size_t)kBK * N;
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
#pragma unroll
      for (int i = 0; i < kTM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k * kBM + thread_row * kTM + i]);
        reg_m[i] = v.x, reg_m[i + 1] = v.y, reg_m[i + 2] = v.z, reg_m[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < kTN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k * kBN + thread_col * kTN + j]);
        reg_n[j] = v.x, reg_n[j + 1] = v.y, reg_n[j + 2] = v.z, reg_n[j + 3] = v.w;
      }
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
    for (int j = 0; j < kTN; j += 4)
      *reinterpret_cast<float4*>(&C[(size_t)(thread_row * kTM + i) * N + thread_col * kTN + j]) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
}

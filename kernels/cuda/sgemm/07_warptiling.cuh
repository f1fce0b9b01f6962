// SGEMM version 7 — warp tiling: the 128×128 block tile is split into eight 32×64 warp tiles, and
// within a warp each thread owns 2×2 sub-blocks of 4×4 outputs spaced 16 rows and 32 columns apart.
// Changed since version 6: the thread→output map. In version 6 a thread's 8 columns were
// contiguous, so the eight threads of a quarter-warp read B at a 32-byte stride (2-way bank
// conflicts on every LDS.128); here they read eight consecutive float4 (conflict-free), and a warp
// touches a compact 32×64 region (A reads are broadcasts). A's shared tile is padded by 4 floats
// per k-row so the transposing stores of one warp land in 32 different banks.
// Run: tilescope-gpu-bench --suite sgemm (this is version 7; version 0 is cuBLAS SGEMM).
#pragma once

namespace sgemm07 {
constexpr int kBM = 128, kBN = 128, kBK = 8, kThreads = 256;
constexpr int kWarpsN = 2;         // warps laid out 4 (M) × 2 (N): warp tile 32×64
constexpr int kWM = 32, kWN = 64;  // warp tile
constexpr int kLanesN = 8;         // lanes laid out 4 (M) × 8 (N)
constexpr int kPadA = 4;           // keeps float4 alignment and spreads the transposing stores
}  // namespace sgemm07

__global__ void __launch_bounds__(sgemm07::kThreads)
    sgemm_07_warptiling(int M, int N, int K, const float* A, const float* B, float* C) {
  using namespace sgemm07;
  __shared__ alignas(16) float As[kBK][kBM + kPadA];  // transposed: As[k][m]
  __shared__ alignas(16) float Bs[kBK][kBN];
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = (warp / kWarpsN) * kWM + (lane / kLanesN) * 4;  // rows row0+{0..3}, +16+{0..3}
  const int col0 = (warp % kWarpsN) * kWN + (lane % kLanesN) * 4;  // cols col0+{0..3}, +32+{0..3}
  const int a_row = tid / 2, a_k = (tid % 2) * 4;                  // one float4 of A per thread
  const int b_k = tid / 32, b_col = (tid % 32) * 4;                // one float4 of B per thread
  const float* a_ptr = A + (size_t)(blockIdx.y * kBM + a_row) * K + a_k;
  const float* b_ptr = B + (size_t)b_k * N + blockIdx.x * kBN + b_col;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    const float4 a = *reinterpret_cast<const float4*>(a_ptr + k0);
    As[a_k + 0][a_row] = a.x;
    As[a_k + 1][a_row] = a.y;
    As[a_k + 2][a_row] = a.z;
    As[a_k + 3][a_row] = a.w;
    *reinterpret_cast<float4*>(&Bs[b_k][b_col]) =
        *reinterpret_cast<const float4*>(b_ptr + (size_t)k0 * N);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float ra[8], rb[8];
      float4 v = *reinterpret_cast<const float4*>(&As[k][row0]);
      ra[0] = v.x, ra[1] = v.y, ra[2] = v.z, ra[3] = v.w;
      v = *reinterpret_cast<const float4*>(&As[k][row0 + 16]);
      ra[4] = v.x, ra[5] = v.y, ra[6] = v.z, ra[7] = v.w;
      v = *reinterpret_cast<const float4*>(&Bs[k][col0]);
      rb[0] = v.x, rb[1] = v.y, rb[2] = v.z, rb[3] = v.w;
      v = *reinterpret_cast<const float4*>(&Bs[k][col0 + 32]);
      rb[4] = v.x, rb[5] = v.y, rb[6] = v.z, rb[7] = v.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }
  C += (size_t)blockIdx.y * kBM * N + blockIdx.x * kBN;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = row0 + (i / 4) * 16 + i % 4;
#pragma unroll
    for (int jh = 0; jh < 2; ++jh)
      *reinterpret_cast<float4*>(&C[(size_t)row * N + col0 + jh * 32]) =
          make_float4(acc[i][jh * 4], acc[i][jh * 4 + 1], acc[i][jh * 4 + 2], acc[i][jh * 4 + 3]);
  }
}

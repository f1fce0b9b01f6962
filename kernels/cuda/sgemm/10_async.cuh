// SGEMM version 10 — A transposed once up front, then tiles copied global → shared by cp.async in
// a multistage pipeline, with no registers or stores in between.
// Changed since version 9: the kernel reads Aᵀ (K×M, written by one transpose pass of M·K·8 bytes
// before it, ~1–2 % of the GEMM's time at 4096²), so a k-row of A's tile is as contiguous as B's
// and both are plain 16-byte copies: cp.async straight into shared memory, kStages tiles in
// flight, one barrier per tile. What version 9 spends per tile on the way — two float4 loads into
// registers, five stores (four of them scalar, transposing), the registers that hold the next tile
// — is gone, and the copy of tile t+kStages−1 overlaps the math of tile t. The inner loop (LDS.128
// of A and B, 4×4 sub-blocks per lane) is version 9's.
// Run: tilescope-gpu-bench --suite sgemm (this is version 10; version 0 is cuBLAS SGEMM).
#pragma once

#include "kernels/cuda/ampere_ptx.cuh"

namespace sgemm10 {
using ampere::cp_async_16;
using ampere::cp_async_commit;
using ampere::cp_async_wait;
constexpr int kLanesN = 8, kSubM = 16, kSubN = 32;

template <int kBM, int kBN, int kBK, int kStages>
constexpr int smem_bytes() {
  return kStages * kBK * (kBM + kBN) * 4;
}
}  // namespace sgemm10

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages, int kMinBlocks>
__global__ void __launch_bounds__((kBM / kWM) * (kBN / kWN) * 32, kMinBlocks)
    sgemm_10_async(int M, int N, int K, const float* At, const float* B, float* C) {
  using namespace sgemm10;
  constexpr int kWarpsN = kBN / kWN, kThreads = (kBM / kWM) * kWarpsN * 32;
  constexpr int kRM = kWM / kSubM, kRN = kWN / kSubN;
  constexpr int kACopies = kBK * kBM / 4 / kThreads, kBCopies = kBK * kBN / 4 / kThreads;
  static_assert(kACopies * kThreads * 4 == kBK * kBM && kBCopies * kThreads * 4 == kBK * kBN,
                "every thread copies the same number of 16-byte chunks of each tile");
  extern __shared__ float4 smem4[];
  float* As = reinterpret_cast<float*>(smem4);  // [kStages][kBK][kBM]
  float* Bs = As + kStages * kBK * kBM;         // [kStages][kBK][kBN]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m0 = (warp / kWarpsN) * kWM + (lane / kLanesN) * 4;
  const int n0 = (warp % kWarpsN) * kWN + (lane % kLanesN) * 4;
  const float* a_blk = At + (size_t)blockIdx.y * kBM;
  const float* b_blk = B + (size_t)blockIdx.x * kBN;

  auto load_stage = [&](int stage, int kt) {
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const int idx = tid + i * kThreads, k = idx / (kBM / 4), q = idx % (kBM / 4);
      cp_async_16(As + (stage * kBK + k) * kBM + q * 4, a_blk + (size_t)(kt * kBK + k) * M + q * 4);
    }
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      const int idx = tid + i * kThreads, k = idx / (kBN / 4), q = idx % (kBN / 4);
      cp_async_16(Bs + (stage * kBK + k) * kBN + q * 4, b_blk + (size_t)(kt * kBK + k) * N + q * 4);
    }
  };

  const int num_tiles = K / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_tiles) load_stage(s, s);
    cp_async_commit();  // always commit, so the group count stays uniform
  }
  float acc[4 * kRM][4 * kRN] = {};
  for (int kt = 0; kt < num_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();               // ... and for all; everyone is done with tile kt-1's stage
    const int next = kt + kStages - 1;
    if (next < num_tiles) load_stage(next % kStages, next);
    cp_async_commit();
    const float* a_s = As + (kt % kStages) * kBK * kBM;
    const float* b_s = Bs + (kt % kStages) * kBK * kBN;
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float ra[4 * kRM], rb[4 * kRN];
#pragma unroll
      for (int r = 0; r < kRM; ++r) {
        const float4 v = *reinterpret_cast<const float4*>(a_s + k * kBM + m0 + r * kSubM);
        ra[4 * r] = v.x, ra[4 * r + 1] = v.y, ra[4 * r + 2] = v.z, ra[4 * r + 3] = v.w;
      }
#pragma unroll
      for (int r = 0; r < kRN; ++r) {
        const float4 v = *reinterpret_cast<const float4*>(b_s + k * kBN + n0 + r * kSubN);
        rb[4 * r] = v.x, rb[4 * r + 1] = v.y, rb[4 * r + 2] = v.z, rb[4 * r + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < 4 * kRM; ++i)
#pragma unroll
        for (int j = 0; j < 4 * kRN; ++j) acc[i][j] += ra[i] * rb[j];
    }
  }
  cp_async_wait<0>();

  float* c_blk = C + (size_t)blockIdx.y * kBM * N + (size_t)blockIdx.x * kBN;
#pragma unroll
  for (int i = 0; i < 4 * kRM; ++i) {
    const int row = m0 + (i / 4) * kSubM + i % 4;
#pragma unroll
    for (int r = 0; r < kRN; ++r) {
      const float4 v =
          make_float4(acc[i][4 * r], acc[i][4 * r + 1], acc[i][4 * r + 2], acc[i][4 * r + 3]);
      __stcs(reinterpret_cast<float4*>(&c_blk[(size_t)row * N + n0 + r * kSubN]), v);
    }
  }
}

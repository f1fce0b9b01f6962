// Tensor-core GEMM version 2 — mma.sync m16n8k16 + ldmatrix + a 4-stage cp.async pipeline.
// C (fp32) = A (fp16, M×K) · Wᵀ (W fp16, N×K), fp32 accumulate; optional bias + ReLU epilogue.
// Changed since version 1: (1) cp.async copies global→shared without passing through registers, and
// 4 stages are in flight, so tile t+3 is arriving while tile t is multiplied (one barrier per
// tile); (2) ldmatrix.x4 loads four 8×8 fragments per instruction straight into the mma.sync
// register layout; (3) each of 4 warps owns a 64×64 tile (4×8 mma tiles, 128 accumulators per
// thread), so 8 ldmatrix feed 32 mma per k-step; (4) shared rows are 64 bytes, so the 16-byte chunk
// index is XOR-swizzled with (row/2)%4: the 8 rows an ldmatrix phase reads hit 8 different bank
// groups. Dynamic shared memory: 4 stages × (8 KB A + 8 KB W) = 64 KB per block, two blocks per SM.
// Run: tilescope-gpu-bench --suite hgemm (this is version 2; version 0 is cuBLAS (fp16 in, fp32
// accumulate)).
#pragma once

#include "kernels/cuda/ampere_ptx.cuh"

#include <cuda_fp16.h>

namespace hgemm02 {
constexpr int kBM = 128, kBN = 128, kBK = 32, kStages = 4, kThreads = 128;
constexpr int kWarpsN = 2, kWM = 64, kWN = 64;
constexpr int kTileHalves = kBM * kBK;  // per operand per stage (kBM == kBN)
constexpr int kSmemBytes = kStages * 2 * kTileHalves * (int)sizeof(__half);

// Offset (in halves) of logical 16-byte chunk `chunk` (0..3) of tile row `row`.
__device__ __forceinline__ int swizzle(int row, int chunk) {
  return row * kBK + ((chunk ^ ((row >> 1) & 3)) * 8);
}

using ampere::cp_async_16;
using ampere::cp_async_commit;
using ampere::cp_async_wait;
using ampere::ldmatrix_x4;
using ampere::mma_16816;
}  // namespace hgemm02

template <bool kBiasRelu>
__global__ void __launch_bounds__(hgemm02::kThreads, 2)
    hgemm_02_mma_multistage(int M, int N, int K, const __half* A, const __half* W,
                            const float* bias, float* C) {
  using namespace hgemm02;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __half* sA = reinterpret_cast<__half*>(smem_raw);  // [kStages][kBM × kBK], swizzled rows
  __half* sW = sA + kStages * kTileHalves;           // [kStages][kBN × kBK]
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  const __half* a_g = A + (size_t)bm * K;
  const __half* w_g = W + (size_t)bn * K;

  auto load_stage = [&](int stage, int kt) {
    const int k0 = kt * kBK;
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // 128 rows × 4 chunks = 512 chunks per operand, 4 per thread
      const int idx = tid + i * kThreads, row = idx >> 2, ch = idx & 3;
      cp_async_16(sA + stage * kTileHalves + swizzle(row, ch), a_g + (size_t)row * K + k0 + ch * 8);
      cp_async_16(sW + stage * kTileHalves + swizzle(row, ch), w_g + (size_t)row * K + k0 + ch * 8);
    }
  };

  float acc[4][8][4] = {};
  const int num_tiles = K / kBK;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < num_tiles) load_stage(s, s);
    cp_async_commit();  // always commit, so group counting stays uniform
  }
  for (int kt = 0; kt < num_tiles; ++kt) {
    cp_async_wait<kStages - 2>();  // tile kt has landed (for this thread) ...
    __syncthreads();               // ... and for every thread; stage (kt-1) is free again
    const int next = kt + kStages - 1;
    if (next < num_tiles) load_stage(next % kStages, next);
    cp_async_commit();
    const __half* a_s = sA + (kt % kStages) * kTileHalves;
    const __half* w_s = sW + (kt % kStages) * kTileHalves;
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      unsigned af[4][4];
      unsigned bf[8][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = wm * kWM + mi * 16 + (lane & 15);
        ldmatrix_x4(af[mi], a_s + swizzle(row, ks * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int row = wn * kWN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        unsigned r[4];
        ldmatrix_x4(r, w_s + swizzle(row, ks * 2 + ((lane >> 3) & 1)));
        bf[2 * nj][0] = r[0], bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2], bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) mma_16816(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }
  cp_async_wait<0>();

#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 8; ++ni) {
      const int row = bm + wm * kWM + mi * 16 + (lane >> 2);
      const int col = bn + wn * kWN + ni * 8 + (lane & 3) * 2;
      float2 lo = make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      float2 hi = make_float2(acc[mi][ni][2], acc[mi][ni][3]);
      if constexpr (kBiasRelu) {
        const float2 b = *reinterpret_cast<const float2*>(bias + col);
        lo = make_float2(fmaxf(lo.x + b.x, 0.f), fmaxf(lo.y + b.y, 0.f));
        hi = make_float2(fmaxf(hi.x + b.x, 0.f), fmaxf(hi.y + b.y, 0.f));
      }
      *reinterpret_cast<float2*>(&C[(size_t)row * N + col]) = lo;
      *reinterpret_cast<float2*>(&C[(size_t)(row + 8) * N + col]) = hi;
    }
  }
}

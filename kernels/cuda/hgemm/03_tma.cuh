// Tensor-core GEMM version 3 — tiles arrive by TMA (the bulk tensor copy engine) and complete on
// mbarriers; the math is still version 2's mma.sync + ldmatrix.
// C (fp32) = A (fp16, M×K) · Wᵀ (W fp16, N×K), fp32 accumulate.
// Changed since version 2: (1) one thread asks the copy engine for a whole 128×64 tile of A and of
// W (cp.async.bulk.tensor with a tensor map passed as a __grid_constant__ parameter) instead of 128
// threads issuing 4 cp.async of 16 bytes each per operand: no address arithmetic, no registers, no
// issue slots spent on copies; (2) arrival is an mbarrier per stage that completes when its 32 KB
// have landed (expect_tx), so nobody counts cp.async groups; (3) the tile is 64 deep (128-byte
// rows) and TMA swizzles it with the 128-byte pattern (16-byte chunk XOR row % 8), which is also
// what keeps ldmatrix conflict-free; (4) three stages of 32 KB: 96 KB, still two blocks per SM.
// Run: tilescope-gpu-bench --suite hgemm (this is version 3; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include "kernels/cuda/hgemm/02_mma_multistage.cuh"  // ldmatrix_x4, mma_16816
#include "kernels/cuda/hopper_ptx.cuh"

namespace hgemm03 {
constexpr int kBM = 128, kBN = 128, kBK = 64, kStages = 3, kThreads = 128;
constexpr int kWarpsN = 2, kWM = 64, kWN = 64;
constexpr int kTileHalves = kBM * kBK;  // per operand per stage (kBM == kBN)
constexpr int kStageBytes = 2 * kTileHalves * (int)sizeof(__half);
// Tiles, then one mbarrier per stage; 1 KB of slack to round the start up to 1024 bytes.
constexpr int kSmemBytes = kStages * kStageBytes + kStages * 8 + 1024;
}  // namespace hgemm03

__global__ void __launch_bounds__(hgemm03::kThreads, 2)
    hgemm_03_tma(int M, int N, int K, const __grid_constant__ CUtensorMap tma_a,
                 const __grid_constant__ CUtensorMap tma_w, float* C) {
  using namespace hgemm03;
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);
  __half* sA = reinterpret_cast<__half*>(smem);  // [kStages][kBM × kBK], TMA-swizzled rows
  __half* sW = sA + kStages * kTileHalves;       // [kStages][kBN × kBK]
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(sW + kStages * kTileHalves);
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  const int num_tiles = K / kBK;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();
  // One thread, two instructions per stage: the copy engine does the rest.
  auto issue = [&](int kt) {
    const int s = kt % kStages;
    mbar_arrive_expect_tx(&full[s], kStageBytes);
    tma_load_2d(sA + s * kTileHalves, &tma_a, &full[s], kt * kBK, bm);
    tma_load_2d(sW + s * kTileHalves, &tma_w, &full[s], kt * kBK, bn);
  };
  if (tid == 0)
    for (int kt = 0; kt < kStages - 1 && kt < num_tiles; ++kt) issue(kt);

  float acc[4][8][4] = {};
  for (int kt = 0; kt < num_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);  // this stage's 32 KB have landed
    __syncthreads();  // everyone is done with tile kt-1, so its stage may be refilled
    if (tid == 0 && kt + kStages - 1 < num_tiles) issue(kt + kStages - 1);
    const __half* a_s = sA + s * kTileHalves;
    const __half* w_s = sW + s * kTileHalves;
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) {
      unsigned af[4][4];
      unsigned bf[8][2];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        const int row = wm * kWM + mi * 16 + (lane & 15);
        hgemm02::ldmatrix_x4(af[mi], a_s + swizzle_128b(row, ks * 2 + (lane >> 4)));
      }
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        const int row = wn * kWN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
        unsigned r[4];
        hgemm02::ldmatrix_x4(r, w_s + swizzle_128b(row, ks * 2 + ((lane >> 3) & 1)));
        bf[2 * nj][0] = r[0], bf[2 * nj][1] = r[1];
        bf[2 * nj + 1][0] = r[2], bf[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni)
          hgemm02::mma_16816(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
    }
  }

#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 8; ++ni) {
      const int row = bm + wm * kWM + mi * 16 + (lane >> 2);
      const int col = bn + wn * kWN + ni * 8 + (lane & 3) * 2;
      *reinterpret_cast<float2*>(&C[(size_t)row * N + col]) =
          make_float2(acc[mi][ni][0], acc[mi][ni][1]);
      *reinterpret_cast<float2*>(&C[(size_t)(row + 8) * N + col]) =
          make_float2(acc[mi][ni][2], acc[mi][ni][3]);
    }
  }
}

// Tensor-core GEMM version 4 — wgmma: a warpgroup (4 warps) multiplies straight out of shared
// memory, asynchronously. C (fp32) = A (M×K) · Wᵀ (W N×K), 16-bit inputs (fp16 or bf16), fp32
// accumulate.
// Changed since version 3: (1) no ldmatrix and no mma.sync: each of 2 warpgroups issues
// wgmma.m64n128k16 with both operands described in shared memory (a 64-bit descriptor: address,
// 1024-byte stride between 8-row groups, 128-byte swizzle — exactly the layout TMA wrote), 4 per
// 64-deep tile, so one instruction does the work of 32 mma.sync of version 3 and the registers
// that held fragments are free; (2) the accumulators live in the layout wgmma defines (64 fp32
// per thread for a 64×128 tile); (3) the warpgroup waits for its MMAs (wgmma.wait_group 0) before
// the block barrier that lets the stage be refilled, so copy and math overlap only through the
// three stages, not yet inside the warpgroup. Needs sm_90a.
// Run: tilescope-gpu-bench --suite hgemm (this is version 4; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include "kernels/cuda/hopper_ptx.cuh"

namespace hgemm04 {
constexpr int kBM = 128, kBN = 128, kBK = 64, kStages = 3, kThreads = 256;  // 2 warpgroups
constexpr int kTileElems = kBM * kBK;                                       // kBM == kBN
constexpr int kStageBytes = 2 * kTileElems * 2;
constexpr int kSmemBytes = kStages * kStageBytes + kStages * 8 + 1024;
}  // namespace hgemm04

template <class T>
__global__ void __launch_bounds__(hgemm04::kThreads, 2)
    hgemm_04_wgmma(int M, int N, int K, const __grid_constant__ CUtensorMap tma_a,
                   const __grid_constant__ CUtensorMap tma_w, float* C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace hgemm04;
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);
  T* sA = reinterpret_cast<T*>(smem);  // [kStages][kBM × kBK]
  T* sW = sA + kStages * kTileElems;   // [kStages][kBN × kBK]
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(sW + kStages * kTileElems);
  (void)M;
  const int tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  const int num_tiles = K / kBK;

  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    fence_barrier_init();
  }
  __syncthreads();
  auto issue = [&](int kt) {
    const int s = kt % kStages;
    mbar_arrive_expect_tx(&full[s], kStageBytes);
    tma_load_2d(sA + s * kTileElems, &tma_a, &full[s], kt * kBK, bm);
    tma_load_2d(sW + s * kTileElems, &tma_w, &full[s], kt * kBK, bn);
  };
  if (tid == 0)
    for (int kt = 0; kt < kStages - 1 && kt < num_tiles; ++kt) issue(kt);

  float acc[kBN / 2];
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;
  for (int kt = 0; kt < num_tiles; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], (kt / kStages) & 1);
    __syncthreads();  // both warpgroups finished (and waited for) their MMAs on tile kt-1
    if (tid == 0 && kt + kStages - 1 < num_tiles) issue(kt + kStages - 1);
    // This warpgroup's 64 rows of A start 64 · 128 bytes into the tile: still 1024-aligned.
    const std::uint64_t da = desc_sw128(sA + s * kTileElems + wg * 64 * kBK);
    const std::uint64_t db = desc_sw128(sW + s * kTileElems);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64k16<kBN, T>(acc, da + 2 * ks, db + 2 * ks);
    wgmma_commit();
    wgmma_wait<0>();
    fence_accumulators(acc);
  }

  const int row = bm + wg * 64 + (t / 32) * 16 + (t % 32) / 4;
#pragma unroll
  for (int j = 0; j < kBN / 8; ++j) {
    const int col = bn + j * 8 + (t % 4) * 2;
    *reinterpret_cast<float2*>(&C[(size_t)row * N + col]) = make_float2(acc[4 * j], acc[4 * j + 1]);
    *reinterpret_cast<float2*>(&C[(size_t)(row + 8) * N + col]) =
        make_float2(acc[4 * j + 2], acc[4 * j + 3]);
  }
#else
  (void)M, (void)N, (void)K, (void)tma_a, (void)tma_w, (void)C;
  __trap();  // built without sm_90a: the runner refuses this version before launching it
#endif
}

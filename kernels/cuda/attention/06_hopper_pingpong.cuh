// Attention version 6 — Hopper with FlashAttention-3's two overlaps: the softmax of one warpgroup
// runs while the other's GEMMs do (ping-pong), and within a warpgroup the softmax of tile j runs
// while tile j − 1's P·V is still in the tensor cores.
// Changed since version 5: (1) no producer warp. A 9th warp puts three warps on one of the SM's
// four register files and caps every thread at 168 registers (version 5's "Registers"); with 256
// threads (two per file) a thread may have 255, so key tiles are 128 at d = 128 too. The copies
// are a role instead of a warp: whichever consumer warpgroup releases a stage last refills it by
// TMA (a per-stage counter decides, so neither waits for the other). (2) Within a warpgroup, tile
// j's S = Q·Kⱼᵀ is issued together with tile j − 1's O += Pⱼ₋₁·Vⱼ₋₁ (the output rescaled for
// tile j − 1's max between the two issues); the softmax of Sⱼ (max, exp2, sum) runs while P·V is
// still running. (3) Two named barriers make the warpgroups take turns issuing their GEMMs, so
// while one runs its softmax the other's MMAs have the tensor cores. 225 KB of shared memory at
// d = 128 (Q 32 KB, three stages of K and V 192 KB), one block per SM.
//
// Run: tilescope-gpu-bench --suite attention (this is version 6).
#pragma once

#include "kernels/cuda/attention/attention_common.cuh"
#include "kernels/cuda/hopper_ptx.cuh"

#include <cmath>

namespace attn06 {
// Three K/V stages: a stage is freed only after its P·V, which (overlapped) runs one turn after its
// S GEMM, so with two the refill of tile j + 2 was issued a moment before tile j + 2 was wanted:
// ncu counted 2.2 of 7.9 cycles per instruction stalled on the K/V barriers (long scoreboard).
constexpr int kBr = 128, kBc = 128, kStages = 3, kThreads = 256;
// Named barrier 1 + c: "warpgroup c may issue its GEMMs" (one warpgroup syncs, the other arrives).
constexpr int kTurnBarrier = 1;

template <int kD>
struct Shape {
  static constexpr int kSub = kD / 64;  // 64-column sub-tiles (128-byte rows)
  static constexpr int kQElems = kBr * kD, kKVElems = kBc * kD;
  static constexpr int kSubBytes = kBc * 64 * 2;  // one sub-tile of a K/V stage
  // Q, K and V stages, the barriers, the stages' release counters; 1 KB of slack for alignment.
  static constexpr int kSmemBytes =
      (kQElems + 2 * kStages * kKVElems) * 2 + (1 + 2 * kStages) * 8 + kStages * 4 + 1024;
  static_assert(kSmemBytes <= 232448,
                "over the 227 KB of shared memory a Hopper block may opt in to");
};

// Tile `kt` of K and V into their stages by TMA, each onto its own "full" barrier (S can start
// before V lands). One thread.
template <class T, int kD>
__device__ __forceinline__ void load_kv(T* k_s, T* v_s, std::uint64_t* k_full,
                                        std::uint64_t* v_full, const CUtensorMap* tma_k,
                                        const CUtensorMap* tma_v, int head_row, int kt) {
  using namespace hopper;
  using S = Shape<kD>;
  mbar_arrive_expect_tx(k_full, S::kKVElems * 2);
  for (int sub = 0; sub < S::kSub; ++sub)
    tma_load_2d(k_s + sub * kBc * 64, tma_k, k_full, sub * 64, head_row + kt * kBc);
  mbar_arrive_expect_tx(v_full, S::kKVElems * 2);
  for (int sub = 0; sub < S::kSub; ++sub)
    tma_load_2d(v_s + sub * kBc * 64, tma_v, v_full, sub * 64, head_row + kt * kBc);
}

}  // namespace attn06

template <class T, int kD>
__global__ void __launch_bounds__(attn06::kThreads, 1)
    attention_06_hopper_pingpong(const __grid_constant__ CUtensorMap tma_q,
                                 const __grid_constant__ CUtensorMap tma_k,
                                 const __grid_constant__ CUtensorMap tma_v, T* O, int n,
                                 float scale_log2e, bool causal) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace attn06;
  using namespace hopper;
  using S = Shape<kD>;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);
  T* sQ = reinterpret_cast<T*>(smem);  // [kSub][128 rows][64]
  T* sK = sQ + S::kQElems;             // [kStages][kSub][128 keys][64]
  T* sV = sK + kStages * S::kKVElems;  // [kStages][kSub][128 keys][64]
  std::uint64_t* q_full = reinterpret_cast<std::uint64_t*>(sV + kStages * S::kKVElems);
  std::uint64_t* k_full = q_full + 1;
  std::uint64_t* v_full = k_full + kStages;
  unsigned* released = reinterpret_cast<unsigned*>(v_full + kStages);  // per stage, ever-growing

  const int c = threadIdx.x / 128, t = threadIdx.x % 128, lane = t % 32;
  const int q_tile = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int q0 = q_tile * kBr;
  const int head_row = (int)blockIdx.y * n;  // this head's first row in the [B·H·N][d] views
  // Causal: the key tiles up to this block's last query (kBc = kBr: the last one is the diagonal).
  const int tiles = causal ? q_tile + 1 : n / kBc;

  if (threadIdx.x == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&k_full[s], 1);
      mbar_init(&v_full[s], 1);
      released[s] = 0;
    }
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbar_arrive_expect_tx(q_full, S::kQElems * 2);
    for (int sub = 0; sub < S::kSub; ++sub)
      tma_load_2d(sQ + sub * kBr * 64, &tma_q, q_full, sub * 64, head_row + q0);
    for (int kt = 0; kt < kStages && kt < tiles; ++kt)
      load_kv<T, kD>(sK + kt * S::kKVElems, sV + kt * S::kKVElems, &k_full[kt], &v_full[kt], &tma_k,
                     &tma_v, head_row, kt);
  }
  // Warpgroup 0 issues first: warpgroup 1's arrival stands for "the previous turn is over".
  if (c == 1) named_arrive(kTurnBarrier + 0, kThreads);

  // Thread t holds rows 16·(t/32) + (t%32)/4 + 8h of warpgroup c's 64 and, of every 8 columns,
  // 2·(t%4) and +1 (wgmma's accumulator layout, the same per warp as mma.sync's).
  const int row_g = q0 + c * 64 + (t / 32) * 16 + lane / 4;
  float s_acc[kBc / 8][4];  // wgmma's accumulators, as attention_common.cuh's 16-row fragments
  float o[kD / 8][4] = {};
  auto& s_flat = reinterpret_cast<float(&)[kBc / 2]>(s_acc);  // wgmma's flat operand list
  auto& o_flat = reinterpret_cast<float(&)[kD / 2]>(o);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f}, corr[2];
  unsigned p[kBc / 16][4];  // P of the previous tile, packed: the A operand of its P·V

  // S = Q·Kᵀ of tile kt into s_acc (issued, not waited for).
  auto issue_scores = [&](int kt) {
    const T* k_s = sK + (kt % kStages) * S::kKVElems;
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const std::uint64_t da = desc_sw128(sQ + (kk / 4) * kBr * 64 + c * 64 * 64) + 2 * (kk % 4);
      const std::uint64_t db = desc_sw128(k_s + (kk / 4) * kBc * 64) + 2 * (kk % 4);
      wgmma_m64k16<kBc, T>(s_flat, da, db, kk > 0 ? 1 : 0);
    }
    wgmma_commit();
  };
  // O += P·V of tile kt (issued, not waited for).
  auto issue_pv = [&](int kt) {
    const T* v_s = sV + (kt % kStages) * S::kKVElems;
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk)
      wgmma_m64k16_rs_tnsp<kD, T>(o_flat, p[kk], desc_mn_sw128(v_s + kk * 16 * 64, S::kSubBytes));
    wgmma_commit();
  };
  // Tile kt's stage is no longer read by this warpgroup; the second to say so refills it.
  auto release = [&](int kt) {
    const int s = kt % kStages;
    if (t == 0 && atomic_inc_acq_rel(&released[s]) % 2 == 1 && kt + kStages < tiles)
      load_kv<T, kD>(sK + s * S::kKVElems, sV + s * S::kKVElems, &k_full[s], &v_full[s], &tma_k,
                     &tma_v, head_row, kt + kStages);
  };
  auto pack = [&] {
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      attn::pack_p<T>(s_acc, kk, p[kk]);
#pragma unroll
      for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(p[kk][r])::"memory");
    }
  };
  auto diagonal = [&](int kt) { return causal && kt == tiles - 1; };

  mbar_wait(q_full, 0);
  mbar_wait(&k_full[0], 0);
  named_sync(kTurnBarrier + c, kThreads);
  wgmma_fence();
  issue_scores(0);
  named_arrive(kTurnBarrier + (1 - c), kThreads);
  wgmma_wait<0>();
  fence_accumulators(s_flat);
  attn::softmax_scores(s_acc, m, l, corr, scale_log2e, diagonal(0), 0, row_g, lane);
  pack();

  // Each turn: tile kt's scores and tile kt − 1's P·V, the output rescaled between the two issues
  // (for tile kt − 1's max; the tensor cores are busy with the scores meanwhile), then the softmax
  // of tile kt while P·V runs.
  for (int kt = 1; kt < tiles; ++kt) {
    mbar_wait(&k_full[kt % kStages], (kt / kStages) & 1);
    mbar_wait(&v_full[(kt - 1) % kStages], ((kt - 1) / kStages) & 1);
    named_sync(kTurnBarrier + c, kThreads);
    wgmma_fence();
    issue_scores(kt);
    fence_accumulators(o_flat);
    attn::rescale_rows(o, corr);
    fence_accumulators(o_flat);
    wgmma_fence();  // the rescaled output is what P·V accumulates into
    issue_pv(kt - 1);
    named_arrive(kTurnBarrier + (1 - c), kThreads);
    wgmma_wait<1>();  // the scores are in; P·V may still run
    fence_accumulators(s_flat);
    attn::softmax_scores(s_acc, m, l, corr, scale_log2e, diagonal(kt), kt * kBc, row_g, lane);
    wgmma_wait<0>();
    fence_accumulators(o_flat);
    pack();
    release(kt - 1);
  }

  mbar_wait(&v_full[(tiles - 1) % kStages], ((tiles - 1) / kStages) & 1);
  attn::rescale_rows(o, corr);
  fence_accumulators(o_flat);
  wgmma_fence();
  issue_pv(tiles - 1);
  wgmma_wait<0>();
  fence_accumulators(o_flat);
  release(tiles - 1);
  // Warpgroup 1 arrived once more than warpgroup 0 synced (its first arrival opened turn one).
  if (c == 0) named_sync(kTurnBarrier + 0, kThreads);

  attn::store_rows<T>(o, l, O + (size_t)(head_row + row_g) * kD, kD, lane);
#else
  (void)tma_q, (void)tma_k, (void)tma_v, (void)O, (void)n, (void)scale_log2e, (void)causal;
  __trap();  // built without sm_90a: the runner refuses this version before launching it
#endif
}

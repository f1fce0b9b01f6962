// Attention version 5 — Hopper: TMA, wgmma, a producer warp and consumer warpgroups (in the manner
// of FlashAttention-3, without its intra-warpgroup overlap).
// Changed since version 4: (1) both GEMMs are warpgroup MMAs: S = Q·Kᵀ reads Q and K from shared
// memory (K-major, 128-byte swizzle), O += P·V takes P from registers — the S accumulators packed
// to 16 bits are already in wgmma's A layout — and V from shared memory as an N-major operand (the
// instruction transposes it, so V is used as stored); (2) K and V arrive by TMA, issued by one
// thread of a producer warp, into a two-stage ring with "full" barriers (K and V separate, so S can
// start before V lands) and an "empty" barrier the consumers release; (3) 128 queries per block
// (two consumer warpgroups of 64): each K/V tile read from L2 feeds twice the rows of version 4,
// and while one consumer runs its softmax the other's MMAs keep the tensor cores busy. Key tiles of
// 128 at d = 64 and of 64 at d = 128, so a consumer thread's scores, output and P fit the registers
// a 288-thread block may have (see "Registers" below). One block per SM: 96 KB of shared memory at
// d = 128 (Q 32 KB, two stages of K and V 64 KB).
//
// Run: tilescope-gpu-bench --suite attention (this is version 5).
#pragma once

#include "kernels/cuda/attention/attention_common.cuh"
#include "kernels/cuda/hopper_ptx.cuh"

#include <cmath>

namespace attn05 {
constexpr int kBr = 128, kStages = 2, kConsumers = 2;
constexpr int kThreads = 128 * kConsumers + 32;  // two consumer warpgroups, then the producer warp
// Registers. An SM's 65 536 registers are four files of 16 384, one per warp scheduler, and a
// block's warps are dealt to them in turn: of 9 warps, one file holds 3, so no thread may have more
// than 16 384 / 3 / 32 → 168 (ptxas caps __launch_bounds__(288, 1) there). A launch over it fails
// with "too many resources requested": 128-key tiles at d = 128 took 186 registers (64 scores, 64
// outputs, 32 of P) and never ran. A producer warpgroup that gives registers to the consumers
// (setmaxnreg 24 / 240, as FlashAttention-3 does) did not help: ptxas (CUDA 13.0) still compiled
// the consumers at 168 and serialized their wgmmas (C7512). Halving the key tile at d = 128 frees
// 48 registers.
template <int kD>
struct Shape {
  static constexpr int kBc = kD == 128 ? 64 : 128;  // keys per tile (see "Registers" above)
  static constexpr int kSub = kD / 64;              // 64-column sub-tiles (128-byte rows)
  static constexpr int kQElems = kBr * kD, kKVElems = kBc * kD;
  static constexpr int kSubBytes = kBc * 64 * 2;  // one sub-tile of a K/V stage
  // Q, K and V stages, then the barriers; 1 KB of slack for the 1024-byte alignment.
  static constexpr int kSmemBytes =
      (kQElems + 2 * kStages * kKVElems) * 2 + (1 + 3 * kStages) * 8 + 1024;
};

// The producer's whole job, on one thread: Q once, then each tile's K and V into the ring, each
// stage refilled once both consumers have released it.
template <class T, int kD>
__device__ __forceinline__ void produce(T* sQ, T* sK, T* sV, std::uint64_t* q_full,
                                        std::uint64_t* k_full, std::uint64_t* v_full,
                                        std::uint64_t* empty, const CUtensorMap* tma_q,
                                        const CUtensorMap* tma_k, const CUtensorMap* tma_v,
                                        int head_row, int q0, int tiles) {
  using namespace hopper;
  using S = Shape<kD>;
  constexpr int kBc = S::kBc;
  mbar_arrive_expect_tx(q_full, S::kQElems * 2);
  for (int sub = 0; sub < S::kSub; ++sub)
    tma_load_2d(sQ + sub * kBr * 64, tma_q, q_full, sub * 64, head_row + q0);
  for (int kt = 0; kt < tiles; ++kt) {
    const int s = kt % kStages;
    if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
    T* k_s = sK + s * S::kKVElems;
    T* v_s = sV + s * S::kKVElems;
    mbar_arrive_expect_tx(&k_full[s], S::kKVElems * 2);
    for (int sub = 0; sub < S::kSub; ++sub)
      tma_load_2d(k_s + sub * kBc * 64, tma_k, &k_full[s], sub * 64, head_row + kt * kBc);
    mbar_arrive_expect_tx(&v_full[s], S::kKVElems * 2);
    for (int sub = 0; sub < S::kSub; ++sub)
      tma_load_2d(v_s + sub * kBc * 64, tma_v, &v_full[s], sub * 64, head_row + kt * kBc);
  }
}

}  // namespace attn05

template <class T, int kD>
__global__ void __launch_bounds__(attn05::kThreads, 1)
    attention_05_hopper_wgmma(const __grid_constant__ CUtensorMap tma_q,
                              const __grid_constant__ CUtensorMap tma_k,
                              const __grid_constant__ CUtensorMap tma_v, T* O, int n,
                              float scale_log2e, bool causal) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace attn05;
  using namespace hopper;
  using S = Shape<kD>;
  constexpr int kBc = S::kBc;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);
  T* sQ = reinterpret_cast<T*>(smem);  // [kSub][128 rows][64]
  T* sK = sQ + S::kQElems;             // [kStages][kSub][128 keys][64]
  T* sV = sK + kStages * S::kKVElems;  // [kStages][kSub][128 keys][64]
  std::uint64_t* q_full = reinterpret_cast<std::uint64_t*>(sV + kStages * S::kKVElems);
  std::uint64_t* k_full = q_full + 1;
  std::uint64_t* v_full = k_full + kStages;
  std::uint64_t* empty = v_full + kStages;

  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int q_tile = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int q0 = q_tile * kBr;
  const int head_row = (int)blockIdx.y * n;  // this head's first row in the [B·H·N][d] views
  // Causal: the key tiles up to this block's last query; the tiles it shares with the diagonal are
  // masked element by element.
  const int tiles = causal ? (q0 + kBr) / kBc : n / kBc;

  if (threadIdx.x == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&k_full[s], 1);
      mbar_init(&v_full[s], 1);
      mbar_init(&empty[s], kConsumers);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (wg == kConsumers) {  // the producer warp: one thread issues every copy
    if (t == 0) {
      produce<T, kD>(sQ, sK, sV, q_full, k_full, v_full, empty, &tma_q, &tma_k, &tma_v, head_row,
                     q0, tiles);
    }
    return;
  }

  // Consumers: warpgroup c owns query rows 64c .. 64c + 63 of the block; thread t holds rows
  // 16·(t/32) + (t%32)/4 + 8h and, of every 8 columns, 2·(t%4) and +1 (wgmma's accumulator layout,
  // the same per warp as mma.sync's, so version 3's softmax carries over index for index).
  const int c = wg, lane = t % 32;
  const int row_g = q0 + c * 64 + (t / 32) * 16 + lane / 4;
  float s_acc[kBc / 8][4];  // wgmma's accumulators, as attention_common.cuh's 16-row fragments
  float o[kD / 8][4] = {};
  auto& s_flat = reinterpret_cast<float(&)[kBc / 2]>(s_acc);  // wgmma's flat operand list
  auto& o_flat = reinterpret_cast<float(&)[kD / 2]>(o);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  mbar_wait(q_full, 0);

  for (int kt = 0; kt < tiles; ++kt) {
    const int s = kt % kStages;
    const unsigned phase = (kt / kStages) & 1;
    const T* k_s = sK + s * S::kKVElems;
    const T* v_s = sV + s * S::kKVElems;
    mbar_wait(&k_full[s], phase);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      const std::uint64_t da = desc_sw128(sQ + (kk / 4) * kBr * 64 + c * 64 * 64) + 2 * (kk % 4);
      const std::uint64_t db = desc_sw128(k_s + (kk / 4) * kBc * 64) + 2 * (kk % 4);
      wgmma_m64k16<kBc, T>(s_flat, da, db, kk > 0 ? 1 : 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_accumulators(s_flat);

    attn::online_softmax_tile(s_acc, o, m, l, scale_log2e, causal && (kt + 1) * kBc > q0, kt * kBc,
                              row_g, lane);
    unsigned p[kBc / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk) {
      attn::pack_p<T>(s_acc, kk, p[kk]);
#pragma unroll
      for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(p[kk][r])::"memory");
    }
    fence_accumulators(o_flat);
    mbar_wait(&v_full[s], phase);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBc / 16; ++kk)
      wgmma_m64k16_rs_tnsp<kD, T>(o_flat, p[kk], desc_mn_sw128(v_s + kk * 16 * 64, S::kSubBytes));
    wgmma_commit();
    wgmma_wait<0>();
    fence_accumulators(o_flat);
    if (t == 0) mbar_arrive(&empty[s]);  // this warpgroup no longer reads the stage
  }

  attn::store_rows<T>(o, l, O + (size_t)(head_row + row_g) * kD, kD, lane);
#else
  (void)tma_q, (void)tma_k, (void)tma_v, (void)O, (void)n, (void)scale_log2e, (void)causal;
  __trap();  // built without sm_90a: the runner refuses this version before launching it
#endif
}

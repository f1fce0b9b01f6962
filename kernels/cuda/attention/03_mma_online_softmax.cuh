// Attention version 3 — tensor cores (mma.sync m16n8k16) with the online softmax in registers,
// in the manner of FlashAttention-2. Changed since version 2: both GEMMs on tensor cores, fp32
// accumulate. A block is 4 warps and 64 queries; each warp owns 16 query rows and keeps them in
// registers for the whole kernel (its Q fragments, its 16×64 score tile, its 16×d output). The
// score tile an mma leaves in registers is, element for element, the A operand of the next mma:
// P never touches shared memory. Each row's maximum and sum are reduced across the 4 lanes that
// hold it (two shuffles), not across the block. K and V tiles (64 keys) arrive by cp.async into
// XOR-swizzled shared rows, read back by ldmatrix (V transposed on the way with .trans); the block
// waits for each tile before it multiplies. The body is shared with version 4
// (04_mma_pipelined.cuh), which only adds a second K/V stage. Fragment layouts are those of
// attention_common.cuh's mma_16816; g = lane/4, t = lane%4.
//
// Run: tilescope-gpu-bench --suite attention (this is version 3).
#pragma once

#include "kernels/cuda/attention/attention_common.cuh"

#include <cmath>

namespace attn {

constexpr int kMmaRows = 64, kMmaKeys = 64, kMmaThreads = 128;

template <int kD, int kStages>
constexpr int mma_smem_bytes() {
  return (kMmaRows * kD + 2 * kStages * kMmaKeys * kD) * 2;
}

// Offset, in elements, of 16-byte chunk `chunk` of row `row` in a tile of kD-element rows: the
// chunk index is XORed with row % 8, so the 8 rows one ldmatrix phase reads fall in 8 different
// bank groups (without it they all fall in one: the rows are 128 or 256 bytes apart).
template <int kD>
__device__ __forceinline__ int swz(int row, int chunk) {
  return row * kD + ((chunk ^ (row & 7)) << 3);
}

// `rows` × kD elements from global (row stride kD) into a swizzled shared tile, by cp.async.
template <int kD, class T>
__device__ __forceinline__ void load_tile_async(T* dst, const T* src, int rows, int tid) {
  constexpr int kChunks = kD / 8;
  for (int idx = tid; idx < rows * kChunks; idx += kMmaThreads) {
    const int row = idx / kChunks, ch = idx % kChunks;
    cp_async_16(dst + swz<kD>(row, ch), src + (size_t)row * kD + ch * 8);
  }
}

// The whole kernel, for kStages K/V stages (1: version 3, 2: version 4).
template <class T, int kD, int kStages>
__device__ __forceinline__ void mma_online_softmax_body(const T* Q, const T* K, const T* V, T* O,
                                                        int n, float scale_log2e, bool causal) {
  static_assert(kD % 64 == 0, "head dim 64 or 128");
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);  // [64][kD]
  T* sK = sQ + kMmaRows * kD;              // [kStages][64][kD]
  T* sV = sK + kStages * kMmaKeys * kD;    // [kStages][64][kD]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int q_tile = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int q0 = q_tile * kMmaRows;
  const size_t head = (size_t)blockIdx.y * n * kD;
  const T *q_g = Q + head + (size_t)q0 * kD, *k_g = K + head, *v_g = V + head;
  const int tiles = causal ? q_tile + 1 : n / kMmaKeys;

  auto load_kv = [&](int t, int stage) {
    load_tile_async<kD>(sK + stage * kMmaKeys * kD, k_g + (size_t)t * kMmaKeys * kD, kMmaKeys, tid);
    load_tile_async<kD>(sV + stage * kMmaKeys * kD, v_g + (size_t)t * kMmaKeys * kD, kMmaKeys, tid);
  };
  load_tile_async<kD>(sQ, q_g, kMmaRows, tid);
  if constexpr (kStages > 1) load_kv(0, 0);
  cp_async_commit();

  unsigned qf[kD / 16][4];
  float o[kD / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g and g + 8
  const int row_g = q0 + warp * 16 + lane / 4;             // this lane's first query row

  for (int t = 0; t < tiles; ++t) {
    const int stage = kStages > 1 ? t % kStages : 0;
    if constexpr (kStages > 1) {
      if (t + 1 < tiles) {
        load_kv(t + 1, (t + 1) % kStages);
        cp_async_commit();
        cp_async_wait<1>();  // tile t (and Q) have landed; tile t + 1 may still be in flight
      } else {
        cp_async_wait<0>();
      }
    } else {
      load_kv(t, 0);
      cp_async_commit();
      cp_async_wait<0>();
    }
    __syncthreads();
    if (t == 0) {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk)
        ldmatrix_x4(qf[kk], sQ + swz<kD>(warp * 16 + lane % 16, kk * 2 + lane / 16));
    }
    const T* k_s = sK + stage * kMmaKeys * kD;
    const T* v_s = sV + stage * kMmaKeys * kD;

    // S (16 rows × 64 keys per warp) = Q · Kᵀ.
    float s[kMmaKeys / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
#pragma unroll
      for (int nb2 = 0; nb2 < kMmaKeys / 16; ++nb2) {
        unsigned r[4];
        ldmatrix_x4(r,
                    k_s + swz<kD>(nb2 * 16 + (lane / 16) * 8 + lane % 8, kk * 2 + (lane / 8) % 2));
        mma_16816<T>(s[2 * nb2], qf[kk], r[0], r[1]);
        mma_16816<T>(s[2 * nb2 + 1], qf[kk], r[2], r[3]);
      }
    }
    online_softmax_tile(s, o, m, l, scale_log2e, causal && t == q_tile, t * kMmaKeys, row_g, lane);
    // O += P · V: two adjacent 16×8 score fragments are one 16×16 A fragment.
#pragma unroll
    for (int kk = 0; kk < kMmaKeys / 16; ++kk) {
      unsigned a[4];
      pack_p<T>(s, kk, a);
#pragma unroll
      for (int dn2 = 0; dn2 < kD / 16; ++dn2) {
        unsigned r[4];
        ldmatrix_x4_trans(
            r, v_s + swz<kD>(kk * 16 + lane % 8 + ((lane / 8) % 2) * 8, dn2 * 2 + lane / 16));
        mma_16816<T>(o[2 * dn2], a, r[0], r[1]);
        mma_16816<T>(o[2 * dn2 + 1], a, r[2], r[3]);
      }
    }
    __syncthreads();  // this stage is refilled next
  }

  store_rows<T>(o, l, O + head + (size_t)row_g * kD, kD, lane);
}

template <class T, int kD>
__global__ void __launch_bounds__(kMmaThreads)
    attention_03_mma_online_softmax(const T* Q, const T* K, const T* V, T* O, int n,
                                    float scale_log2e, bool causal) {
  mma_online_softmax_body<T, kD, 1>(Q, K, V, O, n, scale_log2e, causal);
}

}  // namespace attn

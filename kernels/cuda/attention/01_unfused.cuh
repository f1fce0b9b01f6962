// Attention version 1 — unfused: S = Q·Kᵀ (cuBLAS), P = softmax(S · scale) (this kernel), O = P·V
// (cuBLAS). The N×N scores of every head go to HBM and come back twice: S is written by the first
// GEMM and read here, P is written here (in place) and read by the second GEMM — 4 · B·H·N² · 2
// bytes against the 4 · B·H·N·d · 2 of Q, K, V and O. At N = 4096, d = 128 that is 64× more.
// The same kernel, on fp32 scores, is the reference's softmax (attention_reference_launch).
// One block per row of S, 16-byte loads. Pass 1 keeps a running maximum and sum per thread (the
// online softmax: when a larger value arrives the sum so far is rescaled by exp(m_old − m_new)),
// the block merges them; pass 2 reads the row again (from L2: a row is 8 KB at N = 4096) and
// writes exp(s − m) / sum. Causal: keys after the query are skipped in pass 1 and written as 0.
//
// Run: tilescope-gpu-bench --suite attention (this is version 1).
#pragma once

#include "kernels/cuda/attention/attention_common.cuh"

#include <cmath>

namespace attn {

template <class S>
__device__ __forceinline__ float load_score(const S* p) {
  if constexpr (sizeof(S) == 4)
    return *reinterpret_cast<const float*>(p);
  else
    return Elem<S>::to_float(*p);
}
template <class S>
__device__ __forceinline__ void store_score(S* p, float x) {
  if constexpr (sizeof(S) == 4)
    *reinterpret_cast<float*>(p) = x;
  else
    *p = Elem<S>::from_float(x);
}

// (m, l) pairs of running maximum and sum of exp2(x − m): merged, an empty side (l == 0) adds
// nothing (its m is −∞, and −∞ − −∞ would be NaN).
__device__ __forceinline__ void merge_max_sum(float& m, float& l, float m2, float l2) {
  const float mn = fmaxf(m, m2);
  l = (l > 0.f ? l * exp2f(m - mn) : 0.f) + (l2 > 0.f ? l2 * exp2f(m2 - mn) : 0.f);
  m = mn;
}

constexpr int kSoftmaxThreads = 256;

// data: rows × n scores (rows = B·H·N), softmax of each row in place; row r is query r % n.
template <class S>
__global__ void __launch_bounds__(kSoftmaxThreads)
    attention_softmax_rows(S* data, int n, float scale_log2e, bool causal) {
  constexpr int kVec = 16 / sizeof(S);  // elements per 16-byte load
  __shared__ float sm_m[kSoftmaxThreads / 32], sm_l[kSoftmaxThreads / 32];
  const size_t row = blockIdx.x;
  const int query = static_cast<int>(row % static_cast<size_t>(n));
  const int limit = causal ? query + 1 : n;  // keys [0, limit) take part
  S* p = data + row * static_cast<size_t>(n);

  float m = -INFINITY, l = 0.f;
  for (int j0 = threadIdx.x * kVec; j0 < limit; j0 += kSoftmaxThreads * kVec) {
    const uint4 raw = *reinterpret_cast<const uint4*>(p + j0);
    const S* v = reinterpret_cast<const S*>(&raw);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      if (j0 + e >= limit) break;
      const float x = load_score(v + e) * scale_log2e;
      if (x > m) {
        l = (l > 0.f ? l * exp2f(m - x) : 0.f) + 1.f;
        m = x;
      } else {
        l += exp2f(x - m);
      }
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float l2 = __shfl_xor_sync(0xffffffffu, l, off);
    merge_max_sum(m, l, m2, l2);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    sm_m[warp] = m;
    sm_l[warp] = l;
  }
  __syncthreads();
  m = sm_m[0];
  l = sm_l[0];
  for (int w = 1; w < kSoftmaxThreads / 32; ++w) merge_max_sum(m, l, sm_m[w], sm_l[w]);
  const float inv_l = 1.f / l;

  for (int j0 = threadIdx.x * kVec; j0 < n; j0 += kSoftmaxThreads * kVec) {
    uint4 raw = *reinterpret_cast<const uint4*>(p + j0);
    S* v = reinterpret_cast<S*>(&raw);
#pragma unroll
    for (int e = 0; e < kVec; ++e) {
      const float x = load_score(v + e) * scale_log2e;
      store_score(v + e, j0 + e < limit ? exp2f(x - m) * inv_l : 0.f);
    }
    *reinterpret_cast<uint4*>(p + j0) = raw;
  }
}

}  // namespace attn

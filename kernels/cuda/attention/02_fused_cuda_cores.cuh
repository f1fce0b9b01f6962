// Attention version 2 — fused, on CUDA cores (fp32 FFMA). Changed since version 1: one kernel. A
// block holds 64 queries and streams the keys through shared memory 64 at a time; the 64×64 score
// tile lives in registers and shared memory only, never in HBM. The softmax is online: each row
// keeps its running maximum m and sum l, and when a new tile raises m the sum and the output
// accumulated so far are rescaled by exp(m_old − m_new) — the rewrite that lets fusion cross the
// softmax's row reduction. HBM traffic falls to Q, K, V, O (plus K and V re-read by every block,
// which L2 absorbs); the FLOPs stay, and fp32 FFMA caps this version at ~67 TFLOP/s.
// 256 threads as 16 × 16: thread (ty, tx) computes scores of rows 4ty..4ty+3 and keys 4tx..4tx+3,
// and outputs of the same rows at columns {64g + 4tx .. +3}. Shared memory in fp32: Q and K tiles
// transposed (so each k step is two conflict-free float4 loads), V as is, P transposed.
//
// Run: tilescope-gpu-bench --suite attention (this is version 2).
#pragma once

#include "kernels/cuda/attention/attention_common.cuh"

#include <cmath>

namespace attn {

constexpr int kV2Rows = 64, kV2Keys = 64, kV2Threads = 256;

template <int kD>
constexpr int v2_smem_bytes() {
  return (kD * kV2Rows + kD * kV2Keys + kV2Keys * kD + kV2Keys * kV2Rows) * 4;
}

template <class T, int kD>
__global__ void __launch_bounds__(kV2Threads)
    attention_02_fused_cuda_cores(const T* Q, const T* K, const T* V, T* O, int n,
                                  float scale_log2e, bool causal) {
  constexpr int kG = kD / 64;  // output column groups of 4 per thread
  extern __shared__ __align__(16) float smem[];
  float* Qt = smem;               // [kD][64]: Q tile transposed, pre-scaled
  float* Kt = Qt + kD * kV2Rows;  // [kD][64]: K tile transposed
  float* Vs = Kt + kD * kV2Keys;  // [64][kD]
  float* Pt = Vs + kV2Keys * kD;  // [64 keys][64 rows]

  const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
  // Causal blocks near the end of a head do the most work: start them first.
  const int q_tile = causal ? (int)gridDim.x - 1 - (int)blockIdx.x : (int)blockIdx.x;
  const int q0 = q_tile * kV2Rows;
  const size_t head = (size_t)blockIdx.y * n * kD;
  const T *q_g = Q + head, *k_g = K + head, *v_g = V + head;

  // Q tile → Qt (transposed): a warp takes 32 rows at one 8-column chunk, so the scattered
  // column writes land in 32 different banks.
  for (int idx = tid; idx < kV2Rows * kD / 8; idx += kV2Threads) {
    const int r = idx % kV2Rows, c8 = idx / kV2Rows;
    float x[8];
    widen8<T>(*reinterpret_cast<const uint4*>(q_g + (size_t)(q0 + r) * kD + c8 * 8), x);
#pragma unroll
    for (int e = 0; e < 8; ++e) Qt[(c8 * 8 + e) * kV2Rows + r] = x[e] * scale_log2e;
  }

  float o[4][4 * kG] = {};
  float m[4], l[4];  // per row: running max (log2 units) and this thread's share of the sum
#pragma unroll
  for (int i = 0; i < 4; ++i) m[i] = -INFINITY, l[i] = 0.f;

  const int tiles = causal ? q_tile + 1 : n / kV2Keys;
  for (int t = 0; t < tiles; ++t) {
    const int k0 = t * kV2Keys;
    __syncthreads();  // the previous tile's Kt, Vs, Pt are no longer read
    for (int idx = tid; idx < kV2Keys * kD / 8; idx += kV2Threads) {
      const int r = idx % kV2Keys, c8 = idx / kV2Keys;
      float x[8];
      widen8<T>(*reinterpret_cast<const uint4*>(k_g + (size_t)(k0 + r) * kD + c8 * 8), x);
#pragma unroll
      for (int e = 0; e < 8; ++e) Kt[(c8 * 8 + e) * kV2Keys + r] = x[e];
    }
    for (int idx = tid; idx < kV2Keys * kD / 8; idx += kV2Threads) {
      const int r = idx / (kD / 8), c8 = idx % (kD / 8);
      float x[8];
      widen8<T>(*reinterpret_cast<const uint4*>(v_g + (size_t)(k0 + r) * kD + c8 * 8), x);
      float4* dst = reinterpret_cast<float4*>(Vs + r * kD + c8 * 8);
      dst[0] = make_float4(x[0], x[1], x[2], x[3]);
      dst[1] = make_float4(x[4], x[5], x[6], x[7]);
    }
    __syncthreads();

    float s[4][4] = {};
#pragma unroll 8
    for (int c = 0; c < kD; ++c) {
      const float4 a = *reinterpret_cast<const float4*>(Qt + c * kV2Rows + ty * 4);
      const float4 b = *reinterpret_cast<const float4*>(Kt + c * kV2Keys + tx * 4);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) s[i][j] = fmaf(av[i], bv[j], s[i][j]);
    }
    if (causal && t == q_tile) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (tx * 4 + j > ty * 4 + i) s[i][j] = -INFINITY;
    }
    // Online softmax: the row's 16 threads are lanes of one half-warp.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float mx = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
#pragma unroll
      for (int off = 8; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
      const float m_new = fmaxf(m[i], mx);  // finite: every row sees key 0 in tile 0
      const float corr = fast_exp2(m[i] - m_new);
      m[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        s[i][j] = fast_exp2(s[i][j] - m_new);
        sum += s[i][j];
      }
      l[i] = l[i] * corr + sum;
#pragma unroll
      for (int c = 0; c < 4 * kG; ++c) o[i][c] *= corr;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
      *reinterpret_cast<float4*>(Pt + (tx * 4 + j) * kV2Rows + ty * 4) =
          make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
    __syncthreads();

#pragma unroll 4
    for (int j = 0; j < kV2Keys; ++j) {
      const float4 p = *reinterpret_cast<const float4*>(Pt + j * kV2Rows + ty * 4);
      const float pv[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
      for (int g = 0; g < kG; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(Vs + j * kD + g * 64 + tx * 4);
        const float vv[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) o[i][g * 4 + e] = fmaf(pv[i], vv[e], o[i][g * 4 + e]);
      }
    }
  }

  T* o_g = O + head;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float sum = l[i];
#pragma unroll
    for (int off = 8; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const float inv = 1.f / sum;
    T* row = o_g + (size_t)(q0 + ty * 4 + i) * kD;
#pragma unroll
    for (int g = 0; g < kG; ++g) {
      unsigned packed[2] = {Elem<T>::pack(o[i][g * 4] * inv, o[i][g * 4 + 1] * inv),
                            Elem<T>::pack(o[i][g * 4 + 2] * inv, o[i][g * 4 + 3] * inv)};
      *reinterpret_cast<uint2*>(row + g * 64 + tx * 4) = make_uint2(packed[0], packed[1]);
    }
  }
}

}  // namespace attn

// What the attention kernels share: the 16-bit element types (fp16, bf16) behind one trait, the
// mma.sync / ldmatrix / cp.async wrappers (ampere_ptx.cuh), and the softmax constants.
#pragma once

#include "kernels/cuda/ampere_ptx.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdint>

namespace attn {

// exp(x) = exp2(x · log2 e): the kernels fold log2 e into the score scale and call fast_exp2, one
// MUFU.EX2 per element, as FlashAttention does.
constexpr float kLog2e = 1.4426950408889634f;

// exp2 as one MUFU.EX2 instruction: ex2.approx.ftz (results under 2⁻¹²⁶ flush to zero, far below
// what a 16-bit probability holds; −∞ gives 0). exp2f without --use_fast_math is ex2.approx
// without .ftz, which ptxas wraps in a denormal fix-up — a compare and two predicated multiplies
// around the MUFU — four instructions where the softmax wants one.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

template <class T>
struct Elem;
template <>
struct Elem<__half> {
  static __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_float(float x) { return __float2half_rn(x); }
  // Two floats as one 32-bit register of two 16-bit values, the low half first (mma operand order).
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  }
};
template <>
struct Elem<__nv_bfloat16> {
  static __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_float(float x) {
    return __float2bfloat16_rn(x);
  }
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  }
};

// Eight 16-bit values (one 16-byte load) widened to floats.
template <class T>
__device__ __forceinline__ void widen8(const uint4& raw, float (&out)[8]) {
  const T* h = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = Elem<T>::to_float(h[i]);
}

using ampere::cp_async_16;
using ampere::cp_async_commit;
using ampere::cp_async_wait;
using ampere::ldmatrix_x4;
using ampere::ldmatrix_x4_trans;
using ampere::mma_16816;

// One tile of keys in the online softmax, on a warp's accumulators in mma.sync's layout (which is
// also wgmma's, warp by warp): s[j][e] is the score of row g + 8·(e/2) against key
// key0 + 8j + 2t + e%2 (g = lane/4, t = lane%4). Masks keys after the query on the diagonal tile,
// raises each row's running max m (kept in log2 units: max · scale · log2 e) over the 4 lanes of
// its quad (two shuffles), replaces the scores by exp2(s · scale_log2e − m) — one FFMA and one
// MUFU.EX2 each, the scale folded in as FlashAttention does —, adds them to this lane's share of
// the running sum l, and returns in corr[h] = exp2(m_old − m) the factor the output accumulated so
// far must be rescaled by (rescale_rows). Version 6 calls the two halves apart: the scores' half
// while the tensor cores still add the previous tile into the output.
template <int kNB>
__device__ __forceinline__ void softmax_scores(float (&s)[kNB][4], float (&m)[2], float (&l)[2],
                                               float (&corr)[2], float scale_log2e, bool diagonal,
                                               int key0, int row_g, int lane) {
  if (diagonal) {  // one tile per query block: the loop stays out of the others
#pragma unroll
    for (int j = 0; j < kNB; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + j * 8 + 2 * (lane % 4) + (e & 1);
        if (key > row_g + (e >> 1) * 8) s[j][e] = -INFINITY;
      }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float mx = -INFINITY;
#pragma unroll
    for (int j = 0; j < kNB; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    // scale > 0, so the max of the scaled scores is the scaled max. Finite: every row sees key 0
    // in tile 0.
    const float m_new = fmaxf(m[h], mx * scale_log2e);
    corr[h] = fast_exp2(m[h] - m_new);
    m[h] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < kNB; ++j) {
      s[j][2 * h] = fast_exp2(fmaf(s[j][2 * h], scale_log2e, -m_new));
      s[j][2 * h + 1] = fast_exp2(fmaf(s[j][2 * h + 1], scale_log2e, -m_new));
      sum += s[j][2 * h] + s[j][2 * h + 1];
    }
    l[h] = l[h] * corr[h] + sum;  // this lane's share; the quad adds its shares at the end
  }
}

// The output accumulated so far, row by row, times softmax_scores' correction.
template <int kOB>
__device__ __forceinline__ void rescale_rows(float (&o)[kOB][4], const float (&corr)[2]) {
#pragma unroll
  for (int j = 0; j < kOB; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) o[j][e] *= corr[e >> 1];
}

// Both halves on one tile: what versions 3–5 do after each S GEMM.
template <int kNB, int kOB>
__device__ __forceinline__ void online_softmax_tile(float (&s)[kNB][4], float (&o)[kOB][4],
                                                    float (&m)[2], float (&l)[2], float scale_log2e,
                                                    bool diagonal, int key0, int row_g, int lane) {
  float corr[2];
  softmax_scores(s, m, l, corr, scale_log2e, diagonal, key0, row_g, lane);
  rescale_rows(o, corr);
}

// The two score fragments of keys 16kk .. 16kk + 15, packed to 16 bits: the A operand of P·V.
template <class T, int kNB>
__device__ __forceinline__ void pack_p(const float (&s)[kNB][4], int kk, unsigned (&a)[4]) {
  a[0] = Elem<T>::pack(s[2 * kk][0], s[2 * kk][1]);
  a[1] = Elem<T>::pack(s[2 * kk][2], s[2 * kk][3]);
  a[2] = Elem<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]);
  a[3] = Elem<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

// The end of the online softmax: each row's sum over its quad, the output divided by it and
// stored as 16-bit pairs. `row` points to this lane's first row (g) of O, row g + 8 is 8 rows on.
template <class T, int kOB>
__device__ __forceinline__ void store_rows(const float (&o)[kOB][4], const float (&l)[2], T* row,
                                           int row_stride, int lane) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float sum = l[h];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inv = 1.f / sum;
    T* out = row + (size_t)h * 8 * row_stride + 2 * (lane % 4);
#pragma unroll
    for (int j = 0; j < kOB; ++j)
      *reinterpret_cast<unsigned*>(out + j * 8) =
          Elem<T>::pack(o[j][2 * h] * inv, o[j][2 * h + 1] * inv);
  }
}

}  // namespace attn

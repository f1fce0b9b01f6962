// Conv2D version 2 — implicit GEMM: SGEMM version 8 with its A-tile loader replaced by a gather.
// Row m of the virtual patch matrix is output pixel (n, p, q); column kk is filter tap (r, s, c).
// Each thread decodes its row once and, per 8-wide k-tile, decodes (r, s, c) and loads the 4
// channels it needs straight from the NHWC input (zeros in the padding). The 9× patch matrix is
// never written: the traffic of version 1's im2col pass disappears.
// Changed since version 1: no im2col kernel, no patch matrix; a few integer divisions per tile.
// Version 3 (fused conv + bias + ReLU) is this loader with sgemm08's EpilogueBiasRelu.
// Run: tilescope-gpu-bench --suite conv2d (this is version 2; version 0 is cuDNN (or im2col + cuBLAS where cuDNN cannot run)).
#pragma once

#include "kernels/cuda/sgemm/08_double_buffered.cuh"

struct LoadAIm2col {
  struct Params {
    const float* x;
    int h, w, c, s, pad, stride, p, q;
  };
  // Only what the per-tile gather needs stays live: under the 128-register cap of two blocks per
  // SM, every extra register here would spill an accumulator.
  const float* image;  // this row's image
  int h0, w0;          // top-left input pixel of this row's receptive field (may be in the padding)
  int kq, c, s, h, w;
  __device__ LoadAIm2col(const Params& p, int row, int kq_)
      : kq(kq_), c(p.c), s(p.s), h(p.h), w(p.w) {
    const int pq = p.p * p.q;
    const int n = row / pq, rem = row % pq;
    image = p.x + (size_t)n * p.h * p.w * p.c;
    h0 = (rem / p.q) * p.stride - p.pad;
    w0 = (rem % p.q) * p.stride - p.pad;
  }
  __device__ float4 operator()(int k0) const {
    const int kk = k0 + kq;
    const int rs = kk / c, ch = kk - rs * c;
    const int hh = h0 + rs / s, ww = w0 + rs % s;
    // One unsigned compare per bound: a negative index wraps to a huge one and fails it too.
    if ((unsigned)hh >= (unsigned)h || (unsigned)ww >= (unsigned)w) {
      return make_float4(0.f, 0.f, 0.f, 0.f);
    }
    return *reinterpret_cast<const float4*>(image + ((size_t)hh * w + ww) * c + ch);
  }
};

// Conv2D version 1 — im2col + GEMM, step one: unroll every receptive field of the NHWC input into a
// row of the (N·P·Q)×(R·S·C) patch matrix, zeros in the padding; the convolution is then one SGEMM
// (version 8) of that matrix with the RSCK filter. The patch matrix is R·S times the input (9× for
// a 3×3 filter), written once and read back once: the price of reusing the GEMM as it is.
// One float4 of 4 channels per thread (C % 4 == 0): reads and writes are 16-byte and coalesced.
// Run: tilescope-gpu-bench --suite conv2d (this is version 1; version 0 is cuDNN (or im2col + cuBLAS where cuDNN cannot run)).
#pragma once

struct Im2colShape {
  int n, h, w, c, r, s, pad, stride, p, q;
};

__global__ void im2col_nhwc_kernel(Im2colShape sh, const float* __restrict__ x,
                                   float* __restrict__ col) {
  const size_t kk4 = (size_t)sh.r * sh.s * sh.c / 4;  // float4s per patch row
  const size_t total = (size_t)sh.n * sh.p * sh.q * kk4;
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  const size_t m = i / kk4;
  const int kk = (int)(i % kk4) * 4;
  const int c = kk % sh.c, rs = kk / sh.c, r = rs / sh.s, s = rs % sh.s;
  const int pq = sh.p * sh.q;
  const int n = (int)(m / pq), rem = (int)(m % pq), op = rem / sh.q, oq = rem % sh.q;
  const int hh = op * sh.stride - sh.pad + r, ww = oq * sh.stride - sh.pad + s;
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (hh >= 0 && hh < sh.h && ww >= 0 && ww < sh.w)
    v = *reinterpret_cast<const float4*>(&x[(((size_t)n * sh.h + hh) * sh.w + ww) * sh.c + c]);
  reinterpret_cast<float4*>(col)[i] = v;
}

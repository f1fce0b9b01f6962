// The bias + ReLU epilogue as standalone passes: the unfused chain (bias add, then ReLU: two
// kernels, the intermediate makes a round trip through device memory) and the fused pass (one read,
// one write). All three are memory-bound: one float4 per thread, 16-byte loads and stores.
// Napkin math on a 4096² fp32 output (64 MiB): fused moves 128 MiB, the chain 256 MiB, so the chain
// should take about twice as long at the same bandwidth (less if the intermediate stays in L2).
#pragma once

__global__ void bias_add_kernel(const float4* __restrict__ in, const float4* __restrict__ bias,
                                float4* __restrict__ out, size_t n4, int cols4) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n4) {
    const float4 v = in[i];
    const float4 b = bias[i % cols4];
    out[i] = make_float4(v.x + b.x, v.y + b.y, v.z + b.z, v.w + b.w);
  }
}

__global__ void relu_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n4) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n4) {
    const float4 v = in[i];
    out[i] = make_float4(fmaxf(v.x, 0.f), fmaxf(v.y, 0.f), fmaxf(v.z, 0.f), fmaxf(v.w, 0.f));
  }
}

__global__ void bias_relu_fused_kernel(const float4* __restrict__ in,
                                       const float4* __restrict__ bias, float4* __restrict__ out,
                                       size_t n4, int cols4) {
  const size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n4) {
    const float4 v = in[i];
    const float4 b = bias[i % cols4];
    out[i] = make_float4(fmaxf(v.x + b.x, 0.f), fmaxf(v.y + b.y, 0.f), fmaxf(v.z + b.z, 0.f),
                         fmaxf(v.w + b.w, 0.f));
  }
}

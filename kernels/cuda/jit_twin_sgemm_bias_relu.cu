// NVRTC twin: Y = relu(A·B + bias) in fp32 (A M×K, B K×N, row-major), written in the ABI of
// generated schedules; compiled ahead of time by nvcc (jit_twin_host.cu) and at run time by NVRTC
// from this text. The ABI: an NVRTC-compilable translation unit (no #include) defining
//   extern "C" __global__ void ts_kernel(const float* __restrict__ a0, ..., float* __restrict__
//   out)
// with the problem sizes baked in as constants (here TS_M, TS_N, TS_K, given with -D at compile
// time). Schedule: 128×128×8 block tiles staged in shared memory (A transposed), 8×8 outputs per
// thread from float4 register vectors, bias + ReLU applied in registers before the only store.
// Launch: grid (TS_N/128, TS_M/128), block 256, no dynamic shared memory.

template <int M, int N, int K>
__device__ __forceinline__ void ts_twin_body(const float* __restrict__ A,
                                             const float* __restrict__ B,
                                             const float* __restrict__ bias,
                                             float* __restrict__ out) {
  constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
  __shared__ __align__(16) float As[BK * BM];
  __shared__ __align__(16) float Bs[BK * BN];
  const int tid = threadIdx.x;
  const int thread_col = tid % (BN / TN), thread_row = tid / (BN / TN);
  const int a_row = tid / (BK / 4), a_col4 = tid % (BK / 4);
  const int b_row = tid / (BN / 4), b_col4 = tid % (BN / 4);
  A += (size_t)blockIdx.y * BM * K;
  B += (size_t)blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const float4 a = *reinterpret_cast<const float4*>(&A[(size_t)a_row * K + k0 + a_col4 * 4]);
    As[(a_col4 * 4 + 0) * BM + a_row] = a.x;
    As[(a_col4 * 4 + 1) * BM + a_row] = a.y;
    As[(a_col4 * 4 + 2) * BM + a_row] = a.z;
    As[(a_col4 * 4 + 3) * BM + a_row] = a.w;
    *reinterpret_cast<float4*>(&Bs[b_row * BN + b_col4 * 4]) =
        *reinterpret_cast<const float4*>(&B[(size_t)(k0 + b_row) * N + b_col4 * 4]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float rm[TM], rn[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&As[k * BM + thread_row * TM + i]);
        rm[i] = v.x, rm[i + 1] = v.y, rm[i + 2] = v.z, rm[i + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[k * BN + thread_col * TN + j]);
        rn[j] = v.x, rn[j + 1] = v.y, rn[j + 2] = v.z, rn[j + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += rm[i] * rn[j];
    }
    __syncthreads();
  }
  const int col0 = blockIdx.x * BN + thread_col * TN;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const size_t row = (size_t)blockIdx.y * BM + thread_row * TM + i;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const float4 b = *reinterpret_cast<const float4*>(&bias[col0 + j]);
      *reinterpret_cast<float4*>(&out[row * N + col0 + j]) =
          make_float4(fmaxf(acc[i][j] + b.x, 0.f), fmaxf(acc[i][j + 1] + b.y, 0.f),
                      fmaxf(acc[i][j + 2] + b.z, 0.f), fmaxf(acc[i][j + 3] + b.w, 0.f));
    }
  }
}

#ifndef TS_TWIN_NO_ENTRY
extern "C" __global__ void __launch_bounds__(256)
    ts_kernel(const float* __restrict__ a0, const float* __restrict__ a1,
              const float* __restrict__ a2, float* __restrict__ out) {
  ts_twin_body<TS_M, TS_N, TS_K>(a0, a1, a2, out);
}
#endif

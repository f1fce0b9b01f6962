// SGEMM version 3 — shared-memory tiling: a block stages a 32×32 tile of A and of B in shared
// memory and every thread reuses it 32 times. Changed since version 2: global traffic drops by the
// tile width (each element loaded once per block instead of once per thread); the inner loop now
// reads shared memory, two loads per FMA, so shared-memory bandwidth becomes the limit.
// Run: tilescope-gpu-bench --suite sgemm (this is version 3; version 0 is cuBLAS SGEMM).
#pragma once

template <int kTile>
__global__ void sgemm_03_smem_tiled(int M, int N, int K, const float* A, const float* B, float* C) {
  __shared__ float As[kTile * kTile];
  __shared__ float Bs[kTile * kTile];
  const int tx = threadIdx.x % kTile;
  const int ty = threadIdx.x / kTile;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  (void)M;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    As[ty * kTile + tx] = A[(size_t)row * K + k0 + tx];
    Bs[ty * kTile + tx] = B[(size_t)(k0 + ty) * N + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[ty * kTile + k] * Bs[k * kTile + tx];
    __syncthreads();
  }
  C[(size_t)row * N + col] = acc;
}

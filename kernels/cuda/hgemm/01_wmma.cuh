// Tensor-core GEMM version 1 — WMMA: C (fp32) = A (fp16, M×K) · Wᵀ (W fp16, N×K), fp32 accumulate.
// Changed since version 0 (cuBLAS fp16): the simplest tensor-core kernel. A block stages a 128×32
// slice of A and of W in shared memory with 16-byte loads; 8 warps (2×4) each own a 64×32 tile of C
// as 4×2 WMMA 16×16×16 fragments. Loads are synchronous (load, barrier, compute, barrier), so the
// tensor cores idle while a tile arrives; rows are padded by 8 halves to spread fragment loads over
// the banks.
// Run: tilescope-gpu-bench --suite hgemm (this is version 1; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

namespace hgemm01 {
constexpr int kBM = 128, kBN = 128, kBK = 32, kThreads = 256, kPad = 8;
constexpr int kWarpsN = 4, kWM = 64, kWN = 32;
}  // namespace hgemm01

__global__ void __launch_bounds__(hgemm01::kThreads)
    hgemm_01_wmma(int M, int N, int K, const __half* A, const __half* W, float* C) {
  using namespace hgemm01;
  using namespace nvcuda;
  __shared__ __align__(32) __half As[kBM][kBK + kPad];
  __shared__ __align__(32) __half Ws[kBN][kBK + kPad];
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / kWarpsN, wn = warp % kWarpsN;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4][2];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < K; k0 += kBK) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // 128 rows × 4 chunks of 8 halves = 512 chunks per operand
      const int idx = tid + i * kThreads, row = idx / 4, ch = idx % 4;
      *reinterpret_cast<uint4*>(&As[row][ch * 8]) =
          *reinterpret_cast<const uint4*>(&A[(size_t)(bm + row) * K + k0 + ch * 8]);
      *reinterpret_cast<uint4*>(&Ws[row][ch * 8]) =
          *reinterpret_cast<const uint4*>(&W[(size_t)(bn + row) * K + k0 + ch * 8]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[4];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[2];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        wmma::load_matrix_sync(a[i], &As[wm * kWM + i * 16][kk], kBK + kPad);
#pragma unroll
      for (int j = 0; j < 2; ++j)
        wmma::load_matrix_sync(b[j], &Ws[wn * kWN + j * 16][kk], kBK + kPad);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&C[(size_t)(bm + wm * kWM + i * 16) * N + bn + wn * kWN + j * 16],
                              acc[i][j], N, wmma::mem_row_major);
}

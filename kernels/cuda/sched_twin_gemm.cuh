// Hand-written twin of a generated schedule: y = relu(x·Wᵀ + b), fp32, written the way a person
// would write the loop nest that sim/schedule generates from these steps (sched_twin_steps()):
//
//   fuse(matmul0, add0, relu0); tile(i, 128); tile(j, 64); tile(k, 16);
//   reorder(i.o, j.o, k.o, i.i, j.i, k.i); stage(x, shared, at=k.o); stage(W, shared, at=k.o);
//   bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 8); tile(j.i, 8);
//   reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x);
//   pad(x_shared, 1, 1); pad(W_shared, 1, 1); unroll(i.i.i); unroll(j.i.i)
//
// Same algorithm, step for step: a 128×64 block tile of y (block.y walks rows, block.x columns);
// 8×16 threads, each owning an 8×8 register tile of rows ty·8.., columns tx·8..; per 16-deep slice
// of K all 128 threads copy a 128×16 tile of x and a 64×16 tile of W (K fastest, rows padded to
// 17 floats) into shared memory, element e of the flattened tile going to thread e mod 128, with
// a barrier before the tiles are read and another before they are overwritten; the k loop runs
// over the slice with the 8×8 outer product inside; bias + ReLU are applied to each sum as it is
// stored. The sizes are template constants, as the generated source bakes them in.
//
// What a person writes differently, none of it a different algorithm: static shared arrays instead
// of one dynamic buffer; the copy loops count to a compile-time number of elements per thread
// (the generated loop does too since the block shape became a compile-time constant; before
// that it strode by blockDim at run time — the v3 diagnostic keeps that form); partial tiles rely on the zero-filled
// shared tiles and guard only the loads and stores (the generated code also guards the k, i and j
// loops, which only tail blocks ever see); no __launch_bounds__, like the generated kernel.
// The shared tiles hold x and W with K contiguous, as they are in memory, so there is no float4
// path: every operand is one LDS.32 (NOTES.md says what that costs against cuBLAS).
#pragma once

#include "kernels/cuda/sched_twin.h"

namespace tilescope::kernels::cuda {

// Copies rows row0.. and columns k0.. of a ROWS×BK tile of the row-major `src` (TOTAL_ROWS×K)
// into `dst` (row pitch LD), zero outside the tensor. Element e of the flattened tile goes to
// thread e mod blockDim: consecutive threads take consecutive k of a row, so 16 threads read one
// row's 64 contiguous bytes. kStrideByBlockDim strides by the run-time thread count the way the
// generated loop does (a diagnostic variant); otherwise the count is the compile-time one.
template <int ROWS, int TOTAL_ROWS, int K, int BK, int LD, int THREADS, bool kStrideByBlockDim>
__device__ __forceinline__ void sched_twin_copy_tile(float* dst, const float* __restrict__ src,
                                                     int row0, int k0, int tid) {
  constexpr bool kTailRows = TOTAL_ROWS % ROWS != 0, kTailK = K % BK != 0;
  auto copy_one = [&](int e) {
    const int r = e / BK, c = e % BK;
    const bool inside = (!kTailRows || row0 + r < TOTAL_ROWS) && (!kTailK || k0 + c < K);
    dst[r * LD + c] = inside ? src[(row0 + r) * K + k0 + c] : 0.f;
  };
  if constexpr (kStrideByBlockDim) {
    const int threads = blockDim.x * blockDim.y;
    for (int e = tid; e < ROWS * BK; e += threads) copy_one(e);
  } else {
    static_assert((ROWS * BK) % THREADS == 0, "every thread copies the same number of elements");
#pragma unroll
    for (int n = 0; n < ROWS * BK / THREADS; ++n) copy_one(tid + n * THREADS);
  }
}

template <int M, int N, int K, bool kStrideByBlockDim = false>
__global__ void sched_twin_gemm(const float* __restrict__ x, const float* __restrict__ w,
                                const float* __restrict__ b, float* __restrict__ y) {
  constexpr int BM = kSchedTwinTiles.block_m, BN = kSchedTwinTiles.block_n;
  constexpr int BK = kSchedTwinTiles.block_k;
  constexpr int TM = kSchedTwinTiles.thread_m, TN = kSchedTwinTiles.thread_n;
  constexpr int LD = BK + kSchedTwinTiles.pad;  // row pitch of both shared tiles
  constexpr int kThreadsX = BN / TN, kThreads = (BM / TM) * kThreadsX;
  static_assert(BM % TM == 0 && BN % TN == 0, "a thread owns a whole register tile");
  // Which edges of y can be partial: the checks vanish at compile time when the tiles divide.
  constexpr bool kTailM = M % BM != 0, kTailN = N % BN != 0;

  __shared__ float xs[BM * LD];
  __shared__ float ws[BN * LD];
  const int tx = threadIdx.x, ty = threadIdx.y;  // j.i.o, i.i.o
  const int tid = ty * kThreadsX + tx;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;  // i.o, j.o

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;

  for (int k0 = 0; k0 < K; k0 += BK) {
    sched_twin_copy_tile<BM, M, K, BK, LD, kThreads, kStrideByBlockDim>(xs, x, row0, k0, tid);
    sched_twin_copy_tile<BN, N, K, BK, LD, kThreads, kStrideByBlockDim>(ws, w, col0, k0, tid);
    __syncthreads();
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] += xs[(ty * TM + i) * LD + k] * ws[(tx * TN + j) * LD + k];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + ty * TM + i;
    if (kTailM && r >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int c = col0 + tx * TN + j;
      if (kTailN && c >= N) continue;
      y[r * N + c] = fmaxf(acc[i][j] + b[c], 0.f);
    }
  }
}

}  // namespace tilescope::kernels::cuda

// Block timing: when each block of SGEMM versions 1–8 (kernels/cuda/sgemm/0*.cuh, the code as
// benchmarked) starts and ends, and on which SM. The kernels are included with __global__ turned
// into __device__, and each is called from a wrapper kernel (same launch bounds, grid and block)
// that reads %globaltimer before and after it, and %smid. The question this answers
// (docs/predicted-vs-measured.md): do the blocks resident together on one SM run in step, so
// that the blocks of a wave share what they read in L2, or apart?
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -I. -o block_timing scripts/experiments/block_timing.cu
// Run:   ./block_timing 4096 > blocks.csv   (version,block,bx,by,sm,start_ns,end_ns per block)
//        scripts/experiments/block_timing_summary.py < blocks.csv
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

// The kernels as device functions: no __global__, no launch bounds (the wrappers carry them).
#pragma push_macro("__global__")
#pragma push_macro("__launch_bounds__")
#undef __global__
#undef __launch_bounds__
#define __global__ __device__
#define __launch_bounds__(...)
#include "kernels/cuda/sgemm/01_naive.cuh"
#include "kernels/cuda/sgemm/02_coalesced.cuh"
#include "kernels/cuda/sgemm/03_smem_tiled.cuh"
#include "kernels/cuda/sgemm/04_1d_blocktiling.cuh"
#include "kernels/cuda/sgemm/05_2d_blocktiling.cuh"
#include "kernels/cuda/sgemm/06_vectorized.cuh"
#include "kernels/cuda/sgemm/07_warptiling.cuh"
#include "kernels/cuda/sgemm/08_double_buffered.cuh"
#pragma pop_macro("__launch_bounds__")
#pragma pop_macro("__global__")

namespace {

struct Stamp {
  unsigned long long start, end;
  unsigned sm;
};

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void stamp(Stamp* st, unsigned long long t0) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    Stamp& s = st[blockIdx.y * gridDim.x + blockIdx.x];
    s.start = t0;
    s.end = now_ns();
    s.sm = sm;
  }
}

#define TIMED(NAME, BOUNDS, CALL)                                                               \
  __global__ void BOUNDS NAME(int M, int N, int K, const float* A, const float* B, float* C, \
                              Stamp* st) {                                                     \
    const unsigned long long t0 = now_ns();                                                   \
    CALL;                                                                                      \
    stamp(st, t0);                                                                             \
  }

TIMED(v1, , sgemm_01_naive(M, N, K, A, B, C))
TIMED(v2, , sgemm_02_coalesced<32>(M, N, K, A, B, C))
TIMED(v3, , sgemm_03_smem_tiled<32>(M, N, K, A, B, C))
TIMED(v4, , (sgemm_04_1d_blocktiling<64, 64, 8, 8>(M, N, K, A, B, C)))
TIMED(v5, __launch_bounds__(256, 2),  // 2 per SM, as the original (128 registers)
      (sgemm_05_2d_blocktiling<128, 128, 8, 8, 8>(M, N, K, A, B, C)))
TIMED(v6, __launch_bounds__(256), (sgemm_06_vectorized<128, 128, 8, 8, 8>(M, N, K, A, B, C)))
TIMED(v7, __launch_bounds__(sgemm07::kThreads), sgemm_07_warptiling(M, N, K, A, B, C))
TIMED(v8, __launch_bounds__(sgemm08::kThreads, 2),
      (sgemm_08_double_buffered<LoadADense, EpilogueStore>(
          M, N, K, LoadADense::Params{A, K}, B, EpilogueStore::Params{}, C)))

using Kernel = void (*)(int, int, int, const float*, const float*, float*, Stamp*);

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "block_timing: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (n < 128 || n % 128 != 0) {
    std::fprintf(stderr, "block_timing: size must be a multiple of 128\n");
    return 1;
  }
  struct Version {
    int number;
    Kernel kernel;
    dim3 grid, block;
  };
  const Version versions[] = {
      {1, v1, dim3(n / 32, n / 32), dim3(32, 32)},  {2, v2, dim3(n / 32, n / 32), dim3(1024)},
      {3, v3, dim3(n / 32, n / 32), dim3(1024)},    {4, v4, dim3(n / 64, n / 64), dim3(512)},
      {5, v5, dim3(n / 128, n / 128), dim3(256)},   {6, v6, dim3(n / 128, n / 128), dim3(256)},
      {7, v7, dim3(n / 128, n / 128), dim3(256)},   {8, v8, dim3(n / 128, n / 128), dim3(256)}};
  const int only = argc > 2 ? std::atoi(argv[2]) : 0;  // one version, for ncu
  const size_t elems = size_t(n) * n;
  float *a, *b, *c;
  Stamp* st;
  check(cudaMalloc(&a, elems * 4), "cudaMalloc");
  check(cudaMalloc(&b, elems * 4), "cudaMalloc");
  check(cudaMalloc(&c, elems * 4), "cudaMalloc");
  check(cudaMalloc(&st, size_t(n / 32) * (n / 32) * sizeof(Stamp)), "cudaMalloc");
  check(cudaMemset(a, 0, elems * 4), "cudaMemset");
  check(cudaMemset(b, 0, elems * 4), "cudaMemset");
  std::printf("version,block,bx,by,sm,start_ns,end_ns\n");
  for (const Version& v : versions) {
    if (only && v.number != only) continue;
    const int threads = int(v.block.x * v.block.y);
    int per_sm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v.kernel, threads, 0), "occupancy");
    std::fprintf(stderr, "version %d: %d blocks per SM\n", v.number, per_sm);
    const size_t blocks = size_t(v.grid.x) * v.grid.y;
    for (int rep = 0; rep < 2; ++rep) {  // the first launch warms up; the second is kept
      v.kernel<<<v.grid, v.block>>>(n, n, n, a, b, c, st);
      check(cudaGetLastError(), "launch");
      check(cudaDeviceSynchronize(), "kernel");
    }
    std::vector<Stamp> host(blocks);
    check(cudaMemcpy(host.data(), st, blocks * sizeof(Stamp), cudaMemcpyDeviceToHost), "copy");
    for (size_t i = 0; i < blocks; ++i)
      std::printf("%d,%zu,%zu,%zu,%u,%llu,%llu\n", v.number, i, i % v.grid.x, i / v.grid.x,
                  host[i].sm, host[i].start, host[i].end);
  }
  return 0;
}

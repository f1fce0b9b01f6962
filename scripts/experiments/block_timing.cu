// Block timing: when each block of SGEMM 2 and SGEMM 3 (kernels/cuda/sgemm_0{2,3}_*.cuh, copied
// here with two clock reads added) starts and ends, and on which SM. Both run 32 × 32 tiles, 1024
// threads, 2 blocks per SM, the same grid and block order; at 4096³ SGEMM 2 reads ~4.3 GB from
// DRAM (as if the 264 blocks of a wave shared B's panels) and SGEMM 3 ~8.5 GB (as if only one
// block per SM did). The question this answers (docs/predicted-vs-measured.md): do the two blocks
// resident on one SM run in step in SGEMM 2 and out of step in SGEMM 3?
//
// Build: nvcc -O3 -arch=sm_90 -o block_timing scripts/experiments/block_timing.cu
// Run:   ./block_timing 4096 > blocks.csv   (version,block,bx,by,sm,start_ns,end_ns per block)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

struct Stamp {
  unsigned long long start, end;
  unsigned sm;
};

__device__ void stamp_start(unsigned long long& t0) {
  if (threadIdx.x == 0) t0 = now_ns();
}
__device__ void stamp_end(Stamp* st, unsigned long long t0) {
  __syncthreads();
  if (threadIdx.x == 0) {
    Stamp& s = st[blockIdx.y * gridDim.x + blockIdx.x];
    s.start = t0;
    s.end = now_ns();
    s.sm = sm_id();
  }
}

// sgemm_02_coalesced<32>, as in kernels/cuda/sgemm_02_coalesced.cuh, plus the stamps.
__global__ void sgemm_02_timed(int M, int N, int K, const float* A, const float* B, float* C,
                               Stamp* st) {
  constexpr int kBlock = 32;
  unsigned long long t0 = 0;
  stamp_start(t0);
  const int row = blockIdx.y * kBlock + threadIdx.x / kBlock;
  const int col = blockIdx.x * kBlock + threadIdx.x % kBlock;
  if (row < M && col < N) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
    C[(size_t)row * N + col] = acc;
  }
  stamp_end(st, t0);
}

// sgemm_03_smem_tiled<32>, as in kernels/cuda/sgemm_03_smem_tiled.cuh, plus the stamps.
__global__ void sgemm_03_timed(int M, int N, int K, const float* A, const float* B, float* C,
                               Stamp* st) {
  constexpr int kTile = 32;
  __shared__ float As[kTile * kTile];
  __shared__ float Bs[kTile * kTile];
  unsigned long long t0 = 0;
  stamp_start(t0);
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
  stamp_end(st, t0);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "block_timing: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  if (n < 32 || n % 32 != 0) {
    std::fprintf(stderr, "block_timing: size must be a multiple of 32\n");
    return 1;
  }
  const size_t elems = size_t(n) * n;
  float *a, *b, *c;
  Stamp* st;
  const dim3 grid(n / 32, n / 32);
  const size_t blocks = size_t(grid.x) * grid.y;
  check(cudaMalloc(&a, elems * 4), "cudaMalloc");
  check(cudaMalloc(&b, elems * 4), "cudaMalloc");
  check(cudaMalloc(&c, elems * 4), "cudaMalloc");
  check(cudaMalloc(&st, blocks * sizeof(Stamp)), "cudaMalloc");
  check(cudaMemset(a, 0, elems * 4), "cudaMemset");
  check(cudaMemset(b, 0, elems * 4), "cudaMemset");
  std::vector<Stamp> host(blocks);
  std::printf("version,block,bx,by,sm,start_ns,end_ns\n");
  for (int version : {2, 3}) {
    for (int rep = 0; rep < 2; ++rep) {  // the first launch warms up; the second is kept
      if (version == 2)
        sgemm_02_timed<<<grid, 1024>>>(n, n, n, a, b, c, st);
      else
        sgemm_03_timed<<<grid, 1024>>>(n, n, n, a, b, c, st);
      check(cudaGetLastError(), "launch");
      check(cudaDeviceSynchronize(), "kernel");
    }
    check(cudaMemcpy(host.data(), st, blocks * sizeof(Stamp), cudaMemcpyDeviceToHost), "copy");
    for (size_t i = 0; i < blocks; ++i)
      std::printf("%d,%zu,%zu,%zu,%u,%llu,%llu\n", version, i, i % grid.x, i / grid.x, host[i].sm,
                  host[i].start, host[i].end);
  }
  return 0;
}

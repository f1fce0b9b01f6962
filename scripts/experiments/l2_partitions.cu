// L2 partitions: which SMs sit near which half of the L2, which lines live in which half, and
// whether a read of a line from the far half leaves a copy in the reader's near half.
//
// Hopper's L2 is two partitions; an SM reaches its near one faster than the far one. The GPU
// twin (sim/predict/gpu_kernels.cpp) needs to know where a line lives after an SM reads it, and
// which SMs the blocks of a launch land on. One thread of one SM times, line by line, a
// chain of L2-only loads (ld.global.cg: the L1 is bypassed) over 2048 lines 128 B apart.
//
// Three passes:
//  1. For every SM s: flush the L2 (write three times its size elsewhere), let SM 0 read the
//     lines (from DRAM), then time SM s's first read of each. A line SM s finds in its near half
//     is fast, one only in the far half slow.
//  2. Once: flush, SM 0 reads the lines, then SM 1, 2 … 131 in turn, each timed, with no flush
//     between. If a far read leaves a copy near the reader, only the first SM of the other half
//     to read a line finds it far.
//  3. Where the blocks of a launch go: 792 blocks of 1024 threads (two per SM, three waves), each
//     recording its SM and when it started.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o l2_partitions scripts/experiments/l2_partitions.cu
// Run:   ./l2_partitions > l2-partitions.json
// Output: one JSON object (schema tilescope-l2-partitions/1): the device, the clock, per pass the
// cycles of every timed load, and the launch's block → SM map. scripts/experiments/
// l2_partitions_summary.py reads it.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kLines = 2048;
constexpr int kWordsPerLine = 32;  // 128 B of 4-byte words

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "l2_partitions: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// The first block to land on SM `target` times a read of each line; every other block returns.
// The next line's address depends on the value read (always 0), and the clock is read after a
// shared-memory store of the value: one load in flight, its latency in cycles.
__global__ void time_lines(const unsigned* __restrict__ lines, unsigned target, int* claim,
                           unsigned* cycles, unsigned* sink) {
  if (threadIdx.x != 0 || sm_id() != target) return;
  if (atomicCAS(claim, 0, 1) != 0) return;
  __shared__ unsigned lat[kLines];
  __shared__ unsigned slot;
  unsigned v = 0;
  for (int i = 0; i < kLines; ++i) {
    const unsigned* p = lines + size_t(i) * kWordsPerLine + v;
    long long t0, t1;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t0)::"memory");
    unsigned x;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(x) : "l"(p) : "memory");
    // The store needs x, so it waits for the load; the clock is read after it issues.
    asm volatile("st.volatile.shared.u32 [%0], %1;" ::"r"(unsigned(__cvta_generic_to_shared(&slot))),
                 "r"(x)
                 : "memory");
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1)::"memory");
    lat[i] = unsigned(t1 - t0);
    v = x;
  }
  for (int i = 0; i < kLines; ++i) cycles[i] = lat[i];
  sink[0] = v;
}

__global__ void flush(uint4* junk, size_t n, unsigned seed) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    junk[i] = make_uint4(seed, unsigned(i), seed, unsigned(i >> 32));
}

__global__ void __launch_bounds__(1024, 2) where(unsigned* sm, unsigned long long* start) {
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  if (threadIdx.x == 0) {
    sm[blockIdx.x] = sm_id();
    start[blockIdx.x] = t0;
  }
  unsigned long long t = t0;
  while (t - t0 < 20000) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}

struct Bench {
  unsigned* lines = nullptr;
  uint4* junk = nullptr;
  size_t junk_n = 0;
  int* claim = nullptr;
  unsigned* cycles = nullptr;
  unsigned* sink = nullptr;
  int sms = 0;
  unsigned seed = 1;

  void flush_l2() {
    flush<<<sms * 4, 512>>>(junk, junk_n, seed++);
    check(cudaGetLastError(), "flush");
  }
  std::vector<unsigned> time_on(unsigned sm) {
    check(cudaMemset(claim, 0, sizeof(int)), "memset");
    // Enough one-warp blocks that every SM gets several.
    time_lines<<<sms * 16, 32>>>(lines, sm, claim, cycles, sink);
    check(cudaGetLastError(), "time_lines");
    check(cudaDeviceSynchronize(), "time_lines");
    int claimed = 0;
    check(cudaMemcpy(&claimed, claim, sizeof(int), cudaMemcpyDeviceToHost), "claim");
    std::vector<unsigned> out(kLines, 0);
    if (claimed) check(cudaMemcpy(out.data(), cycles, kLines * 4, cudaMemcpyDeviceToHost), "copy");
    return out;
  }
};

void print_row(const std::vector<unsigned>& v) {
  std::printf("[");
  for (size_t i = 0; i < v.size(); ++i) std::printf(i ? ",%u" : "%u", v[i]);
  std::printf("]");
}

}  // namespace

int main() {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock");
  Bench b;
  b.sms = prop.multiProcessorCount;
  check(cudaMalloc(&b.lines, size_t(kLines) * kWordsPerLine * 4), "lines");
  check(cudaMemset(b.lines, 0, size_t(kLines) * kWordsPerLine * 4), "lines");
  b.junk_n = size_t(prop.l2CacheSize) * 3 / sizeof(uint4);
  check(cudaMalloc(&b.junk, b.junk_n * sizeof(uint4)), "junk");
  check(cudaMalloc(&b.claim, sizeof(int)), "claim");
  check(cudaMalloc(&b.cycles, kLines * 4), "cycles");
  check(cudaMalloc(&b.sink, 4), "sink");

  std::printf("{\"schema\":\"tilescope-l2-partitions/1\",\"device\":\"%s\",\"sms\":%d,"
              "\"l2_bytes\":%d,\"clock_khz\":%d,\"lines\":%d,\"line_bytes\":128,\n",
              prop.name, b.sms, prop.l2CacheSize, clock_khz, kLines);

  // Pass 1: SM 0 brings the lines in, SM s reads them first after it.
  std::printf("\"pass1_reference_sm\":0,\"pass1_from_dram\":");
  b.flush_l2();
  print_row(b.time_on(0));
  std::printf(",\n\"pass1\":[\n");
  for (int s = 0; s < b.sms; ++s) {
    b.flush_l2();
    (void)b.time_on(0);
    print_row(b.time_on(unsigned(s)));
    std::printf(s + 1 < b.sms ? ",\n" : "\n");
  }
  // Pass 2: every SM in turn after SM 0, no flush between.
  std::printf("],\n\"pass2\":[\n");
  b.flush_l2();
  (void)b.time_on(0);
  for (int s = 1; s < b.sms; ++s) {
    print_row(b.time_on(unsigned(s)));
    std::printf(s + 1 < b.sms ? ",\n" : "\n");
  }
  // Pass 3: the block → SM map of a launch with two 1024-thread blocks per SM.
  const int blocks = b.sms * 2 * 3;
  unsigned* d_sm = nullptr;
  unsigned long long* d_start = nullptr;
  check(cudaMalloc(&d_sm, blocks * 4), "sm");
  check(cudaMalloc(&d_start, blocks * 8), "start");
  where<<<blocks, 1024>>>(d_sm, d_start);
  check(cudaGetLastError(), "where");
  check(cudaDeviceSynchronize(), "where");
  std::vector<unsigned> sm(blocks);
  std::vector<unsigned long long> start(blocks);
  check(cudaMemcpy(sm.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost), "sm");
  check(cudaMemcpy(start.data(), d_start, blocks * 8, cudaMemcpyDeviceToHost), "start");
  std::printf("],\n\"launch_sm\":");
  print_row(sm);
  std::printf(",\n\"launch_start_ns\":[");
  for (int i = 0; i < blocks; ++i)
    std::printf(i ? ",%lld" : "%lld", (long long)(start[i] - start[0]));
  std::printf("]}\n");
  return 0;
}

// Latency hiding: the bandwidth a memory-bound kernel reaches against the loads it keeps in
// flight. Every SM holds W warps (W = 1, 2, 4 … 64: one block of W warps per SM up to 32, two of
// 32 for 64) and each thread issues L independent loads (L = 1, 2, 4, 8) before it uses any of
// them — 16-byte loads with the streaming hint, 16-byte plain loads, 4-byte plain loads; the grid covers exactly one resident wave, and each thread strides through a
// buffer far larger than L2, so every load goes to HBM. Little's law says the bandwidth is the
// bytes in flight over the latency, until HBM itself saturates: W × L × 32 lanes × 16 B per SM.
// The unloaded latency is measured too, by a one-thread pointer chase: through a random cycle of
// lines (every step a new page too) and through lines in order, 33 apart (pages stay translated).
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90 -o latency_hiding scripts/experiments/latency_hiding.cu
// Run:   ./latency_hiding > latency-hiding.json            (the first grid, schema /2)
//        ./latency_hiding held-out > held-out.json         (the second grid, schema /3)
// Output: one JSON object — the device, the chase's latency, and for every (W, L) the median of
// 15 timed launches and the bytes read. The first grid is W = 1, 2, 4 … 64 and L = 1, 2, 4, 8
// for 16-byte loads (streaming and plain) and 4-byte loads. The held-out grid was chosen after
// the time model (sim/predict/parallelism.h) was fitted to the first, to test it on points it
// has not seen: 8-byte loads, W = 1, 3, 6 … 48, L = 1 … 8 including the odd counts, and 16-byte
// loads 3, 5, 6, 7 deep.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "latency_hiding: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__device__ float sum_of(float v) { return v; }
__device__ float sum_of(float2 v) { return v.x + v.y; }
__device__ float sum_of(float4 v) { return v.x + v.y + v.z + v.w; }
__device__ float add(float a, float b) { return a + b; }
__device__ float2 add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

// Each thread reads `iters` rounds of L values of T (float: 4 B, float4: 16 B); the L loads of a
// round are independent (L accumulators, addresses a whole grid's width apart), so the warp has L
// requests in flight before the first use, and no more: the round loop is not unrolled (the
// compiler would otherwise hoist the next rounds' loads too). `streaming` uses ld.global.cs
// (evict-first), else a plain ld.global. The sum is written once so the loads stay.
template <typename T, int L, bool streaming>
__global__ void stream_loads(const T* __restrict__ in, float* __restrict__ out, int64_t iters) {
  const int64_t threads = int64_t(gridDim.x) * blockDim.x;
  const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  T acc[L];
#pragma unroll
  for (int j = 0; j < L; ++j) acc[j] = T{};
#pragma unroll 1
  for (int64_t i = 0; i < iters; ++i) {
    const T* p = in + (i * L) * threads + t;
    T v[L];
#pragma unroll
    for (int j = 0; j < L; ++j) v[j] = streaming ? __ldcs(p + j * threads) : p[j * threads];
#pragma unroll
    for (int j = 0; j < L; ++j) acc[j] = add(acc[j], v[j]);
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < L; ++j) s += sum_of(acc[j]);
  out[t] = s;
}

// One thread follows a chain of indices through the buffer: each load's address is the previous
// load's value, so exactly one load is in flight — its time is the memory's latency.
__global__ void chase(const uint32_t* __restrict__ next, int64_t steps, uint32_t* out,
                      unsigned long long* ns) {
  uint32_t i = 0;
  unsigned long long t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (int64_t s = 0; s < steps; ++s) i = __ldcg(next + i);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  *out = i;
  *ns = t1 - t0;
}

template <typename T, int L, bool streaming>
double time_loads(const void* in, float* out, int blocks, int threads, int64_t iters) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> ms;
  for (int rep = 0; rep < 17; ++rep) {
    check(cudaEventRecord(a), "record");
    stream_loads<T, L, streaming><<<blocks, threads>>>(static_cast<const T*>(in), out, iters);
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    if (rep >= 2) ms.push_back(t);  // two warm-up launches
  }
  check(cudaGetLastError(), "launch");
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms[ms.size() / 2];
}

template <typename T, bool streaming>
double time_variant(int loads, const void* in, float* out, int blocks, int threads,
                    int64_t iters) {
  switch (loads) {
    case 1: return time_loads<T, 1, streaming>(in, out, blocks, threads, iters);
    case 2: return time_loads<T, 2, streaming>(in, out, blocks, threads, iters);
    case 3: return time_loads<T, 3, streaming>(in, out, blocks, threads, iters);
    case 4: return time_loads<T, 4, streaming>(in, out, blocks, threads, iters);
    case 5: return time_loads<T, 5, streaming>(in, out, blocks, threads, iters);
    case 6: return time_loads<T, 6, streaming>(in, out, blocks, threads, iters);
    case 7: return time_loads<T, 7, streaming>(in, out, blocks, threads, iters);
    default: return time_loads<T, 8, streaming>(in, out, blocks, threads, iters);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool held_out = argc > 1 && std::string(argv[1]) == "held-out";
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device");
  const int sms = prop.multiProcessorCount;
  const size_t bytes = size_t(1) << 30;  // 1 GiB: 17 times the H200's L2
  float4* in = nullptr;
  float* out = nullptr;
  check(cudaMalloc(&in, bytes), "malloc");
  check(cudaMemset(in, 0, bytes), "memset");
  check(cudaMalloc(&out, size_t(sms) * 2048 * sizeof(float)), "malloc");

  // Latency: a random cycle through 64 Mi indices (256 MiB), every step a new 128 B line.
  const uint32_t n = 64u << 20;
  std::vector<uint32_t> order(n / 32), next(n, 0);
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i * 32;
  std::srand(7);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[size_t(std::rand()) % (i + 1)]);
  for (size_t i = 0; i < order.size(); ++i) next[order[i]] = order[(i + 1) % order.size()];
  uint32_t* d_next = nullptr;
  uint32_t* d_out = nullptr;
  unsigned long long* d_ns = nullptr;
  check(cudaMalloc(&d_next, size_t(n) * 4), "malloc");
  check(cudaMemcpy(d_next, next.data(), size_t(n) * 4, cudaMemcpyHostToDevice), "copy");
  check(cudaMalloc(&d_out, 4), "malloc");
  check(cudaMalloc(&d_ns, 8), "malloc");
  const int64_t chase_steps = 200000;
  auto run_chase = [&]() {
    chase<<<1, 1>>>(d_next, 1000, d_out, d_ns);  // warm-up
    chase<<<1, 1>>>(d_next, chase_steps, d_out, d_ns);
    unsigned long long ns = 0;
    check(cudaMemcpy(&ns, d_ns, 8, cudaMemcpyDeviceToHost), "copy");
    return double(ns) / chase_steps;
  };
  const double random_ns = run_chase();
  // The same buffer walked in order, 4224 B (33 lines) a step: every load still misses L2 (the
  // walk comes back to a line only after 256 MiB), but it stays in one page for hundreds of
  // steps, so address translation is not part of the latency.
  for (uint32_t i = 0; i < n; i += 32) next[i] = (i + 32 * 33) % n;
  check(cudaMemcpy(d_next, next.data(), size_t(n) * 4, cudaMemcpyHostToDevice), "copy");
  const double strided_ns = run_chase();

  std::printf("{\n \"schema\": \"tilescope-latency-hiding/%d\",\n", held_out ? 3 : 2);
  if (held_out) std::printf(" \"grid\": \"held-out\",\n");
  int clock_khz = 0;  // CUDA 13 dropped cudaDeviceProp::clockRate
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock");
  std::printf(" \"device\": {\"name\": \"%s\", \"sms\": %d, \"l2_bytes\": %d, \"clock_khz\": %d},\n",
              prop.name, sms, prop.l2CacheSize, clock_khz);
  std::printf(" \"chase\": {\"steps\": %lld, \"random_ns\": %.2f, \"strided_ns\": %.2f},\n",
              (long long)chase_steps, random_ns, strided_ns);
  std::printf(" \"points\": [\n");
  bool first = true;
  struct Variant {
    const char* name;
    int bytes;
    bool streaming;
    std::vector<int> warps, loads;
  };
  const std::vector<Variant> grid =
      held_out ? std::vector<Variant>{{"float2 ld.global", 8, false, {1, 3, 6, 12, 24, 48},
                                       {1, 2, 3, 4, 6, 8}},
                                      {"float4 ld.global", 16, false, {1, 3, 12, 48}, {3, 5, 6, 7}},
                                      {"float ld.global", 4, false, {3, 12, 48}, {3, 6}}}
               : std::vector<Variant>{
                     {"float4 ld.global.cs", 16, true, {1, 2, 4, 8, 16, 32, 64}, {1, 2, 4, 8}},
                     {"float4 ld.global", 16, false, {1, 2, 4, 8, 16, 32, 64}, {1, 2, 4, 8}},
                     {"float ld.global", 4, false, {1, 2, 4, 8, 16, 32, 64}, {1, 2, 4, 8}}};
  for (const Variant& v : grid) {
    for (int warps : v.warps) {
      // One block per SM up to 32 warps (1024 threads), two above (48 = 2 × 24, 64 = 2 × 32).
      const int blocks_per_sm = warps > 32 ? 2 : 1, per_block = warps / blocks_per_sm;
      const int threads = per_block * 32, blocks = sms * blocks_per_sm;
      const int64_t grid_threads = int64_t(blocks) * threads;
      for (int loads : v.loads) {
        // As many rounds as fit the buffer: every thread reads `loads` values a round.
        const int64_t iters = int64_t(bytes / v.bytes) / (grid_threads * loads);
        const double ms =
            v.bytes == 16
                ? (v.streaming ? time_variant<float4, true>(loads, in, out, blocks, threads, iters)
                               : time_variant<float4, false>(loads, in, out, blocks, threads, iters))
            : v.bytes == 8 ? time_variant<float2, false>(loads, in, out, blocks, threads, iters)
                           : time_variant<float, false>(loads, in, out, blocks, threads, iters);
        const double read = double(iters) * grid_threads * loads * v.bytes;
        std::printf("%s  {\"variant\": \"%s\", \"load_bytes\": %d, \"warps_per_sm\": %d, "
                    "\"loads_per_thread\": %d, \"blocks\": %d, \"threads_per_block\": %d, "
                    "\"bytes\": %.0f, \"median_ms\": %.5f, \"gb_per_s\": %.1f}",
                    first ? "" : ",\n", v.name, v.bytes, warps, loads, blocks, threads, read, ms,
                    read / ms / 1e6);
        first = false;
      }
    }
  }
  std::printf("\n ]\n}\n");
  return 0;
}

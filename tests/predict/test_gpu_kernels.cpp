// Trace descriptions of the CUDA kernels: the shared-memory phase model on hand-counted warps,
// the bank conflicts of the SGEMM versions with and without padding in closed form, the
// compulsory floor, and the K-slice reduction against the full trace where both are feasible.
#include "sim/predict/gpu_kernels.h"

#include <doctest/doctest.h>

using namespace tilescope::predict;

namespace {
std::vector<LaneAddr> warp(uint32_t bytes, uint64_t (*addr)(int lane)) {
  std::vector<LaneAddr> w;
  for (int l = 0; l < 32; ++l) w.push_back({addr(l), bytes});
  return w;
}
}  // namespace

TEST_CASE("shared phases: hand-counted wavefronts of one warp instruction") {
  // 32 consecutive floats: one word per bank, one wavefront.
  SharedCost c = shared_warp_cost(warp(4, [](int l) { return uint64_t(l) * 4; }));
  CHECK(c.wavefronts == 1);
  CHECK(c.ideal == 1);
  // Stride of 2 words: lanes l and l+16 share bank 2l mod 32 with different words: 2-way.
  c = shared_warp_cost(warp(4, [](int l) { return uint64_t(l) * 8; }));
  CHECK(c.wavefronts == 2);
  // 32 lanes reading one word: broadcast.
  CHECK(shared_warp_cost(warp(4, [](int) { return uint64_t{64}; })).wavefronts == 1);
  // float4, 32 consecutive: four quarter-warps of 128 bytes, conflict-free.
  c = shared_warp_cost(warp(16, [](int l) { return uint64_t(l) * 16; }));
  CHECK(c.wavefronts == 4);
  CHECK(c.ideal == 4);
  // float4 at a 32-byte stride, lanes l and l+16 equal (SGEMM 6's Bs): a quarter's 8 lanes hit
  // banks 8c..8c+3, c and c+4 collide: 2 wavefronts a quarter, 8 in all, 4 of them conflicts.
  c = shared_warp_cost(warp(16, [](int l) { return uint64_t(l % 16) * 32; }));
  CHECK(c.wavefronts == 8);
  CHECK(c.ideal == 4);
  // float4 with lanes n and n^1 equal (SGEMM 7's As reads): half-warps, 2 wavefronts.
  c = shared_warp_cost(warp(16, [](int l) { return uint64_t(l / 8) * 16; }));
  CHECK(c.wavefronts == 2);
  CHECK(c.ideal == 2);
}

TEST_CASE("bank conflicts: SGEMM 6 (no padding) pays 4 a B read; SGEMM 7 (padded) none") {
  const Machine m = load_machine("h200");
  const int n = 1024;
  const double blocks = (n / 128.0) * (n / 128.0), steps = n / 8.0;
  const GpuKernelPrediction v6 = predict_gpu_kernel("sgemm_06", n, n, n, m);
  // Per block and step: 8 warps × 8 k × 2 LDS.128 of Bs with 4 conflicts each; As reads none.
  CHECK(v6.shared_ld_conflicts == blocks * steps * 8 * 8 * 2 * 4);
  // Stores: As transposed, lanes 2r and 2r+1 128 floats apart: 2-way on each of 4 STS.32.
  CHECK(v6.shared_st_conflicts == blocks * steps * 8 * 4);
  const GpuKernelPrediction v7 = predict_gpu_kernel("sgemm_07", n, n, n, m);
  CHECK(v7.shared_ld_conflicts == 0);
  CHECK(v7.shared_st_conflicts == 0);
  // Instructions as nvcc emitted them: 4 LDS.128 per k, 4 STS.32 + 1 STS.128 per step.
  CHECK(v7.shared_ld_instructions == blocks * steps * 8 * 8 * 4);
  CHECK(v7.shared_st_instructions == blocks * steps * 8 * 5);
}

TEST_CASE("a problem that fits in L2 reads A and B from DRAM once") {
  const Machine m = load_machine("h200");
  const int n = 1024;
  for (const char* k : {"sgemm_02", "sgemm_05", "sgemm_08"}) {
    CAPTURE(k);
    const GpuKernelPrediction p = predict_gpu_kernel(k, n, n, n, m);
    CHECK(p.dram_read_bytes == 2.0 * n * n * 4);
  }
  // SGEMM 8's L1 lookups: per block and step, 8 warps × (16 sectors of A + 16 of B).
  const GpuKernelPrediction p = predict_gpu_kernel("sgemm_08", n, n, n, m);
  CHECK(p.l1_load_sectors == (n / 128.0) * (n / 128.0) * (n / 8.0) * 8 * 32);
  CHECK(p.l1_store_sectors == double(n) * n * 4 / 32);
}

TEST_CASE("K-slice reduction: within a few percent of the full trace when the L2 overflows") {
  // An H200 cut down to 8 SMs and a 1 MiB L2, so that at 1024³ the grid runs in several waves
  // and their panels overflow the L2, as 4096³ does on the real one.
  Machine m = load_machine("h200");
  m.cores = 8;
  for (auto& level : m.levels)
    if (level.shared_by > 1) level.size_bytes = 1 << 20;
  for (const char* k : {"sgemm_03", "sgemm_08"}) {
    CAPTURE(k);
    GpuKernelOptions full, sliced;
    full.k_slice = 1;
    sliced.k_slice = 4;
    const GpuKernelPrediction a = predict_gpu_kernel(k, 1024, 1024, 1024, m, full);
    const GpuKernelPrediction b = predict_gpu_kernel(k, 1024, 1024, 1024, m, sliced);
    CHECK(a.dram_read_bytes > 2.0 * 1024 * 1024 * 4);  // the overflow is real
    CHECK(b.dram_read_bytes == doctest::Approx(a.dram_read_bytes).epsilon(0.05));
    CHECK(b.l2_read_sectors == doctest::Approx(a.l2_read_sectors).epsilon(0.01));
  }
}

TEST_CASE("out of step: one block per SM makes smaller waves that share less") {
  // The cut-down H200 of the test above: 8 SMs, 1 MiB L2. SGEMM 3 runs 2 blocks per SM (1024
  // threads each), so 16 blocks share a wave; at most one per SM leaves 8.
  Machine m = load_machine("h200");
  m.cores = 8;
  for (auto& level : m.levels)
    if (level.shared_by > 1) level.size_bytes = 1 << 20;
  GpuKernelOptions one;
  one.max_blocks_per_sm = 1;
  const GpuKernelPrediction a = predict_gpu_kernel("sgemm_03", 1024, 1024, 1024, m);
  const GpuKernelPrediction b = predict_gpu_kernel("sgemm_03", 1024, 1024, 1024, m, one);
  CHECK(a.blocks_per_sm == 2);
  CHECK(a.resident_blocks == 16);
  CHECK(b.blocks_per_sm == 1);
  CHECK(b.resident_blocks == 8);
  CHECK(b.dram_read_bytes > a.dram_read_bytes);
  // Each block makes the same L2 requests either way (the same tiles through its own L1 share,
  // which is larger with fewer blocks: never more requests).
  CHECK(b.l2_read_sectors <= a.l2_read_sectors);
}

TEST_CASE("unknown kernels and impossible shapes are refused with a reason") {
  const Machine m = load_machine("h200");
  CHECK_THROWS_AS(predict_gpu_kernel("sgemm_09", 128, 128, 128, m), std::invalid_argument);
  CHECK_THROWS_AS(predict_gpu_kernel("sgemm_08", 100, 128, 128, m), std::invalid_argument);
  CHECK_THROWS_AS(predict_gpu_kernel("sgemm_08", 128, 128, 128, load_machine("tiny")),
                  std::invalid_argument);
}

// The Tiles view's GPU mode (core/tiles_gpu.h): one wave seen from a picked block and warp.
// Expected values are hand counts over a 32×32 GEMM on a small GPU whose caches hold everything
// (a fully associative L1, an L2 larger than the three matrices), so what each level holds is
// exactly what the blocks that ran before have touched.
#include "app/core/tiles_gpu.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/trace.h"

#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <cmath>

namespace tilescope::core {
namespace {

predict::Machine roomy_gpu() {
  return predict::parse_machine(
      "name = roomygpu\nkind = gpu\nsms = 4\nclock = 1 GHz\npeak fp32 simt = 1 TFLOP/s\n"
      "smem_per_block = 48 KiB\nthreads_per_block = 1024\n"
      "[level L1]\nsize = 16 KiB\nline = 128 B\nsector = 32 B\nways = full\nreplacement = lru\n"
      "write = through\nwrite_allocate = no\n"
      "[level L2]\nsize = 256 KiB\nline = 128 B\nsector = 32 B\nways = 16\nreplacement = lru\n"
      "write = back\nwrite_allocate = yes\nshared_by = 4\n"
      "[memory DRAM]\nsize = 1 GiB\nbandwidth = 100 GB/s\n"
      "[scratchpad shared]\nsize = 48 KiB\nbanks = 32\nbank_width = 4 B\nwarp_size = 32\n",
      "<test>");
}

constexpr const char* kGemm = "A: [32, 32]\nB: [32, 32]\nC = A @ B\n";
// Rows of C to blocks (4 rows each, block.y), columns to the 32 lanes of a warp: warp w of a block
// owns row 4·y + w and reads B along a row (consecutive j).
constexpr const char* kRowsToBlocks =
    "tile(i, 4); tile(j, 32); reorder(i.o, j.o, i.i, j.i, k); bind(i.o, block.y); "
    "bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)";
// The transpose of that mapping: lanes walk i, so a warp reads a column of A.
constexpr const char* kLanesDownColumns =
    "tile(i, 32); tile(j, 4); reorder(j.o, i.o, j.i, i.i, k); bind(j.o, block.x); "
    "bind(i.o, block.y); bind(j.i, thread.y); bind(i.i, thread.x)";

const schedule::Kernel& kernel_after(AppState& state, const char* steps) {
  REQUIRE(test::run(state, std::string("apply \"") + steps + "\"") == "");
  REQUIRE(state.workbench.kernel());
  return *state.workbench.kernel();
}

// Elements of grid `name` that frame `f`'s level holds (shares are 0 or 255 here: whole bins).
int64_t held(const GpuTilesResult& r, const std::vector<uint8_t>& level, const std::string& name) {
  for (const TileGrid& g : r.grids) {
    if (g.name != name) continue;
    double n = 0;
    for (size_t i = 0; i < g.bins(); ++i) n += level[g.offset + i] / 255.0 / g.inv_elems[i];
    return std::llround(n);
  }
  FAIL("no grid " << name);
  return -1;
}

TEST_CASE("tiles gpu: the picked block's wave, its SM's L1 and the L2, by hand count") {
  AppState state = test::state_for(kGemm);
  const schedule::Kernel& k = kernel_after(state, kRowsToBlocks);
  const predict::Machine m = roomy_gpu();
  JobProgress progress;
  // 8 blocks (rows 4y … 4y+3), 4 SMs → 2 waves; block 5 runs in wave 1 on SM 1, after block 1.
  const GpuTilesResult r = record_gpu_tiles(k, m, 5, 2, progress);
  CHECK(r.blocks == 8);
  CHECK(r.resident == 4);
  CHECK(r.waves == 2);
  CHECK(r.wave == 1);
  CHECK(r.sm == 1);
  CHECK(r.warps_per_block == 4);  // 32 × 4 threads
  CHECK(r.step_loop == "k");      // the body starts with its thread loops: steps are k's
  // Frame 0 and one per k step of each of the wave's 4 blocks (they run one after another).
  REQUIRE(r.frames.size() == 1 + 4 * 32);

  const GpuTilesFrame& first = r.frames.front();
  // SM 1's L1 has what block 1 (rows 4…7) read: its 4 rows of A and all of B; stores do not
  // allocate in a write-through L1, so none of C.
  CHECK(held(r, first.l1, "A") == 4 * 32);
  CHECK(held(r, first.l1, "B") == 32 * 32);
  CHECK(held(r, first.l1, "C") == 0);
  // The L2 has what wave 0 (blocks 0…3: rows 0…15) touched, its stores included.
  CHECK(held(r, first.l2, "A") == 16 * 32);
  CHECK(held(r, first.l2, "B") == 32 * 32);
  CHECK(held(r, first.l2, "C") == 16 * 32);
  const GpuTilesFrame& end = r.frames.back();
  CHECK(held(r, end.l1, "A") == 8 * 32);  // blocks 1 and 5: rows 4…7 and 20…23
  CHECK(held(r, end.l2, "A") == 32 * 32);
  CHECK(held(r, end.l2, "C") == 32 * 32);

  // Block 5 is the wave's second block: its k = 0 step is frame 1 + 32. Warp 2 (row 22) loads
  // A[22, 0] (one word for every lane: one sector) and B[0, 0…31] (128 B: four sectors).
  const GpuTilesFrame& step0 = r.frames[33];
  REQUIRE(step0.warp.size() == 2);
  for (const GpuWarpAccess& w : step0.warp) {
    REQUIRE(w.grid >= 0);
    const std::string name = r.grids[size_t(w.grid)].name;
    CHECK(w.lanes == 32);
    CHECK_FALSE(w.write);
    CHECK(w.coalesced());
    if (name == "A") {
      CHECK(w.sectors == 1);
      CHECK(w.lane_elem.front() == 22 * 32);
    } else {
      CHECK(name == "B");
      CHECK(w.sectors == 4);
      CHECK(w.ideal_sectors == 4);
      CHECK(w.lane_elem.back() == 31);
    }
  }
  // The block's tile in that step: column k = 0 of A's rows 20…23, as the sectors that moved it
  // (32 B = columns 0…7 of each row).
  const TileBox& a_box = step0.block[0];
  CHECK(r.grids[0].name == "A");
  CHECK(a_box.r0 == 20);
  CHECK(a_box.r1 == 23);
  CHECK(a_box.c0 == 0);
  CHECK(a_box.c1 == 7);
  // Over the wave: 32 loads of A (1 sector), 32 of B (4), one store of C's row (4).
  CHECK(r.warp_global == 65);
  CHECK(r.warp_sectors == 32 * 1 + 32 * 4 + 4);
  CHECK(r.warp_ideal_sectors == r.warp_sectors);
}

TEST_CASE("tiles gpu: lanes down a column of a row-major matrix are uncoalesced") {
  AppState state = test::state_for(kGemm);
  const schedule::Kernel& k = kernel_after(state, kLanesDownColumns);
  JobProgress progress;
  const GpuTilesResult r = record_gpu_tiles(k, roomy_gpu(), 0, 0, progress);
  // Per k: A[0…31, k] — 32 words 128 B apart, 32 sectors where 4 would hold them; B[k, j] one
  // word for all lanes. The store C[0…31, j]: 32 sectors again (4 would do).
  CHECK(r.warp_global == 65);
  CHECK(r.warp_sectors == 32 * 32 + 32 * 1 + 32);
  CHECK(r.warp_ideal_sectors == 32 * 4 + 32 * 1 + 4);
  bool saw_a = false;
  for (const GpuTilesFrame& f : r.frames)
    for (const GpuWarpAccess& w : f.warp)
      if (r.grids[size_t(w.grid)].name == "A") {
        saw_a = true;
        CHECK(w.sectors == 32);
        CHECK(w.ideal_sectors == 4);
        CHECK_FALSE(w.coalesced());
        CHECK(w.lane_elem[1] - w.lane_elem[0] == 32);  // one row apart
      }
  CHECK(saw_a);
}

TEST_CASE("tiles gpu: what does not apply says why; a pick outside the grid says its range") {
  AppState state = test::state_for(kGemm);
  JobProgress progress;
  CHECK(gpu_tiles_unavailable(*state.workbench.kernel(), roomy_gpu()).find("bound to blocks") !=
        std::string::npos);
  const schedule::Kernel& k = kernel_after(state, kRowsToBlocks);
  CHECK(gpu_tiles_unavailable(k, test::big_cache_machine()).find("a CPU") != std::string::npos);
  try {
    (void)record_gpu_tiles(k, roomy_gpu(), 8, 0, progress);
    FAIL("block 8 of 8 was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("0 … 7") != std::string::npos);
  }
  try {
    (void)record_gpu_tiles(k, roomy_gpu(), 0, 4, progress);
    FAIL("warp 4 of 4 was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("0 … 3") != std::string::npos);
  }
}

TEST_CASE("tiles gpu: the commands pick, record and play through the workbench") {
  AppState state = test::state_for(kGemm);
  (void)kernel_after(state, kRowsToBlocks);
  CHECK(test::run(state, "machine minigpu") == "");
  CHECK(command_to_string(parse_command("tiles block 5")) == "tiles block 5");
  CHECK(command_to_string(parse_command("tiles gpu on")) == "tiles gpu on");
  CHECK_THROWS_AS(parse_command("tiles gpu maybe"), CommandError);
  CHECK_THROWS_AS(parse_command("tiles warp -1"), CommandError);
  CHECK(test::run(state, "tiles block 3") == "");
  CHECK(state.workbench.tiles_gpu);
  CHECK(test::run(state, "tiles warp 1") == "");
  CHECK(test::run(state, "tiles record") == "");
  test::wait_jobs(state);
  REQUIRE(state.workbench.gpu_tiles);
  CHECK(state.workbench.gpu_tiles->block == 3);
  CHECK(state.workbench.gpu_tiles->warp == 1);
  // minigpu has 8 SMs: the 8 blocks are one wave.
  CHECK(state.workbench.gpu_tiles->waves == 1);
  CHECK(test::run(state, "tiles seek 1000") == "");
  CHECK(state.workbench.tiles_frame == double(state.workbench.gpu_tiles->frames.size() - 1));
  // A block outside the grid: the recording says so, nothing else is lost.
  CHECK(test::run(state, "tiles block 99") == "");
  CHECK(test::run(state, "tiles record") == "");
  test::wait_jobs(state);
  CHECK_FALSE(state.workbench.gpu_tiles);
  CHECK(state.workbench.gpu_tiles_error.find("not in the grid") != std::string::npos);
  CHECK(state.workbench.history->size() > 1);
}

}  // namespace
}  // namespace tilescope::core

namespace tilescope::core {

TEST_CASE("tiles gpu: counters over time along the wave, by hand count and by re-simulation") {
  AppState state = test::state_for(kGemm);
  const schedule::Kernel& k = kernel_after(state, kRowsToBlocks);
  const predict::Machine m = roomy_gpu();
  JobProgress progress;
  const GpuTilesResult r = record_gpu_tiles(k, m, 5, 2, progress);
  REQUIRE(r.level_names == std::vector<std::string>{"L1", "L2", "DRAM"});
  REQUIRE(r.frame_counters.size() == r.frames.size());
  REQUIRE(r.frame_accesses.size() == r.frames.size());
  // Each warp makes 32 × (1 sector of A + 4 of B) loads and 4 sector stores of its C row: 164
  // global accesses; a block has 4 warps. Frame 0 is wave 1's start: wave 0's 4 blocks are done.
  const uint64_t per_block = 4 * (32 * (1 + 4) + 4);
  CHECK(r.frame_counters.front()[0].accesses == 4 * per_block);
  // The last frame: all 8 blocks. The L1 (16 KiB, fully associative) keeps A and B (8 KiB): each
  // of their 2 × 128 sectors misses once; C's 128 stores do not allocate (write-through, no
  // write-allocate) and miss.
  const memory::Counters& l1 = r.frame_counters.back()[0];
  CHECK(l1.accesses == 8 * per_block);
  CHECK(l1.misses == 256 + 128);
  CHECK(l1.hits == l1.accesses - l1.misses);
  // The windows add up to the last frame's counters from frame 0's.
  uint64_t accesses = r.frame_counters.front()[0].accesses;
  for (size_t f = 1; f < r.frame_counters.size(); ++f)
    accesses += counters_window(r, f)[0].accesses;
  CHECK(accesses == l1.accesses);
  // A long wave is thinned to kMaxGpuTileFrames: every kept frame keeps its counters and its
  // picture (frame 0 included: thinning once moved it onto itself and emptied it).
  AppState big = test::state_for("A: [32, 1024]\nB: [1024, 32]\nC = A @ B\n");
  const GpuTilesResult t = record_gpu_tiles(kernel_after(big, kRowsToBlocks), m, 0, 0, progress);
  CHECK(t.frames.size() <= size_t(kMaxGpuTileFrames));
  CHECK(t.frames.size() > size_t(kMaxGpuTileFrames) / 2);
  REQUIRE(t.frame_counters.size() == t.frames.size());
  CHECK(t.frame_step.size() == t.frames.size());
  for (size_t f = 0; f < t.frames.size(); ++f) {
    CAPTURE(f);
    REQUIRE(t.frame_counters[f].size() == 3);
    CHECK(t.frames[f].l2.size() == t.frames.back().l2.size());
    if (f > 0) CHECK(t.frame_accesses[f] > t.frame_accesses[f - 1]);
  }
  // Re-simulation: the same trace into a fresh hierarchy, stopped where frame 0 and the last frame
  // were taken, holds the same counters at every level.
  struct Stop : memory::AccessSink {
    memory::Hierarchy h;
    uint64_t stop, seen = 0;
    Stop(const predict::Machine& m, uint64_t stop) : h(m.hierarchy()), stop(stop) {}
    void access(const memory::Access& a) override {
      if (seen++ < stop) h.access(a);
    }
  };
  for (size_t f : {size_t(0), r.frames.size() / 2, r.frames.size() - 1}) {
    Stop s(m, r.frame_accesses[f]);
    schedule::TraceOptions to = predict::trace_options_for(m);
    to.lane_detail = true;
    to.step_loop = r.step_loop;
    schedule::trace_kernel(k, s, to);
    CAPTURE(f);
    for (int level = 0; level <= s.h.level_count(); ++level) {
      const memory::Counters c = s.h.counters(level);
      const memory::Counters& g = r.frame_counters[f][size_t(level)];
      CHECK(c.accesses == g.accesses);
      CHECK(c.hits == g.hits);
      CHECK(c.misses == g.misses);
      CHECK(c.read_bytes == g.read_bytes);
      CHECK(c.write_bytes == g.write_bytes);
    }
  }
}

TEST_CASE("tiles gpu: fp16 matrices, counted in 2-byte elements and half the sectors") {
  // kGemm in fp16: a row of 32 elements is 64 B, two sectors; a sector holds 16 elements.
  constexpr const char* kGemm16 = "A: [32, 32] fp16\nB: [32, 32] fp16\nC = A @ B\n";
  AppState state = test::state_for(kGemm16);
  JobProgress progress;
  const GpuTilesResult r = record_gpu_tiles(kernel_after(state, kRowsToBlocks), roomy_gpu(), 5,
                                            2, progress);
  REQUIRE(r.frames.size() == 1 + 4 * 32);
  // What each level holds, in elements, is what it held in fp32: the same rows, half the bytes.
  CHECK(held(r, r.frames.front().l1, "A") == 4 * 32);
  CHECK(held(r, r.frames.front().l1, "B") == 32 * 32);
  CHECK(held(r, r.frames.front().l2, "C") == 16 * 32);
  CHECK(held(r, r.frames.back().l2, "A") == 32 * 32);
  // Warp 2 of block 5 at k = 0: B[0, 0…31] is 64 B, two sectors (four in fp32).
  const GpuTilesFrame& step0 = r.frames[33];
  for (const GpuWarpAccess& w : step0.warp)
    if (r.grids[size_t(w.grid)].name == "B") {
      CHECK(w.lane_bytes == 2);
      CHECK(w.sectors == 2);
      CHECK(w.ideal_sectors == 2);
      CHECK(w.lane_elem.back() == 31);
    }
  // A's sector at k = 0 covers columns 0…15 of each row (32 B of 2-byte elements).
  CHECK(step0.block[0].c0 == 0);
  CHECK(step0.block[0].c1 == 15);
  CHECK(r.warp_sectors == 32 * 1 + 32 * 2 + 2);

  // Lanes down a column: 32 elements 64 B apart, 32 sectors where 2 would hold their 64 B.
  AppState cols = test::state_for(kGemm16);
  const GpuTilesResult c =
      record_gpu_tiles(kernel_after(cols, kLanesDownColumns), roomy_gpu(), 0, 0, progress);
  CHECK(c.warp_sectors == 32 * 32 + 32 * 1 + 32);
  CHECK(c.warp_ideal_sectors == 32 * 2 + 32 * 1 + 2);
  bool saw_a = false;
  for (const GpuTilesFrame& f : c.frames)
    for (const GpuWarpAccess& w : f.warp)
      if (c.grids[size_t(w.grid)].name == "A" && !saw_a) {
        saw_a = true;
        CHECK(w.lane_elem[1] - w.lane_elem[0] == 32);  // one row apart, in elements
        const std::string text = describe_warp_access(c, w);
        CHECK(text.find("= 1024 B moved for 64 B used") != std::string::npos);
        CHECK(text.find("neighbouring lanes 64 B apart") != std::string::npos);
      }
  CHECK(saw_a);
}

}  // namespace tilescope::core

// Counters over time and the cache at each frame (issue #32), recorded by the Tiles walk through a
// CPU machine's hierarchy: a hand count on `tiny`, every frame against a re-simulation stopped at
// that frame's access, the end against the Memory view's simulation, and the CSV.
#include "app/core/exports.h"
#include "app/core/tile_grid.h"
#include "app/core/workbench.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"
#include "sim/schedule/trace.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

using namespace tilescope::core;
namespace memory = tilescope::memory;
namespace predict = tilescope::predict;
namespace schedule = tilescope::schedule;

namespace {

// Forwards the first `limit` accesses of a trace and drops the rest: the simulation stopped at
// access `limit`.
class StopSink final : public memory::AccessSink {
 public:
  StopSink(memory::AccessSink& next, uint64_t limit) : m_next(next), m_limit(limit) {}
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    const uint64_t take = std::min<uint64_t>(n, m_limit - std::min(m_limit, m_seen));
    if (take) m_next.access_batch(a, size_t(take));
    m_seen += n;
  }

 private:
  memory::AccessSink& m_next;
  uint64_t m_limit, m_seen = 0;
};

bool same_cells(const CacheGrid& a, const CacheGrid& b) {
  if (a.sets != b.sets || a.ways != b.ways) return false;
  for (size_t i = 0; i < a.cells.size(); ++i) {
    const CacheCell &x = a.cells[i], &y = b.cells[i];
    if (x.valid != y.valid) return false;
    if (x.valid && (x.line != y.line || x.tensor != y.tensor ||
                    x.dirty_sectors != y.dirty_sectors || x.mru != y.mru))
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("counters over time on tiny: 16 elements of relu counted by hand") {
  AppState state = test::state_for("x: [16]\ny = relu(x)\n");
  const schedule::Kernel& k = *state.workbench.kernel();
  const predict::Machine tiny = predict::load_machine("tiny");
  JobProgress progress;
  const TilesResult t = record_tiles(k, progress, &tiny);
  CHECK(t.machine == "tiny");
  REQUIRE(t.level_names == std::vector<std::string>{"L1", "L2", "DRAM"});
  // One frame per iteration of i, and frame 0 before any access.
  REQUIRE(t.frame_counters.size() == 17);
  REQUIRE(t.frames.size() == 17);
  // Each iteration reads x[i] and writes y[i]: 2 accesses. x's 64 bytes are one line, y's too:
  // the first iteration misses twice in L1 (a read miss, a write-allocate miss), every later one
  // hits twice.
  CHECK(t.frame_accesses[16] == 32);
  const std::vector<LevelWindow> first = counters_window(t, 1);
  CHECK(first[0].accesses == 2);
  CHECK(first[0].hits == 0);
  CHECK(first[1].accesses == 2);  // the two fills reach L2 and miss there too
  CHECK(first[1].hits == 0);
  CHECK(first[2].bytes == 128);  // two lines from DRAM
  for (size_t f = 2; f <= 16; ++f) {
    const std::vector<LevelWindow> w = counters_window(t, f);
    CHECK(w[0].accesses == 2);
    CHECK(w[0].hits == 2);
    CHECK(w[2].bytes == 0);
  }
  // The end: L1 holds x's line (clean, used 1 access ago) and y's (dirty, the last access).
  const schedule::TraceLayout layout = schedule::trace_layout(k, schedule::TraceOptions{});
  REQUIRE(t.frame_grids.back().size() == 2);  // tiny's L1 and L2 are both small enough to draw
  const CacheGrid& l1 = t.frame_grids.back()[0];
  int valid = 0;
  for (const CacheCell& c : l1.cells) {
    if (!c.valid) continue;
    ++valid;
    const bool is_x = c.line * 64 == layout.tensor_base[0];
    CHECK((is_x || c.line * 64 == layout.tensor_base[1]));
    CHECK(c.age == (is_x ? 1u : 0u));
    CHECK(bool(c.dirty_sectors) == !is_x);
  }
  CHECK(valid == 2);
  // Frame 0: an empty cache.
  for (const CacheCell& c : t.frame_grids.front()[0].cells) CHECK_FALSE(c.valid);

  // CSV: a header and one row per frame; row 1 is frame 1's window.
  const std::string csv = table_csv(counters_over_time_table(t));
  std::istringstream lines(csv);
  std::string header, row0, row1;
  std::getline(lines, header);
  std::getline(lines, row0);
  std::getline(lines, row1);
  CHECK(header ==
        "frame,step,accesses,L1_accesses,L1_hits,L1_hit_rate,L1_bytes,L2_accesses,L2_hits,"
        "L2_hit_rate,L2_bytes,DRAM_accesses,DRAM_hits,DRAM_hit_rate,DRAM_bytes");
  // L1 serves the two 4-byte accesses (8 bytes); L2 and DRAM move the two 64-byte lines.
  CHECK(row1 == "1,1,2,2,0,0,8,2,0,0,128,2,2,1,128");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 18);
}

TEST_CASE("every frame's counters and caches equal a simulation stopped at that frame's access") {
  AppState state = test::state_for("x: [24, 64]\nW: [32, 64] weight\ny = x @ W.T\n");
  REQUIRE(test::run(state, "apply \"tile(i, j, 8, 8)\"") == "");
  const schedule::Kernel& k = *state.workbench.kernel();
  const predict::Machine tiny = predict::load_machine("tiny");
  JobProgress progress;
  const TilesResult t = record_tiles(k, progress, &tiny);
  REQUIRE(t.frame_counters.size() > 8);
  const size_t n = t.frame_counters.size();
  for (size_t f : {size_t(1), n / 3, n / 2, n - 2, n - 1}) {
    CAPTURE(f);
    memory::Hierarchy h(tiny.hierarchy());
    StopSink stop(h, t.frame_accesses[f]);
    schedule::trace_kernel(k, stop, schedule::TraceOptions{});
    CHECK(h.trace_accesses() == t.frame_accesses[f]);
    for (int level = 0; level <= h.level_count(); ++level) {
      const memory::Counters c = h.counters(level);
      CHECK(c.accesses == t.frame_counters[f][size_t(level)].accesses);
      CHECK(c.hits == t.frame_counters[f][size_t(level)].hits);
      CHECK(c.read_bytes == t.frame_counters[f][size_t(level)].read_bytes);
      CHECK(c.write_bytes == t.frame_counters[f][size_t(level)].write_bytes);
    }
    for (const CacheGrid& g : t.frame_grids[f]) {
      const std::optional<CacheGrid> again = snapshot_cache_grid(h, g.level);
      REQUIRE(again);
      CHECK(same_cells(g, *again));
    }
  }
  // The last frame is the whole walk: the Memory view's simulation agrees on L1 (the end's
  // write-back, which the frames leave out, adds traffic only below it).
  const MemoryResult m = simulate_kernel(k, *state.graph(), tiny, progress);
  CHECK(m.levels[0].total.accesses == t.frame_counters.back()[0].accesses);
  CHECK(m.levels[0].total.hits == t.frame_counters.back()[0].hits);
  // A GPU machine records no counters (the walk is the CPU loop nest's).
  const predict::Machine h200 = predict::load_machine("h200");
  CHECK(record_tiles(k, progress, &h200).frame_counters.empty());
}

TEST_CASE("tiles: an fp16 GEMM's grids count each 2-byte element where it is") {
  // C = A @ B with 32 × 32 fp16 operands, ijk: every element of A and of B is read 32 times, so
  // every bin of their 32 × 32 grids (one element each) ends at 32; C's bins at one write each.
  tilescope::core::AppState state =
      tilescope::core::test::state_for("A: [32, 32] fp16\nB: [32, 32] fp16\nC = A @ B\n");
  REQUIRE(state.workbench.kernel());
  JobProgress progress;
  const TilesResult t = record_tiles(*state.workbench.kernel(), progress);
  REQUIRE(t.grids.size() == 3u);
  const std::vector<uint32_t>& last = t.frames.back();
  for (const TileGrid& g : t.grids) {
    CAPTURE(g.name);
    REQUIRE(g.rows * g.cols == 32 * 32);
    REQUIRE(g.bins() == 32u * 32);
    const uint32_t each = g.output ? 1 : 32;
    for (size_t b = 0; b < g.bins(); ++b) CHECK(last[g.offset + b] == each);
  }
}

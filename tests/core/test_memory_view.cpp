// The Memory view's explanations (issue #7): tile working sets against hand counts, the "why this
// number" formulas against the analytic model's closed form on a cache that holds everything, the
// `memory formula` command, and the set × way grid of a hand-driven tiny cache.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/memory_grid.h"
#include "app/core/memory_model.h"
#include "app/core/workbench.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>

using namespace tilescope::core;
namespace memory = tilescope::memory;
namespace predict = tilescope::predict;
namespace schedule = tilescope::schedule;

namespace {

// x[32, 128], W[64, 128], b[64] → y[32, 64], the three ops fused into one kernel.
const char* kModel = "x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n";

using test::run;

AppState model_state() {
  AppState state;
  state.model.text = kModel;
  REQUIRE(reparse_model(state));
  update_state(state);
  REQUIRE(state.workbench.kernel());
  REQUIRE(run(state, "apply fuse(matmul0, add0, relu0)") == "");
  return state;
}

const TensorTile* tile_of(const WorkingSet& ws, const std::string& name) {
  for (const TensorTile& t : ws.tiles)
    if (t.name == name) return &t;
  return nullptr;
}

using test::big_cache_machine;

}  // namespace

TEST_CASE("working sets of a tiled GEMM are the tile boxes counted by hand") {
  AppState state = model_state();
  REQUIRE(run(state, "apply tile(i, j, 8, 16)") == "");
  const schedule::Kernel& k = *state.workbench.kernel();
  std::vector<std::string> loops;
  for (const schedule::Loop& l : k.loops) loops.push_back(l.name);
  REQUIRE(loops == std::vector<std::string>{"i.o", "j.o", "i.i", "j.i", "k"});
  CHECK(tile_depth(k) == 2);  // just inside j.o, the innermost outer tile loop

  const std::vector<WorkingSet> ws = working_sets(k);
  REQUIRE(ws.size() == 6);
  // One tile (loops i.i, j.i, k): x 8×128, W 16×128, b 16, y 8×16, fp32.
  const WorkingSet& tile = ws[2];
  CHECK(tile.loop == "i.i");
  for (const std::string name : {"x", "W", "b", "y"}) {
    CAPTURE(name);
    REQUIRE(tile_of(tile, name));
  }
  CHECK(tile_of(tile, "x")->extents == std::vector<int64_t>{8, 128});
  CHECK(tile_of(tile, "W")->extents == std::vector<int64_t>{16, 128});
  CHECK(tile_of(tile, "b")->extents == std::vector<int64_t>{16});
  CHECK(tile_of(tile, "y")->extents == std::vector<int64_t>{8, 16});
  CHECK(tile.bytes == (8 * 128 + 16 * 128 + 16 + 8 * 16) * 4);
  // The whole nest touches every element once: 4 × (32·128 + 64·128 + 64 + 32·64) bytes.
  CHECK(ws[0].bytes == 4 * (32 * 128 + 64 * 128 + 64 + 32 * 64));
  // One run of j.o.. (i.o fixed): x 8×128, all of W and b, y 8×64.
  CHECK(ws[1].bytes == 4 * (8 * 128 + 64 * 128 + 64 + 8 * 64));
  // One iteration of k: one element of each tensor.
  CHECK(ws[5].bytes == 4 * 4);
  CHECK(ws[5].loop.empty());

  // Untiled: the tile is the whole nest; a wider tile grows the working set.
  REQUIRE(run(state, "undo") == "");
  CHECK(tile_depth(*state.workbench.kernel()) == 0);
  REQUIRE(run(state, "apply tile(i, j, 16, 32)") == "");
  const WorkingSet wide = working_sets(*state.workbench.kernel())[2];
  CHECK(wide.bytes == (16 * 128 + 32 * 128 + 32 + 16 * 32) * 4);
}

TEST_CASE("formulas match the closed form on a cache that holds the whole kernel") {
  AppState state = model_state();
  const schedule::Kernel& k = *state.workbench.kernel();
  JobProgress progress;
  const MemoryResult r =
      simulate_kernel(k, *state.workbench.program()->graph, big_cache_machine(), progress);
  REQUIRE(r.analytic);
  CHECK(r.analytic_error.empty());
  // Every line misses once: x has 32·128·4 / 64 = 256 lines, W 512, b 4, y 128.
  const FormulaView x = memory_formula(r, "L1 x");
  REQUIRE(x.rows.size() == 1);
  CHECK(x.rows[0].simulated == 256);
  REQUIRE(x.rows[0].analytic);
  CHECK(x.rows[0].analytic->value == 256);
  CHECK(relative_difference(x.rows[0].simulated, x.rows[0].analytic->value) == 0);
  CHECK(x.rows[0].analytic->to_string().find("misses(L1, x)") == 0);

  const FormulaView l1 = memory_formula(r, "L1");
  CHECK(l1.rows[0].simulated == 256 + 512 + 4 + 128);
  CHECK(l1.rows[0].analytic->value == 256 + 512 + 4 + 128);

  // Main memory: every line read once (y too: write-allocate fetches it), y written back once.
  const FormulaView dram = memory_formula(r, "DRAM");
  REQUIRE(dram.rows.size() == 2);
  CHECK(dram.rows[0].simulated == (256 + 512 + 4 + 128) * 64);
  CHECK(dram.rows[0].analytic->value == (256 + 512 + 4 + 128) * 64);
  CHECK(dram.rows[1].simulated == 128 * 64);
  CHECK(dram.rows[1].analytic->value == 128 * 64);
  const FormulaView dram_y = memory_formula(r, "DRAM y");
  CHECK(dram_y.rows[0].analytic->value == 128 * 64);
  CHECK(dram_y.rows[1].analytic->value == 128 * 64);
  const FormulaView dram_w = memory_formula(r, "DRAM W");
  CHECK(dram_w.rows[0].simulated == 512 * 64);
  CHECK(dram_w.rows[1].analytic->value == 0);  // W is only read

  CHECK_THROWS_WITH_AS(memory_formula(r, "L3"), doctest::Contains("no level 'L3'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(memory_formula(r, "L1 z"), doctest::Contains("no tensor 'z'"),
                       std::invalid_argument);
  CHECK(relative_difference(100, 110) == doctest::Approx(0.1));
  CHECK(std::isinf(relative_difference(0, 3)));
}

TEST_CASE("a GPU simulation says the analytic model does not cover it") {
  AppState state = model_state();
  JobProgress progress;
  const MemoryResult r = simulate_kernel(*state.workbench.kernel(), *state.workbench.program()->graph,
                                         predict::load_machine("h200"), progress);
  CHECK_FALSE(r.analytic);
  CHECK(r.analytic_error.find("covers CPU loop nests only") != std::string::npos);
  const FormulaView v = memory_formula(r, r.levels[0].name + " x");
  CHECK_FALSE(v.rows[0].analytic);
  CHECK(v.not_covered == r.analytic_error);
}

TEST_CASE("memory formula commands open, check and close the popup") {
  for (const char* line : {"memory formula L1", "memory formula L1 x", "memory formula off",
                           "memory formula L1 acc (stack)"}) {
    CAPTURE(line);
    CHECK(command_to_string(parse_command(line)) == line);
  }
  CHECK_THROWS_WITH_AS(parse_command("memory"), doctest::Contains("formula"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("memory formula"), doctest::Contains("needs a level"),
                       CommandError);

  AppState state = model_state();
  REQUIRE(run(state, "machine tiny") == "");
  // Before a result: the level is checked against the machine.
  CHECK(run(state, "memory formula L7").find("no level 'L7'") != std::string::npos);
  CHECK(state.workbench.memory_formula.empty());
  REQUIRE(run(state, "simulate") == "");
  for (int i = 0; i < 6000 && state.workbench.busy(); ++i) {
    workbench_poll(state.workbench);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  workbench_poll(state.workbench);
  REQUIRE(state.workbench.memory_result());
  CHECK(run(state, "memory formula L2 W") == "");
  CHECK(state.workbench.memory_formula == "L2 W");
  CHECK(run(state, "memory formula L2 nope").find("no tensor 'nope'") != std::string::npos);
  CHECK(state.workbench.memory_formula == "L2 W");  // a bad target leaves the popup as it was
  CHECK(run(state, "memory formula off") == "");
  CHECK(state.workbench.memory_formula.empty());
  // tiny's L1 (8 sets × 2 ways) and L2 (32 sets × 4 ways) are both small enough to draw.
  const MemoryResult& r = *state.workbench.memory_result();
  REQUIRE(r.grids.size() == 2);
  CHECK(r.grids[0].sets == 8);
  CHECK(r.grids[0].ways == 2);
  CHECK(r.grids[1].sets == 32);
  CHECK(r.grids[1].ways == 4);
}

TEST_CASE("the set × way grid shows lines, owners, dirty marks and the MRU way") {
  // tiny's L1 on its own: 1 KiB, 64 B lines, 2 ways, so 8 sets; line L goes to set L mod 8.
  memory::HierarchyConfig cfg;
  memory::CacheConfig l1;
  l1.name = "L1";
  l1.size_bytes = 1024;
  l1.line_bytes = 64;
  l1.ways = 2;
  cfg.levels.push_back(l1);
  memory::Hierarchy h(cfg);
  const auto touch = [&](uint64_t line, bool write, int16_t tensor) {
    memory::Access a;
    a.addr = line * 64;
    a.kind = write ? memory::AccessKind::Write : memory::AccessKind::Read;
    a.tensor = tensor;
    h.access(a);
  };
  touch(0, false, 0);   // set 0, way 0
  touch(8, false, 1);   // set 0, way 1
  touch(0, false, 0);   // line 0 used again: line 8 is now the LRU way
  touch(16, false, 2);  // set 0 is full: evicts line 8 from way 1
  touch(1, true, 3);    // set 1, way 0, written
  h.finish();
  const std::optional<CacheGrid> g = snapshot_cache_grid(h, 0);
  REQUIRE(g);
  CHECK(g->sets == 8);
  CHECK(g->ways == 2);
  CHECK(g->at(0, 0).valid);
  CHECK(g->at(0, 0).line == 0);
  CHECK(g->at(0, 0).tensor == 0);
  CHECK_FALSE(g->at(0, 0).mru);
  CHECK(g->at(0, 1).line == 16);
  CHECK(g->at(0, 1).tensor == 2);
  CHECK(g->at(0, 1).mru);
  CHECK(g->at(0, 1).dirty_sectors == 0);
  CHECK(g->at(1, 0).line == 1);
  CHECK(g->at(1, 0).tensor == 3);
  CHECK(g->at(1, 0).dirty_sectors != 0);
  CHECK_FALSE(g->at(1, 1).valid);
  int valid = 0;
  for (const CacheCell& c : g->cells) valid += c.valid;
  CHECK(valid == 3);
  CHECK_FALSE(snapshot_cache_grid(h, 1));  // no such level

  // A level too big to draw cell by cell has no grid: 128 sets.
  memory::HierarchyConfig big;
  memory::CacheConfig l2 = l1;
  l2.size_bytes = 128 * 2 * 64;
  big.levels.push_back(l2);
  memory::Hierarchy hb(big);
  CHECK_FALSE(snapshot_cache_grid(hb, 0));
}

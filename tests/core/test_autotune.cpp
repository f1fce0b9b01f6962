// Autotune sweeps (issue #7) without a display: the grid's tile sizes, the loop choice, which
// points the schedule refuses (hand-counted accumulator sizes), the predicted times against a
// hand count of the traffic, best-point selection, the rank correlation, and the script commands
// that drive both sweeps (the CPU one JIT-compiles a tiny kernel).
#include "app/core/app_state.h"
#include "app/core/autotune_jobs.h"
#include "app/core/commands.h"
#include "app/core/workbench.h"
#include "sim/predict/machine.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/transform.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace tilescope::core;
namespace schedule = tilescope::schedule;
namespace predict = tilescope::predict;

namespace {

// y[128, 256] = relu(x[128, 64] @ W[256, 64].T + b): the first kernel is the MatMul with loops
// i (128), j (256), k (64, the reduction).
constexpr int64_t M = 128, N = 256, K = 64;
const char* kModel = "x: [128, 64]\nW: [256, 64] weight\nb: [256] weight\ny = relu(x @ W.T + b)\n";

using test::run;
using test::state_for;
inline void wait_jobs(AppState& state) { test::wait_jobs(state, 180); }

// Everything the kernel touches (< 360 KiB) stays resident; the roofline is max(DRAM bytes / 10
// GB/s, FLOPs / 1 TFLOP/s).
predict::Machine big_cache_machine() { return test::big_cache_machine("1 TFLOP/s"); }

}  // namespace

TEST_CASE("autotune tile sizes: powers of two from 4 up to the extent, thinned evenly") {
  CHECK(autotune_tile_sizes(64) == std::vector<int64_t>{4, 8, 16, 32, 64});
  CHECK(autotune_tile_sizes(100) == std::vector<int64_t>{4, 8, 16, 32, 64});  // 128 > 100
  CHECK(autotune_tile_sizes(7) == std::vector<int64_t>{4});
  CHECK(autotune_tile_sizes(3).empty());
  // 8 sizes 4…512 thinned to 4: indices 0, 7/3, 14/3, 7 rounded = 0, 2, 5, 7.
  CHECK(autotune_tile_sizes(512, 4) == std::vector<int64_t>{4, 16, 128, 512});
  // 5 sizes 4…64 to 4: indices 0, 1.33, 2.67, 4 → 0, 1, 3, 4.
  CHECK(autotune_tile_sizes(64, 4) == std::vector<int64_t>{4, 8, 32, 64});
  CHECK(autotune_tile_sizes(16, 4) == std::vector<int64_t>{4, 8, 16});  // fewer than asked: all
  CHECK(schedule::to_string(schedule::StepSpec{autotune_step("i", "j", 32, 64)}) ==
        "tile(i, j, 32, 64)");
}

TEST_CASE("autotune loops: the two innermost, or two named ones in loop order") {
  AppState s = state_for(kModel);
  const schedule::Kernel& k = *s.workbench.kernel();
  const AutotuneLoops a = choose_autotune_loops(k);
  CHECK(a.error.empty());
  CHECK(a.a == "j");
  CHECK(a.b == "k");
  CHECK(a.extent_a == N);
  CHECK(a.extent_b == K);
  const AutotuneLoops named = choose_autotune_loops(k, "k", "i");  // comes back outer first
  CHECK(named.a == "i");
  CHECK(named.b == "k");
  CHECK(named.extent_b == K);
  CHECK(choose_autotune_loops(k, "i", "z").error.find("no loop named 'z'") != std::string::npos);
  CHECK(choose_autotune_loops(k, "i", "i").error.find("must differ") != std::string::npos);
  // After parallel(i), i is no longer a serial loop to split.
  REQUIRE(run(s, "apply parallel(i)").empty());
  REQUIRE(s.workbench.last);
  REQUIRE(s.workbench.last->ok);
  CHECK(choose_autotune_loops(*s.workbench.kernel(), "i", "j").error.find("already") !=
        std::string::npos);
  const AutotuneLoops rest = choose_autotune_loops(*s.workbench.kernel());
  CHECK(rest.a == "j");
  CHECK(rest.b == "k");
  // A loop with fewer than 8 iterations is passed over for the next one out.
  AppState small = state_for("x: [64, 4]\nW: [32, 4] weight\ny = x @ W.T\n");
  const AutotuneLoops outer = choose_autotune_loops(*small.workbench.kernel());
  CHECK(outer.a == "i");
  CHECK(outer.b == "j");
}

TEST_CASE("simulator sweep over i and j: every point's predicted time from a hand count") {
  AppState s = state_for(kModel);
  const predict::Machine m = big_cache_machine();
  JobProgress progress;
  const AutotuneLoops loops = choose_autotune_loops(*s.workbench.kernel(), "i", "j");
  const AutotuneGrid g = autotune_sweep_simulator(*s.workbench.program(), loops, m, progress);
  CHECK(g.sizes_a == std::vector<int64_t>{4, 8, 16, 32, 64, 128});
  CHECK(g.sizes_b == std::vector<int64_t>{4, 8, 16, 32, 64, 128, 256});
  REQUIRE(g.points.size() == 6 * 7);
  CHECK(g.at(2, 3).tile_a == 16);
  CHECK(g.at(2, 3).tile_b == 32);
  CHECK(g.at(2, 3).step == "tile(i, j, 16, 32)");
  // Everything fits the 1 MiB cache, so every tiling moves the same DRAM bytes: each line of x,
  // W and y once, plus y's lines written back: (128·64 + 256·64 + 2·128·256) · 4 B.
  const double bytes = double(M * K + N * K + 2 * M * N) * 4;
  CHECK(bytes == 360448.0);
  const double expected = bytes / 10e9;  // > FLOPs / peak = 2·128·256·64 / 1e12 = 4.2 µs
  for (const AutotunePoint& p : g.points) {
    CAPTURE(p.step);
    CHECK_FALSE(p.refused);
    CHECK(p.ok());
    CHECK(p.seconds == doctest::Approx(expected).epsilon(1e-9));
  }
  CHECK(g.best == 0);  // all equal: the first (smallest tiles) wins the tie
  CHECK(progress.fraction.load() == 1.0);
}

TEST_CASE("simulator sweep over i and k: the refused points are those whose sums do not fit") {
  // tile(i, k, Ti, Tk) orders i.o, k.o, j, i.i, k.i: the reduction k.o runs outside j and i.i, so
  // the running sums of Ti × 256 outputs are kept at once: Ti · 256 · 4 B, refused above 64 KiB,
  // i.e. for Ti > 64 — the whole Ti = 128 row, nothing else.
  AppState s = state_for(kModel);
  JobProgress progress;
  const AutotuneLoops loops = choose_autotune_loops(*s.workbench.kernel(), "i", "k");
  const AutotuneGrid g =
      autotune_sweep_simulator(*s.workbench.program(), loops, big_cache_machine(), progress);
  REQUIRE(g.sizes_a.size() == 6);  // 4 … 128
  REQUIRE(g.sizes_b.size() == 5);  // 4 … 64
  for (size_t ia = 0; ia < g.sizes_a.size(); ++ia)
    for (size_t ib = 0; ib < g.sizes_b.size(); ++ib) {
      const AutotunePoint& p = g.at(ia, ib);
      CAPTURE(p.step);
      const bool fits = p.tile_a * N * 4 <= 64 * 1024;
      CHECK(p.refused == !fits);
      if (p.refused) CHECK(p.why.find("128 KiB") != std::string::npos);
    }
  // The best is the fastest of the points that were not refused (a plain scan here).
  int best = -1;
  for (size_t i = 0; i < g.points.size(); ++i)
    if (!g.points[i].refused && (best < 0 || g.points[i].seconds < g.points[size_t(best)].seconds))
      best = int(i);
  CHECK(g.best == best);
}

TEST_CASE("best point: the smallest time among points with a time, first on ties") {
  std::vector<AutotunePoint> pts(5);
  pts[0].seconds = 3;
  pts[1].refused = true;  // a refused point has no time (0 must not win)
  pts[2].seconds = 1;
  pts[3].failed = true;
  pts[4].seconds = 1;
  CHECK(autotune_best(pts) == 2);
  pts[2].failed = true;
  CHECK(autotune_best(pts) == 4);
  CHECK(autotune_best({}) == -1);
}

TEST_CASE("Spearman rank correlation: hand-computed values, ties averaged") {
  // b's ranks with the tie at 7 averaged: 1, 2, 3.5, 5, 3.5; a's: 1…5. Deviations from the mean
  // 3: (-2,-1,0,1,2) and (-2,-1,0.5,2,0.5): Σab = 8, Σa² = 10, Σb² = 9.5 → 8 / √95.
  CHECK(spearman_rank_correlation({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}) ==
        doctest::Approx(8.0 / std::sqrt(95.0)));
  CHECK(spearman_rank_correlation({1, 2, 3, 4}, {40, 30, 20, 10}) == doctest::Approx(-1.0));
  // No ties: 1 − 6 Σd² / (n (n² − 1)) with d = (1, −1, 0, 0): 1 − 12 / 60 = 0.8.
  CHECK(spearman_rank_correlation({1, 2, 3, 4}, {2, 1, 3, 4}) == doctest::Approx(0.8));
  CHECK(std::isnan(spearman_rank_correlation({1, 2}, {1, 2})));        // too few
  CHECK(std::isnan(spearman_rank_correlation({1, 2, 3}, {5, 5, 5})));  // constant
}

TEST_CASE("agreement of two grids: common points, rank of the simulator's best on hardware") {
  const auto grid = [](AutotuneMode mode, std::vector<double> t) {
    AutotuneGrid g;
    g.mode = mode;
    g.loop_a = "i";
    g.loop_b = "j";
    g.sizes_a = {4, 8};
    g.sizes_b = {4, 8};
    for (size_t i = 0; i < 4; ++i) {
      AutotunePoint p;
      p.tile_a = g.sizes_a[i / 2];
      p.tile_b = g.sizes_b[i % 2];
      p.seconds = t[i];
      g.points.push_back(p);
    }
    g.best = autotune_best(g.points);
    return g;
  };
  const AutotuneGrid sim = grid(AutotuneMode::Simulator, {1, 2, 3, 4});
  const AutotuneGrid hw = grid(AutotuneMode::Cpu, {2, 1, 3, 4});
  const AutotuneAgreement a = autotune_agreement(sim, hw);
  CHECK(a.common == 4);
  CHECK(a.spearman == doctest::Approx(0.8));
  CHECK(a.sim_best == "tile(i, 4), tile(j, 4)");
  CHECK(a.sim_best_hw_rank == 2);  // one hardware time (1) is below its 2
  CHECK(a.hw_best == "tile(i, 4), tile(j, 8)");
  AutotuneGrid hw2 = hw;
  hw2.points[1].refused = true;  // left out of the comparison
  hw2.best = autotune_best(hw2.points);
  const AutotuneAgreement b = autotune_agreement(sim, hw2);
  CHECK(b.common == 3);
  CHECK(b.sim_best_hw_rank == 1);
  CHECK(b.spearman == doctest::Approx(1.0));
}

TEST_CASE("autotune script commands: parse, round-trip and refuse bad input") {
  for (const char* line : {"autotune sim", "autotune cpu", "autotune show", "autotune hide",
                           "autotune loops i k", "autotune loops auto"}) {
    CAPTURE(line);
    const Command c = parse_command(line);
    CHECK(c.kind == CommandKind::Autotune);
    CHECK(command_to_string(c) == line);
  }
  CHECK_THROWS_AS(parse_command("autotune"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("autotune fast"),
                       "autotune: expected sim, cpu, show, hide or loops A B, got 'fast'",
                       CommandError);
  AppState s = state_for(kModel);
  CHECK(run(s, "autotune loops i").find("expected two loop names") != std::string::npos);
  CHECK(run(s, "autotune loops i q").find("no loop named 'q'") != std::string::npos);
  CHECK(run(s, "autotune sim now").find("takes no arguments") != std::string::npos);
  CHECK_FALSE(s.workbench.autotune.show);
  CHECK(run(s, "autotune show").empty());
  CHECK(s.workbench.autotune.show);
  CHECK(run(s, "autotune hide").empty());
  CHECK_FALSE(s.workbench.autotune.show);
}

TEST_CASE("autotune sim command: a background sweep cached by schedule, loops and machine") {
  AppState s = state_for(kModel);
  s.workbench.machine = big_cache_machine();
  s.workbench.machine_name = "bigcache";
  REQUIRE(run(s, "autotune loops i k").empty());
  REQUIRE(run(s, "autotune sim").empty());
  CHECK(s.workbench.autotune.show);
  wait_jobs(s);
  const AutotuneGrid* g = autotune_sim_result(s.workbench);
  REQUIRE(g);
  CHECK(g->loop_a == "i");
  CHECK(g->loop_b == "k");
  CHECK(g->machine == "bigcache");
  CHECK(g->points.size() == 30);
  size_t refused = 0;
  for (const AutotunePoint& p : g->points) refused += p.refused;
  CHECK(refused == 5);  // the Ti = 128 row
  // Another schedule is another key: nothing cached for it until swept.
  REQUIRE(run(s, "apply tile(k, 8)").empty());
  CHECK(autotune_sim_result(s.workbench) == nullptr);
  REQUIRE(run(s, "undo").empty());
  CHECK(autotune_sim_result(s.workbench) == g);
  REQUIRE(run(s, "autotune loops auto").empty());
  CHECK(autotune_sim_result(s.workbench) == nullptr);  // now j × k
}

TEST_CASE("autotune cpu command: every point compiled, verified and timed; cancel stops it") {
  // i (8) and j (8): tiles {4, 8} each, 4 compiles.
  AppState s = state_for("x: [8, 16]\nW: [8, 16] weight\ny = x @ W.T\n");
  REQUIRE(run(s, "autotune loops i j").empty());
  // A cancelled sweep leaves an error for its key and no grid.
  REQUIRE(run(s, "autotune cpu").empty());
  REQUIRE(run(s, "cancel").empty());
  wait_jobs(s);
  CHECK(autotune_cpu_result(s.workbench) == nullptr);
  const auto it = s.workbench.autotune.cpu_errors.find(autotune_cpu_key(s.workbench));
  REQUIRE(it != s.workbench.autotune.cpu_errors.end());
  CHECK(it->second == "cancelled");

  // Asked again, it runs to the end.
  REQUIRE(run(s, "autotune cpu").empty());
  wait_jobs(s);
  const AutotuneGrid* g = autotune_cpu_result(s.workbench);
  if (!g)
    for (const auto& [key, error] : s.workbench.autotune.cpu_errors) MESSAGE(error);
  REQUIRE(g);
  CHECK(s.workbench.autotune.cpu_errors.empty());
  CHECK(g->mode == AutotuneMode::Cpu);
  CHECK(g->sizes_a == std::vector<int64_t>{4, 8});
  CHECK(g->sizes_b == std::vector<int64_t>{4, 8});
  int best = -1;
  for (size_t i = 0; i < g->points.size(); ++i) {
    const AutotunePoint& p = g->points[i];
    CAPTURE(p.step);
    CAPTURE(p.why);
    CHECK(p.ok());
    CHECK(p.seconds > 0);
    CHECK(p.detail.find("verified") == 0);
    if (best < 0 || p.seconds < g->points[size_t(best)].seconds) best = int(i);
  }
  CHECK(g->best == best);
}

namespace {

// Every field of two grids, point by point, and their notes and best point.
void check_same_grid(const AutotuneGrid& a, const AutotuneGrid& b) {
  CHECK(a.sizes_a == b.sizes_a);
  CHECK(a.sizes_b == b.sizes_b);
  CHECK(a.notes == b.notes);
  CHECK(a.best == b.best);
  REQUIRE(a.points.size() == b.points.size());
  for (size_t i = 0; i < a.points.size(); ++i) {
    const AutotunePoint &p = a.points[i], &q = b.points[i];
    CAPTURE(p.step);
    CHECK(p.step == q.step);
    CHECK(p.refused == q.refused);
    CHECK(p.failed == q.failed);
    CHECK(p.why == q.why);
    CHECK(p.seconds == q.seconds);  // the same computation: bit for bit
    CHECK(p.detail == q.detail);
  }
}

}  // namespace

TEST_CASE("simulator sweep on several threads: the same grid as on one thread") {
  // On `tiny` (1 KiB L1, 8 KiB L2) with k outside j the analytic model's times differ per tiling
  // and one point is refused; on h200 every point is a trace simulation (with its note).
  AppState s = state_for(kModel);
  REQUIRE(run(s, "apply reorder(i, k, j)").empty());
  const AutotuneLoops loops = choose_autotune_loops(*s.workbench.kernel(), "i", "j");
  for (const char* name : {"tiny", "h200"}) {
    CAPTURE(name);
    const predict::Machine m = predict::load_machine(name);
    JobProgress one, many;
    // 4 × 4 points on tiny; 3 × 3 on h200, whose trace simulations are the slow ones (still
    // more points than workers).
    const int per_axis = std::string(name) == "tiny" ? 4 : 3;
    const AutotuneGrid g1 =
        autotune_sweep_simulator(*s.workbench.program(), loops, m, one, per_axis, 1);
    const AutotuneGrid g4 =
        autotune_sweep_simulator(*s.workbench.program(), loops, m, many, per_axis, 4);
    CHECK(many.fraction.load() == 1.0);
    check_same_grid(g1, g4);
    if (std::string(name) == "tiny") {
      // Not a grid of equal times: the comparison above would pass for the wrong reason.
      size_t distinct = 0, refused = 0;
      for (const AutotunePoint& p : g1.points) {
        distinct += p.ok() && p.seconds != g1.points[0].seconds;
        refused += p.refused;
      }
      CHECK(distinct > 0);
      CHECK(refused > 0);
    } else {
      CHECK(std::find(g4.notes.begin(), g4.notes.end(),
                      "GPU machine: times come from the trace simulation") != g4.notes.end());
    }
  }
  CHECK(autotune_threads(big_cache_machine()) >= 1);
}

TEST_CASE("simulator sweep on several threads: a cancel stops every worker") {
  AppState s = state_for(kModel);
  const AutotuneLoops loops = choose_autotune_loops(*s.workbench.kernel());
  const predict::Machine m = predict::load_machine("h200");  // trace simulations: slow points
  {
    JobProgress progress;
    progress.cancel = true;  // before the first point
    CHECK_THROWS_AS(autotune_sweep_simulator(*s.workbench.program(), loops, m, progress, 0, 3),
                    JobCancelled);
    CHECK(progress.fraction.load() == 0.0);
  }
  // Cancelled once the first point is done, with 41 of 42 to go: it stops early and says so.
  JobProgress progress;
  std::thread canceller([&] {
    while (progress.fraction.load() == 0.0)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    progress.cancel = true;
  });
  CHECK_THROWS_AS(autotune_sweep_simulator(*s.workbench.program(), loops, m, progress, 0, 3),
                  JobCancelled);
  canceller.join();
  CHECK(progress.fraction.load() < 1.0);
}

TEST_CASE("a nearly flat sweep that leaves the innermost loop whole names the pair to sweep") {
  // Hand-made grids over the i, j, k kernel of kModel (k innermost): the hint depends only on
  // the spread of the ok points and on which loops were swept.
  AppState s = state_for(kModel);
  const schedule::Kernel& k = *s.workbench.kernel();
  auto grid = [](const char* a, const char* b, std::vector<double> seconds) {
    AutotuneGrid g;
    g.loop_a = a;
    g.loop_b = b;
    for (double t : seconds) {
      AutotunePoint p;
      p.seconds = t;
      g.points.push_back(p);
    }
    return g;
  };
  // 1.0 to 1.015 s: within 2 %.
  const AutotuneHint flat = autotune_flat_hint(grid("i", "j", {1.0, 1.01, 1.015}), k);
  CHECK(flat.a == "j");
  CHECK(flat.b == "k");
  CHECK(flat.text.find("within 1.5% of the fastest") != std::string::npos);
  CHECK(flat.text.find("innermost loop, k (64 iterations)") != std::string::npos);
  // 1.0 to 1.03 s: the grid ranks its points.
  CHECK(autotune_flat_hint(grid("i", "j", {1.0, 1.03}), k).text.empty());
  // Flat, but the innermost loop was swept: something else flattens it (the panel says what).
  CHECK(autotune_flat_hint(grid("j", "k", {1.0, 1.0}), k).text.empty());
  // A refused point does not count, and one timed point is no spread.
  AutotuneGrid one = grid("i", "j", {1.0, 5.0});
  one.points[1].refused = true;
  CHECK(autotune_flat_hint(one, k).text.empty());
}

TEST_CASE("lesson 12's GEMM on tiny: the i, j sweep is flat, the j, k sweep it suggests is not") {
  // The claim lesson 12 and the hint make: on `tiny` a 64 × 64 × 64 GEMM predicts the same time
  // for every tile of i and j (k, innermost, walks a column of B whatever the tile), while tiles
  // of j and k halve the best time.
  AppState s = state_for("A: [64, 64]\nB: [64, 64]\nC = A @ B\n");
  const predict::Machine tiny = predict::load_machine("tiny");
  JobProgress p1, p2;
  const AutotuneGrid ij = autotune_sweep_simulator(
      *s.workbench.program(), choose_autotune_loops(*s.workbench.kernel(), "i", "j"), tiny, p1, 0, 1);
  REQUIRE(ij.loop_a == "i");
  REQUIRE(ij.loop_b == "j");
  const AutotuneHint hint = autotune_flat_hint(ij, *s.workbench.kernel());
  REQUIRE(hint.a == "j");
  REQUIRE(hint.b == "k");
  const AutotuneGrid jk = autotune_sweep_simulator(
      *s.workbench.program(), choose_autotune_loops(*s.workbench.kernel(), hint.a, hint.b), tiny, p2, 0,
      1);
  CHECK(jk.points.size() == 25);
  auto spread = [](const AutotuneGrid& g) {
    double lo = 1e300, hi = 0;
    for (const AutotunePoint& p : g.points)
      if (p.ok()) {
        lo = std::min(lo, p.seconds);
        hi = std::max(hi, p.seconds);
      }
    return std::pair{lo, hi};
  };
  const auto [ij_lo, ij_hi] = spread(ij);
  const auto [jk_lo, jk_hi] = spread(jk);
  CHECK(ij_hi <= ij_lo * 1.02);
  CHECK(jk_lo / ij_lo == doctest::Approx(0.5).epsilon(0.1));  // "about half": within 10 %
  CHECK(jk_hi / jk_lo > 1.8);
  CHECK(autotune_flat_hint(jk, *s.workbench.kernel()).text.empty());
  // The app's own first choice is that pair, not the flat one.
  const AutotuneLoops first = choose_autotune_loops(*s.workbench.kernel());
  CHECK(first.a == "j");
  CHECK(first.b == "k");
}

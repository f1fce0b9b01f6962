// Autotune (issue #7): sweeps two tile sizes of the current kernel — each point is the current
// schedule plus one `tile(A, B, TA, TB)` step applied to a copy — and measures every point twice:
// the time the analytic model + roofline predict on the chosen machine, and the real time of the
// JIT-compiled kernel on this CPU. The Timings view draws both grids as heatmaps.
//
// Pure C++ (no ImGui): tests drive the sweep through functions and script commands.
#pragma once

#include "app/core/jobs.h"
#include "sim/predict/machine.h"
#include "sim/schedule/kernel.h"
#include "sim/schedule/steps.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::core {

enum class AutotuneMode { Simulator, Cpu };

// Powers of two from 4 up to `extent` (4, 8, …, ≤ extent); when there are more than `max_count`
// (> 0), that many spread evenly over them, the smallest and the largest kept.
std::vector<int64_t> autotune_tile_sizes(int64_t extent, int max_count = 0);

// The one step a grid point applies, built as a typed step (its text is "tile(i, j, 32, 64)":
// split both, order A.o B.o A.i B.i).
schedule::TileStep autotune_step(const std::string& loop_a, const std::string& loop_b,
                                 int64_t tile_a, int64_t tile_b);

// Which two loops to sweep. Chosen by name (both must be serial loops of the kernel with at
// least 8 iterations), or, with empty names, the two innermost such loops (tiling only loops
// outside the innermost leaves its walk whole: see autotune_flat_hint). The pair comes back in
// loop order (outer first); `error` says why not.
struct AutotuneLoops {
  std::string a, b;
  int64_t extent_a = 0, extent_b = 0;
  std::string error;
};
AutotuneLoops choose_autotune_loops(const schedule::Kernel& k, const std::string& want_a = "",
                                    const std::string& want_b = "");

struct AutotunePoint {
  int64_t tile_a = 0, tile_b = 0;
  schedule::TileStep spec;  // the step applied to the copy of the schedule
  std::string step;         // its canonical text (schedule::to_string(spec)), for the trace
  bool refused = false;     // the schedule refused the step (why says why)
  bool failed = false;      // applied, but no time came out (compile error, not verified, no model)
  std::string why;
  double seconds = 0;      // predicted (Simulator) or measured median (Cpu)
  double min_seconds = 0;  // Cpu: the fastest of the repeats (median − min shows the noise)
  std::string detail;      // "bound by DRAM" / "verified, median of 5"
  bool ok() const { return !refused && !failed; }
};

struct AutotuneGrid {
  AutotuneMode mode = AutotuneMode::Simulator;
  std::string kernel;
  std::string machine;  // the machine predicted on, or "this CPU"
  std::string loop_a, loop_b;
  std::vector<int64_t> sizes_a, sizes_b;  // rows: sizes_a, columns: sizes_b
  std::vector<AutotunePoint> points;      // row-major: index = ia * sizes_b.size() + ib
  int best = -1;                          // index of the fastest ok point, -1 when none
  double wall_seconds = 0;                // how long the sweep took
  std::vector<std::string> notes;         // where the prediction is approximate

  // Cpu grids: the median over the timed points of (median − min) / median of each point's
  // repeats — the run-to-run noise a difference between two cells must exceed. 0 otherwise.
  double run_spread() const;
  // The fastest and the slowest time among the ok points; {0, 0} when there is none.
  std::pair<double, double> time_range() const;

  const AutotunePoint& at(size_t ia, size_t ib) const { return points[ia * sizes_b.size() + ib]; }
  const AutotunePoint* find(int64_t tile_a, int64_t tile_b) const;
  // "tile(i, 32), tile(j, 64)"
  std::string point_name(const AutotunePoint& p) const;
};

// Index of the smallest time among ok points (the first on ties), -1 when there is none.
int autotune_best(const std::vector<AutotunePoint>& points);

// A sweep that barely ranks its points. When the slowest ok point is within kAutotuneNearlyFlat
// of the fastest and the kernel's innermost serial loop is not one of the two swept, tiles of the
// swept loops leave the innermost walk whole — each inner pass still runs its full length — which
// is the usual reason the grid is flat (a 64 × 64 GEMM on `tiny`: i and j give 2.20–2.22 ms for
// every point, j and k give 1.05–2.20 ms). `text` says so and `a`, `b` are the pair to sweep
// instead: the inner swept loop and the innermost loop, in loop order. Empty text: no hint.
inline constexpr double kAutotuneNearlyFlat = 0.02;
struct AutotuneHint {
  std::string text;
  std::string a, b;
};
AutotuneHint autotune_flat_hint(const AutotuneGrid& g, const schedule::Kernel& k);

// Spearman's rank correlation of two equally long samples (ties get their average rank);
// NaN when fewer than 3 values or one sample is constant.
double spearman_rank_correlation(const std::vector<double>& a, const std::vector<double>& b);

// How well the simulator ranks the points hardware measured: over the tile pairs that both grids
// hold and that both timed.
struct AutotuneAgreement {
  size_t common = 0;
  double spearman = 0;       // NaN when undefined
  int sim_best_hw_rank = 0;  // the simulator's fastest common point, ranked on hardware (1 = best)
  std::string sim_best;      // its name
  std::string hw_best;       // hardware's fastest point
};
AutotuneAgreement autotune_agreement(const AutotuneGrid& sim, const AutotuneGrid& hw);

// The sweeps themselves (the workbench runs them as jobs, tilescope-cli autotune calls them
// directly). `base` is the program the steps are applied to (copied per point); its current kernel
// is swept. The simulator sweep's points are independent, so it spreads them over `threads` worker
// threads (0: autotune_threads()); the grid — every point, the notes in point order, the best —
// is the same for any thread count. Progress counts finished points; a cancel stops every worker
// at its next point (or inside a trace simulation) and throws JobCancelled.
AutotuneGrid autotune_sweep_simulator(const schedule::Program& base, const AutotuneLoops& loops,
                                      const predict::Machine& machine, JobProgress& progress,
                                      int max_per_axis = 0, int threads = 0);
// Worker threads for a simulator sweep on `machine`: every hardware thread, but no more than half
// of physical memory holds if each simulates a trace through the machine's full hierarchy at once
// (~32 B a cache line, the tables' upper bound), and at least 1.
int autotune_threads(const predict::Machine& machine);
AutotuneGrid autotune_sweep_cpu(const schedule::Program& base, const AutotuneLoops& loops,
                                JobProgress& progress, int max_per_axis = 4);

// The workbench's autotune state: the chosen loops, the grids cached by (schedule, loops[,
// machine]), and one job slot per mode.
struct AutotuneState {
  std::string want_a, want_b;  // chosen loops; empty = automatic
  bool show = false;           // the Timings view shows the sweep (else the recorded reports)
  std::map<std::string, AutotuneGrid> sim_cache, cpu_cache;
  std::map<std::string, std::string> sim_errors, cpu_errors;
  Job<AutotuneGrid> sim_job, cpu_job;
  bool busy() const { return sim_job.running() || cpu_job.running(); }
};

// Grid sizes: the simulator sweeps every power of two; each hardware point costs a compile.
inline constexpr int kAutotuneCpuPerAxis = 4;

// The machine a simulator sweep predicts on when the user chose `name` (loaded as `chosen`): the
// same machine, except that "host", which states its caches but no bandwidths, is replaced by
// "host-measured" when `tilescope-cli probe` has written one. `note` says so, or why
// host-measured could not be read; "" when the machine is the chosen one.
struct PredictionMachine {
  predict::Machine machine;
  std::string note;
};
PredictionMachine autotune_prediction_machine(const std::string& name,
                                              const predict::Machine& chosen);

// Takes finished sweeps into the caches (called by workbench_poll); cancels both.
void autotune_poll(AutotuneState& s);
void autotune_cancel(AutotuneState& s);

}  // namespace tilescope::core

// Baselines (issue #32), as Nsight Compute has them: the learner pins one schedule — the current
// one or any point of the history — or one run of a counters recording (ncu on the GPU,
// cachegrind on the CPU) as baseline A and keeps working on B, the current schedule;
// the Memory, Roofline and Timings views then show A, B and the change per level, per tensor and
// in time. A is simulated once, on the machine it was pinned on, and kept until it is cleared or
// replaced; a session keeps its steps and machine and simulates it again on restore.
//
// Pure C++ (no ImGui): the comparison is a table the views, the state JSON and `tilescope-cli
// simulate --baseline` all print from.
#pragma once

#include "app/core/workbench.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope::core {

// [SECTION] The comparison

// One number of A beside the same number of B.
struct CompareRow {
  std::string level;   // the level's name ("L1", "DRAM"), or "time"
  std::string tensor;  // "" for the whole level
  std::string what;    // "misses", "hit rate", "bytes", "seconds"
  double a = 0, b = 0;
  double delta() const { return b - a; }
  // (b - a) / a; 0 when both are 0, infinity when only a is 0.
  double relative() const;
};

struct Comparison {
  std::string a_label, b_label;
  // Per level, closest first: a cache's misses and hit rate, then main memory's bytes.
  std::vector<CompareRow> levels;
  // Per tensor (in B's order, then tensors only A has): each cache level's misses and main
  // memory's bytes.
  std::vector<CompareRow> tensors;
  // The roofline bound of each on its own machine (the binding bound's seconds); for a recorded
  // A, its measured time beside B's bound (time_label says so). None when A has no time.
  std::optional<CompareRow> time;
  std::string time_label = "roofline bound";
  std::string a_binding, b_binding;
  // What the reader must know: different machines (levels matched by name), a level or a tensor
  // only one of them has, a sampled side (its numbers are estimates).
  std::vector<std::string> notes;
};

// A against B, level by level (matched by name) and tensor by tensor (by name).
Comparison compare_results(const MemoryResult& a, const MemoryResult& b, std::string a_label,
                           std::string b_label);

// A recorded run (`tool` "ncu" or "cachegrind", measured on `device`) against B. The rows are
// what both count in the same unit: for ncu, L2's 32-byte sectors read and written (× 32) and
// DRAM's bytes against B's bytes at the level of that name (main memory: B's last); for
// cachegrind, D1's and LL's misses against B's closest and last caches. ncu's L1 sectors are left
// out: B's L1 counts the bytes each thread asks for, not sectors. A recording has no per-tensor
// counts. The time is A's measured kernel time beside B's roofline bound.
Comparison compare_recording(const kernels::CounterRun& run, const std::string& tool,
                             const std::string& device, const MemoryResult& b, std::string a_label,
                             std::string b_label);

// The table as JSON (the state JSON and `simulate --baseline --json`) and as text (the CLI).
nlohmann::json comparison_json(const Comparison& c);
std::string comparison_text(const Comparison& c);
// "+12.5 %" / "−40.0 %" / "new" (A was 0) / "0 %": how the views print relative().
std::string relative_text(const CompareRow& r);
// The change as the views print it: relative_text, or "+1.25 pts" for a hit rate.
std::string change_text(const CompareRow& r);
// A value of the row as the views print it: bytes, a percentage, a duration or a count.
std::string value_text(const CompareRow& r, double v);

// [SECTION] Pinning in the workbench

// `baseline pin` pins the current schedule; `baseline pin N` history entry N (0 = the default
// lowering, up to the last entry, undone ones included); `baseline pin-recorded N` run N of the
// counters recording the Memory view shows for this machine; `baseline clear` forgets it;
// `baseline run-cpu` runs A's kernel on this CPU (the Timings view's "in time"). Returns "" or
// why not.
std::string workbench_baseline(Workbench& wb, const std::string& verb, double n);

// Pins the schedule `steps` (replayed on the current model from its default lowering) as A on
// machine `machine_name`, labelled `label` ("" = made from the steps). A session restore calls it.
std::string workbench_pin_baseline(Workbench& wb, const std::string& steps,
                                   const std::string& machine_name, std::string label);

// Pins run `run` of the counters recording loaded from `file` (in wb.counters_recorded) as A,
// beside the machine `machine_name` (kept for the Roofline view's ring). A session restore calls
// it.
std::string workbench_pin_recorded(Workbench& wb, const std::string& file, size_t run,
                                   const std::string& machine_name);

// The recorded run's point for the Roofline view: its FLOPs (2·M·N·K: the recordings are GEMMs),
// its main-memory bytes and its measured seconds; nullopt when it lacks one of them.
struct RecordedPoint {
  double flops = 0, dram_bytes = 0, seconds = 0;
};
std::optional<RecordedPoint> recorded_point(const kernels::CounterRun& run);

// Once per frame from workbench_poll: A's result from the Memory cache or its own job.
void baseline_poll(Workbench& wb);

// A against B when both are simulated; nullptr otherwise.
std::optional<Comparison> workbench_comparison(const Workbench& wb);

// The state JSON's "baseline" object: label, steps, machine, pending or error, the comparison.
nlohmann::json baseline_state_json(const Workbench& wb);

}  // namespace tilescope::core

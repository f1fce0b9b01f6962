// Sampled simulation: a kernel too big to simulate whole in about a second is traced in units
// (the iterations of one loop, schedule::TraceSampler) of which most are skipped. The walk
// measures the first unit exactly (the cold start), then repeats a cycle: skip some units, warm
// the caches on the units before the next measured one (walked, not counted) until the last cache
// level has refilled its capacity or the warm-up has taken its share of the budget (a 32nd, so
// that 32 cycles at least are measured), measure one unit.
// A measured unit stands for every unit of its cycle; what the walk does outside units (an
// epilogue, the final write-back) is counted once, exactly. The cycle lengths follow the budget
// and vary at random (a fixed seed, so a run repeats itself) so that they cannot beat in step
// with a loop of the kernel.
//
// The error bar is the sampling error: 1.96 × the standard error from successive differences of
// the measured cycles (Wolter's estimator for systematic samples; it removes slow trends). It
// does not cover reuse longer than the warm-up: `warm_capped` says how many measured units had a
// warm-up cut short of refilling the last level, and the report says so.
//
// The references: SMARTS (Wunderlich et al., ISCA 2003) for measured units after a warm-up;
// Wolter, Introduction to Variance Estimation (2007), ch. 8, for the variance estimator.
#pragma once

#include "sim/memory/hierarchy.h"
#include "sim/predict/access_pattern.h"
#include "sim/schedule/kernel.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/trace_size.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::predict {

// Accesses (trace_size.h's element estimate) above which `simulate` samples by default: about a
// second here (`simulate default` makes 67.1 M and takes 0.9 s on this 2-core VM, 2026-12-06).
inline constexpr double kExactAccessLimit = 1.0e8;
// Whether a kernel of `accesses` (trace_size.h's estimate, pipeline::size_walk's) is sampled
// unless every access is asked for: the CLI's --sample auto and the Memory view decide with it.
inline bool sampled_by_default(double accesses) {
  return accesses > kExactAccessLimit;
}
// Element accesses a sampled run walks (warm-up and measured units): about a second here.
inline constexpr double kSampleBudget = 6.0e7;

struct SampleInfo {
  std::string unit_loop;         // the loop whose iterations are the units
  double unit_work_share = 0;    // its share of the walk's statement executions
  uint64_t units = 0;            // units the walk passed
  uint64_t measured = 0;         // of which measured (the first, exactly, among them)
  uint64_t warm = 0;             // walked to warm the caches, not counted
  uint64_t warm_capped = 0;      // measured units whose warm-up was cut short
  double warm_target_lines = 0;  // fills of the last cache level a warm-up aims at
  double walked_fraction = 0;    // units walked / units
  std::string last_level;        // the last cache level's name ("L2")
  // The estimates the report leads with and their 95 % half-widths (0 when too few cycles).
  double dram_bytes = 0, dram_bytes_error = 0;
  double last_level_hit_rate = 0, last_level_hit_rate_error = 0;
  bool error_known = false;  // at least 3 sampled cycles
};

// The loop a sampled trace of `k` (`accesses` of them, trace_size.h) takes its units from: the
// outermost of unit_chain() whose iterations are small enough that 256 of them fit in
// `budget` accesses (the innermost when none is). `budget_units`: the units the budget pays for,
// after the accesses made outside units, which are walked whole (at least half the budget).
struct SamplePlan {
  schedule::UnitLoop loop;
  double budget_units = 0;
};
SamplePlan plan_sample(const schedule::Kernel& k, const schedule::TraceOptions& o, double accesses,
                       double budget);

// Feeds the walk's decisions and keeps the counters of the measured units. Construct before the
// trace with the hierarchy it feeds, pass as TraceOptions::sampler, and after the trace and the
// final write-back call finish(): it puts the estimates in the hierarchy (set_estimate), the
// summary and the access patterns, and returns what it did.
class UnitSampler final : public schedule::TraceSampler {
 public:
  UnitSampler(memory::Hierarchy& h, double units, double budget_units, size_t tensor_rows,
              uint64_t seed = 0x5eed);
  bool begin_unit(const schedule::TraceSummary& so_far) override;
  void end_unit(const schedule::TraceSummary& so_far) override;
  SampleInfo finish(schedule::TraceSummary& summary, std::vector<TensorPattern>& patterns);

 private:
  enum class State { Skip, Warm, Measure };
  std::vector<double> snapshot(const schedule::TraceSummary& s) const;
  void account(const schedule::TraceSummary& s, std::vector<double>* into);
  uint64_t last_level_misses() const;
  void plan_next_cycle();

  memory::Hierarchy& m_h;
  double m_units_planned, m_budget_units;
  size_t m_rows;
  uint64_t m_rng;
  State m_state = State::Measure;
  State m_unit_state = State::Measure;  // of the unit being walked
  uint64_t m_unit = 0, m_skip_left = 0, m_walked = 0, m_warm = 0, m_warm_in_cycle = 0;
  uint64_t m_warm_start_misses = 0, m_cycle_start = 0;
  // A warm-up stops at this many units, so that the budget pays for kCycles cycles at least.
  static constexpr double kCycles = 32;
  uint64_t m_warm_cap = 1;
  bool m_cycle_capped = false;
  double m_warm_lines = 0;
  std::vector<double> m_last;                   // snapshot at the last accounting point
  uint64_t m_last_accesses = 0;                 // the summary's accesses then
  std::vector<double> m_always;                 // outside units (and the final write-back)
  std::vector<double> m_warm_delta;             // warm-up units, summed
  std::vector<std::vector<double>> m_measured;  // per measured unit
  std::vector<double> m_weight;                 // units each stands for
  uint64_t m_capped = 0;
};

}  // namespace tilescope::predict

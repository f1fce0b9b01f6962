// The Memory view's "predicted vs measured" table: for one run of a committed counters recording
// (Nsight Compute on the H200, cachegrind for the CPU versions), one row per memory level with
// the simulator's prediction, the measurement, the error, the bound the project holds it to, and
// the recording's likely cause where they differ. Pure C++ (no ImGui): the view draws the rows,
// `--state-json` reports them, tests check them against the recording's own numbers.
#pragma once

#include "kernels/gpu_counters.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::core {

struct CounterLevelRow {
  std::string level;  // "DRAM", "L2", "L1", "smem loads", "smem stores", "D1", "LL"
  std::string what;   // what is counted: "bytes read + written", "32-byte sectors", ...
  double measured = 0;
  std::optional<double> predicted;  // none when the version has no trace description
  std::optional<double> error_pct;  // (predicted − measured) / measured, when both exist
  // The target: |error| ≤ bound_pct, or for bank conflicts equal within `conflict_slack` (5 % of
  // the shared-memory instructions). No bound: shown for information (L1 sectors).
  std::optional<double> bound_pct;
  std::optional<double> conflict_slack;
  bool within = true;  // meets its target (true when there is no target or no prediction)
  std::string cause;   // the recording's likely cause of the difference, "" when none
};

// The rows for `run`, in hierarchy order (outermost last: L1, L2, DRAM for ncu; D1, LL for
// cachegrind). Counters the recording lacks are left out; a run that failed has no rows.
std::vector<CounterLevelRow> counter_level_rows(const kernels::CounterReport& report,
                                                const kernels::CounterRun& run);

// "sgemm 3 · smem_tiled · 2048×2048×2048" — how the view's list names a run.
std::string counter_run_label(const kernels::CounterRun& run);

// The committed counters recording (file, report) the Memory view shows for a machine of `kind`
// ("gpu": ncu's; "cpu": cachegrind's) named `machine`: the newest whose device names the machine
// ("h200" in "NVIDIA H200"), else the newest of that kind.
using CountersRecordings = std::vector<std::pair<std::string, kernels::CounterReport>>;
const std::pair<std::string, kernels::CounterReport>* counters_for_machine_kind(
    const CountersRecordings& recordings, const std::string& kind,
    const std::string& machine = "");

// The time model's prediction (sim/predict/time_model.h) for one result of a suite of a timing
// report (tilescope-bench/1), from the counters recording made on the report's device: the run of
// the same suite family ("sgemm_2048" is "sgemm"), version and sizes (the suite's "M=… N=… K=…")
// whose prediction holds a time. nullopt when no recording of that device has one (cuBLAS,
// versions without a trace description, sizes never profiled).
struct TimedPrediction {
  double seconds = 0;
  std::string limiter;
  std::string summary;
  std::string recording;  // its file
};
std::optional<TimedPrediction> predicted_time_for(const CountersRecordings& recordings,
                                                  const nlohmann::json& report,
                                                  const nlohmann::json& suite,
                                                  const nlohmann::json& result);

}  // namespace tilescope::core

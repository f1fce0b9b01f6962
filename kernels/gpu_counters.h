// Hardware counters of the GPU kernel versions (Nsight Compute) — and cachegrind's counts of
// the CPU ones — beside the simulator's predictions: the one table of ncu metric names, the parser
// of ncu's CSV, and the report (schema "tilescope-counters/1") with its JSON and its comparison
// table. Plain C++: no CUDA.
//
// Index: [SECTION] Metrics · [SECTION] ncu CSV · [SECTION] Report · [SECTION] JSON · [SECTION]
// Table
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::kernels {

inline constexpr const char* kCountersSchema = "tilescope-counters/1";

// [SECTION] Metrics

// How a version that launches several kernels combines them: counts add up; a launch's shape
// (waves) keeps the largest; a rate or a share (clock, occupancy, issue activity) is the mean
// weighted by each kernel's time.
enum class Rollup { Sum, Max, TimeWeighted };

// One counter as tilescope names it (`key`, what predictions and tables use), the ncu metric that
// measures it on Hopper, what it counts, and how a chain of kernels combines it.
struct CounterMetric {
  std::string key;
  std::string ncu;
  std::string meaning;
  Rollup rollup = Rollup::Sum;
};

// Every counter the GPU bench asks ncu for, in table order. The only place ncu names are spelt.
const std::vector<CounterMetric>& counter_metrics();
// Theoretical occupancy, %: ncu reports it with every launch's raw metrics, but `--query-metrics`
// does not list it, so it cannot be asked for in the table above.
inline constexpr const char* kTheoreticalOccupancyMetric = "sm__maximum_warps_per_active_cycle_pct";
// The metric whose key is `key`, or nullptr.
const CounterMetric* counter_metric(const std::string& key);
// An ncu metric name without its roll-up and sub-metric suffixes ("dram__bytes_read.sum" →
// "dram__bytes_read", "sm__cycles_elapsed.avg.per_second" → "sm__cycles_elapsed"), the form
// `ncu --query-metrics` lists.
std::string ncu_base_name(const std::string& ncu_metric);
// The base names `ncu --query-metrics` printed (its first column, header lines skipped).
std::vector<std::string> parse_ncu_metric_list(const std::string& text);

// [SECTION] ncu CSV

// A malformed ncu CSV; the message says where ("ncu.csv:3:17: ...").
class CountersParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One profiled kernel launch: its name and the metrics ncu reported for it (ncu metric names).
struct NcuKernel {
  std::string name;
  std::map<std::string, double> metrics;
};

// Reads `ncu --csv --page raw --print-units base` output: the header row (ID, Kernel Name, metric
// names…), an optional units row, then one row per launch. Lines before the header (ncu's
// "==PROF==" chatter, the program's own output) are skipped. Values may carry thousands
// separators; "n/a" is left out. `where` names the text in messages.
std::vector<NcuKernel> parse_ncu_csv(const std::string& text, const std::string& where = "ncu");

// [SECTION] Report

// What the simulator predicts for one run (counter key → value), how, and why it may differ.
struct CounterPrediction {
  std::map<std::string, double> values;       // keys of counter_metrics()
  std::string twin;                           // the trace description used, or "" when none
  std::string method;                         // the reduction, e.g. "K slice 1/8, L2 scaled 1/8"
  std::string no_twin_reason;                 // when twin is empty
  std::map<std::string, std::string> causes;  // key → likely cause of a difference
  // The same trace descriptions with the blocks of each SM out of step with one another: waves of
  // one block per SM (GpuKernelOptions::max_blocks_per_sm = 1), so blocks in different residency
  // slots never share what they read. Only DRAM and L2 keys; empty when every kernel of the run
  // has one block per SM already (the two models agree).
  std::map<std::string, double> out_of_step;
  // The time model's (sim/predict/time_model.h) limiter for values["time_ns"] and its reasoning,
  // or why there is no predicted time.
  std::string time_limiter;
  std::string time_summary;
};

// One version of one suite at one size, profiled once.
struct CounterRun {
  std::string suite;  // "sgemm", "gemm_epilogue", "grid_order"
  int version = 0;
  std::string name;
  int m = 0, n = 0, k = 0;
  std::vector<NcuKernel> kernels;          // in launch order
  std::map<std::string, double> measured;  // counter key → sum over the kernels
  std::optional<CounterPrediction> predicted;
  std::optional<std::string> error;  // ncu or the run failed: why
};

struct CounterReport {
  // What measured: "ncu" (Nsight Compute on a GPU) or "cachegrind" (valgrind's cache simulator,
  // for the CPU versions: scripts/cachegrind_compare.sh --counters-json). ncu_version and
  // ncu_command then hold that tool's version and command.
  std::string tool = "ncu";
  std::string date;
  nlohmann::json device;  // cuda::describe_device()'s object
  std::string ncu_version;
  std::string ncu_command;  // the options every run used (the program and its arguments follow)
  std::vector<CounterMetric> metrics;            // the table as used
  std::vector<std::string> metrics_unavailable;  // keys whose ncu metric this ncu does not know
  std::vector<CounterRun> runs;
  nlohmann::json details = nlohmann::json::object();
};

// Each counter key over the kernels of `run` (a version may launch several kernels), combined
// by the metric's rollup.
void sum_kernel_metrics(CounterRun& run, const std::vector<CounterMetric>& metrics);

// [SECTION] JSON

class CountersSchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void to_json(nlohmann::json& j, const CounterReport& r);
void from_json(const nlohmann::json& j, CounterReport& r);  // throws CountersSchemaError
bool is_counters_document(const nlohmann::json& j);
CounterReport load_counters_report(const std::string& path);  // throws std::runtime_error

// [SECTION] Table

// (predicted − measured) / measured in %, or nullopt when measured is 0 or either is missing.
std::optional<double> percent_error(const CounterRun& run, const std::string& key);
// The comparison table: per run, each counter measured and predicted, % error, and the cause.
std::string format_counters_table(const CounterReport& r);

}  // namespace tilescope::kernels

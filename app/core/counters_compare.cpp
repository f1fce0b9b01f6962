// Rows of the predicted-vs-measured table (see counters_compare.h). The bounds are issue #15's:
// DRAM bytes within 15 %, L2 sectors within 25 %, bank conflicts equal (the bank model's
// tolerance, 5 % of the shared-memory instructions, as kernels/counters_predict.cpp explains
// them). cachegrind's two levels are held to the same bounds as the GPU level they stand for:
// LL misses are the traffic to memory (15 %), D1 misses the traffic from L1 to the next level
// (25 %).
#include "app/core/counters_compare.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace tilescope::core {

namespace {

// measured and predicted sums of `keys`; nullopt when the run measured none of them.
struct Sums {
  double measured = 0, predicted = 0;
  bool any_measured = false, all_predicted = true;
};

Sums sum_keys(const kernels::CounterRun& run, std::initializer_list<const char*> keys) {
  Sums s;
  for (const char* k : keys) {
    if (const auto it = run.measured.find(k); it != run.measured.end()) {
      s.measured += it->second;
      s.any_measured = true;
    }
    const bool have =
        run.predicted && !run.predicted->twin.empty() && run.predicted->values.count(k) > 0;
    if (have)
      s.predicted += run.predicted->values.at(k);
    else
      s.all_predicted = false;
  }
  return s;
}

std::string cause_of(const kernels::CounterRun& run, const std::string& key) {
  if (!run.predicted) return "";
  const auto it = run.predicted->causes.find(key);
  return it == run.predicted->causes.end() ? "" : it->second;
}

// A row from the sums of `keys`, held to `bound` (percent) when given.
void add_row(std::vector<CounterLevelRow>& rows, const kernels::CounterRun& run,
             const std::string& level, const std::string& what,
             std::initializer_list<const char*> keys, std::optional<double> bound,
             const std::string& cause_key) {
  const Sums s = sum_keys(run, keys);
  if (!s.any_measured) return;
  CounterLevelRow r;
  r.level = level;
  r.what = what;
  r.measured = s.measured;
  r.bound_pct = bound;
  if (s.all_predicted) {
    r.predicted = s.predicted;
    if (s.measured > 0) r.error_pct = 100.0 * (s.predicted - s.measured) / s.measured;
    if (bound) r.within = r.error_pct ? std::fabs(*r.error_pct) <= *bound : s.predicted == 0;
  }
  r.cause = cause_of(run, cause_key);
  rows.push_back(std::move(r));
}

// Bank conflicts of loads or stores: equal within 5 % of the instructions.
void add_conflict_row(std::vector<CounterLevelRow>& rows, const kernels::CounterRun& run,
                      const std::string& kind) {
  const std::string key = "shared_" + kind + "_conflicts";
  const std::string ins = "shared_" + kind + "_instructions";
  const auto m = run.measured.find(key);
  const auto mi = run.measured.find(ins);
  // A kernel without shared-memory instructions of this kind has nothing to compare.
  if (m == run.measured.end() || mi == run.measured.end() || mi->second <= 0) return;
  CounterLevelRow r;
  r.level = kind == "ld" ? "smem loads" : "smem stores";
  r.what = kind == "ld" ? "shared-memory bank-conflict wavefronts of loads"
                        : "shared-memory bank-conflict wavefronts of stores";
  r.measured = m->second;
  r.conflict_slack = 0.05 * mi->second;
  if (run.predicted && !run.predicted->twin.empty() && run.predicted->values.count(key)) {
    r.predicted = run.predicted->values.at(key);
    if (r.measured > 0) r.error_pct = 100.0 * (*r.predicted - r.measured) / r.measured;
    r.within = std::fabs(*r.predicted - r.measured) <= *r.conflict_slack;
  }
  r.cause = cause_of(run, key);
  rows.push_back(std::move(r));
}

}  // namespace

std::vector<CounterLevelRow> counter_level_rows(const kernels::CounterReport& report,
                                                const kernels::CounterRun& run) {
  std::vector<CounterLevelRow> rows;
  if (run.error) return rows;
  if (report.tool == "cachegrind") {
    add_row(rows, run, "D1", "data-cache misses (64-byte lines)", {"d1_misses"}, 25.0, "d1_misses");
    add_row(rows, run, "LL", "last-level misses (to memory)", {"ll_misses"}, 15.0, "ll_misses");
    return rows;
  }
  add_conflict_row(rows, run, "ld");
  add_conflict_row(rows, run, "st");
  add_row(rows, run, "L1", "32-byte sectors loaded + stored",
          {"l1_load_sectors", "l1_store_sectors"}, std::nullopt, "l1");
  add_row(rows, run, "L2", "32-byte sectors read + written",
          {"l2_read_sectors", "l2_write_sectors"}, 25.0, "l2");
  add_row(rows, run, "DRAM", "bytes read + written", {"dram_read_bytes", "dram_write_bytes"}, 15.0,
          "dram");
  // The same twin with the blocks of each SM out of step (kernels/gpu_counters.h): the other end
  // of what the trace can say, shown beside the lockstep row for information (no target).
  const std::map<std::string, double>* o =
      run.predicted ? &run.predicted->out_of_step : nullptr;
  if (o && o->count("dram_read_bytes") && o->count("dram_write_bytes") && !rows.empty() &&
      rows.back().level == "DRAM") {
    CounterLevelRow r;
    r.level = "DRAM apart";
    r.what =
        "bytes read + written if the blocks of each SM run out of step (a wave shares only one "
        "block per SM): the other end of what the trace can say";
    r.measured = rows.back().measured;
    r.predicted = o->at("dram_read_bytes") + o->at("dram_write_bytes");
    if (r.measured > 0) r.error_pct = 100.0 * (*r.predicted - r.measured) / r.measured;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string counter_run_label(const kernels::CounterRun& run) {
  std::string s = run.suite + " " + std::to_string(run.version);
  if (!run.name.empty()) s += " · " + run.name;
  if (run.m > 0)
    s += " · " + std::to_string(run.m) + "×" + std::to_string(run.n) + "×" + std::to_string(run.k);
  return s;
}

const std::pair<std::string, kernels::CounterReport>* counters_for_machine_kind(
    const CountersRecordings& recordings, const std::string& kind, const std::string& machine) {
  auto names_machine = [&](const kernels::CounterReport& r) {
    if (machine.empty() || !r.device.is_object()) return false;
    std::string device = r.device.value("name", "");
    for (char& ch : device) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    return device.find(machine) != std::string::npos;
  };
  const std::pair<std::string, kernels::CounterReport>* best = nullptr;
  for (const auto& rec : recordings) {
    const bool gpu_tool = rec.second.tool != "cachegrind";
    if (gpu_tool != (kind == "gpu")) continue;
    const bool better = !best || names_machine(rec.second) > names_machine(best->second) ||
                        (names_machine(rec.second) == names_machine(best->second) &&
                         rec.second.date > best->second.date);
    if (better) best = &rec;
  }
  return best;
}

std::optional<TimedPrediction> predicted_time_for(const CountersRecordings& recordings,
                                                  const nlohmann::json& report,
                                                  const nlohmann::json& suite,
                                                  const nlohmann::json& result) {
  int m = 0, n = 0, k = 0;
  if (!suite.is_object() || !result.is_object() ||
      std::sscanf(suite.value("problem", "").c_str(), "M=%d N=%d K=%d", &m, &n, &k) != 3)
    return std::nullopt;
  const std::string device = report.contains("device") && report["device"].is_object()
                                 ? report["device"].value("name", "")
                                 : "";
  const std::string name = suite.value("name", "");
  const int version = result.value("version", 0);
  // "sgemm_2048" times the sgemm family at another size: the family is the name before "_<digits>".
  std::string family = name;
  const size_t us = name.rfind('_');
  if (us != std::string::npos && us + 1 < name.size() &&
      name.find_first_not_of("0123456789", us + 1) == std::string::npos)
    family = name.substr(0, us);
  for (const auto& [file, report] : recordings) {
    if (!report.device.is_object() || report.device.value("name", "") != device) continue;
    for (const kernels::CounterRun& run : report.runs) {
      if (run.suite != family || run.version != version || run.m != m || run.n != n ||
          run.k != k || !run.predicted || !run.predicted->values.count("time_ns"))
        continue;
      return TimedPrediction{run.predicted->values.at("time_ns") * 1e-9,
                             run.predicted->time_limiter, run.predicted->time_summary, file};
    }
  }
  return std::nullopt;
}

}  // namespace tilescope::core

// The counters report: ncu's CSV and metric list parsed, kernels summed, the committed H200
// recording read back with its stored predictions recomputed, and its comparison table.
#include "kernels/counters_predict.h"
#include "kernels/gpu_counters.h"
#include "sim/predict/machine.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <string>

using namespace tilescope::kernels;

namespace {
const char* kRecording = "assets/recorded/gpu-h200-counters-2026-12-02.json";
// Recorded on an H100 SXM (ncu's clock, occupancy, instructions and data-stage wavefronts too).
const char* kH100Recording = "assets/recorded/gpu-h100-counters-2026-12-05.json";

// A recording with its predictions made again for `machine` (once per process: each takes seconds).
const CounterReport& recomputed(const std::string& path, const std::string& machine) {
  static std::map<std::string, CounterReport> done;
  auto it = done.find(path + "@" + machine);
  if (it == done.end()) {
    CounterReport r = load_counters_report(path);
    for (CounterRun& run : r.runs) run.predicted.reset();
    predict_counters(r, tilescope::predict::load_machine(machine));
    it = done.emplace(path + "@" + machine, std::move(r)).first;
  }
  return it->second;
}
}  // namespace

TEST_CASE("ncu CSV: chatter and the units row skipped, thousands separators read, n/a left out") {
  const std::string csv =
      "==PROF== Connected to process 42\n"
      "profile-one sgemm:3 2048³: rel_error 1e-07 ok\n"
      "\"ID\",\"Process ID\",\"Kernel "
      "Name\",\"dram__bytes_read.sum\",\"lts__t_sectors_srcunit_tex_op_read.sum\"\n"
      "\"\",\"\",\"\",\"byte\",\"sector\"\n"
      "\"0\",\"42\",\"sgemm_03_smem_tiled<32>(int, int, int, const float*, const float*, "
      "float*)\",\"33,562,368\",\"n/a\"\n"
      "\"1\",\"42\",\"relu_kernel\",\"1024\",\"17\"\n";
  const std::vector<NcuKernel> k = parse_ncu_csv(csv, "t.csv");
  REQUIRE(k.size() == 2);
  CHECK(k[0].name.rfind("sgemm_03_smem_tiled<32>(int, int, int,", 0) ==
        0);  // commas kept inside quotes
  CHECK(k[0].metrics.at("dram__bytes_read.sum") == 33562368.0);
  CHECK(k[0].metrics.count("lts__t_sectors_srcunit_tex_op_read.sum") == 0);
  CHECK(k[1].metrics.at("lts__t_sectors_srcunit_tex_op_read.sum") == 17.0);

  CounterRun run;
  run.kernels = k;
  sum_kernel_metrics(run, counter_metrics());
  CHECK(run.measured.at("dram_read_bytes") == 33562368.0 + 1024.0);
  CHECK(run.measured.at("l2_read_sectors") == 17.0);
}

TEST_CASE("a chain of kernels: counts add, waves keep the largest, a clock is time-weighted") {
  // Two launches: 300 ns at 1.5 GHz and 100 ns at 1.9 GHz. Clock = (300·1.5 + 100·1.9) / 400 GHz.
  CounterRun run;
  run.kernels = {
      {"gemm", {{"gpu__time_duration.sum", 300}, {"sm__cycles_elapsed.avg.per_second", 1.5e9},
                {"launch__waves_per_multiprocessor", 3}, {"smsp__inst_executed.sum", 1000}}},
      {"relu", {{"gpu__time_duration.sum", 100}, {"sm__cycles_elapsed.avg.per_second", 1.9e9},
                {"launch__waves_per_multiprocessor", 1}, {"smsp__inst_executed.sum", 24}}}};
  sum_kernel_metrics(run, counter_metrics());
  CHECK(run.measured.at("time_ns") == 400.0);
  CHECK(run.measured.at("instructions") == 1024.0);
  CHECK(run.measured.at("waves") == 3.0);
  CHECK(run.measured.at("sm_clock_hz") == doctest::Approx(1.6e9));
  CHECK(ncu_base_name("sm__cycles_elapsed.avg.per_second") == "sm__cycles_elapsed");
  CHECK(ncu_base_name("sm__warps_active.avg.pct_of_peak_sustained_active") == "sm__warps_active");
}

TEST_CASE("ncu CSV: a short row and a missing table are errors that say where") {
  const std::string bad = "\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n\"0\",\"k\"\n";
  try {
    parse_ncu_csv(bad, "x.csv");
    FAIL("no error");
  } catch (const CountersParseError& e) {
    CHECK(std::string(e.what()).find("x.csv:2:1") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_ncu_csv("nothing here\n", "y.csv"), CountersParseError);
  CHECK_THROWS_AS(parse_ncu_csv("\"ID\",\"Kernel Name\"\n\"0\",\"unterminated\n", "z.csv"),
                  CountersParseError);
}

TEST_CASE("metric names: roll-up suffixes stripped, --query-metrics' first column read") {
  CHECK(ncu_base_name("dram__bytes_read.sum") == "dram__bytes_read");
  CHECK(ncu_base_name("launch__waves_per_multiprocessor") == "launch__waves_per_multiprocessor");
  const std::string listing =
      "Device GH100 (GH100)\n------------------\nMetric Name   Metric Type  Description\n"
      "dram__bytes_read            Counter   byte   # of bytes read from DRAM\n"
      "lts__t_sectors              Counter   sector # of sectors\n";
  const std::vector<std::string> names = parse_ncu_metric_list(listing);
  REQUIRE(names.size() == 2);
  CHECK(names[0] == "dram__bytes_read");
  // Every key of the table is unique and names an ncu metric with a unit__ prefix.
  for (const CounterMetric& m : counter_metrics()) {
    CHECK(counter_metric(m.key) == &m);
    CHECK(m.ncu.find("__") != std::string::npos);
  }
}

TEST_CASE(
    "the H200 recording: device, date and metric names inside; every twin's prediction "
    "recomputed equals the stored one") {
  const CounterReport stored = load_counters_report(kRecording);
  CHECK(stored.device.value("name", "") == "NVIDIA H200");
  CHECK(stored.date.rfind("2026-12-02", 0) == 0);
  CHECK(!stored.ncu_version.empty());
  REQUIRE(!stored.metrics.empty());
  CHECK(stored.metrics[0].ncu == "dram__bytes_read.sum");
  const CounterReport& again = recomputed(kRecording, "h200");
  REQUIRE(again.runs.size() == stored.runs.size());
  int with_twin = 0;
  for (size_t i = 0; i < stored.runs.size(); ++i) {
    const CounterRun& a = stored.runs[i];
    const CounterRun& b = again.runs[i];
    CAPTURE(a.suite);
    CAPTURE(a.version);
    CAPTURE(a.m);
    REQUIRE(a.predicted);
    REQUIRE(b.predicted);
    CHECK(a.predicted->twin == b.predicted->twin);
    // Every stored prediction is made again (keys added since, such as the time model's, come
    // on top).
    for (const auto& [key, value] : a.predicted->values) {
      CAPTURE(key);
      REQUIRE(b.predicted->values.count(key));
      CHECK(b.predicted->values.at(key) == doctest::Approx(value).epsilon(1e-9));
    }
    CHECK(a.predicted->out_of_step.size() == b.predicted->out_of_step.size());
    for (const auto& [key, value] : a.predicted->out_of_step) {
      CAPTURE(key);
      REQUIRE(b.predicted->out_of_step.count(key));
      CHECK(b.predicted->out_of_step.at(key) == doctest::Approx(value).epsilon(1e-9));
    }
    if (!a.predicted->twin.empty()) ++with_twin;
  }
  // Every version but cuBLAS (versions 0 of sgemm and gemm_epilogue, at two sizes) has a twin.
  CHECK(with_twin == static_cast<int>(stored.runs.size()) - 4);
}

TEST_CASE("the H200 recording at 4096³: lockstep and out-of-step waves bracket the measured DRAM") {
  // docs/predicted-vs-measured.md claims: where the L2 overflows (4096³), every SGEMM version's
  // measured DRAM bytes lie between the twin with the resident blocks of each SM in step (a wave
  // of 2 blocks per SM shares its panels) and out of step (only one block per SM shares), within
  // a few percent; and the blocks that miss the lockstep prediction by more than 15 % are within
  // 20 % of the out-of-step one.
  const CounterReport stored = load_counters_report(kRecording);
  int bracketed = 0;
  for (const CounterRun& r : stored.runs) {
    if (r.m != 4096 || r.suite != "sgemm" || r.version == 0) continue;
    CAPTURE(r.version);
    REQUIRE(r.predicted);
    const auto dram = [](const std::map<std::string, double>& v) {
      return v.at("dram_read_bytes") + v.at("dram_write_bytes");
    };
    REQUIRE(r.predicted->out_of_step.count("dram_read_bytes"));
    const double measured = dram(r.measured), lock = dram(r.predicted->values),
                 apart = dram(r.predicted->out_of_step);
    CHECK(lock < apart);
    CHECK(measured >= 0.98 * lock);
    // Within 4 %: the partitioned L2 (l2_partitions.h) keeps a little more than the measured
    // runs of SGEMM 1 and 3 did (out of step: −3.0 % and −2.4 %).
    CHECK(measured <= 1.04 * apart);
    if (std::fabs(lock - measured) / measured > 0.15)
      CHECK(std::fabs(apart - measured) / measured < 0.20);
    ++bracketed;
  }
  CHECK(bracketed == 8);
}

TEST_CASE("the comparison table prints each error as (predicted − measured) / measured") {
  const CounterReport r = load_counters_report(kRecording);
  const std::string table = format_counters_table(r);
  CHECK(table.find("NVIDIA H200") != std::string::npos);
  CHECK(table.find("v8 double_buffered") != std::string::npos);
  for (const CounterRun& run : r.runs) {
    if (run.suite != "sgemm" || run.version != 4 || run.m != 4096) continue;
    const double m = run.measured.at("dram_read_bytes") + run.measured.at("dram_write_bytes");
    const double p =
        run.predicted->values.at("dram_read_bytes") + run.predicted->values.at("dram_write_bytes");
    char want[32];
    std::snprintf(want, sizeof want, "(%+.1f%%)", 100.0 * (p - m) / m);
    CHECK(table.find(want) != std::string::npos);
  }
  // JSON round trip keeps the runs and the predictions.
  CounterReport back;
  from_json(nlohmann::json(r), back);
  CHECK(back.runs.size() == r.runs.size());
  CHECK(back.runs[5].predicted->values == r.runs[5].predicted->values);
}

TEST_CASE("the CPU recording (cachegrind) prints in the same table with D1 and LL columns") {
  const CounterReport r =
      load_counters_report("assets/recorded/cpu-cachegrind-counters-2026-12-02.json");
  CHECK(r.tool == "cachegrind");
  REQUIRE(r.runs.size() == 8);
  const std::string table = format_counters_table(r);
  CHECK(table.find("D1 misses") != std::string::npos);
  CHECK(table.find("DRAM bytes") == std::string::npos);
  CHECK(table.find("L2 hit rate") == std::string::npos);
  for (const CounterRun& run : r.runs) {
    // The measured count is cachegrind's read + write misses of ts_kernel, as the kernel row has.
    const auto& k = run.kernels.at(0).metrics;
    CHECK(run.measured.at("d1_misses") == k.at("D1mr") + k.at("D1mw"));
    CHECK(run.measured.at("ll_misses") == k.at("DLmr") + k.at("DLmw"));
  }
}

TEST_CASE("the time model against both recordings: 24 of 28 within 25 %, every SGEMM within 20 %") {
  // docs/time-model.md's table. The overlap of issue and data stage (kPipeOverlap) was fitted on
  // the H100 recording; the H200's, made three days earlier, checks it. Measured: ncu's
  // gpu__time_duration of the profiled launch (cold caches). The misses are hgemm 2 (mma.sync),
  // 2.2-2.8x slower than the tensor peak the model uses.
  for (const auto& [path, machine] :
       {std::pair{kRecording, "h200"}, std::pair{kH100Recording, "h100"}}) {
    CAPTURE(path);
    const CounterReport& r = recomputed(path, machine);
    int timed = 0, within = 0;
    for (const CounterRun& run : r.runs) {
      if (!run.predicted || !run.predicted->values.count("time_ns")) continue;
      CAPTURE(run.suite);
      CAPTURE(run.version);
      CAPTURE(run.m);
      const double meas = run.measured.at("time_ns");
      const double pred = run.predicted->values.at("time_ns");
      const double err = std::fabs(pred - meas) / meas;
      ++timed;
      within += err <= 0.25;
      CHECK(!run.predicted->time_limiter.empty());
      if (run.name.find("hgemm") == std::string::npos) {
        CHECK(err <= 0.20);
      } else {
        CHECK(pred < meas);  // an under-prediction: the tensor peak is not mma.sync's rate
      }
    }
    CHECK(timed == 28);
    CHECK(within >= 24);
  }
}

TEST_CASE("the H100 recording: data-stage wavefronts predicted within 2 % of ncu's (SGEMM 1-8)") {
  // l1tex__data_pipe_lsu_wavefronts: one per shared-memory bank pass and one per 128-byte line a
  // global access touches. SGEMM 1's uncoalesced loads touch 16.5 lines a request on average.
  const CounterReport& r = recomputed(kH100Recording, "h100");
  int checked = 0;
  for (const CounterRun& run : r.runs) {
    if (!run.predicted || !run.predicted->values.count("lsu_wavefronts")) continue;
    if (run.suite == "grid_order" && run.version == 2) continue;  // grouped: + 13 % measured
    CAPTURE(run.suite);
    CAPTURE(run.version);
    CAPTURE(run.m);
    const double meas = run.measured.at("lsu_wavefronts");
    CHECK(std::fabs(run.predicted->values.at("lsu_wavefronts") - meas) / meas <= 0.02);
    ++checked;
  }
  CHECK(checked == 22);
}

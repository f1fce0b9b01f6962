// The Memory view's predicted-vs-measured rows (app/core/counters_compare.h): sums, errors and
// targets worked out by hand for small made-up runs, and the committed H200 and cachegrind
// recordings read back with each row equal to the recording's own numbers.
#include <doctest/doctest.h>

#include "app/core/counters_compare.h"
#include "app/core/workbench.h"

#include <cmath>

using namespace tilescope;
using namespace tilescope::core;

namespace {

const CounterLevelRow* row_of(const std::vector<CounterLevelRow>& rows, const std::string& level) {
  for (const CounterLevelRow& r : rows)
    if (r.level == level) return &r;
  return nullptr;
}

kernels::CounterRun gpu_run() {
  kernels::CounterRun run;
  run.suite = "sgemm";
  run.version = 3;
  run.name = "smem_tiled";
  run.m = run.n = run.k = 64;
  run.measured = {{"dram_read_bytes", 1000},     {"dram_write_bytes", 200},
                  {"l2_read_sectors", 400},      {"l2_write_sectors", 100},
                  {"l1_load_sectors", 800},      {"l1_store_sectors", 100},
                  {"shared_ld_conflicts", 30},   {"shared_ld_instructions", 1000},
                  {"shared_st_conflicts", 90},   {"shared_st_instructions", 1000},
                  {"shared_ld_wavefronts", 1030}};
  kernels::CounterPrediction p;
  p.twin = "sgemm_03";
  p.method = "full trace";
  p.values = {{"dram_read_bytes", 800},   {"dram_write_bytes", 200}, {"l2_read_sectors", 500},
              {"l2_write_sectors", 100},  {"l1_load_sectors", 800},  {"l1_store_sectors", 100},
              {"shared_ld_conflicts", 0}, {"shared_st_conflicts", 0}};
  p.causes["dram"] = "made-up cause";
  run.predicted = p;
  return run;
}

}  // namespace

TEST_CASE("predicted vs measured rows: sums per level, errors, targets, causes") {
  kernels::CounterReport report;
  report.tool = "ncu";
  const kernels::CounterRun run = gpu_run();
  const std::vector<CounterLevelRow> rows = counter_level_rows(report, run);
  REQUIRE(rows.size() == 5);
  // In hierarchy order, innermost first.
  CHECK(rows[0].level == "smem loads");
  CHECK(rows[4].level == "DRAM");

  // DRAM: 1000 + 200 measured, 800 + 200 predicted: (1000 − 1200) / 1200 = −16.7 %, outside 15 %.
  const CounterLevelRow* dram = row_of(rows, "DRAM");
  REQUIRE(dram);
  CHECK(dram->measured == 1200);
  CHECK(*dram->predicted == 1000);
  CHECK(*dram->error_pct == doctest::Approx(-100.0 / 6.0));
  CHECK(*dram->bound_pct == 15);
  CHECK_FALSE(dram->within);
  CHECK(dram->cause == "made-up cause");

  // With the out-of-step prediction (the SM's blocks apart) a row follows DRAM: 1100 + 250
  // predicted against the same 1200 measured, +12.5 %, information only (no target).
  kernels::CounterRun apart = run;
  apart.predicted->out_of_step = {{"dram_read_bytes", 1100}, {"dram_write_bytes", 250}};
  const std::vector<CounterLevelRow> with_apart = counter_level_rows(report, apart);
  REQUIRE(with_apart.size() == 6);
  CHECK(with_apart[5].level == "DRAM apart");
  CHECK(with_apart[5].measured == 1200);
  CHECK(*with_apart[5].predicted == 1350);
  CHECK(*with_apart[5].error_pct == doctest::Approx(12.5));
  CHECK_FALSE(with_apart[5].bound_pct);
  CHECK(with_apart[5].within);

  // L2: 500 measured, 600 predicted: +20 %, inside 25 %.
  const CounterLevelRow* l2 = row_of(rows, "L2");
  REQUIRE(l2);
  CHECK(*l2->error_pct == doctest::Approx(20.0));
  CHECK(l2->within);
  CHECK(l2->cause.empty());

  // L1: equal, and no target of its own.
  const CounterLevelRow* l1 = row_of(rows, "L1");
  REQUIRE(l1);
  CHECK(*l1->error_pct == 0);
  CHECK_FALSE(l1->bound_pct);
  CHECK(l1->within);

  // Conflicts: 30 vs 0 is within 5 % of 1000 instructions (50); 90 vs 0 is not.
  const CounterLevelRow* ld = row_of(rows, "smem loads");
  const CounterLevelRow* st = row_of(rows, "smem stores");
  REQUIRE(ld);
  REQUIRE(st);
  CHECK(*ld->conflict_slack == 50);
  CHECK(ld->within);
  CHECK_FALSE(st->within);
}

TEST_CASE("predicted vs measured rows: no twin, a failed run, a kernel without shared memory") {
  kernels::CounterReport report;
  kernels::CounterRun run = gpu_run();
  run.predicted->twin.clear();
  run.predicted->no_twin_reason = "no trace description";
  for (const CounterLevelRow& r : counter_level_rows(report, run)) {
    CHECK_FALSE(r.predicted);
    CHECK(r.within);  // nothing to hold against its target
  }
  run.measured.erase("shared_ld_instructions");
  run.measured["shared_st_instructions"] = 0;
  const std::vector<CounterLevelRow> without_shared = counter_level_rows(report, run);
  CHECK_FALSE(row_of(without_shared, "smem loads"));
  CHECK_FALSE(row_of(without_shared, "smem stores"));
  run.error = "ncu failed";
  CHECK(counter_level_rows(report, run).empty());
}

TEST_CASE("cachegrind rows: D1 and LL misses against 25 % and 15 %") {
  kernels::CounterReport report;
  report.tool = "cachegrind";
  kernels::CounterRun run;
  run.measured = {{"d1_misses", 1000}, {"ll_misses", 100}};
  kernels::CounterPrediction p;
  p.twin = "schedule";
  p.values = {{"d1_misses", 1240}, {"ll_misses", 116}};
  run.predicted = p;
  const std::vector<CounterLevelRow> rows = counter_level_rows(report, run);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].level == "D1");
  CHECK(*rows[0].error_pct == doctest::Approx(24.0));
  CHECK(rows[0].within);
  CHECK(rows[1].level == "LL");
  CHECK(*rows[1].error_pct == doctest::Approx(16.0));
  CHECK_FALSE(rows[1].within);
}

TEST_CASE("the committed recordings load into the workbench, one per machine kind") {
  Workbench wb;
  workbench_load_recorded(wb, "assets/recorded");
  const auto* gpu = counters_for_machine_kind(wb.counters_recorded, "gpu");
  const auto* cpu = counters_for_machine_kind(wb.counters_recorded, "cpu");
  REQUIRE(gpu);
  REQUIRE(cpu);
  CHECK(gpu->second.tool == "ncu");
  CHECK(cpu->second.tool == "cachegrind");
  // A machine's own recording first: the H200's for h200, the H100's for h100, whatever the date.
  CHECK(counters_for_machine_kind(wb.counters_recorded, "gpu", "h200")->second.device["name"] ==
        "NVIDIA H200");
  CHECK(counters_for_machine_kind(wb.counters_recorded, "gpu", "h100")->second.device["name"] ==
        "NVIDIA H100 80GB HBM3");
  // Counters recordings are not timing reports.
  for (const auto& [file, report] : wb.recorded) CHECK_FALSE(kernels::is_counters_document(report));
  // Every completed run's DRAM row is the recording's own read + write sums.
  for (const kernels::CounterRun& run : gpu->second.runs) {
    if (run.error) continue;
    const std::vector<CounterLevelRow> rows = counter_level_rows(gpu->second, run);
    const CounterLevelRow* dram = row_of(rows, "DRAM");
    REQUIRE(dram);
    CHECK(dram->measured ==
          run.measured.at("dram_read_bytes") + run.measured.at("dram_write_bytes"));
  }
  CHECK(counter_run_label(gpu->second.runs[3]).find("sgemm 3") == 0);
}

// The shared bench types: the repeat rule and timing summary, derived rates, suite requests, and
// the one JSON spelling — every recorded report survives a round trip, bad fields are named.
#include "kernels/bench_types.h"
#include "kernels/cpu/bench_report.h"

#include "kernels/gpu_counters.h"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

using namespace tilescope::kernels;
using nlohmann::json;

namespace {

VersionResult timed_version(int number, double median_ms, double min_ms) {
  VersionResult r;
  r.version = number;
  r.name = "v" + std::to_string(number);
  r.verified = true;
  r.rel_error = 0.0;
  r.timing = Timing{median_ms, min_ms, 5};
  return r;
}

json minimal_report() {
  return {{"schema", "tilescope-bench/1"},
          {"kind", "cpu"},
          {"suites",
           {{{"name", "x"},
             {"problem", "p"},
             {"reference", "eigen"},
             {"flops", 1.0},
             {"min_bytes", 1.0},
             {"results",
              {{{"version", 0},
                {"name", "a"},
                {"verified", true},
                {"median_ms", 1.0},
                {"min_ms", 1.0},
                {"repeats", 3}}}}}}}};
}

}  // namespace

TEST_CASE(
    "the repeat rule takes the repeats asked for, or stops once the budget is spent, never "
    "below min_repeats") {
  const RepeatRule rule{10, 3, 50.0};
  CHECK_FALSE(rule.enough(9, 0.0));
  CHECK(rule.enough(10, 0.0));
  CHECK_FALSE(rule.enough(2, 1000.0));  // far over budget, but fewer than 3
  CHECK(rule.enough(3, 1000.0));
  CHECK_FALSE(rule.enough(5, 50.0));  // the budget must be exceeded, not reached
  CHECK(rule.enough(5, 50.5));
  const RepeatRule zero{0, 3, 50.0};  // asking for none still measures once
  CHECK_FALSE(zero.enough(0, 0.0));
  CHECK(zero.enough(1, 0.0));
}

TEST_CASE("summarise_samples: median of the middle (two), minimum, count") {
  const Timing odd = summarise_samples({5.0, 1.0, 3.0});
  CHECK(odd.median_ms == 3.0);
  CHECK(odd.min_ms == 1.0);
  CHECK(odd.repeats == 3);
  const Timing even = summarise_samples({4.0, 1.0, 3.0, 2.0});
  CHECK(even.median_ms == 2.5);
  CHECK(even.min_ms == 1.0);
  CHECK(even.repeats == 4);
  CHECK_THROWS_AS(summarise_samples({}), std::invalid_argument);
}

TEST_CASE("relative_error in double precision: the 2-norm ratio, infinity for a NaN") {
  const std::vector<double> ref = {3.0, 4.0};  // ‖ref‖ = 5
  const std::vector<double> got = {3.0, 4.5};  // ‖got − ref‖ = 0.5
  CHECK(relative_error(got.data(), ref.data(), 2) == doctest::Approx(0.1));
  const std::vector<double> nan = {3.0, std::numeric_limits<double>::quiet_NaN()};
  CHECK(std::isinf(relative_error(nan.data(), ref.data(), 2)));
  const std::vector<double> zeros = {0.0, 0.0};
  CHECK(relative_error(zeros.data(), zeros.data(), 2) == 0.0);
  CHECK(std::isinf(relative_error(ref.data(), zeros.data(), 2)));
}

TEST_CASE("derive_rates: GFLOP/s and GB/s from the median, % of peak and reference, ratios") {
  SuiteResult s;
  s.flops = 2e9;
  s.min_bytes = 1e9;
  s.bound = "compute";
  VersionResult v0 = timed_version(0, 4.0, 3.0);
  v0.bytes = 2e9;
  VersionResult v1 = timed_version(1, 2.0, 1.5);  // no bytes of its own: the suite's min_bytes
  VersionResult v2;
  v2.version = 2;
  v2.name = "unverified";
  s.results = {v0, v1, v2};
  s.comparisons = {{"1 vs 0", 0, 1, {}, {}, {}}, {"2 vs 0", 0, 2, {}, {}, {}}};
  const PeakRates peaks{1000.0, 500.0};
  derive_rates(s, 0, &peaks);
  // v0: 2e9 FLOP in 4 ms = 500 GFLOP/s; 2e9 B in 4 ms = 500 GB/s; half the 1000 GFLOP/s peak.
  CHECK(*s.results[0].gflops == doctest::Approx(500.0));
  CHECK(*s.results[0].gbps == doctest::Approx(500.0));
  CHECK(*s.results[0].pct_of_peak == doctest::Approx(50.0));
  CHECK(*s.results[0].pct_of_reference == doctest::Approx(100.0));
  // v1: 2 ms → 1000 GFLOP/s; 1e9 B (min_bytes) in 2 ms = 500 GB/s; twice the reference's speed.
  CHECK(*s.results[1].gflops == doctest::Approx(1000.0));
  CHECK(*s.results[1].gbps == doctest::Approx(500.0));
  CHECK(*s.results[1].pct_of_peak == doctest::Approx(100.0));
  CHECK(*s.results[1].pct_of_reference == doctest::Approx(200.0));
  CHECK_FALSE(s.results[2].gflops.has_value());
  CHECK_FALSE(s.results[2].pct_of_reference.has_value());
  CHECK(*s.comparisons[0].time_ratio == doctest::Approx(2.0));      // 4 / 2
  CHECK(*s.comparisons[0].min_time_ratio == doctest::Approx(2.0));  // 3 / 1.5
  CHECK_FALSE(s.comparisons[0].byte_ratio.has_value());             // v1 counts no bytes
  CHECK_FALSE(s.comparisons[1].time_ratio.has_value());             // v2 was not timed

  s.bound = "memory";  // % of the bandwidth peak instead: 500 / 500 GB/s
  derive_rates(s, 0, &peaks);
  CHECK(*s.results[0].pct_of_peak == doctest::Approx(100.0));
  s.results[1].bytes = 0.5e9;
  derive_rates(s, 0, nullptr);  // no peaks given (the GPU): no % of peak
  CHECK_FALSE(s.results[0].pct_of_peak.has_value());
  CHECK(*s.comparisons[0].byte_ratio == doctest::Approx(4.0));  // 2e9 / 0.5e9
  CHECK(*s.results[1].gbps == doctest::Approx(250.0));          // its own bytes now
}

TEST_CASE("unverified_count counts the results that were not verified, over all suites") {
  BenchReport report;
  report.kind = "cpu";
  SuiteResult a, b;
  a.results = {timed_version(0, 1, 1), VersionResult{}, VersionResult{}};
  b.results = {VersionResult{}, timed_version(1, 1, 1)};
  report.suites = {a, b};
  CHECK(unverified_count(report) == 3);
}

TEST_CASE("select_suites: all, a comma list in its order, or the unknown name and the known ones") {
  const std::vector<std::string> all = {"a", "b", "c"};
  CHECK(select_suites("", all, "CPU") == all);
  CHECK(select_suites("all", all, "CPU") == all);
  CHECK(select_suites("c,a", all, "CPU") == std::vector<std::string>{"c", "a"});
  CHECK_THROWS_WITH_AS(select_suites("a,zz", all, "GPU"),
                       "unknown GPU suite 'zz': the suites are a, b, c", BenchError);
  CHECK_THROWS_AS(select_suites("a,", all, "CPU"), std::invalid_argument);
}

TEST_CASE("every recorded report reads into a BenchReport and writes back the same document") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator("assets/recorded")) {
    if (entry.path().extension() != ".json") continue;
    const std::string path = entry.path().string();
    CAPTURE(path);
    // Counters recordings (tilescope-counters/1) have their own schema and tests
    // (test_gpu_counters.cpp).
    if (std::ifstream in(path); is_counters_document(json::parse(in, nullptr, false))) continue;
    const json document = read_bench_report(path);
    json written = load_bench_report(path);
    if (document["kind"] == "gpu") {
      // Recorded before "comparisons" (gpu-h200-2026-11-29): the rewrite adds them next to the
      // "ratios" it read, with the same label, versions and median ratio. A GPU report that has
      // them already must come back as it is.
      for (std::size_t i = 0; i < written["suites"].size(); ++i) {
        const json& suite = document["suites"][i];
        if (suite.contains("comparisons")) continue;
        json& rewritten = written["suites"][i];
        const json ratios = suite.value("ratios", json::array());
        REQUIRE(rewritten["comparisons"].size() == ratios.size());
        for (std::size_t j = 0; j < ratios.size(); ++j) {
          CHECK(rewritten["comparisons"][j]["label"] == ratios[j]["what"]);
          CHECK(rewritten["comparisons"][j]["slower"] == ratios[j]["slower"]);
          CHECK(rewritten["comparisons"][j]["time_ratio"] == ratios[j]["speedup"]);
        }
        rewritten.erase("comparisons");
      }
    }
    CHECK(written == document);
    ++checked;
  }
  CHECK(checked >= 4);
}

TEST_CASE("a GPU report writes its comparisons under both spellings, a CPU report under one") {
  BenchReport report;
  report.kind = "gpu";
  SuiteResult s;
  s.name = "bias_relu";
  s.comparisons = {{"fused vs chain", 1, 2, 1.5, 1.4, 2.0}, {"untimed", 1, 3, {}, {}, {}}};
  report.suites = {s};
  const json gpu = report;
  CHECK(gpu["suites"][0]["comparisons"].size() == 2);
  CHECK(gpu["suites"][0]["comparisons"][1]["time_ratio"].is_null());
  const json expected = {
      {{"what", "fused vs chain"}, {"slower", 1}, {"faster", 2}, {"speedup", 1.5}}};
  CHECK(gpu["suites"][0]["ratios"] == expected);
  report.kind = "cpu";
  const json cpu = report;
  CHECK_FALSE(cpu["suites"][0].contains("ratios"));
  // Read back, "comparisons" wins over the derived "ratios".
  const BenchReport again = gpu.get<BenchReport>();
  REQUIRE(again.suites[0].comparisons.size() == 2);
  CHECK(*again.suites[0].comparisons[0].byte_ratio == 2.0);
  CHECK(again.suites[0].details.empty());
}

TEST_CASE("a suite that could not be set up writes only its name, the error and no results") {
  BenchReport report;
  report.kind = "gpu";
  SuiteResult failed;
  failed.name = "conv2d";
  failed.error = "out of memory";
  report.suites = {failed};
  const json j = report;
  CHECK(j["suites"][0] ==
        json{{"name", "conv2d"}, {"error", "out of memory"}, {"results", json::array()}});
  CHECK(check_bench_report(j) == "");
}

TEST_CASE("from_json names the field and where it is") {
  CHECK(check_bench_report(minimal_report()) == "");
  CHECK(check_bench_report(json::array()) == "the report is not a JSON object");

  json r = minimal_report();
  r["suites"][0]["results"][0].erase("verified");
  CHECK(check_bench_report(r) == "suites[0].results[0] needs a boolean \"verified\"");

  r = minimal_report();
  r["suites"][0]["results"][0].erase("median_ms");
  CHECK(check_bench_report(r) ==
        "suites[0].results[0] is verified but has no number \"median_ms\"");

  r = minimal_report();
  r["suites"][0]["results"][0].erase("min_ms");
  CHECK(check_bench_report(r) == "suites[0].results[0] needs a number \"min_ms\"");

  r = minimal_report();
  r["suites"][0].erase("problem");
  CHECK(check_bench_report(r) == "suites[0] (x) needs a string \"problem\"");

  r = minimal_report();
  r["suites"][0]["tolerance"] = "tight";
  CHECK(check_bench_report(r) == "suites[0] (x) needs a number, null or no field \"tolerance\"");

  r = minimal_report();
  r["suites"][0]["comparisons"] = {{{"slower", 0}, {"faster", 1}}};
  CHECK(check_bench_report(r) == "suites[0].comparisons[0] needs a string \"label\"");

  r = minimal_report();
  r["host"] = {{"cpu", "x"}};
  CHECK(check_bench_report(r) == "host needs an integer \"cores\"");

  r = minimal_report();
  r["peaks"] = {{"gflops_fp32", 1.0}, {"gbps", 2.0}, {"tflops", 3.0}};
  CHECK(check_bench_report(r) == "peaks has an unknown field \"tflops\"");
}

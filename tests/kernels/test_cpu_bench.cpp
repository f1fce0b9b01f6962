// The bench runner and `tilescope-cli bench`: a quick run verifies and times every version and
// writes a report that follows the schema; bad requests get clear messages and exit codes.
#include "kernels/cpu/bench_report.h"
#include "kernels/cpu/cpu_bench.h"

#include "kernels/gpu_counters.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include "tests/support/run_command.h"

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using namespace tilescope::kernels;

namespace {

// exit_code and output under the names these tests use.
struct Outcome {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Outcome run_cli(const std::string& arguments, const std::string& env = "") {
  tilescope::test::CommandResult r = tilescope::test::run_cli(arguments, env);
  return {r.code, std::move(r.out)};
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tilescope-bench-test-" + std::to_string(getpid()) + "-" + name))
      .string();
}

}  // namespace

TEST_CASE("a quick bias_relu run verifies and times every version and fits the schema") {
  CpuBenchOptions options;
  options.suite = "bias_relu";
  options.quick = true;
  options.repeats = 3;
  std::ostringstream log;
  const BenchReport typed = run_cpu_bench(options, log);
  const nlohmann::json report = typed;
  CHECK(check_bench_report(report) == "");
  CHECK(report["kind"] == "cpu");
  REQUIRE(report["suites"].size() == 1);
  const auto& suite = report["suites"][0];
  CHECK(suite["name"] == "bias_relu");
  // Compulsory bytes: fused reads X and writes Y; unfused also writes and re-reads T.
  const double rows = suite["sizes"]["rows"], cols = suite["sizes"]["cols"];
  CHECK(suite["min_bytes"].get<double>() == 4.0 * (2.0 * rows * cols + cols));
  for (const auto& r : suite["results"]) {
    CHECK(r["verified"] == true);
    CHECK(r["median_ms"].get<double>() > 0.0);
    CHECK(r["repeats"].get<int>() >= 1);
  }
  REQUIRE(suite["comparisons"].size() == 1);
  CHECK(suite["comparisons"][0]["byte_ratio"].get<double>() ==
        doctest::Approx((4.0 * rows * cols + cols) / (2.0 * rows * cols + cols)));
  const std::string table = format_bench_table(typed);
  CHECK(table.find("bias_relu") != std::string::npos);
  CHECK(table.find("fused (2) vs unfused (1)") != std::string::npos);
}

TEST_CASE("an unknown suite and a zero repeat count are refused with the reason") {
  CpuBenchOptions options;
  options.suite = "matmull";
  std::ostringstream log;
  CHECK_THROWS_WITH_AS(run_cpu_bench(options, log),
                       "unknown CPU suite 'matmull': the suites are matmul, conv, bias_relu, jit, "
                       "schedule_twin",
                       BenchError);
  options.suite = "matmul";
  options.repeats = 0;
  CHECK_THROWS_AS(run_cpu_bench(options, log), BenchError);
}

TEST_CASE("check_bench_report names the field that is wrong") {
  nlohmann::json report = {
      {"schema", "tilescope-bench/1"}, {"kind", "cpu"}, {"suites", {{{"name", "x"}}}}};
  CHECK(check_bench_report(report) == "suites[0] (x) needs an array \"results\"");
  report["kind"] = "tpu";
  CHECK(check_bench_report(report) == "field \"kind\" must be \"cpu\" or \"gpu\"");
}

TEST_CASE("tilescope-cli bench --cpu --quick prints the table and writes a readable report") {
  const std::string out = temp_path("report.json");
  const Outcome run = run_cli("bench --cpu --quick --repeats 2 --suite conv --out " + out);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("im2col_gemm") != std::string::npos);
  const nlohmann::json report = read_bench_report(out);
  CHECK(report["suites"][0]["name"] == "conv");
  const Outcome show = run_cli("bench --show " + out);
  CHECK(show.exit_code == 0);
  CHECK(show.output.find("fused conv+bias+ReLU (3) vs two passes (2)") != std::string::npos);
  std::filesystem::remove(out);
}

TEST_CASE("tilescope-cli bench: bad requests exit 1 with a message") {
  const Outcome unknown = run_cli("bench --cpu --suite nope");
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.output.find("unknown CPU suite 'nope'") != std::string::npos);

  const Outcome neither = run_cli("bench");
  CHECK(neither.exit_code == 1);
  CHECK(neither.output.find("--cpu or --gpu") != std::string::npos);

  const std::string broken = temp_path("broken.json");
  std::ofstream(broken) << "{\"schema\": \"something-else\"}";
  const Outcome show = run_cli("bench --show " + broken);
  CHECK(show.exit_code == 1);
  CHECK(show.output.find("not a tilescope benchmark report") != std::string::npos);
  std::filesystem::remove(broken);

#if !TILESCOPE_HAVE_CUDA
  const Outcome gpu = run_cli("bench --gpu");
  CHECK(gpu.exit_code == 1);
  CHECK(gpu.output.find("built without CUDA") != std::string::npos);
#endif
}

TEST_CASE("tilescope-cli bench --suite jit with CXX=/nonexistent reports the missing compiler") {
  const std::string out = temp_path("jit.json");
  const Outcome run =
      run_cli("bench --cpu --quick --repeats 1 --suite jit --out " + out, "CXX=/nonexistent");
  INFO(run.output);
  CHECK(run.exit_code == 1);  // one version could not be verified
  CHECK(run.output.find("'/nonexistent' was not found") != std::string::npos);
  const nlohmann::json report = read_bench_report(out);
  const auto& jit = report["suites"][0]["results"][2];
  CHECK(jit["verified"] == false);
  CHECK(jit["compiled"] == "jit");
  CHECK(report["suites"][0]["results"][1]["verified"] == true);  // the rest still ran
  // MatMul version 3 at 100³ adds the bias and then applies the ReLU: two passes over Y beyond the
  // compulsory A, B, bias and Y (4 · (10000 + 10000 + 100 + 10000) bytes), each 2 · 4 · 10000.
  CHECK(report["suites"][0]["results"][1]["bytes"].get<double>() == 120400.0 + 2 * 80000.0);
  std::filesystem::remove(out);
}

TEST_CASE("every recorded CPU report in assets/recorded follows the schema") {
  // Tests run from the repository root.
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator("assets/recorded")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cpu-", 0) != 0 || entry.path().extension() != ".json") continue;
    CAPTURE(name);
    // A cachegrind counters recording (tilescope-counters/1) is tested in test_gpu_counters.cpp.
    if (std::ifstream in(entry.path());
        tilescope::kernels::is_counters_document(nlohmann::json::parse(in, nullptr, false)))
      continue;
    const nlohmann::json report = read_bench_report(entry.path().string());
    CHECK(report["kind"] == "cpu");
    CHECK_FALSE(format_bench_table(load_bench_report(entry.path().string())).empty());
    ++checked;
  }
  CHECK(checked >= 1);
}

TEST_CASE("bench --size and --threads: the matmul problem and the threaded pair 6 vs 7") {
  CpuBenchOptions options;
  options.suite = "matmul";
  options.quick = true;
  options.repeats = 1;
  options.size = 40;
  options.threads = 3;
  std::ostringstream log;
  const nlohmann::json report = run_cpu_bench(options, log);
  INFO(log.str());
  CHECK(check_bench_report(report) == "");
  const auto& suite = report["suites"][0];
  CHECK(suite["sizes"]["M"] == 40);
  CHECK(suite["sizes"]["N"] == 40);
  CHECK(suite["sizes"]["K"] == 40);
  REQUIRE(suite["results"].size() == 8);
  for (const auto& r : suite["results"]) {
    CAPTURE(r["name"].get<std::string>());
    CHECK(r["verified"] == true);
  }
  // 40 columns are 2 NR blocks (NR = 16 or 32), 40 rows 5 or 7 MR blocks: 3 threads fit 3×1 or 1×3.
  CHECK(suite["results"][6]["note"].get<std::string>().find("uses 3 of 3 threads") == 0);
  const std::string eigen_note = suite["results"][7]["note"].get<std::string>();
  CHECK(eigen_note.find("Eigen on 3 OpenMP threads") == 0);
  // Whether it warns that OpenMP spins follows the variable this process started with.
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const bool passive = policy && std::string(policy) == "passive";
  CHECK((eigen_note.find("OMP_WAIT_POLICY is not passive") != std::string::npos) == !passive);
  bool paired = false;
  for (const auto& c : suite["comparisons"])
    paired = paired || (c["label"] == "threads (6) vs Eigen on the same 3 threads (7)" &&
                        c["slower"] == 7 && c["faster"] == 6 && c["time_ratio"].get<double>() > 0);
  CHECK(paired);

  options.size = kMaxMatMulSize + 1;
  CHECK_THROWS_AS(run_cpu_bench(options, log), BenchError);
  options.size = 40;
  options.threads = -1;
  CHECK_THROWS_AS(run_cpu_bench(options, log), BenchError);
}

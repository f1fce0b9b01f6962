// The CPU schedule twin: the generated source JIT-compiles and matches the plain reference
// (sim/graph/eval.h) and the hand-written twin, partial tiles included; a refused step and a source
// that does not compile come back with the reason.
#include "kernels/cpu/cpu_bench.h"
#include "kernels/cpu/jit.h"
#include "kernels/cpu/schedule_twin.h"
#include "sim/graph/eval.h"
#include "sim/lang/parser.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

using namespace tilescope;
using namespace tilescope::kernels;

namespace {

JitOptions test_options() {
  JitOptions options;
  options.cache_dir = (std::filesystem::temp_directory_path() /
                       ("tilescope-schedtwin-test-" + std::to_string(getpid())))
                          .string();
  return options;
}

struct CacheCleanup {
  ~CacheCleanup() {
    std::error_code ec;
    std::filesystem::remove_all(test_options().cache_dir, ec);
  }
} cleanup;

// The model's inputs from graph::random_feeds, in the kernel's argument order {A, B, bias}, and
// graph::evaluate's y: the reference is the graph's plain double-precision loops.
struct Problem {
  int m, n, k;
  std::vector<float> a, b, bias;
  std::vector<double> y_ref;
};

Problem make_problem(int m, int n, int k) {
  const graph::Graph g = lang::parse_model(schedule_twin_model(m, n, k));
  const auto feeds = graph::random_feeds(g, 5);
  const auto values = graph::evaluate(g, feeds);
  auto as_float = [&](const std::string& name) {
    for (const auto& [id, v] : feeds)
      if (g.tensor(id).name == name) return std::vector<float>(v.begin(), v.end());
    FAIL("no feed for ", name);
    return std::vector<float>{};
  };
  Problem p{m, n, k, as_float("A"), as_float("B"), as_float("bias"), {}};
  for (graph::TensorId id = 0; id < graph::TensorId(values.size()); ++id)
    if (g.tensor(id).name == "y") p.y_ref = values[size_t(id)];
  REQUIRE(p.y_ref.size() == size_t(m) * n);
  return p;
}

// max |got − ref| over max |ref|; +inf for a NaN (a position the kernel never wrote).
double scaled_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double worst = 0, scale = 1e-30;
  for (double r : ref) scale = std::max(scale, std::fabs(r));
  for (size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    worst = std::max(worst, std::fabs(got[i] - ref[i]));
  }
  return worst / scale;
}

std::vector<float> run_generated(const std::string& steps, Problem& p) {
  const GeneratedSchedule gen = generate_schedule(schedule_twin_model(p.m, p.n, p.k), steps);
  const JitResult jit = jit_compile(gen.source, test_options());
  INFO(jit.error, "\n", jit.compiler_output, "\n", gen.source);
  REQUIRE(jit.ok);
  std::vector<float> y(size_t(p.m) * p.n, NAN);
  float* const args[] = {p.a.data(), p.b.data(), p.bias.data(), y.data()};
  jit.module->kernel()(args);
  return y;
}

std::vector<float> run_hand(Problem& p) {
  std::vector<float> y(size_t(p.m) * p.n, NAN);
  matmul_sched_twin({p.a.data(), p.b.data(), p.bias.data(), y.data(), p.m, p.n, p.k});
  return y;
}

}  // namespace

TEST_CASE("the step text spells the tiles the hand-written twin uses") {
  CHECK(schedule_twin_steps() ==
        "fuse(matmul0, add0, relu0); tile(j, 256); tile(i, 8); tile(j.i, 32); "
        "reorder(j.o, i.o, j.i.o, k, i.i, j.i.i); unroll(i.i); vectorize(j.i.i)");
}

TEST_CASE("generated schedules JIT-compile and equal the plain reference on 17x33x9") {
  // Small tiles so every split leaves a partial tile: 17 = 4·4 + 1 rows, 33 = 16 + 16 + 1 columns.
  Problem p = make_problem(17, 33, 9);
  const std::string fuse = "fuse(matmul0, add0, relu0)";
  for (const std::string& steps :
       {fuse, fuse + "; reorder(i, k, j)", schedule_twin_steps({16, 4, 8}),
        schedule_twin_steps({32, 4, 16})}) {
    INFO(steps);
    CHECK(scaled_error(run_generated(steps, p), p.y_ref) < 1e-5);
  }
}

TEST_CASE("the generated twin schedule equals the hand-written twin, partial blocks included") {
  // The real tiles (256, 8, 32) on 20×300×40: two full and one 4-row block down, and a second
  // panel of 44 columns = one full 32-column block and a 12-column one.
  Problem p = make_problem(20, 300, 40);
  const std::vector<float> generated = run_generated(schedule_twin_steps(), p);
  const std::vector<float> hand = run_hand(p);
  CHECK(scaled_error(hand, p.y_ref) < 1e-5);
  CHECK(scaled_error(generated, p.y_ref) < 1e-5);
  std::vector<double> hand64(hand.begin(), hand.end());
  CHECK(scaled_error(generated, hand64) < 1e-5);
}

TEST_CASE("the hand-written twin alone equals the reference on exact and ragged sizes") {
  for (auto [m, n, k] : {std::tuple{16, 256, 8}, std::tuple{17, 33, 9}, std::tuple{1, 1, 1},
                         std::tuple{9, 289, 3}}) {
    INFO(m, "x", n, "x", k);
    Problem p = make_problem(m, n, k);
    CHECK(scaled_error(run_hand(p), p.y_ref) < 1e-5);
  }
}

TEST_CASE("a refused step is reported with the schedule module's reason") {
  // tile(j, 256) on a 33-column problem: the loop has only 33 iterations.
  try {
    generate_schedule(schedule_twin_model(17, 33, 9), schedule_twin_steps());
    FAIL("expected a refusal");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find("tile(j, 256)") != std::string::npos);
    CHECK(what.find("33") != std::string::npos);
  }
  // Unfused: three kernels, and the JIT runs one.
  try {
    generate_schedule(schedule_twin_model(4, 4, 4), "tile(i, 2)");
    FAIL("expected a refusal");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("fuse the whole graph") != std::string::npos);
  }
}

TEST_CASE("a generated source that does not compile reports the compiler's message") {
  // Take a real generated source and break it the way a code-generator bug would: an undeclared
  // name in the statement.
  GeneratedSchedule gen =
      generate_schedule(schedule_twin_model(17, 33, 9), schedule_twin_steps({16, 4, 8}));
  const std::string needle = "std::max(";
  const size_t at = gen.source.find(needle);
  REQUIRE(at != std::string::npos);
  gen.source.replace(at, needle.size(), "std::max(undeclared_tile_value + ");
  const JitResult jit = jit_compile(gen.source, test_options());
  CHECK_FALSE(jit.ok);
  CHECK_FALSE(jit.module);
  CHECK(jit.compiler_output.find("undeclared_tile_value") != std::string::npos);
  CHECK(jit.compiler_output.find("error") != std::string::npos);
  CHECK_FALSE(jit.error.empty());
}

TEST_CASE("a quick schedule_twin bench run verifies the twins and reports their ratio") {
  CpuBenchOptions options;
  options.suite = "schedule_twin";
  options.quick = true;
  options.repeats = 2;
  options.jit = test_options();
  std::ostringstream log;
  const nlohmann::json report = run_cpu_bench(options, log);
  INFO(log.str());
  REQUIRE(report["suites"].size() == 1);
  const auto& suite = report["suites"][0];
  CHECK(suite["name"] == "schedule_twin");
  REQUIRE(suite["results"].size() == 6);
  for (const auto& r : suite["results"]) {
    INFO(r.dump());
    CHECK(r["verified"] == true);
    CHECK(r.contains("median_ms"));
  }
  CHECK(suite["results"][1]["source"] == "hand");
  CHECK(suite["results"][2]["source"] == "generated");
  CHECK(suite["results"][2]["compiled"] == "jit");
  CHECK(suite["results"][2]["steps"] == schedule_twin_steps());
  CHECK(suite["results"][2]["note"].get<std::string>().find("-O3 -march=native") !=
        std::string::npos);
  CHECK(suite["comparisons"][0]["slower"] == 1);
  CHECK(suite["comparisons"][0]["faster"] == 2);
  CHECK(suite["comparisons"][0]["time_ratio"].is_number());
}

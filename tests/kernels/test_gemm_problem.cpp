// The GEMM (+ bias + ReLU) problem both benches share: FLOP and byte counts against a hand count,
// the float64 reference against a hand-multiplied 2×2, and the shapes against the recordings.
#include "kernels/gemm_problem.h"

#include "kernels/cpu/bench_report.h"
#include "kernels/cpu/cpu_bench.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

using namespace tilescope::kernels;
using nlohmann::json;

namespace {

GemmProblem small_problem(bool bias_relu) {
  GemmProblem p;
  p.m = 2, p.n = 3, p.k = 4;
  p.bias_relu = bias_relu;
  return p;
}

// `name` is a C string: a temporary std::string argument makes GCC 13 warn of a dangling reference.
const json& suite_named(const json& report, const char* name) {
  for (const json& s : report["suites"])
    if (s["name"] == name) return s;
  FAIL("no suite " << name);
  return report;
}

}  // namespace

TEST_CASE(
    "GEMM FLOPs: K multiplies and K adds per output, plus an add and a max with the epilogue") {
  // Y is 2×3 = 6 outputs; each is a dot product of length 4: 4 multiplies + 4 adds = 8 FLOPs.
  CHECK(small_problem(false).flops() == 6 * 8);
  // The bias add and the ReLU's max: 2 more per output.
  CHECK(small_problem(true).flops() == 6 * 8 + 6 * 2);
}

TEST_CASE("GEMM bytes: every operand once, Y written once, each unfused pass reads and writes Y") {
  const GemmProblem p = small_problem(true);
  // A 2×4 = 8 floats, B 4×3 = 12, bias 3, Y 2×3 = 6: 29 floats of 4 bytes.
  CHECK(p.compulsory_bytes() == 29 * 4);
  // fp16 operands: A and B at 2 bytes (20 × 2), bias and Y still fp32 (9 × 4).
  CHECK(p.compulsory_bytes(2) == 20 * 2 + 9 * 4);
  // One pass over Y: 6 floats read and 6 written.
  CHECK(p.epilogue_pass_bytes() == 12 * 4);
  CHECK(p.bytes(2) == 29 * 4 + 2 * 12 * 4);
  CHECK(p.bytes(0, 2) == p.compulsory_bytes(2));
  // Without the epilogue there is no bias to read: A, B and Y, 26 floats.
  CHECK(small_problem(false).compulsory_bytes() == 26 * 4);
}

TEST_CASE("gemm_reference_at: a hand-multiplied 2×2, in both layouts, with and without bias+ReLU") {
  GemmProblem p;
  p.m = 2, p.n = 2, p.k = 2;
  const float a[] = {1, 2, 3, 4};  // A = [[1, 2], [3, 4]]
  const float b[] = {5, 6, 7, 8};  // B (K×N) = [[5, 6], [7, 8]]
  const float w[] = {5, 7, 6, 8};  // W = Bᵀ (N×K)
  const float bias[] = {-20, 1};
  // A·B = [[19, 22], [43, 50]]; + bias = [[-1, 23], [23, 51]]; ReLU clips the -1.
  const double want[2][2] = {{0, 23}, {23, 51}};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      p.layout = GemmLayout::b_k_by_n;
      CHECK(gemm_reference_at(p, a, b, bias, i, j) == want[i][j]);
      p.layout = GemmLayout::w_n_by_k;
      CHECK(gemm_reference_at(p, a, w, bias, i, j) == want[i][j]);
    }
  p.bias_relu = false;
  p.layout = GemmLayout::b_k_by_n;
  CHECK(gemm_reference_at(p, a, b, nullptr, 0, 0) == 19);
}

TEST_CASE("the H200 recording was made on the problems gemm_problem describes") {
  // Recorded by the GPU bench before its suites took their problem from here: same shapes, same
  // FLOP and byte counts.
  const json report = read_bench_report("assets/recorded/gpu-h200-2026-11-29.json");
  const struct {
    const char* name;
    GemmSuite suite;
    int operand_bytes;
  } cases[] = {{"sgemm", GemmSuite::gpu_sgemm, 4},
               {"hgemm", GemmSuite::gpu_hgemm, 2},
               {"gemm_epilogue", GemmSuite::gpu_gemm_epilogue, 4},
               {"jit_twin", GemmSuite::gpu_jit_twin, 4},
               {"schedule_twin", GemmSuite::gpu_schedule_twin, 4}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const json& suite = suite_named(report, c.name);
    const GemmProblem p = gemm_problem(c.suite, false);
    CHECK(suite["flops"].get<double>() == p.flops());
    CHECK(suite["min_bytes"].get<double>() == p.compulsory_bytes(c.operand_bytes));
    CHECK(suite["problem"].get<std::string>().rfind(p.shape_text() + ", ", 0) == 0);
    CHECK(suite["reference"] == p.reference);
  }
}

TEST_CASE("the CPU recording's matmul suite: sizes, FLOPs and per-version bytes of gemm_problem") {
  const json report = read_bench_report("assets/recorded/cpu-2026-11-29-xeon16-gpu-host.json");
  const json& suite = suite_named(report, "matmul");
  const GemmProblem p = gemm_problem(GemmSuite::cpu_matmul, false);
  CHECK(suite["sizes"] == p.sizes());
  CHECK(suite["flops"].get<double>() == p.flops());
  CHECK(suite["min_bytes"].get<double>() == p.compulsory_bytes());
  // Eigen makes one extra pass over Y, versions 1–4 two (bias, then ReLU), 5 and 6 none.
  const int passes[] = {1, 2, 2, 2, 2, 0, 0};
  for (const json& r : suite["results"]) {
    CAPTURE(r["name"]);
    CHECK(r["bytes"].get<double>() == p.bytes(passes[r["version"].get<int>()]));
  }
}

TEST_CASE("a quick matmul bench run reports the hand-counted problem of 160×200×176") {
  CpuBenchOptions options;
  options.suite = "matmul";
  options.quick = true;
  options.repeats = 1;
  std::ostringstream log;
  const json report = run_cpu_bench(options, log);
  const json& suite = suite_named(report, "matmul");
  CHECK(suite["sizes"] == json{{"M", 160}, {"N", 200}, {"K", 176}});
  // A 160·176 = 28160, B 176·200 = 35200, bias 200, Y 160·200 = 32000 floats.
  const double compulsory = 4.0 * (28160 + 35200 + 200 + 32000);
  const double pass = 2.0 * 4.0 * 32000;  // Y read and written once more
  CHECK(suite["min_bytes"].get<double>() == compulsory);
  CHECK(suite["flops"].get<double>() == 2.0 * 160 * 200 * 176 + 2.0 * 32000);
  CHECK(suite["results"][0]["bytes"].get<double>() == compulsory + pass);
  CHECK(suite["results"][4]["bytes"].get<double>() == compulsory + 2 * pass);
  CHECK(suite["results"][5]["bytes"].get<double>() == compulsory);
  const json& fused = suite["comparisons"][1];  // fused bias+ReLU epilogue (5) vs two passes (4)
  CHECK(fused["slower"] == 4);
  CHECK(fused["byte_ratio"].get<double>() == doctest::Approx((compulsory + 2 * pass) / compulsory));
}

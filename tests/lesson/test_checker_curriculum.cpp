// The curriculum functions of the checker (strides, waves, dtypes, predicted time, source, graph
// dependencies, compiler passes), each against a hand count, a closed form or <cfloat>.
#include "sim/lesson/checker.h"
#include "tests/lesson/lesson_folder.h"
#include "sim/schedule/transform.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";

using tilescope::lesson::test::g_lesson_file;
using tilescope::lesson::test::LessonFolder;

CheckResult run(const std::string& blocks, const std::string& check,
                const std::string& check_attrs = "") {
  LessonSession s(parse_lesson(
      kHead + blocks + "```check" + check_attrs + "\n" + check + "\n```\n", g_lesson_file));
  const auto results = s.run_checks();
  REQUIRE(results.size() == 1);
  return results[0];
}

Value value(const std::string& blocks, const std::string& expr, const std::string& attrs = "") {
  const CheckResult r = run(blocks, expr + " == 0", attrs);
  INFO(expr << ": " << r.error);
  REQUIRE(r.error.empty());
  return r.lhs;
}

double number(const std::string& blocks, const std::string& expr, const std::string& attrs = "") {
  const Value v = value(blocks, expr, attrs);
  REQUIRE(v.kind == Value::Kind::Number);
  return v.number;
}

std::string text(const std::string& blocks, const std::string& expr,
                 const std::string& attrs = "") {
  const Value v = value(blocks, expr, attrs);
  REQUIRE(v.kind == Value::Kind::String);
  return v.text;
}

std::vector<double> numbers(const std::string& blocks, const std::string& expr) {
  const Value v = value(blocks, expr);
  REQUIRE(v.kind == Value::Kind::List);
  std::vector<double> out;
  for (const Value& i : v.items) out.push_back(i.number);
  return out;
}

std::vector<std::string> texts(const std::string& blocks, const std::string& expr) {
  const Value v = value(blocks, expr);
  REQUIRE(v.kind == Value::Kind::List);
  std::vector<std::string> out;
  for (const Value& i : v.items) out.push_back(i.text);
  return out;
}

// y = relu(x @ W.T + b) with x [M, K], W [N, K].
std::string layer(int M, int N, int K) {
  return "```model id=m\nx: [" + std::to_string(M) + ", " + std::to_string(K) + "]\nW: [" +
         std::to_string(N) + ", " + std::to_string(K) + "] weight\nb: [" + std::to_string(N) +
         "] weight\ny = relu(x @ W.T + b)\n```\n";
}

std::string steps(const std::string& id, const std::string& body,
                  const std::string& attrs = " model=m") {
  return "```steps id=" + id + attrs + "\n" + body + "\n```\n";
}

}  // namespace

TEST_CASE("curriculum: strides are the elements between neighbours along each dim") {
  const std::string m = layer(8, 6, 4) + steps("t", "layout(W, transposed)") +
                        "```model id=c\nx: [2, 3, 5, 7]\nw: [4, 3, 1, 1] weight\n"
                        "y = conv2d(x, w)\n```\n" +
                        steps("nhwc", "layout(x, nhwc)", " model=c");
  // W [N=6, K=4] row-major: a row of K is contiguous.
  CHECK(numbers(m, "strides(m, W)") == std::vector<double>{4, 1});
  // Stored transposed: a column of N is contiguous, rows are N apart.
  CHECK(numbers(m, "strides(t, W)") == std::vector<double>{1, 6});
  // [N, C, H, W] = [2, 3, 5, 7] in NCHW: W fastest; in NHWC: C fastest, then W, then H.
  CHECK(numbers(m, "strides(c, x)") == std::vector<double>{3 * 5 * 7, 5 * 7, 7, 1});
  CHECK(numbers(m, "strides(nhwc, x)") == std::vector<double>{5 * 7 * 3, 1, 7 * 3, 3});
  // A tensor the model does not have is an error at load, with the model's name.
  CHECK_THROWS_WITH_AS(run(m, "strides(m, Q) == [1]"),
                       doctest::Contains("model m has no tensor 'Q'"), LessonError);
}

TEST_CASE("curriculum: waves are blocks over SMs, one block per SM at a time, rounded up") {
  // 512 × 512 outputs in 16 × 16 tiles: 32 × 32 = 1024 blocks; the h200 preset has 132 SMs, and
  // 7 × 132 = 924 < 1024 ≤ 8 × 132 = 1056: 8 waves, the last one holding 100 blocks.
  const std::string m =
      layer(512, 512, 64) + steps("g",
                                  "fuse(matmul0, add0, relu0)\ntile(i, j, 16, 16)\n"
                                  "bind(i.o, block.y)\nbind(j.o, block.x)");
  CHECK(number(m, "cores(h200)") == 132);
  CHECK(number(m, "blocks(g)") == 1024);
  CHECK(number(m, "waves(g, h200)") == 8);
  // 4096 × 4096 outputs in 128 × 128 tiles: a 32 × 32 grid. Row-major, the first 132 blocks are
  // 4 full rows of 32 and 4 blocks of a fifth: 5 rows × 32 columns. Grouped by 8 rows, launch
  // walks down 8 rows per column: 132 = 16 × 8 + 4, so 17 columns × 8 rows.
  const std::string big = "```model id=m\nA: [4096, 4096]\nB: [4096, 4096]\nC = A @ B\n```\n" +
                          steps("rows",
                                "tile(i, j, 128, 128)\nbind(i.o, block.y)\n"
                                "bind(j.o, block.x)") +
                          steps("grouped", "block_order(grouped, 8)", " from=rows");
  CHECK(numbers(big, "first_wave(rows, h200)") == std::vector<double>{5, 32});
  CHECK(numbers(big, "first_wave(grouped, h200)") == std::vector<double>{8, 17});
  // A CPU machine has no waves.
  CHECK_FALSE(run(m, "waves(g, tiny) == 1").error.empty());
  CHECK(number(m, "cores(tiny)") == 1);
}

TEST_CASE("curriculum: dtype sizes, largest values and epsilons from the formats' bits") {
  const std::string m = "```model id=h\nx: [2, 2] fp16\ny = relu(x)\n```\n";
  CHECK(text(m, "dtype(x)") == "fp16");
  CHECK(number(m, "dtype_bytes(\"fp32\")") == 4);
  CHECK(number(m, "dtype_bytes(\"bf16\")") == 2);
  CHECK(number(m, "dtype_bytes(\"tf32\")") == 4);  // stored as fp32; only the math is shorter
  CHECK(number(m, "dtype_bytes(\"int8\")") == 1);
  // fp32 against the C library's own constants.
  CHECK(number(m, "dtype_max(\"fp32\")") == double(FLT_MAX));
  CHECK(number(m, "dtype_eps(\"fp32\")") == double(FLT_EPSILON));
  // fp16: 5 exponent bits (bias 15), 10 mantissa bits: (2 - 2^-10) · 2^15 = 65504.
  CHECK(number(m, "dtype_max(\"fp16\")") == 65504);
  CHECK(number(m, "dtype_eps(\"fp16\")") == 1.0 / 1024);
  // bf16: fp32's 8 exponent bits, 7 mantissa bits: (2 - 2^-7) · 2^127, epsilon 1/128.
  CHECK(number(m, "dtype_max(\"bf16\")") == (2.0 - 1.0 / 128) * std::pow(2.0, 127));
  CHECK(number(m, "dtype_eps(\"bf16\")") == 1.0 / 128);
  // The smallest normal and subnormal: fp32 against the C library's FLT_MIN and FLT_TRUE_MIN;
  // fp16 2^-14 and 2^-24 (6.1e-5, 6.0e-8); bf16 shares fp32's exponent, so its FLT_MIN.
  CHECK(number(m, "dtype_min_normal(\"fp32\")") == double(FLT_MIN));
  CHECK(number(m, "dtype_min_subnormal(\"fp32\")") == double(FLT_TRUE_MIN));
  CHECK(number(m, "dtype_min_normal(\"fp16\")") == 1.0 / 16384);
  CHECK(number(m, "dtype_min_subnormal(\"fp16\")") == 1.0 / 16777216);
  CHECK(number(m, "dtype_min_normal(\"bf16\")") == double(FLT_MIN));
  CHECK(run(m, "dtype_max(\"fp9\") == 1").error.find("fp32, tf32, fp16, bf16") !=
        std::string::npos);
  // FP8 (OCP): E5M2 is IEEE-style, (2 - 2^-2) · 2^15 = 57344; E4M3 has no infinity and keeps its
  // top exponent for numbers: 1.75 · 2^8 = 448.
  CHECK(number(m, "dtype_max(\"fp8_e5m2\")") == 57344);
  CHECK(number(m, "dtype_max(\"fp8_e4m3\")") == 448);
  CHECK(number(m, "dtype_eps(\"fp8_e4m3\")") == 1.0 / 8);
}

TEST_CASE("curriculum: to_dtype rounds as the format stores a value, quantize as int8 does") {
  const std::string m;
  // fp32: the C++ conversion to float is the reference.
  for (const char* x : {"0.1", "1e-40", "3.4e38", "-2.5e-7", "12345.678", "0.3333333333333333"})
    CHECK(number(m, std::string("to_dtype(") + x + ", \"fp32\")") ==
          double(float(std::stod(x))));
  // fp16 1/3 is 0x3555 = 1365/4096; bf16 1/3 is 0x3EAB = 171/512 (round to nearest).
  CHECK(number(m, "to_dtype(1 / 3, \"fp16\")") == 1365.0 / 4096);
  CHECK(number(m, "to_dtype(1 / 3, \"bf16\")") == 171.0 / 512);
  // Ties go to even: 1 + 2^-11 sits halfway between 1 and 1 + 2^-10 in fp16.
  CHECK(number(m, "to_dtype(1 + 1 / 2048, \"fp16\")") == 1);
  CHECK(number(m, "to_dtype(1 + 3 / 2048, \"fp16\")") == 1 + 2.0 / 1024);
  // Below half the smallest fp16 subnormal (2^-25) a value flushes to zero; above it, 2^-24.
  CHECK(number(m, "to_dtype(2.9e-8, \"fp16\")") == 0);
  CHECK(number(m, "to_dtype(3.1e-8, \"fp16\")") == std::ldexp(1.0, -24));
  // Past 65504 + half a step (65520) fp16 overflows to infinity; FP8 saturates at its largest.
  CHECK(number(m, "overflows(65520, \"fp16\")") == 1);
  CHECK(number(m, "overflows(65519, \"fp16\")") == 0);
  CHECK(number(m, "to_dtype(65519, \"fp16\")") == 65504);
  CHECK(number(m, "to_dtype(1000, \"fp8_e4m3\")") == 448);
  CHECK(number(m, "to_dtype(0.3, \"fp8_e4m3\")") == 0.3125);
  CHECK(number(m, "to_dtype(0.3, \"fp8_e5m2\")") == 0.3125);
  CHECK(run(m, "to_dtype(1e6, \"fp16\") == 1").error.find("overflows()") != std::string::npos);
  // int8: x / scale rounded to an integer, clamped to -128..127, times the scale.
  CHECK(number(m, "quantize(0.05, 0.025, \"int8\")") == 0.05);
  CHECK(number(m, "quantize(0.06, 0.025, \"int8\")") == 0.05);  // 2.4 → 2
  CHECK(number(m, "quantize(10, 0.025, \"int8\")") == 127 * 0.025);
  CHECK(number(m, "quantize(-10, 0.025, \"int8\")") == -128 * 0.025);
  CHECK(run(m, "quantize(1, 0, \"int8\") == 1").error.find("scale above 0") != std::string::npos);
  CHECK(number(m, "clock(h200)") == 1.98e9);
}

TEST_CASE("curriculum: predicted time is the binding roofline bound over simulated traffic") {
  // relu(X + bias) fused on tiny, X [64, 64]. The roofline's rule: the largest of the compute time
  // (FLOPs at 16 GFLOP/s) and each level's bytes at its bandwidth — L1 serves 4-byte accesses at
  // 64 GB/s, L2 serves 64-byte lines at 32 GB/s, DRAM at 8 GB/s (tiny.machine). DRAM's bytes are
  // the hand count of test_checker.cpp: (256 + 4 + 256 + 256) lines of 64 B.
  const std::string m =
      "```model id=e\nX: [64, 64]\nbias: [64] weight\nY = relu(X + bias)\n```\n"
      "```steps id=f model=e\nfuse(add0, relu0)\n```\n";
  const std::string t = " machine=tiny";
  const double dram = (256 + 4 + 256 + 256) * 64.0;
  CHECK(number(m, "dram_bytes(f)", t) == dram);
  const double compute = 2 * 64 * 64 / 16e9;
  const double l1 = number(m, "accesses(f, L1)", t) * 4 / 64e9;
  const double l2 = number(m, "accesses(f, L2)", t) * 64 / 32e9;
  const double slowest = std::max({compute, l1, l2, dram / 8e9});
  CHECK(number(m, "predicted_time(f)", t) == doctest::Approx(slowest));
  // The 1 KiB 2-way L1 thrashes between X, bias and Y, so L2 serves more lines than DRAM does.
  CHECK(slowest == l2);
  CHECK(text(m, "bound(f)", t) == "L2");
  // Unfused, the temporary adds traffic: the fused program is the faster of the two.
  CHECK(number(m, "predicted_time(e)", t) > number(m, "predicted_time(f)", t));
  CHECK(text(m, "fastest([e, f])", t) == "f");
  CHECK(text(m, "fastest([f, e])", t) == "f");
}

TEST_CASE("curriculum: generated source and counting in it") {
  // A shared-memory tile is copied, then read: a barrier after the copy (before the reads) and
  // one after the reads (before the next copy overwrites it). Double-buffered, the next copy
  // fills the other buffer, so the second barrier goes.
  const std::string common =
      "tile(i, j, 16, 16)\ntile(k, 16)\nreorder(i.o, j.o, k.o, i.i, j.i, k.i)\n"
      "bind(i.o, block.y)\nbind(j.o, block.x)\nbind(i.i, thread.y)\nbind(j.i, thread.x)\n";
  const std::string m = layer(64, 64, 64) + steps("s", common + "stage(x, shared, at=k.o)") +
                        steps("d", common + "stage(x, shared, double, at=k.o)");
  CHECK(number(m, "count(source(s, \"cuda\"), \"__syncthreads();\")") == 2);
  CHECK(number(m, "count(source(d, \"cuda\"), \"__syncthreads();\")") == 1);
  CHECK(number(m, "count(source(m, \"cpp\"), \"__syncthreads\")") == 0);
  CHECK(number(m, "count(\"abcabc\", \"bc\")") == 2);
  CHECK(number(m, "count(\"aaa\", \"aa\")") == 1);  // occurrences do not overlap
  CHECK(run(m, "source(m, \"ptx\") == \"\"").error.find("\"cuda\", \"cpp\" or \"pseudo\"") !=
        std::string::npos);
}

TEST_CASE("curriculum: dependencies and the heaviest chain of a graph with two branches") {
  // Two branches from x: y1 = x @ W1.T (384 FLOPs: 2·4·6·8) and y2 = relu(x @ W2.T) (384 + 24),
  // joined by an add (24). The heaviest chain is matmul1 → relu0 → add0: 384 + 24 + 24 = 432 of
  // the 816 in all.
  const std::string m =
      "```model id=b\nx: [4, 8]\nW1: [6, 8] weight\nW2: [6, 8] weight\n"
      "y1 = x @ W1.T\ny2 = relu(x @ W2.T)\nz = y1 + y2\n```\n";
  CHECK(number(m, "flops(b)") == 816);
  CHECK(number(m, "critical_flops(b)") == 432);
  CHECK(number(m, "critical_flops()") == 432);
  CHECK(number(m, "depends(add0, matmul0)") == 1);
  CHECK(number(m, "depends(add0, matmul1)") == 1);  // through relu0
  CHECK(number(m, "depends(relu0, matmul1)") == 1);
  CHECK(number(m, "depends(matmul0, matmul1)") == 0);  // the branches are independent
  CHECK(number(m, "depends(matmul1, matmul0)") == 0);
  CHECK(number(m, "depends(matmul0, add0)") == 0);  // dependence has a direction
}

TEST_CASE("curriculum: every schedule step belongs to one compiler pass") {
  for (const auto& info : tilescope::schedule::step_table()) {
    CAPTURE(info.name);
    CHECK_FALSE(compiler_pass(info.name).empty());
  }
  CHECK(compiler_pass("fuse") == "fusion");
  CHECK(compiler_pass("im2col") == "lowering");
  CHECK(compiler_pass("layout") == "layout");
  CHECK(compiler_pass("tile") == "scheduling");
  CHECK(compiler_pass("nonsense").empty());
  // A history: layout, fuse, two tiles (one run of scheduling), then fuse again is impossible
  // after tiling, so the last pass is scheduling.
  const std::string m =
      layer(32, 32, 32) +
      steps("h", "layout(W, transposed)\nfuse(matmul0, add0, relu0)\ntile(i, 16)\ntile(j, 16)");
  CHECK(texts(m, "passes(h)") == std::vector<std::string>{"layout", "fusion", "scheduling"});
  CHECK(texts(m, "passes(m)").empty());
}

TEST_CASE("curriculum: recorded() reads a list as a list, so len() counts a suite's versions") {
  const LessonFolder folder("tilescope_lesson_recorded_list");
  const std::string path = folder.file("recorded.json");
  {
    std::ofstream o(path);
    o << R"({"suites": [{"name": "a", "results": [{"n": 7}, {"n": 9}, {"n": 11}],)"
      << R"( "sizes": [256, 512]}]})";
  }
  const std::string m = layer(8, 8, 8);
  const std::string file = "\"" + path + "\"";
  // Three result objects, written above by hand.
  CHECK(number(m, "len(recorded(" + file + ", \"suites/name=a/results\"))") == 3);
  CHECK(run(m, "recorded(" + file + ", \"suites/name=a/sizes\") == [256, 512]").pass);
  // An object is still not a value a check can compare.
  CHECK(run(m, "recorded(" + file + ", \"suites/0\") == 1").error.find("is an object") !=
        std::string::npos);
}

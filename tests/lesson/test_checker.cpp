// The checker's values: graph costs, schedules, simulated traffic and recorded files, each against
// a hand count or closed form written here.
#include "sim/lesson/checker.h"
#include "tests/lesson/lesson_folder.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";

// x [M, K] @ W.T with W [N, K], + b [N], relu: the layer every lesson starts from.
std::string layer(int M, int N, int K, const std::string& id = "m") {
  return "```model id=" + id + "\nx: [" + std::to_string(M) + ", " + std::to_string(K) + "]\nW: [" +
         std::to_string(N) + ", " + std::to_string(K) + "] weight\nb: [" + std::to_string(N) +
         "] weight\ny = relu(x @ W.T + b)\n```\n";
}

// Runs one check line in a lesson made of `blocks`; returns the result.
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

double lhs(const std::string& blocks, const std::string& expr, const std::string& attrs = "") {
  const CheckResult r = run(blocks, expr + " == 0", attrs);
  INFO(r.error);
  REQUIRE(r.error.empty());
  REQUIRE(r.lhs.kind == Value::Kind::Number);
  return r.lhs.number;
}

}  // namespace

TEST_CASE("checker: graph costs follow the FLOP and byte conventions") {
  const std::string m = layer(4, 3, 5);
  CHECK(lhs(m, "flops(matmul0)") == 2 * 4 * 3 * 5);  // a multiply-add is 2
  CHECK(lhs(m, "flops(add0)") == 4 * 3);
  CHECK(lhs(m, "bytes(matmul0)") == 4 * (4 * 5 + 3 * 5 + 4 * 3));
  CHECK(lhs(m, "bytes_read(add0)") == 4 * (4 * 3 + 3));
  CHECK(lhs(m, "bytes_written(relu0)") == 4 * 4 * 3);
  CHECK(lhs(m, "flops(m)") == 2 * 4 * 3 * 5 + 4 * 3 + 4 * 3);
  CHECK(lhs(m, "intensity(relu0)") == doctest::Approx(12.0 / 96.0));
  CHECK(lhs(m, "params(m)") == 3 * 5 + 3);
  CHECK(lhs(m, "ops(m)") == 3);
  CHECK(lhs(m, "numel(y) + tensor_bytes(x)") == 12 + 80);
}

TEST_CASE("checker: lists compare in order, strings by text") {
  const std::string m = layer(8, 8, 8);
  CHECK(run(m, "heaviest(1) == [matmul0]").pass);
  CHECK_FALSE(run(m, "heaviest(2) == [add0, matmul0]").pass);
  CHECK(run(m, "kinds(m) == [\"MatMul\", \"Add\", \"ReLU\"]").pass);
  CHECK(run(m, "kind(relu0) == \"ReLU\"").pass);
  CHECK(run(m, "shape(y) == [8, 8]").pass);
  CHECK(run(m, "len(heaviest(3)) == 3").pass);
}

TEST_CASE("checker: tolerances are relative to the larger value") {
  const std::string m = layer(8, 8, 8);
  CHECK(run(m, "100 == 104 within 5%").pass);
  CHECK_FALSE(run(m, "100 == 106 within 5%").pass);
  CHECK(run(m, "100 != 106 within 5%").pass);
}

TEST_CASE("checker: fusion removes the intermediate's traffic from the program's bytes") {
  const int M = 16, N = 8, K = 4;
  const std::string m = layer(M, N, K) + "```steps id=f model=m\nfuse(matmul0, add0, relu0)\n```\n";
  CHECK(lhs(m, "kernels(m)") == 3);
  CHECK(lhs(m, "kernels(f)") == 1);
  // Fused: read x, W, b once, write y once.
  CHECK(lhs(m, "bytes(f)") == 4 * (M * K + N * K + N + M * N));
  // Unfused: C written, read, C' written, read on top of that.
  CHECK(lhs(m, "bytes(m) - bytes(f)") == 4 * 4 * M * N);
  CHECK(lhs(m, "flops(f)") == lhs(m, "flops(m)"));
  CHECK(lhs(m, "applied(f)") == 1);
  CHECK(run(m, "contains(explanation(f, 1), \"fuse\") == 1").error.empty());
}

TEST_CASE("checker: an expected refusal is recorded with its reason") {
  const std::string m =
      layer(16, 8, 4) +
      "```steps id=r model=m expect=refused\nfuse(matmul0, add0, relu0)\ntile(q, 4)\n```\n";
  CHECK(lhs(m, "refused(r)") == 1);
  CHECK(lhs(m, "applied(r)") == 1);
  const CheckResult why = run(m, "refusal(r) == \"\"");
  CHECK(why.rhs.text.empty());
  CHECK(why.lhs.text.find("q") != std::string::npos);
}

TEST_CASE("checker: simulated DRAM traffic of a fused epilogue on the tiny machine, by hand") {
  // relu(X + bias), X [64, 64] fp32 = 16 KiB, twice the tiny machine's 8 KiB L2. Fused, one pass:
  // X's 256 lines and bias's 4 lines are read once; each 4-byte write of Y misses (write-allocate
  // fetches its 64 B line first), so Y's 256 lines are read too, then written back dirty at the
  // end. Reads: (256 + 4 + 256) × 64 B; writes: 256 × 64 B.
  const std::string m =
      "```model id=e\nX: [64, 64]\nbias: [64] weight\nY = relu(X + bias)\n```\n"
      "```steps id=f model=e\nfuse(add0, relu0)\n```\n";
  CHECK(lhs(m, "dram_reads(f)", " machine=tiny") == (256 + 4 + 256) * 64);
  CHECK(lhs(m, "dram_writes(f)", " machine=tiny") == 256 * 64);
  CHECK(lhs(m, "dram_bytes(f, machine=tiny)") == (256 + 4 + 256 + 256) * 64);
  // L1 sees every element access: X, bias, Y once each per element.
  CHECK(lhs(m, "accesses(f, L1)", " machine=tiny") == 3 * 64 * 64);
  // Per tensor (a third argument): each tensor is accessed once per element, and the three
  // tensors' misses add up to the level's.
  CHECK(lhs(m, "accesses(f, L1, X)", " machine=tiny") == 64 * 64);
  CHECK(lhs(m, "accesses(f, L1, bias)", " machine=tiny") == 64 * 64);
  CHECK(lhs(m, "accesses(f, L1, Y)", " machine=tiny") == 64 * 64);
  CHECK(lhs(m, "misses(f, L1, X) + misses(f, L1, bias) + misses(f, L1, Y)", " machine=tiny") ==
        lhs(m, "misses(f, L1)", " machine=tiny"));
}

TEST_CASE("checker: misses of one tensor, by hand") {
  // Y = relu(X), X [64, 64] fp32 on tiny (L1: 8 sets × 2 ways of 64 B lines). X is read in order:
  // one miss per 64 B line, 16 KiB / 64 B = 256; Y's line beside it in the same set fits the
  // second way, so nothing is evicted early. Y's writes allocate too: 256 misses.
  const std::string m = "```model id=r\nX: [64, 64]\nY = relu(X)\n```\n";
  CHECK(lhs(m, "misses(r, L1, X)", " machine=tiny") == 256);
  CHECK(lhs(m, "misses(r, L1, Y)", " machine=tiny") == 256);
  CHECK(lhs(m, "hits(r, L1, X)", " machine=tiny") == 64 * 64 - 256);
  CHECK(lhs(m, "misses(r, L1)", " machine=tiny") == 512);
}

TEST_CASE("checker: machine peaks and bandwidth come from the preset") {
  const std::string m = layer(8, 8, 8);
  CHECK(lhs(m, "peak(tiny, \"fp32\")") == 16e9);  // tiny.machine: peak fp32 simd = 16 GFLOP/s
  CHECK(lhs(m, "bandwidth(tiny)") == 8e9);        // [memory DRAM] bandwidth = 8 GB/s
}

TEST_CASE("checker: recorded() walks keys, indices and key=value selectors") {
  const LessonFolder folder("tilescope_lesson_recorded");
  const std::string path = folder.file("recorded.json");
  {
    std::ofstream o(path);
    o << R"({"suites": [{"name": "a", "v": 1}, {"name": "b", "results": [{"n": 7}, {"n": 9}],)"
      << R"( "label": "x"}]})";
  }
  const std::string m = layer(8, 8, 8);
  CHECK(lhs(m, "recorded(\"" + path + "\", \"suites/name=b/results/1/n\")") == 9);
  CHECK(run(m, "recorded(\"" + path + "\", \"suites/1/label\") == \"x\"").pass);
  const CheckResult missing = run(m, "recorded(\"" + path + "\", \"suites/name=c/v\") == 1");
  CHECK_FALSE(missing.pass);
  CHECK(missing.error.find("no element of 'suites' has name=c (there are: a, b)") !=
        std::string::npos);
  const CheckResult no_key = run(m, "recorded(\"" + path + "\", \"suites/0/w\") == 1");
  CHECK(no_key.error.find("has no key 'w' (keys: name, v)") != std::string::npos);
  // Relative to the lesson's folder, as a lesson names its own files.
  CHECK(lhs(m, "recorded(\"recorded.json\", \"suites/0/v\")") == 1);
}

TEST_CASE("checker: a failed evaluation fails the check with a message, never a crash") {
  const std::string m = layer(8, 8, 8) + "```steps id=f model=m\nfuse(matmul0, add0, relu0)\n```\n";
  const CheckResult r = run(m, "explanation(f, 5) == \"\"");
  CHECK_FALSE(r.pass);
  CHECK(r.error.find("applied 1 steps") != std::string::npos);
  const CheckResult d = run(m, "flops(m) / 0 == 1");
  CHECK(d.error.find("division by zero") != std::string::npos);
  const CheckResult s = run(m, "kind(add0) < 3");
  CHECK(s.error.find("compares numbers") != std::string::npos);
}

TEST_CASE("checker: sectors() counts the sectors of one warp's load, by hand") {
  // y = relu(x @ W.T + b), x [2, 64], W [64, 8]: j across the 32 lanes of a warp. W[j, k] for 32
  // consecutive j are 32 rows of 8 floats (32 B) apart: 32 sectors. x[i, k] is one word for all
  // lanes: 1 sector. b[j] for 32 consecutive j: 128 B, 4 sectors.
  const std::string m = layer(2, 64, 8) +
                        "```steps id=s model=m\nfuse(matmul0, add0, relu0)\ntile(j, 32)\n"
                        "bind(i, block.y)\nbind(j.o, block.x)\nbind(j.i, thread.x)\n```\n";
  CHECK(lhs(m, "sectors(s, \"W\")", " machine=h200") == 32);
  CHECK(lhs(m, "sectors(s, \"x\")", " machine=h200") == 1);
  CHECK(lhs(m, "sectors(s, \"b\")", " machine=h200") == 4);
  // On a CPU machine, or for a tensor the warp never loads, the check says why.
  CheckResult r = run(m, "sectors(s, \"W\") == 32", " machine=tiny");
  CHECK(r.error.find("is a CPU") != std::string::npos);
  r = run(m, "sectors(s, \"y\") == 4", " machine=h200");
  CHECK(r.error.find("never loads y") != std::string::npos);
}

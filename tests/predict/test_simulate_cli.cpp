// End-to-end tests of `tilescope-cli simulate FILE --apply …`: the current kernel is traced, the
// analytic prediction and the roofline are printed beside the simulated counts, errors are located.
#include "build_paths.h"
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include "tests/support/run_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using RunResult = tilescope::test::SplitResult;

fs::path write_file(const std::string& name, const std::string& text) {
  return tilescope::test::write_scratch_file(name, text);
}

RunResult run(const std::string& args) {
  const tilescope::test::SplitResult r =
      tilescope::test::run_command_split(std::string(TILESCOPE_CLI_PATH) + " " + args);
  return r;
}

const char* kGemm32 = "A: [32, 32]\nB: [32, 32]\nC = A @ B\n";

// A 2 KiB fully associative L1 (32 lines) so the counts can be worked out by hand.
const char* kMachine = R"(name = hand
kind = cpu
cores = 1
clock = 1 GHz
peak fp32 simd = 16 GFLOP/s
[level L1]
size = 2 KiB
line = 64 B
ways = full
replacement = lru
bandwidth = 64 GB/s
[memory DRAM]
size = 1 GiB
bandwidth = 8 GB/s
)";

}  // namespace

TEST_CASE("simulate FILE --apply: JSON carries simulated, analytic and roofline numbers") {
  const fs::path model = write_file("gemm32.model", kGemm32);
  const fs::path machine = write_file("hand.machine", kMachine);
  const RunResult r = run("simulate " + model.string() + " --machine " + machine.string() +
                          " --apply \"reorder(k, j)\" --json --no-3c --no-reuse");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["trace"]["mode"] == "cpu");
  CHECK(j["kernel"]["steps"] == "reorder(k, j)");
  // ikj on 32×32 with 32 lines: per row of A, 2 lines of A, all 64 lines of B, 2 lines of C.
  // The accumulator (one row of C, 32 floats: more than registers hold) is a stack array of 2
  // lines, touched on every k, so it misses once.
  const auto& l1 = j["report"]["levels"][0];
  CHECK(l1["total"]["misses"] == 32 * (2 + 64 + 2) + 2);
  CHECK(j["analytic"]["levels"][0]["misses"]["value"] == 32 * (2 + 64 + 2) + 2);
  CHECK(j["analytic"]["levels"][0]["simulated_misses"] == 32 * (2 + 64 + 2) + 2);
  // Accesses: 2 loads per multiply-add and one store per C element; the accumulator is read and
  // written per multiply-add, written by Init and read by the epilogue once per C element.
  CHECK(j["analytic"]["accesses"]["value"] == 4 * 32 * 32 * 32 + 3 * 32 * 32);
  CHECK(j["trace"]["acc_reads"] == 32 * 32 * 32 + 32 * 32);
  CHECK(j["trace"]["acc_writes"] == 32 * 32 * 32 + 32 * 32);
  CHECK(j["accumulator"]["bytes"] == 128);
  // 65536 FLOP at 16 GFLOP/s = 4.096 us; L1 serves 67584 × 4 B at 64 GB/s = 4.224 us; DRAM
  // serves (2176 fetched + 64 written back) lines × 64 B... simulated: at least the fetches,
  // 139264 B at 8 GB/s = 17.4 us, so DRAM binds.
  CHECK(j["roofline_simulated"]["binding"] == "DRAM");
  CHECK(j["roofline_analytic"]["binding"] == "DRAM");
  CHECK(j["roofline_analytic"]["bounds"][0]["seconds"].get<double>() ==
        doctest::Approx(65536 / 16e9));
  REQUIRE(j["layout"].size() == 3);
  CHECK(j["layout"][0]["name"] == "A");
}

TEST_CASE("simulate FILE --apply: text report shows the prediction beside the simulation") {
  const fs::path model = write_file("gemm32t.model", kGemm32);
  const RunResult r =
      run("simulate " + model.string() + " --machine tiny --apply \"tile(i, j, 8, 8)\"");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("analytic model vs simulation") != std::string::npos);
  CHECK(r.out.find("misses(L1, B) = ") != std::string::npos);
  CHECK(r.out.find("<- binding") != std::string::npos);
  CHECK(r.out.find("predicted time: ") != std::string::npos);
}

TEST_CASE("simulate FILE --apply on a GPU machine traces in GPU mode") {
  const fs::path model = write_file("gemm32g.model", kGemm32);
  const RunResult r = run("simulate " + model.string() +
                          " --machine h100 --json --no-3c --no-reuse --apply \"tile(i, j, 16, "
                          "16); bind(i.o, block.y); bind(j.o, block.x); bind(i.i, thread.y); "
                          "bind(j.i, thread.x)\"");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["trace"]["mode"] == "gpu");
  CHECK(j.contains("analytic_error"));
  CHECK(j["roofline_simulated"]["binding"].get<std::string>().size() > 0);
}

TEST_CASE("simulate --follow: one warp of one block through its wave, by hand count") {
  const fs::path model = write_file(
      "follow.model", "x: [64, 64]\nW: [64, 64] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n");
  const std::string steps =
      " --machine minigpu --apply \"fuse(matmul0, add0, relu0); tile(i, 8); tile(j, 32); "
      "reorder(i.o, j.o, i.i, j.i, k); bind(i.o, block.y); bind(j.o, block.x); "
      "bind(i.i, thread.y); bind(j.i, thread.x)\"";
  RunResult r = run("simulate " + model.string() + steps + " --follow 9:3");
  INFO(r.err);
  REQUIRE(r.code == 0);
  // 2 × 8 = 16 blocks on 8 SMs: two waves; block 9 in the second, on SM 9 mod 8 = 1.
  CHECK(r.out.find("16 blocks, 8 warps each; up to 8 at once (one per SM): 2 waves") !=
        std::string::npos);
  CHECK(r.out.find("block 9 runs in wave 2 on SM 1") != std::string::npos);
  // Warp 3 (row 35, columns 32…63): per k, x[35, k] one word for all lanes (1 sector) and
  // W[32…63, k] 32 rows 256 B apart (32 sectors); then b and the store of y's row, 4 sectors each.
  CHECK(r.out.find("1 x load x (global): 32 lanes → 1 sector") != std::string::npos);
  CHECK(r.out.find("neighbouring lanes 256 B apart") != std::string::npos);
  CHECK(r.out.find("130 global instructions moved 2120 sectors; 328 would hold") !=
        std::string::npos);
  r = run("simulate " + model.string() + steps + " --follow 16:0");
  CHECK(r.code == 1);
  CHECK(r.err.find("0 … 15") != std::string::npos);
  r = run("simulate " + model.string() + steps + " --follow nine");
  CHECK(r.code == 1);
  CHECK(r.err.find("BLOCK:WARP") != std::string::npos);
  r = run("simulate " + model.string() + " --machine tiny --follow 0");
  CHECK(r.code == 1);
  CHECK(r.err.find("a CPU") != std::string::npos);
}

TEST_CASE("simulate FILE --apply: bad input is a located error, not a crash") {
  const fs::path model = write_file("gemm32e.model", kGemm32);
  RunResult r = run("simulate " + model.string() + " --apply \"tile(q, 4)\"");
  CHECK(r.code == 1);
  CHECK(r.err.find("simulate: ") != std::string::npos);
  r = run("simulate " + model.string() + " --apply \"tile(i,\"");
  CHECK(r.code == 1);
  CHECK(r.err.find("1:") != std::string::npos);
  r = run("simulate --apply \"reorder(k, j)\"");
  CHECK(r.code == 1);
  CHECK(r.err.find("needs a model FILE") != std::string::npos);
  r = run("simulate " + (tilescope::test::scratch_dir() / "missing.model").string());
  CHECK(r.code == 1);
  CHECK(r.err.find("missing.model") != std::string::npos);
}

TEST_CASE("simulate: a schedule legal only on the H200 is refused on tiny, with tiny's limit") {
  // 256 × 256 operands, 64 × 64 blocks, the whole k range staged: a 64 KiB tile of x.
  const fs::path model =
      write_file("gemm256s.model", "x: [256, 256]\nW: [256, 256] weight\ny = x @ W.T\n");
  const std::string steps =
      "tile(i, 64); tile(j, 64); tile(k, 256); reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
      "bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 4); tile(j.i, 4); "
      "reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x); "
      "stage(x, shared, at=k.o)";
  const RunResult h200 = run("simulate " + model.string() + " --machine h200 --json --no-3c " +
                             "--no-reuse --apply \"" + steps + "\"");
  INFO(h200.err);
  CHECK(h200.code == 0);
  const RunResult tiny = run("simulate " + model.string() + " --machine tiny --apply \"" + steps + "\"");
  CHECK(tiny.code == 1);
  CHECK(tiny.err.find("on machine tiny") != std::string::npos);
  CHECK(tiny.err.find("stage(x, shared, at=k.o) refused") != std::string::npos);
  CHECK(tiny.err.find("no shared memory") != std::string::npos);
  // A GPU whose blocks may use 48 KiB: the message names both sizes.
  const fs::path gpu48 = write_file(
      "gpu48.machine",
      "name = gpu48\nkind = gpu\nsms = 4\nsmem_per_block = 48 KiB\n[level L1]\nsize = 16 KiB\n"
      "line = 128 B\nsector = 32 B\nways = 4\n[memory HBM]\nsize = 16 GiB\nbandwidth = 1 TB/s\n"
      "[scratchpad shared]\nsize = 96 KiB\n");
  const RunResult small = run("simulate " + model.string() + " --machine " + gpu48.string() +
                              " --apply \"" + steps + "\"");
  CHECK(small.code == 1);
  CHECK(small.err.find("on machine gpu48") != std::string::npos);
  CHECK(small.err.find("64 KiB") != std::string::npos);
  CHECK(small.err.find("48 KiB") != std::string::npos);
}

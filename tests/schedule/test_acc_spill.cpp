// Where accumulators live (accumulator_home): a small tile is scalars in registers and makes no
// traffic; a larger one is a stack array whose every read and write is in the CPU trace, in its
// own address range, with the counts of the loop nest by hand. emit_cpp follows the same rule.
#include "fixtures.h"

#include "sim/lang/parser.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/trace.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace tilescope;
using namespace tilescope::schedule;
using memory::Access;
using memory::AccessKind;

namespace {

struct Collect : memory::AccessSink {
  std::vector<Access> all;
  void access(const Access& a) override { all.push_back(a); }
};

Kernel gemm(int64_t n, const std::string& steps) {
  const std::string N = std::to_string(n);
  const std::string text = "A: [" + N + ", " + N + "]\nB: [" + N + ", " + N + "]\nC = A @ B\n";
  auto g = std::make_shared<const graph::Graph>(lang::parse_model(text, "gemm.model"));
  Program p = tsfix::apply_all(lower_graph(g), steps);
  return p.kernels.at(size_t(p.current));
}

// 8×8×8 GEMM, a 4×8 accumulator tile (32 floats) live across k.o.
constexpr const char* kTile4x8 =
    "tile(i, j, 4, 8); split(k, 4); reorder(i.o, j.o, k.o, i.i, k.i, j.i)";
// The same with a 4×4 tile (16 floats).
constexpr const char* kTile4x4 =
    "tile(i, j, 4, 4); split(k, 4); reorder(i.o, j.o, k.o, i.i, k.i, j.i)";

}  // namespace

TEST_CASE("accumulator home: 16 floats per worker are registers, more are a stack array") {
  const AccumulatorHome small = accumulator_home(gemm(8, kTile4x4), false);
  CHECK(small.registers);
  CHECK(small.elems() == 16);
  const AccumulatorHome big = accumulator_home(gemm(8, kTile4x8), false);
  CHECK_FALSE(big.registers);
  CHECK(big.elems() == 32);
  CHECK(big.bytes() == 128);
  // ikj at N = 8: one row of C (8 floats) is live across k: registers. At N = 32: 32 floats.
  CHECK(accumulator_home(gemm(8, "reorder(k, j)"), false).registers);
  CHECK_FALSE(accumulator_home(gemm(32, "reorder(k, j)"), false).registers);
  // The plain ijk nest keeps one running value.
  CHECK(accumulator_home(gemm(32, ""), false).elems() == 1);
  // On the GPU every accumulator is a register.
  CHECK(accumulator_home(gemm(8, kTile4x8), true).registers);
}

TEST_CASE("trace: a 4×8 accumulator tile on the stack, every read and write counted by hand") {
  const Kernel k = gemm(8, kTile4x8);
  Collect c;
  TraceOptions o;
  std::vector<std::string> names = {"A", "B", "C"};  // graph tensor ids 0, 1, 2
  name_accumulator_buffer(o, names);
  REQUIRE(o.acc_tensor == 3);
  CHECK(names.back() == "acc (stack)");
  const TraceSummary s = trace_kernel(k, c, o);
  const TraceLayout l = trace_layout(k, o);

  // Loops: i.o(2) j.o(1) k.o(2) i.i(4) k.i(4) j.i(8); 2 output tiles of 4×8.
  // Per tile: Init writes 32 elements; Reduce runs k.o·i.i·k.i·j.i = 2·4·4·8 = 256 times, each a
  // read and a write of acc; the epilogue reads 32. Two tiles: reads 2·(256 + 32) = 576,
  // writes 2·(32 + 256) = 576.
  CHECK(s.acc_reads == 576);
  CHECK(s.acc_writes == 576);
  // A and B: one read per multiply-add (8³ = 512 each); C: 64 writes.
  CHECK(s.global_reads == 512 + 512 + 576);
  CHECK(s.global_writes == 64 + 576);

  // Its own area after the tensors: 4 KiB aligned, past C's last byte, 128 bytes long.
  CHECK(l.acc_base % 4096 == 0);
  CHECK(l.acc_base >= l.tensor_base[2] + 64 * 4);
  CHECK(l.acc_bytes == 128);
  CHECK(l.scratch_base >= l.acc_base + l.acc_bytes);
  std::map<uint64_t, std::pair<int, int>> per_addr;  // reads, writes
  for (const Access& a : c.all) {
    if (a.tensor != 3) continue;
    REQUIRE(a.addr >= l.acc_base);
    REQUIRE(a.addr < l.acc_base + 128);
    auto& rw = per_addr[a.addr];
    (a.kind == AccessKind::Write ? rw.second : rw.first)++;
  }
  // Each of the 32 elements: per tile 1 Init write + k.o·k.i = 8 Reduce read-writes + 1 epilogue
  // read → over 2 tiles 18 reads and 18 writes.
  CHECK(per_addr.size() == 32);
  for (const auto& [addr, rw] : per_addr) {
    CHECK(rw.first == 18);
    CHECK(rw.second == 18);
  }
  // Order: the first access is Init's write of acc[0, 0]; the first Reduce statement reads
  // acc[0, 0], A[0, 0], B[0, 0], then writes acc[0, 0].
  REQUIRE(c.all.size() > 36);
  CHECK(c.all[0].tensor == 3);
  CHECK(c.all[0].kind == AccessKind::Write);
  CHECK(c.all[0].addr == l.acc_base);
  CHECK(c.all[31].addr == l.acc_base + 31 * 4);  // Init covers the tile row-major
  CHECK(c.all[32].tensor == 3);
  CHECK(c.all[32].kind == AccessKind::Read);
  CHECK(c.all[32].addr == l.acc_base);
  CHECK(c.all[33].addr == l.tensor_base[0]);
  CHECK(c.all[34].addr == l.tensor_base[1]);
  CHECK(c.all[35].kind == AccessKind::Write);
  CHECK(c.all[35].addr == l.acc_base);
  // Next j.i: acc[0, 1] and B[0, 1].
  CHECK(c.all[36].addr == l.acc_base + 4);

  // Untagged unless named: the default TraceOptions leave acc_tensor at -1.
  Collect d;
  const TraceSummary s2 = trace_kernel(k, d);
  CHECK(s2.acc_reads == 576);
  CHECK(d.all[0].tensor == -1);
}

TEST_CASE("trace: a 4×4 accumulator tile is registers: no accumulator traffic") {
  const Kernel k = gemm(8, kTile4x4);
  Collect c;
  const TraceSummary s = trace_kernel(k, c);
  CHECK(s.acc_reads == 0);
  CHECK(s.acc_writes == 0);
  CHECK(s.global_reads == 512 + 512);
  CHECK(s.global_writes == 64);
  CHECK(trace_layout(k).acc_bytes == 0);
}

TEST_CASE("trace: GPU accumulators are registers") {
  const Kernel k = gemm(8, kTile4x8);
  Collect c;
  TraceOptions o;
  o.gpu = true;
  const TraceSummary s = trace_kernel(k, c, o);
  CHECK(s.acc_reads == 0);
  CHECK(s.acc_writes == 0);
  CHECK(trace_layout(k, o).acc_bytes == 0);
}

TEST_CASE("emit_cpp: scalars for a small tile, an aligned stack array for a large one") {
  const std::string small = emit_cpp(gemm(8, kTile4x4));
  CHECK(small.find("float acc_0 = 0.0f, acc_1 = 0.0f,") != std::string::npos);
  CHECK(small.find("acc_15 += ") != std::string::npos);
  CHECK(small.find("float acc[") == std::string::npos);
  const std::string big = emit_cpp(gemm(8, kTile4x8));
  CHECK(big.find("alignas(64) float acc[32];") != std::string::npos);
  CHECK(big.find("acc[i_i*8 + j_i] += ") != std::string::npos);
  // One running value stays a plain scalar.
  CHECK(emit_cpp(gemm(8, "")).find("float acc;") != std::string::npos);
}

TEST_CASE("emit_cpp: both accumulator forms compile warning-free, run and match a plain loop") {
  const char* cxx_env = std::getenv("CXX");
  const std::string cxx = cxx_env && *cxx_env ? cxx_env : "c++";
  if (std::system((cxx + " --version > /dev/null 2>&1").c_str()) != 0) {
    MESSAGE("skipped: no host C++ compiler (" << cxx << ") on PATH");
    return;
  }
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tilescope_acc_spill_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // A driver with inputs A[i][k] = (i*8+k) % 5 - 2, B[k][j] = (k*8+j) % 7 - 3 (exact in fp32).
  const std::string driver = R"(#include <cstdio>
extern "C" void ts_kernel(float* const* args);
int main() {
  static float A[64], B[64], C[64];
  for (int e = 0; e < 64; ++e) { A[e] = float(e % 5 - 2); B[e] = float(e % 7 - 3); C[e] = -1e9f; }
  float* args[3] = {A, B, C};
  ts_kernel(args);
  for (int e = 0; e < 64; ++e) std::printf("%g\n", double(C[e]));
}
)";
  std::ofstream(dir / "driver.cpp") << driver;
  // Reference: the plain triple loop, here.
  std::vector<double> ref(64, 0.0);
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j)
      for (int kk = 0; kk < 8; ++kk)
        ref[size_t(i * 8 + j)] += double((i * 8 + kk) % 5 - 2) * double((kk * 8 + j) % 7 - 3);
  int n = 0;
  // The last two leave partial tiles (8 = 3 + 3 + 2): guarded Init and epilogue statements.
  for (const char* steps :
       {kTile4x4, kTile4x8, "tile(i, j, 2, 8); reorder(i.o, j.o, i.i, k, j.i)",
        "tile(i, j, 3, 3); split(k, 3); reorder(i.o, j.o, k.o, i.i, k.i, j.i)",
        "tile(i, j, 3, 8); split(k, 3); reorder(i.o, j.o, k.o, i.i, k.i, j.i)"}) {
    INFO("steps: " << steps);
    const fs::path src = dir / ("k" + std::to_string(n) + ".cpp");
    const fs::path exe = dir / ("k" + std::to_string(n));
    const fs::path out = dir / ("k" + std::to_string(n) + ".txt");
    ++n;
    std::ofstream(src) << emit_cpp(gemm(8, steps));
    const std::string cmd = cxx + " -std=c++17 -O2 -Wall -Wextra -Werror " + src.string() + " " +
                            (dir / "driver.cpp").string() + " -o " + exe.string() + " && " +
                            exe.string() + " > " + out.string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream in(out);
    std::vector<double> got;
    double v = 0;
    while (in >> v) got.push_back(v);
    REQUIRE(got.size() == 64);
    for (size_t e = 0; e < 64; ++e) CHECK(got[e] == ref[e]);
  }
  fs::remove_all(dir);
}

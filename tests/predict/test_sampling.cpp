// Sampled simulation (sim/predict/sampling.h): the loops it can take units from, counted by hand;
// a budget that walks every unit reproduces the exact run counter for counter; a small budget
// lands within its own stated error bar of the exact run (the reference: the same kernel
// simulated whole); the same run twice gives the same numbers; and the CLI's sampled 4096³ GEMM
// against an exact run of it recorded once (45 minutes of simulation, tests/predict/recorded/).
#include "build_paths.h"
#include "sim/lang/parser.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace_size.h"
#include "sim/schedule/transform.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace predict = tilescope::predict;
namespace schedule = tilescope::schedule;
namespace graph = tilescope::graph;
namespace lang = tilescope::lang;
namespace memory = tilescope::memory;

namespace {

schedule::History replay(const std::string& model, const std::string& steps,
                         const predict::Machine& m) {
  return schedule::History::replay(schedule::lower_graph(std::make_shared<const graph::Graph>(
                                       lang::parse_model(model, "test.model"))),
                                   steps, predict::target_for(m));
}

std::string gemm(int n) {
  const std::string s = std::to_string(n);
  return "A: [" + s + ", " + s + "]\nB: [" + s + ", " + s + "]\nC = A @ B\n";
}

// A register-tiled GPU GEMM (no staging): 64 × 64 outputs a block, 8 × 8 a thread.
const char* kGpuSteps =
    "tile(i, j, 64, 64); bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 8); tile(j.i, 8); "
    "reorder(i.o, j.o, i.i.o, j.i.o, k, i.i.i, j.i.i); bind(i.i.o, thread.y); "
    "bind(j.i.o, thread.x)";

// A GPU whose L2 (16 KiB) a short warm-up refills: minigpu with a 2 KiB L1 and a 16 KiB L2.
predict::Machine micro_gpu() {
  return predict::parse_machine(R"(name = microgpu
kind = gpu
sms = 8
clock = 1 GHz
peak fp32 simt = 2.048 TFLOP/s
smem_per_block = 16 KiB
threads_per_block = 1024
[level L1]
size = 2 KiB
line = 128 B
sector = 32 B
ways = 4
write = through
write_allocate = no
[level L2]
size = 16 KiB
line = 128 B
sector = 32 B
ways = 16
write = back
write_allocate = yes
[memory DRAM]
size = 4 GiB
bandwidth = 128 GB/s
[scratchpad shared]
size = 16 KiB
banks = 32
bank_width = 4 B
warp_size = 32
)",
                                "microgpu.machine");
}

predict::KernelRun run(const schedule::History& h, const predict::Machine& m, bool sample,
                       double budget = 0) {
  const schedule::Program& p = h.current();
  predict::RunOptions o;
  o.sample = sample;
  if (budget > 0) o.sample_budget = budget;
  return predict::simulate_kernel(p.kernels.at(size_t(p.current)), *p.graph, m, o);
}

void check_same_counters(const predict::KernelRun& a, const predict::KernelRun& b) {
  const memory::Hierarchy& x = *a.hierarchy;
  const memory::Hierarchy& y = *b.hierarchy;
  REQUIRE(x.level_count() == y.level_count());
  for (int l = 0; l <= x.level_count(); ++l)
    for (int t = -1; t <= std::max(x.max_tensor(), y.max_tensor()); ++t) {
      CAPTURE(l);
      CAPTURE(t);
      const memory::Counters c = x.counters(l, t), d = y.counters(l, t);
      CHECK(c.reads == d.reads);
      CHECK(c.writes == d.writes);
      CHECK(c.misses == d.misses);
      CHECK(c.evictions == d.evictions);
      CHECK(c.writebacks == d.writebacks);
      CHECK(c.read_bytes == d.read_bytes);
      CHECK(c.write_bytes == d.write_bytes);
    }
  CHECK(x.trace_accesses() == y.trace_accesses());
  CHECK(a.summary.global_reads == b.summary.global_reads);
  CHECK(a.summary.shared_reads == b.summary.shared_reads);
  CHECK(a.summary.global_instructions == b.summary.global_instructions);
  if (x.scratchpad()) {
    CHECK(x.scratchpad()->stats().requests == y.scratchpad()->stats().requests);
    CHECK(x.scratchpad()->stats().wavefronts == y.scratchpad()->stats().wavefronts);
  }
}

double l2_hit_rate(const memory::Hierarchy& h) {
  const memory::Counters c = h.counters(h.level_count() - 1);
  return double(c.hits) / double(c.accesses);
}

}  // namespace

TEST_CASE("unit_chain: the loops a sampled trace can take units from, counted by hand") {
  const predict::Machine tiny = predict::load_machine("tiny");
  // 64³, C in 16 × 16 tiles, k innermost: init (acc = 0) and store per output, one multiply-add
  // per output and k. 64·64 = 4096 outputs, 4096·64 = 262144 multiply-adds: 270336 statements.
  const auto h = replay(gemm(64), "tile(i, j, 16, 16)", tiny);
  const schedule::Program& p = h.current();
  const auto chain = schedule::unit_chain(p.kernels.at(size_t(p.current)), false, 1);
  REQUIRE(chain.size() == 5);
  const char* names[] = {"i.o", "j.o", "i.i", "j.i", "k"};
  const double units[] = {4, 4 * 4, 4 * 4 * 16, 4 * 4 * 16 * 16, 4096.0 * 64};
  for (size_t i = 0; i < chain.size(); ++i) {
    CAPTURE(i);
    CHECK(chain[i].name == names[i]);
    CHECK(chain[i].units == units[i]);
  }
  CHECK(chain[0].work_share == doctest::Approx(1.0));
  CHECK(chain[4].work_share == doctest::Approx(262144.0 / 270336));

  // GPU: block loops and thread loops pass through; the k loop inside each block's threads is
  // the first serial loop: 4 × 4 blocks × 64 iterations. Statements per lane.
  const predict::Machine gpu = predict::load_machine("minigpu");
  const auto g = replay(gemm(64),
                        "tile(i, j, 16, 16); bind(i.o, block.y); bind(j.o, block.x); "
                        "bind(i.i, thread.y); bind(j.i, thread.x)",
                        gpu);
  const auto gc = schedule::unit_chain(g.current().kernels.at(0), true, 8);
  REQUIRE(!gc.empty());
  CHECK(gc[0].name == "k");
  CHECK(gc[0].units == 16 * 64);
}

TEST_CASE("sampling: a budget that walks every unit gives the exact run's counters") {
  struct Case {
    const char* machine;
    std::string model, steps;
  };
  const Case cases[] = {
      {"tiny", "x: [48, 40]\nW: [24, 40] weight\nb: [24] weight\ny = relu(x @ W.T + b)\n",
       "fuse(matmul0, add0, relu0); tile(i, j, 8, 8); tile(k, 8)"},
      {"minigpu", gemm(128), kGpuSteps},
      {"minigpu", gemm(128),
       "tile(i, j, 32, 32); tile(k, 16); reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
       "stage(A, shared, at=k.o); stage(B, shared, at=k.o); bind(i.o, block.y); "
       "bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.machine);
    CAPTURE(c.steps);
    const predict::Machine m = predict::load_machine(c.machine);
    const auto h = replay(c.model, c.steps, m);
    const predict::KernelRun exact = run(h, m, false);
    const predict::KernelRun all = run(h, m, true, 1e12);
    REQUIRE(all.sampled);
    CHECK(all.sampled->measured == all.sampled->units);
    CHECK(all.sampled->warm == 0);
    check_same_counters(all, exact);
  }
}

TEST_CASE("sampling: a small budget lands within its stated error bar of the exact run") {
  struct Case {
    predict::Machine machine;
    std::string model, steps;
    double budget;
  };
  const predict::Machine tiny = predict::load_machine("tiny");
  const Case cases[] = {
      {micro_gpu(), gemm(256), kGpuSteps, 1e6},
      {micro_gpu(), gemm(256), kGpuSteps, 4e6},
      {tiny, gemm(96), "tile(i, j, 16, 16)", 1e5},
      {tiny, gemm(96), "tile(i, j, 16, 16)", 2e5},
  };
  for (const Case& c : cases) {
    CAPTURE(c.machine.name);
    CAPTURE(c.steps);
    CAPTURE(c.budget);
    const auto h = replay(c.model, c.steps, c.machine);
    const predict::KernelRun exact = run(h, c.machine, false);
    const predict::KernelRun s = run(h, c.machine, true, c.budget);
    REQUIRE(s.sampled);
    const predict::SampleInfo& i = *s.sampled;
    CAPTURE(i.unit_loop);
    CAPTURE(i.measured);
    // Sampled: most units skipped, yet enough measured to state an error, and every warm-up
    // long enough to refill the L2.
    CHECK(i.walked_fraction < 0.2);
    REQUIRE(i.error_known);
    CHECK(i.warm_capped == 0);
    const double dram = double(exact.dram_bytes());
    CHECK(i.dram_bytes == doctest::Approx(double(s.dram_bytes())));
    CHECK(std::abs(i.dram_bytes - dram) <= i.dram_bytes_error);
    CHECK(i.dram_bytes_error < 0.25 * dram);
    const double rate = l2_hit_rate(*exact.hierarchy);
    CHECK(std::abs(i.last_level_hit_rate - rate) <= i.last_level_hit_rate_error);
  }
}

TEST_CASE("sampling: a warm-up the budget cuts short is said, not hidden") {
  // The same GEMM on a budget too small to refill the L2 before each measured unit: reuse from
  // before the warm-up is missed, and the run says how many measured units that touched.
  const predict::Machine m = micro_gpu();
  const auto h = replay(gemm(256), kGpuSteps, m);
  const predict::KernelRun s = run(h, m, true, 2e5);
  REQUIRE(s.sampled);
  CHECK(s.sampled->warm_capped > 0);
  CHECK(s.sampled->warm_capped <= s.sampled->measured);
}

TEST_CASE("sampling: the same run twice gives the same numbers") {
  const predict::Machine m = micro_gpu();
  const auto h = replay(gemm(256), kGpuSteps, m);
  const predict::KernelRun a = run(h, m, true, 1e6);
  const predict::KernelRun b = run(h, m, true, 1e6);
  check_same_counters(a, b);
  CHECK(a.sampled->dram_bytes_error == b.sampled->dram_bytes_error);
}

TEST_CASE("simulate --sample: a 4096³ GEMM against its exact run, recorded once") {
  namespace fs = std::filesystem;
  const fs::path file =
      fs::path(TILESCOPE_SOURCE_DIR) / "tests/predict/recorded/exact-gemm4096-minigpu.json";
  std::ifstream in(file);
  const nlohmann::json want = nlohmann::json::parse(in);
  const std::string args = want.at("args").get<std::string>();
  const auto r =
      tilescope::test::run_command_split("cd '" + std::string(TILESCOPE_SOURCE_DIR) + "' && " +
                                         TILESCOPE_CLI_PATH + " simulate " + args + " --json");
  REQUIRE(r.code == 0);
  CHECK(r.err.find("sampling about") != std::string::npos);
  const nlohmann::json got = nlohmann::json::parse(r.out);
  REQUIRE(got.contains("sampled"));
  const nlohmann::json& s = got["sampled"];
  const nlohmann::json& exact = want.at("exact");
  const double dram = exact.at("dram_bytes").get<double>();
  const double rate = exact.at("l2_hit_rate").get<double>();
  CAPTURE(s.dump());
  CHECK(std::abs(s.at("dram_bytes").get<double>() - dram) <=
        s.at("dram_bytes_error").get<double>());
  CHECK(std::abs(s.at("last_level_hit_rate").get<double>() - rate) <=
        s.at("last_level_hit_rate_error").get<double>());
  CHECK(s.at("warm_capped").get<int>() == 0);
}

// The serial-sum bound: a CPU kernel whose innermost loop is an unvectorised reduction waits one
// multiply-add latency per step. Steps are hand-counted for small GEMMs.
#include <doctest/doctest.h>

#include "sim/lang/parser.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/transform.h"

#include <memory>
#include <string>

using namespace tilescope;

namespace {

schedule::Kernel gemm(const std::string& steps, int n = 8) {
  const std::string text = "A: [" + std::to_string(n) + ", " + std::to_string(n) + "]\nB: [" +
                           std::to_string(n) + ", " + std::to_string(n) + "]\nC = A @ B\n";
  auto g = std::make_shared<const graph::Graph>(lang::parse_model(text, "gemm.model"));
  schedule::Program p = schedule::History::replay(schedule::lower_graph(g), steps).current();
  return p.kernels.at(size_t(p.current));
}

}  // namespace

TEST_CASE("the chain is every multiply-add when k is innermost, none when it is not") {
  // ijk: k innermost, one accumulator per (i, j): 8 × 8 × 8 dependent steps in all.
  const predict::ReductionChain ijk = predict::reduction_chain(gemm(""));
  CHECK(ijk.steps == 512);
  CHECK(ijk.loop == "k");
  // ikj: j innermost, consecutive multiply-adds go to different accumulators.
  CHECK(predict::reduction_chain(gemm("reorder(k, j)")).steps == 0);
  // Split k and keep k.i innermost, even unrolled: still one accumulator, one chain.
  CHECK(predict::reduction_chain(gemm("split(k, 4)")).steps == 512);
  CHECK(predict::reduction_chain(gemm("split(k, 4)")).loop == "k.i");
  CHECK(predict::reduction_chain(gemm("split(k, 4); unroll(k.i)")).steps == 512);
}

TEST_CASE("dependent_fma bounds the roofline: 512 steps × 4 cycles at 1 GHz = 2.048 µs") {
  const predict::Machine m = predict::parse_machine(
      "name = t\nkind = cpu\nclock = 1 GHz\ndependent_fma = 4 cycles\npeak fp32 simd = 1 "
      "TFLOP/s\n[level L1]\nsize = 64 KiB\nways = 4\nbandwidth = 1 TB/s\n[memory DRAM]\nsize = 1 "
      "GiB\nbandwidth = 100 GB/s\n",
      "t.machine");
  CHECK(m.dependent_fma_s == doctest::Approx(4e-9));
  predict::LevelBytes lb;
  lb.names = {"L1", "DRAM"};
  lb.bytes = {8 * 1024, 768};
  const predict::Roofline r = predict::roofline(m, 1024, lb, "fp32", "", predict::reduction_chain(gemm("")));
  CHECK(r.binding == "dependence");
  CHECK(r.seconds == doctest::Approx(512 * 4e-9));
  // Without a chain the same traffic is bound by L1: 8192 B / 1 TB/s = 8.192 ns (DRAM: 768 B /
  // 100 GB/s = 7.68 ns; compute: 1024 FLOP / 1 TFLOP/s = 1.024 ns).
  const predict::Roofline plain = predict::roofline(m, 1024, lb);
  CHECK(plain.binding == "L1");
  CHECK(plain.seconds == doctest::Approx(8.192e-9));
  // A machine without the latency says the bound is unknown rather than inventing one.
  const predict::Machine no_latency = predict::parse_machine(
      "name = u\nkind = cpu\npeak fp32 simd = 1 TFLOP/s\n[level L1]\nsize = 64 KiB\nways = 4\n",
      "u.machine");
  const predict::Roofline unknown =
      predict::roofline(no_latency, 1024, lb, "fp32", "", predict::reduction_chain(gemm("")));
  REQUIRE(unknown.bounds.size() >= 2);
  CHECK_FALSE(unknown.bounds[1].known);
  CHECK(unknown.notes.front().find("dependent_fma") != std::string::npos);
}

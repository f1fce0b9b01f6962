// Access patterns (sequential vs strided line moves), the `strided_line` machine key, and the
// roofline term that charges strided lines at their measured time. Expected values are hand counts.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"
#include "sim/predict/access_pattern.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"

#include <string>
#include <vector>

using namespace tilescope;
using namespace tilescope::predict;

namespace {

struct CountingSink final : memory::AccessSink {
  uint64_t n = 0, steps = 0;
  void access(const memory::Access&) override { ++n; }
  void step_boundary(uint64_t) override { ++steps; }
};

memory::Access read(uint64_t addr, int16_t tensor) {
  memory::Access a;
  a.addr = addr;
  a.tensor = tensor;
  return a;
}

}  // namespace

TEST_CASE("line moves are sorted into sequential and strided per tensor, and passed on") {
  CountingSink next;
  AccessPatternSink p(next);
  std::vector<memory::Access> trace;
  // Tensor 0: 64 floats front to back = 4 lines, 3 moves to the next line, none strided.
  for (uint64_t i = 0; i < 64; ++i) trace.push_back(read(4 * i, 0));
  // Tensor 1: down a column of a matrix with 4 KiB rows: 10 loads, 9 moves, each to a new page.
  for (uint64_t r = 0; r < 10; ++r) trace.push_back(read((1 << 20) + r * 4096, 1));
  // Tensor 2: a 512 B stride: 16 loads, 15 moves; 8 loads share a page, so only the move from
  // offset 3584 (line 56) to 4096 (line 64, the next page, not the next line) is strided.
  for (uint64_t r = 0; r < 16; ++r) trace.push_back(read((2 << 20) + r * 512, 2));
  // Tensor 0 again, then back: moves between lines 3 and 4 are adjacent.
  trace.push_back(read(256, 0));
  trace.push_back(read(252, 0));
  p.access_batch(trace.data(), trace.size());
  p.step_boundary(0);

  CHECK(next.n == trace.size());
  CHECK(next.steps == 1);
  CHECK(p.pattern(0).line_moves == 5);
  CHECK(p.pattern(0).strided_moves == 0);
  CHECK(p.pattern(1).line_moves == 9);
  CHECK(p.pattern(1).strided_moves == 9);
  CHECK(p.pattern(2).line_moves == 15);
  CHECK(p.pattern(2).strided_moves == 1);
  CHECK(p.pattern(7).line_moves == 0);  // a tensor never seen
  CHECK(p.pattern(1).strided_fraction() == doctest::Approx(1.0));
}

TEST_CASE("strided_line is read per level and for memory; a cycle count is refused") {
  const Machine m = parse_machine(
      "name = t\nkind = cpu\n[level L1]\nsize = 1 KiB\nways = 2\nbandwidth = 100 GB/s\n"
      "strided_line = 0.5 ns\n[memory DRAM]\nsize = 1 GiB\nbandwidth = 10 GB/s\n"
      "strided_line = 20 ns\n",
      "t.machine");
  CHECK(m.strided_line_s.at("L1") == doctest::Approx(0.5e-9));
  CHECK(m.strided_line_s.at("DRAM") == doctest::Approx(20e-9));
  try {
    parse_machine("name = t\n[level L1]\nsize = 1 KiB\nways = 2\nstrided_line = 4 cycles\n",
                  "bad.machine");
    FAIL("expected an error");
  } catch (const MachineError& e) {
    CHECK(std::string(e.what()).find("bad.machine:5") != std::string::npos);
    CHECK(std::string(e.what()).find("ns") != std::string::npos);
  }
}

TEST_CASE("the roofline charges strided lines at their measured time, the rest at bandwidth") {
  Machine m = parse_machine(
      "name = t\nkind = cpu\npeak fp32 simd = 1 TFLOP/s\n[level L1]\nsize = 1 KiB\nways = 2\n"
      "bandwidth = 100 GB/s\n[memory DRAM]\nsize = 1 GiB\nbandwidth = 10 GB/s\n"
      "strided_line = 10 ns\n",
      "t.machine");
  LevelBytes lb;
  lb.names = {"L1", "DRAM"};
  lb.bytes = {4000, 6400};
  lb.strided_bytes = {0, 3200};
  lb.line_bytes = {0, 64};
  const Roofline r = roofline(m, 1000, lb);
  // DRAM: (6400 − 3200) B / 10 GB/s = 320 ns, plus 3200 / 64 = 50 lines × 10 ns = 500 ns.
  REQUIRE(r.bounds.size() == 3);
  CHECK(r.bounds[2].seconds == doctest::Approx(820e-9));
  CHECK(r.binding == "DRAM");
  // Without the pattern every byte goes at the bandwidth: 640 ns.
  lb.strided_bytes.clear();
  CHECK(roofline(m, 1000, lb).bounds[2].seconds == doctest::Approx(640e-9));
}

TEST_CASE("a column walk's line fills are all strided; a row walk's are all streamed") {
  Machine m = parse_machine(
      "name = t\nkind = cpu\n[level L1]\nsize = 1 KiB\nline = 64 B\nways = 2\n"
      "[memory DRAM]\nsize = 1 GiB\n",
      "t.machine");
  for (bool column : {true, false}) {
    memory::Hierarchy h(m.hierarchy());
    AccessPatternSink p(h);
    // 64 rows of 4 KiB; column walk = 64 loads per column × 4 columns of lines; row walk = the
    // same 256 lines of the first four... rows, front to back.
    std::vector<memory::Access> trace;
    if (column) {
      for (uint64_t c = 0; c < 4; ++c)
        for (uint64_t r = 0; r < 64; ++r) trace.push_back(read(r * 4096 + c * 64, 0));
    } else {
      for (uint64_t i = 0; i < 256; ++i) trace.push_back(read(i * 64, 0));
    }
    p.access_batch(trace.data(), trace.size());
    h.finish();
    const LevelBytes lb = level_bytes(m, h, p);
    // 256 distinct lines, none reused before eviction from a 16-line cache: 256 fills of 64 B.
    CHECK(lb.bytes[1] == doctest::Approx(256 * 64));
    // Column: every move but the first jumps a page → 255/255 strided; row: 0/255.
    CHECK(lb.strided_bytes[1] == doctest::Approx(column ? 256 * 64 : 0));
  }
}

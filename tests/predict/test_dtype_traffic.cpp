// Traffic at each tensor's dtype: an fp16 model's trace reads 2-byte elements, its buffers are
// half the size, and the simulated hierarchy moves half the bytes of the same model in fp32
// (lesson 8's "half the bytes"). Expected values are hand counts of the streams, written here.
// The Tiles view's grids at a dtype: tests/core/test_tiles_counters.cpp.
#include "sim/lang/parser.h"
#include "sim/predict/analytic.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

namespace predict = tilescope::predict;
namespace schedule = tilescope::schedule;
namespace graph = tilescope::graph;
namespace memory = tilescope::memory;

namespace {

schedule::Program lowered(const std::string& model) {
  return schedule::lower_graph(
      std::make_shared<graph::Graph>(tilescope::lang::parse_model(model, "dtype.model")));
}

struct Recorder : memory::AccessSink {
  std::vector<memory::Access> all;
  void access(const memory::Access& a) override { all.push_back(a); }
};

// y = relu(x) over 64 × 1024 elements, in `dtype`.
std::string relu_model(const std::string& dtype) {
  return "x: [64, 1024] " + dtype + "\ny = relu(x)\n";
}

}  // namespace

TEST_CASE("dtype: an fp16 trace reads and writes 2-byte elements at 2-byte strides") {
  const schedule::Program p = lowered(relu_model("fp16"));
  const schedule::Kernel& k = p.kernels.at(0);
  Recorder r;
  schedule::trace_kernel(k, r, {});
  REQUIRE(r.all.size() == 2u * 64 * 1024);  // one read of x, one write of y per element
  const schedule::TraceLayout l = schedule::trace_layout(k);
  for (const memory::Access& a : r.all) CHECK(a.size == 2);
  // Element (0, 1) of x is 2 bytes after element (0, 0); y follows x's 128 KiB buffer.
  CHECK(r.all[0].addr == l.tensor_base[0]);
  CHECK(r.all[2].addr == l.tensor_base[0] + 2);
  CHECK(l.tensor_base[1] - l.tensor_base[0] == 64u * 1024 * 2);
  // int8 elements are one byte apart.
  const schedule::Program q = lowered(relu_model("int8"));
  Recorder r8;
  schedule::trace_kernel(q.kernels.at(0), r8, {});
  CHECK(r8.all[2].addr - r8.all[0].addr == 1);
  CHECK(r8.all[0].size == 1);
}

TEST_CASE("dtype: on tiny, an fp16 stream moves half the DRAM bytes of the fp32 one") {
  // x is 128 KiB in fp16, far past tiny's 8 KiB L2, so every line comes from DRAM once: x's
  // lines are read, y's lines are fetched on the write miss (write-allocate) and written back.
  const predict::Machine tiny = predict::load_machine("tiny");
  const uint64_t x16 = 64u * 1024 * 2;
  const schedule::Program p16 = lowered(relu_model("fp16"));
  const schedule::Program p32 = lowered(relu_model("fp32"));
  const predict::KernelRun a = predict::simulate_kernel(p16.kernels[0], *p16.graph, tiny);
  const predict::KernelRun b = predict::simulate_kernel(p32.kernels[0], *p32.graph, tiny);
  REQUIRE(a.simulated());
  REQUIRE(b.simulated());
  const memory::Counters d16 = a.hierarchy->counters(a.hierarchy->level_count());
  CHECK(d16.read_bytes == 2 * x16);
  CHECK(d16.write_bytes == x16);
  CHECK(b.dram_bytes() == 2 * a.dram_bytes());
  // The analytic model counts the same lines: 64 B lines of 2-byte elements.
  REQUIRE(a.analytic);
  CHECK(a.analytic->memory_read_bytes.value == doctest::Approx(double(2 * x16)));
  CHECK(a.analytic->access_bytes == doctest::Approx(2.0 * double(x16)));
  REQUIRE(b.analytic);
  CHECK(b.analytic->access_bytes == doctest::Approx(4.0 * double(x16)));
}

TEST_CASE("dtype: a GPU warp of 32 consecutive fp16 loads asks for two 32-byte sectors") {
  // One thread per element along j: a warp reads 32 × 2 B = 64 B, two sectors (fp32: four).
  for (const auto& [dtype, sectors] : {std::pair<std::string, uint32_t>{"fp16", 2},
                                       std::pair<std::string, uint32_t>{"fp32", 4}}) {
    CAPTURE(dtype);
    const predict::Machine h200 = predict::load_machine("h200");
    schedule::History h = schedule::History::replay(
        lowered(relu_model(dtype)),
        "tile(j, 256); bind(i, block.y); bind(j.o, block.x); bind(j.i, thread.x)",
        predict::target_for(h200));
    const schedule::Kernel& k = h.current().kernels[0];
    const schedule::WarpLoad w =
        schedule::first_warp_load(k, "x", predict::trace_options_for(h200));
    CHECK(w.lanes == 32);
    CHECK(w.sectors == sectors);
    CHECK(w.ideal_sectors == sectors);
  }
}

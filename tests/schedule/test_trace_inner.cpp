// The trace walker traces an innermost loop from its affine template (every address and checked
// index as coefficients over the loops, evaluated once per loop node). Its accesses — addresses,
// sizes, kinds, tensors, warps, spaces, in order — and its summary must equal the general walk's,
// statement by statement, on CPU and GPU schedules: padding checks, staged and double-buffered
// tiles, blocks and threads, one-lane warps, lane detail.
#include "fixtures.h"

#include "sim/schedule/trace.h"

#include <tuple>

using namespace tilescope;
using namespace tilescope::schedule;
using memory::Access;

namespace {

struct Recorder : memory::AccessSink {
  std::vector<Access> accesses;
  std::vector<std::tuple<int32_t, int16_t, uint32_t, std::vector<uint64_t>>> requests;
  uint64_t steps = 0;
  void access(const Access& a) override { accesses.push_back(a); }
  void step_boundary(uint64_t s) override { steps = s + 1; }
  void warp_request(const memory::WarpRequest& r) override {
    requests.emplace_back(r.warp, r.tensor, r.lanes,
                          std::vector<uint64_t>(r.lane_addr, r.lane_addr + r.lanes));
  }
};

bool same(const Access& a, const Access& b) {
  return a.addr == b.addr && a.size == b.size && a.kind == b.kind && a.tensor == b.tensor &&
         a.warp == b.warp && a.space == b.space;
}

// Traces `p`'s every kernel both ways and compares everything; returns the accesses compared.
size_t compare_walks(const Program& p, TraceOptions o) {
  size_t compared = 0;
  for (const Kernel& k : p.kernels) {
    CAPTURE(k.name);
    Recorder fast, general;
    o.general_walk = false;
    const TraceSummary a = trace_kernel(k, fast, o);
    o.general_walk = true;
    const TraceSummary b = trace_kernel(k, general, o);
    REQUIRE(fast.accesses.size() == general.accesses.size());
    size_t first_difference = fast.accesses.size();
    for (size_t i = 0; i < fast.accesses.size(); ++i)
      if (!same(fast.accesses[i], general.accesses[i])) {
        first_difference = i;
        break;
      }
    CHECK(first_difference == fast.accesses.size());
    CHECK(fast.requests == general.requests);
    CHECK(fast.steps == general.steps);
    CHECK(a.global_reads == b.global_reads);
    CHECK(a.global_writes == b.global_writes);
    CHECK(a.shared_reads == b.shared_reads);
    CHECK(a.shared_writes == b.shared_writes);
    CHECK(a.acc_reads == b.acc_reads);
    CHECK(a.acc_writes == b.acc_writes);
    CHECK(a.global_instructions == b.global_instructions);
    CHECK(a.global_lines == b.global_lines);
    CHECK(a.global_load_instructions == b.global_load_instructions);
    CHECK(a.shared_instructions == b.shared_instructions);
    CHECK(a.shared_wavefronts == b.shared_wavefronts);
    compared += fast.accesses.size();
  }
  return compared;
}

TraceOptions gpu(int64_t resident = 4, bool lanes = false) {
  TraceOptions o;
  o.gpu = true;
  o.resident_blocks = resident;
  o.lane_detail = lanes;
  return o;
}

}  // namespace

TEST_CASE("trace: inner loops from templates equal the general walk on CPU schedules") {
  const Program linear = lower_graph(tsfix::linear_relu(12, 10, 9));
  CHECK(compare_walks(linear, {}) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear, "fuse(matmul0, add0, relu0)"), {}) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear, "tile(i, j, 4, 4); reorder(i.o, j.o, k, i.i, j.i)"),
                      {}) > 0);
  // Tails: 10 split by 4 leaves guards; a staged tile, then a double-buffered one (its parity
  // flips with k.o, so that loop is evaluated at every execution).
  CHECK(compare_walks(tsfix::apply_all(linear, "tile(j, 4); tile(k, 4)"), {}) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear,
                                       "tile(i, j, 4, 5); tile(k, 3); "
                                       "reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
                                       "stage(W, scratchpad, at=k.o)"),
                      {}) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear,
                                       "tile(i, j, 4, 5); tile(k, 3); "
                                       "reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
                                       "stage(W, scratchpad, double, at=k.o)"),
                      {}) > 0);
  // Padding: the checked loads leave the image at its borders.
  const Program conv = lower_graph(tsfix::conv_relu(2, 3, 7, 7, 4, 3, 2, 1));
  CHECK(compare_walks(conv, {}) > 0);
  CHECK(compare_walks(tsfix::apply_all(conv, "im2col(conv0)"), {}) > 0);
}

TEST_CASE("trace: inner loops from templates equal the general walk on GPU schedules") {
  const Program linear = lower_graph(tsfix::linear_relu(32, 24, 20));
  // No thread loops: one lane per warp instruction, blocks advancing together.
  CHECK(compare_walks(linear, gpu()) > 0);
  const std::string blocks =
      "tile(i, j, 8, 8); tile(k, 4); reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
      "bind(i.o, block.y); bind(j.o, block.x)";
  // Several blocks (warp ids per block), lanes of a warp, shared tiles, a tail guard on threads.
  CHECK(compare_walks(tsfix::apply_all(linear, blocks + "; bind(j.i, thread.x)"), gpu(2)) > 0);
  CHECK(
      compare_walks(tsfix::apply_all(linear, blocks + "; bind(j.i, thread.x); bind(i.i, thread.y)"),
                    gpu(3, true)) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear, blocks + "; bind(j.i, thread.x); "
                                                        "stage(W, shared, at=k.o)"),
                      gpu(2)) > 0);
  CHECK(compare_walks(tsfix::apply_all(linear, blocks + "; bind(j.i, thread.x); "
                                                        "stage(W, shared, double, at=k.o)"),
                      gpu(2)) > 0);
  const Program tail = lower_graph(tsfix::linear_relu(30, 22, 20));
  CHECK(compare_walks(tsfix::apply_all(tail, blocks + "; bind(j.i, thread.x)"), gpu(5)) > 0);
}

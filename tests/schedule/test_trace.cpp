// The trace walker: access counts for known schedules, by hand count of the loop nests.
#include "fixtures.h"

#include "sim/schedule/trace.h"

using namespace tilescope;
using namespace tilescope::schedule;
using memory::Access;
using memory::AccessKind;
using memory::AddressSpace;

namespace {

struct Counter : memory::AccessSink {
  std::vector<Access> all;
  uint64_t steps = 0;
  void access(const Access& a) override { all.push_back(a); }
  void step_boundary(uint64_t s) override { steps = s + 1; }
  uint64_t count(AccessKind k, AddressSpace sp, int tensor = -2) const {
    uint64_t n = 0;
    for (const auto& a : all)
      n += a.kind == k && a.space == sp && (tensor == -2 || a.tensor == tensor) ? 1 : 0;
    return n;
  }
};

int id(const Program& p, const std::string& name) {
  return *p.graph->find_tensor(name);
}

}  // namespace

TEST_CASE("trace: the default MatMul reads x and W once per multiply-add, writes y once") {
  const int64_t M = 6, N = 5, K = 7;
  Program p =
      tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, K)), "fuse(matmul0, add0, relu0)");
  Counter c;
  TraceOptions o;
  o.step_loop = "i";
  const TraceSummary s = trace_kernel(p.kernels[0], c, o);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "x")) == uint64_t(M * N * K));
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "W")) == uint64_t(M * N * K));
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "b")) == uint64_t(M * N));
  CHECK(c.count(AccessKind::Write, AddressSpace::Global, id(p, "y")) == uint64_t(M * N));
  CHECK(s.global_reads == uint64_t(2 * M * N * K + M * N));
  CHECK(c.steps == uint64_t(M));
  // Addresses: element (i, k) of x is base + (i*K + k)*4; the first access is x[0,0].
  const TraceLayout l = trace_layout(p.kernels[0]);
  CHECK(c.all[0].addr == l.tensor_base[0]);
  CHECK(c.all[0].tensor == id(p, "x"));
  CHECK(c.all[1].addr == l.tensor_base[1]);      // W[0, 0]
  CHECK(c.all[2].addr == l.tensor_base[0] + 4);  // x[0, 1]
  for (size_t t = 0; t < l.tensor_base.size(); ++t) CHECK(l.tensor_base[t] % 4096 == 0);
}

TEST_CASE("trace: a concatenation reads each input element once and writes each output once") {
  // cat([a (3×4), b (3×2)], axis 1): the loads out of an input's range make no access.
  auto g = std::make_shared<graph::Graph>();
  auto a = tsfix::tensor(*g, "a", {3, 4});
  auto b = tsfix::tensor(*g, "b", {3, 2});
  graph::OpAttrs attrs;
  attrs.axis = 1;
  tsfix::op(*g, graph::OpKind::Concat, "cat0", {a, b}, attrs);
  const Program p = lower_graph(g);
  Counter c;
  const TraceSummary s = trace_kernel(p.kernels[0], c, TraceOptions{});
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "a")) == 3 * 4);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "b")) == 3 * 2);
  CHECK(c.count(AccessKind::Write, AddressSpace::Global, id(p, "cat0")) == 3 * 6);
  CHECK(s.global_reads == 3 * 6);
}

TEST_CASE("trace: a scratchpad tile moves the repeated reads to the tile's own buffer") {
  const int64_t M = 4, N = 6, K = 5;
  Program p = tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, K)),
                               "fuse(matmul0, add0, relu0); stage(x, scratchpad, at=i)");
  Counter c;
  trace_kernel(p.kernels[0], c);
  const TraceLayout l = trace_layout(p.kernels[0]);
  uint64_t in_x = 0, scratch_reads = 0, scratch_writes = 0;
  for (const auto& a : c.all) {
    if (a.addr >= l.tensor_base[0] && a.addr < l.tensor_base[0] + uint64_t(M * K * 4)) ++in_x;
    if (a.addr >= l.scratch_base) (a.kind == AccessKind::Read ? scratch_reads : scratch_writes)++;
  }
  CHECK(in_x == uint64_t(M * K));               // each row of x copied once
  CHECK(scratch_writes == uint64_t(M * K));     // into the tile
  CHECK(scratch_reads == uint64_t(M * N * K));  // and read N times from there
}

TEST_CASE("trace: shared tiles of the must-show schedule, CPU order") {
  const int64_t M = 64, N = 64, K = 32;
  Program p = tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, K)), tsfix::kMustShowSteps);
  Counter c;
  const TraceSummary s = trace_kernel(p.kernels[0], c);
  // Blocks: 64/32 × 64/64 = 2; k.o steps: 32/16 = 2; each step copies 32×16 of x and 64×16 of W.
  const uint64_t copies = 2 * 2 * (32 * 16 + 64 * 16);
  CHECK(s.shared_writes == copies);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "x")) == 2 * 2 * 32 * 16);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "W")) == 2 * 2 * 64 * 16);
  CHECK(s.shared_reads == uint64_t(2 * M * N * K));  // both operands of every multiply-add
  CHECK(c.count(AccessKind::Write, AddressSpace::Global, id(p, "y")) == uint64_t(M * N));
}

TEST_CASE("trace: GPU mode coalesces a warp's lanes into 32-byte sectors") {
  const int64_t M = 2, N = 64, K = 8;
  Program p = tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, K)),
                               "fuse(matmul0, add0, relu0); tile(j, 32); bind(i, block.y); "
                               "bind(j.o, block.x); bind(j.i, thread.x)");
  Counter c;
  TraceOptions o;
  o.gpu = true;
  trace_kernel(p.kernels[0], c, o);
  const uint64_t blocks = uint64_t(M * (N / 32));
  // Per block and k: x[i, k] is one address for all 32 lanes → 1 sector; W[j, k] with j across
  // lanes is 32 rows of K = 8 floats (32 B) apart → 32 sectors. Epilogue: b[j] and y[i, j] are 32
  // consecutive floats = 128 B = 4 sectors each.
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "x")) == blocks * K * 1);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "W")) == blocks * K * 32);
  CHECK(c.count(AccessKind::Read, AddressSpace::Global, id(p, "b")) == blocks * 4);
  CHECK(c.count(AccessKind::Write, AddressSpace::Global, id(p, "y")) == blocks * 4);
  for (const auto& a : c.all) {
    CHECK(a.size == 32);
    CHECK(a.addr % 32 == 0);
    CHECK(a.warp >= 0);
  }
}

TEST_CASE("trace: GPU mode runs resident blocks side by side, one k step at a time") {
  Program p = tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 64, 32)), tsfix::kMustShowSteps);
  Counter c;
  TraceOptions o;
  o.gpu = true;
  o.resident_blocks = 2;
  trace_kernel(p.kernels[0], c, o);
  // 128 threads = 4 warps per block: block 0 owns warps 0..3, block 1 warps 4..7. Interleaved,
  // block 0 still issues accesses (its second k.o step) after block 1 has started.
  int64_t first_block1 = -1, last_block0 = -1;
  for (size_t i = 0; i < c.all.size(); ++i) {
    if (first_block1 < 0 && c.all[i].warp >= 4) first_block1 = int64_t(i);
    if (c.all[i].warp >= 0 && c.all[i].warp < 4) last_block0 = int64_t(i);
  }
  REQUIRE(first_block1 >= 0);
  CHECK(c.steps == 2);  // k.o has 2 iterations; the resident blocks take them together
  CHECK(first_block1 < last_block0);
}

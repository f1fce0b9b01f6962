// Illegal requests are refused with a learner-facing reason that names the loop, the extent and
// why; the program is left unchanged.
#include "fixtures.h"

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

Program fused(int64_t M = 64, int64_t N = 512, int64_t K = 1024) {
  return tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, K)), "fuse(matmul0, add0, relu0)");
}

void refused(const Program& p, const std::string& step, std::vector<std::string> must_mention) {
  const StepResult r = tsfix::try_step(p, step);
  INFO(step, " → ", r.explanation);
  CHECK_FALSE(r.ok);
  for (const auto& m : must_mention) CHECK(r.explanation.find(m) != std::string::npos);
}

}  // namespace

TEST_CASE("refusal: a split factor of 0 or larger than the loop") {
  const Program p = fused();
  refused(p, "tile(i, 0)", {"tile(i, 0)", "at least one"});
  refused(p, "tile(i, -4)", {"factor must be 1 or more"});
  refused(p, "tile(i, 65)", {"loop i has only 64 iterations", "at most 64"});
  refused(p, "tile(q, 4)", {"no loop named 'q'", "i, j, k"});
  refused(p, "tile(i, four)", {"whole number"});
}

TEST_CASE("refusal: a reorder that breaks the reduction's dependence") {
  const Program p = tsfix::apply_all(fused(), "tile(i, 16); bind(i.o, block.y)");
  // k carries acc += x*W from one iteration to the next; blocks cannot pass partial sums.
  refused(p, "reorder(k, i.o)", {"reduction loop k", "outside loop i.o", "dependence", "blocks"});
  const Program q = tsfix::apply_all(fused(), "tile(j, 8); parallel(j.o)");
  refused(q, "reorder(k, j.o)", {"reduction loop k", "separate CPU threads", "dependence"});
}

TEST_CASE("refusal: mapping a reduction loop onto parallel hardware") {
  const Program p = fused();
  refused(p, "bind(k, thread.x)", {"k is a reduction loop", "dependence"});
  refused(p, "parallel(k)", {"k is a reduction loop", "CPU threads"});
  refused(p, "vectorize(k)", {"k is a reduction loop", "vector lanes"});
}

TEST_CASE("refusal: fusing a consumer that is not elementwise into an epilogue") {
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {8, 16});
  auto W = tsfix::tensor(*g, "W", {16, 16}, graph::Role::Weight);
  auto h = tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {x, W});
  auto s = tsfix::op(*g, graph::OpKind::Softmax, "softmax0", {h});
  tsfix::op(*g, graph::OpKind::MatMul, "matmul1", {s, W});
  const Program p = lower_graph(g);
  refused(p, "fuse(matmul0, softmax0)",
          {"softmax0 is not elementwise", "combines 16 inputs", "axis j", "online softmax",
           "running maximum and sum"});
  refused(p, "fuse(softmax0, matmul1)", {"matmul1 is not elementwise"});
  refused(p, "fuse(matmul0, nosuchop)", {"no op named 'nosuchop'"});
}

TEST_CASE("refusal: fusing away a tensor someone else still reads") {
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {8, 8});
  auto r = tsfix::op(*g, graph::OpKind::ReLU, "relu0", {x});
  tsfix::op(*g, graph::OpKind::Sigmoid, "sig0", {r});
  tsfix::op(*g, graph::OpKind::Tanh, "tanh0", {r});
  refused(lower_graph(g), "fuse(relu0, sig0)", {"also read by tanh0"});
}

TEST_CASE("refusal: staging a tile larger than its level") {
  const Program p = fused(256, 512, 1024);
  // At j (inside i), the tile of W is all of W: 512 × 1024 × 4 B = 2 MiB > 227 KiB.
  refused(p, "stage(W, shared, at=i)", {"2 MiB", "227 KiB"});
  // A 1024-float row of x is 4 KiB, more than 1020 B of registers.
  refused(p, "stage(x, registers, at=j)", {"4 KiB", "1020 B"});
  // With k split by 64 and moved outside j, one k.o step reads 512 × 64 floats of W = 128 KiB.
  const Program q = tsfix::apply_all(p, "tile(k, 64); reorder(i, k.o, j, k.i)");
  refused(q, "stage(W, scratchpad, at=k.o)", {"128 KiB", "48 KiB L1"});
}

TEST_CASE("refusal: stages in the wrong place, outputs, unknown names") {
  const Program p =
      tsfix::apply_all(fused(), "tile(i, 16); tile(j, 16); reorder(i.o, j.o, i.i, j.i)");
  refused(p, "stage(y, shared, at=j.o)", {"written by this kernel"});
  refused(p, "stage(z, shared, at=j.o)", {"reads no tensor named 'z'", "x, W, b"});
  refused(p, "stage(x, shared)", {"at=k.o"});
  refused(p, "stage(x, l2, at=j.o)", {"not a memory level"});
  const Program t = tsfix::apply_all(p, "bind(i.i, thread.y)");
  refused(t, "stage(x, shared, at=j.i)", {"inside (or is) thread-bound loop i.i"});
  // The bias is read after the k loop ends; a tile loaded inside k cannot serve it.
  refused(fused(), "stage(b, shared, at=k)", {"read after the k loop has finished"});
}

TEST_CASE("refusal: GPU mapping limits are explained") {
  const Program p = fused(64, 2048, 64);
  refused(p, "bind(j, thread.x)", {"2048 threads per block", "1024"});
  refused(tsfix::apply_all(p, "bind(i, block.y)"), "bind(k, block.x)", {"reduction loop"});
  refused(tsfix::apply_all(fused(), "bind(i, thread.x)"), "bind(j, thread.x)",
          {"two loops are bound to thread.x"});
  refused(fused(), "bind(j, block.x)", {"loop i runs outside it", "outermost"});
  refused(fused(), "vectorize(j)", {"loop k runs inside it", "innermost"});
  refused(fused(), "unroll(j)", {"512 times", "split it first"});
  refused(fused(), "bind(i, warp.x)", {"not a GPU dimension"});
}

TEST_CASE("refusal: leaves the program unchanged and History keeps its place") {
  History h(fused());
  REQUIRE(h.apply(parse_steps("tile(i, 16)")[0]).ok);
  const std::string before = steps_to_string(h.steps());
  CHECK_FALSE(h.apply(parse_steps("tile(i.i, 0)")[0]).ok);
  CHECK(steps_to_string(h.steps()) == before);
  CHECK(h.current().kernels[0].loops.size() == 4);
}

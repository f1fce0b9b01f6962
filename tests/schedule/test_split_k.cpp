// split_k(LOOP, PARTS): the reduction cut into parallel slices and a sum kernel. The result is
// checked against the graph's reference evaluator, the kernels' tensors and flops against hand
// counts, and every refusal names its reason.
#include "fixtures.h"

#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

const Kernel& kernel_named(const Program& p, const std::string& name) {
  for (const Kernel& k : p.kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return p.kernels.front();
}

}  // namespace

TEST_CASE("split_k: two kernels, the partials between them, the same result as the graph") {
  // y = relu(x @ W.T + b), M = 6, N = 10, K = 12 cut into 4 slices of 3.
  const Program base = lower_graph(tsfix::linear_relu(6, 10, 12));
  const Program p = tsfix::apply_all(base, "fuse(matmul0, add0, relu0); split_k(k, 4)");
  REQUIRE(p.kernels.size() == 2);
  CHECK(p.current == 0);
  const Kernel& part = p.kernels[0];
  const Kernel& sum = p.kernels[1];
  CHECK(part.name == "matmul0");
  CHECK(sum.name == "matmul0.sum");
  // The slices read x and W and write partials[4, 6, 10]; the sum reads b and the partials.
  REQUIRE(part.tensors.size() == 3);
  CHECK(part.tensors[0].name == "x");
  CHECK(part.tensors[1].name == "W");
  CHECK(part.tensors[2].name == "matmul0_partials");
  CHECK(part.tensors[2].shape == graph::Shape{4, 6, 10});
  CHECK(part.tensors[2].id == -1);
  REQUIRE(sum.tensors.size() == 3);
  CHECK(sum.tensors.back().name == "y");
  CHECK(sum.find_tensor("matmul0_partials") >= 0);
  CHECK(sum.find_tensor("b") >= 0);
  // Loops: the slice loop outermost and spatial in the partial kernel, a reduction in the sum.
  REQUIRE(part.find_loop("k.p") == 0);
  CHECK(!part.loops[0].reduce);
  CHECK(part.loops[size_t(part.find_loop("k"))].extent == 3);
  REQUIRE(sum.find_loop("k.p") >= 0);
  CHECK(sum.loops[size_t(sum.find_loop("k.p"))].reduce);
  CHECK(sum.loops[size_t(sum.find_loop("k.p"))].extent == 4);
  // Interpreter against graph::evaluate, before and after mapping both kernels.
  CHECK(tsfix::program_error(p) < 1e-5);
  const Program mapped = tsfix::apply_all(
      p, "bind(k.p, block.z); tile(i, 2); bind(i.o, block.x); tile(k, 2); "
         "kernel(matmul0.sum); tile(i, j, 2, 5); bind(i.o, block.y); bind(j.o, block.x); "
         "bind(i.i, thread.y); bind(j.i, thread.x)");
  CHECK(tsfix::program_error(mapped) < 1e-5);
  // Flops: the slices do the whole product; the sum adds 4 partials per output, then the epilogue.
  const graph::Graph& g = *p.graph;
  const int64_t mm = g.op_cost(*g.find_op("matmul0")).flops;
  CHECK(mm == 2 * 6 * 10 * 12);
  CHECK(predict::kernel_flops(part, g) == double(mm));
  const double epilogue =
      double(g.op_cost(*g.find_op("add0")).flops + g.op_cost(*g.find_op("relu0")).flops);
  CHECK(predict::kernel_flops(sum, g) == 4.0 * 6 * 10 + epilogue);
  // The memory reports name the partials: every store of one is an access of its own tensor row
  // (4 slices × 6 × 10 outputs on a CPU machine, one element access each).
  const predict::KernelRun run = predict::simulate_kernel(part, g, predict::load_machine("tiny"));
  const auto name = std::find(run.tensor_names.begin(), run.tensor_names.end(), "matmul0_partials");
  REQUIRE(name != run.tensor_names.end());
  const memory::Counters c = run.hierarchy->counters(0, int(name - run.tensor_names.begin()));
  CHECK(c.accesses == 4 * 6 * 10);
  CHECK(c.writes == 4 * 6 * 10);
  // The generated code of both kernels names the partials.
  CHECK(emit_cpp(part).find("matmul0_partials") != std::string::npos);
  CHECK(emit_cuda(sum).find("matmul0_partials") != std::string::npos);
}

TEST_CASE("split_k: unfused, convolution, batched and row-sum reductions keep their results") {
  CHECK(tsfix::program_error(
            tsfix::apply_all(lower_graph(tsfix::linear_relu(5, 7, 8)), "split_k(k, 2)")) < 1e-5);
  CHECK(tsfix::program_error(tsfix::apply_all(lower_graph(tsfix::conv_relu(1, 4, 6, 6, 3, 3, 1, 1)),
                                              "fuse(conv0, add0, relu0); split_k(c, 2)")) < 1e-5);
  CHECK(tsfix::program_error(tsfix::apply_all(lower_graph(tsfix::conv_relu(1, 2, 6, 6, 3, 3, 1, 1)),
                                              "split_k(r, 3)")) < 1e-5);
  {
    auto g = std::make_shared<graph::Graph>();
    auto a = tsfix::tensor(*g, "a", {3, 4, 6});
    auto b = tsfix::tensor(*g, "b", {6, 5});
    tsfix::op(*g, graph::OpKind::MatMul, "bmm0", {a, b});
    CHECK(tsfix::program_error(tsfix::apply_all(lower_graph(g), "split_k(k, 3)")) < 1e-5);
  }
  {
    auto g = std::make_shared<graph::Graph>();
    auto x = tsfix::tensor(*g, "x", {5, 12});
    graph::OpAttrs sum;
    sum.axes = {1};
    tsfix::op(*g, graph::OpKind::Sum, "sum0", {x}, sum);
    Program p = lower_graph(g);
    std::string loop;
    for (const Loop& l : p.kernels[0].loops)
      if (l.reduce) loop = l.name;
    REQUIRE(!loop.empty());
    CHECK(tsfix::program_error(tsfix::apply_all(p, "split_k(" + loop + ", 4)")) < 1e-5);
  }
}

TEST_CASE("split_k: refusals say why, and nothing changes") {
  const Program p = tsfix::apply_all(lower_graph(tsfix::linear_relu(8, 8, 12)),
                                     "fuse(matmul0, add0, relu0)");
  auto refused = [&](const Program& from, const std::string& step, const std::string& why) {
    const StepResult r = tsfix::try_step(from, step);
    INFO(step, ": ", r.explanation);
    CHECK(!r.ok);
    CHECK(r.explanation.find(why) != std::string::npos);
  };
  refused(p, "split_k(i, 2)", "is not a reduction");
  refused(p, "split_k(k, 5)", "do not cut into 5 equal parts; use a divisor of 12 (2, 3, 4, 6, 12");
  refused(p, "split_k(k, 1)", "cut the loop into 2 or more parts");
  refused(p, "split_k(k, 24)", "has only 12 iterations");
  refused(p, "split_k(q, 2)", "no loop named 'q'");
  refused(tsfix::apply_all(p, "tile(k, 4)"), "split_k(k.o, 3)", "already has loop steps");
  refused(tsfix::apply_all(p, "split_k(k, 2)"), "split_k(k, 3)", "already has a loop k.p");
  // Softmax normalises by the whole row's sum: a slice cannot finish its outputs.
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {4, 8});
  tsfix::op(*g, graph::OpKind::Softmax, "softmax0", {x});
  const Program s = lower_graph(g);
  std::string loop;
  for (const Loop& l : s.kernels[0].loops)
    if (l.reduce) loop = l.name;
  REQUIRE(!loop.empty());
  refused(s, "split_k(" + loop + ", 2)", "reads the whole reduction again");
}

TEST_CASE("split_k on the GPU: the slices multiply the blocks and lift the compute bound") {
  // Lesson 11's batch-64 layer: 64 × 512 outputs in 32 × 64 tiles are 16 blocks for 132 SMs.
  const Program base = lower_graph(tsfix::linear_relu(64, 512, 1024));
  const std::string tiles = "tile(i, j, 32, 64); bind(i.o, block.y); bind(j.o, block.x)";
  const Program plain = tsfix::apply_all(base, "fuse(matmul0, add0, relu0); " + tiles);
  const Program split = tsfix::apply_all(
      base, "fuse(matmul0, add0, relu0); split_k(k, 8); bind(k.p, block.z); " + tiles +
                "; kernel(matmul0.sum); tile(i, j, 32, 64); "
                "bind(i.o, block.y); bind(j.o, block.x)");
  auto blocks = [](const Kernel& k) {
    const LaunchConfig lc = launch_config(k);
    return lc.grid[0] * lc.grid[1] * lc.grid[2];
  };
  CHECK(blocks(plain.kernels[0]) == (64 / 32) * (512 / 64));
  CHECK(blocks(split.kernels[0]) == 8 * (64 / 32) * (512 / 64));
  CHECK(blocks(kernel_named(split, "matmul0.sum")) == 16);
  const predict::Machine h200 = predict::load_machine("h200");
  REQUIRE(h200.cores == 132);
  CHECK(predict::busy_core_share(plain.kernels[0], h200) == doctest::Approx(16.0 / 132));
  CHECK(predict::busy_core_share(split.kernels[0], h200) == doctest::Approx(128.0 / 132));
  // A kernel with no block loop has no launch decided yet: its share is the whole GPU.
  CHECK(predict::busy_core_share(base.kernels[0], h200) == 1.0);
  // The program's share weights each kernel by its flops: Σ flops / Σ (flops / share).
  const double f0 = 2.0 * 64 * 512 * 1024 + 2.0 * 64 * 512, f1 = 8.0 * 64 * 512;
  CHECK(predict::busy_core_share({f0, f1}, {128.0 / 132, 16.0 / 132}) ==
        doctest::Approx((f0 + f1) / (f0 * 132 / 128 + f1 * 132 / 16)));
}

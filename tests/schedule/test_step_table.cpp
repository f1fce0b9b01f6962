// The step table: one row per step kind drives dispatch, the argument-count and option checks, and
// the list an unknown step is answered with.
#include "fixtures.h"

#include <algorithm>

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

Program fused() {
  return tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 128, 64)),
                          "fuse(matmul0, add0, relu0)");
}

// Every step the schedule room knows, in the order its documentation lists them (transform.h).
const std::vector<std::string> kKinds = {
    "kernel", "fuse",      "compute_at", "split",          "tile",   "reorder",
    "unroll", "vectorize", "parallel",   "bind",           "stage",  "block_order",
    "layout", "pad",       "im2col",     "online_softmax", "split_k"};

std::string refusal(const Program& p, const std::string& step) {
  const StepResult r = tsfix::try_step(p, step);
  CHECK_FALSE(r.ok);
  return r.explanation;
}

}  // namespace

TEST_CASE("step table: one row per step kind, in the documented order") {
  std::vector<std::string> names;
  for (const StepInfo& i : step_table()) names.emplace_back(i.name);
  CHECK(names == kKinds);
  for (const StepInfo& i : step_table()) {
    INFO(i.name);
    CHECK(bool(i.apply));
    CHECK_FALSE(i.help.empty());
    CHECK(i.min_args <= i.max_args);
    CHECK(find_step(i.name) == &i);
    // The example is a step of this kind that the table itself accepts.
    const auto ex = parse_steps(i.example);
    REQUIRE(ex.size() == 1);
    CHECK(ex[0].name == i.name);
    CHECK(ex[0].args.size() >= i.min_args);
    CHECK(ex[0].args.size() <= i.max_args);
    for (const auto& [key, value] : ex[0].options)
      CHECK(std::find(i.keys.begin(), i.keys.end(), key) != i.keys.end());
  }
  CHECK(find_step("parallelize") == find_step("parallel"));
  CHECK(find_step("tilee") == nullptr);
}

TEST_CASE("step table: an unknown step is refused with where it is and every step there is") {
  const Program p = fused();
  const auto steps = parse_steps("tile(i, 8);\n  tilee(j, 4)");
  REQUIRE(steps.size() == 2);
  const StepResult r = apply_step(p, steps[1]);
  CHECK_FALSE(r.ok);
  CHECK(
      r.explanation ==
      "unknown step 'tilee' at 2:3; steps are kernel, fuse, compute_at, split, tile, reorder, "
      "unroll, vectorize, parallel, bind, stage, block_order, layout, pad, im2col, online_softmax, "
      "split_k");
  // A step built in code has no position to name.
  TransformStep built;
  built.name = "swizzle";
  built.args = {"i"};
  CHECK(apply_step(p, built).explanation.rfind("unknown step 'swizzle'; steps are kernel, ", 0) ==
        0);
  // The alias applies as the step it stands for.
  const StepResult par = tsfix::try_step(p, "parallelize(i)");
  REQUIRE(par.ok);
  CHECK(par.program.kernels[size_t(par.program.current)].loops[0].kind == LoopKind::Parallel);
}

TEST_CASE("step table: an option the step does not read is refused, naming the ones it takes") {
  const Program p = fused();
  // Legal without the unknown option, so only the option can make each of these fail.
  REQUIRE(tsfix::try_step(p, "tile(i, 64)").ok);
  CHECK(refusal(p, "tile(i, 64, foo=1)") ==
        "tile: unknown option 'foo=1'; tile takes no key=value options");
  REQUIRE(tsfix::try_step(p, "stage(W, shared, at=k)").ok);
  CHECK(refusal(p, "stage(W, shared, at=k, dbl=1)") ==
        "stage: unknown option 'dbl=1'; the options of stage are at=");
  CHECK(refusal(p, "unroll(k, at=k)") ==
        "unroll: unknown option 'at=k'; unroll takes no key=value options");
  // compute_at reads at=, so that is accepted there.
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {6, 5});
  auto W = tsfix::tensor(*g, "W", {5, 7}, graph::Role::Weight);
  auto s = tsfix::op(*g, graph::OpKind::Sigmoid, "sig0", {x});
  tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {s, W});
  const Program two = lower_graph(g);
  CHECK(tsfix::try_step(two, "compute_at(sig0, matmul0, at=i)").ok);
  CHECK(refusal(two, "compute_at(sig0, matmul0, where=i)") ==
        "compute_at: unknown option 'where=i'; the options of compute_at are at=");
}

TEST_CASE("step table: a wrong number of positional arguments says what the step takes") {
  const Program p = fused();
  CHECK(refusal(p, "unroll(i, j)") == "unroll takes one loop name; got 2 arguments");
  CHECK(refusal(p, "unroll()") == "unroll takes one loop name; got 0 arguments");
  CHECK(refusal(p, "reorder(i)") == "reorder takes two or more loop names; got 1 argument");
  CHECK(refusal(p, "fuse(matmul0)") ==
        "fuse takes a producer op and one or more elementwise consumers; got 1 argument");
  // tile takes two or four: three is refused by the step, with the same wording.
  CHECK(refusal(p, "tile(i, j, 4)") ==
        "tile takes a loop and a factor, e.g. tile(i, 64), or tile(i, j, 64, 64); got 3 "
        "arguments");
  CHECK(refusal(p, "split(i, j, 4, 4)") ==
        "split takes a loop and a factor, e.g. split(i, 64); got 4 arguments");
  CHECK(refusal(p, "pad(x, 1)") ==
        "pad takes a tensor or tile name, a dim and an amount; got 2 arguments");
  CHECK(refusal(p, "stage(W, shared, at=k, double, extra)").rfind("stage takes a tensor, ", 0) ==
        0);
}

TEST_CASE("step table: a row's functions read the text and refuse by throwing ScheduleError") {
  // Called outside apply_step (as a tool listing the table might), a refusal is the public error.
  const StepInfo* tile = find_step("tile");
  REQUIRE(tile != nullptr);
  CHECK_THROWS_AS(tile->parse(parse_steps("tile(i, four)")[0]), ScheduleError);
  const StepSpec zero = tile->parse(parse_steps("tile(i, 0)")[0]);
  Program p = fused();
  CHECK_THROWS_AS(tile->apply(p, zero, Target{}), ScheduleError);
  Program q = fused();
  const std::string e = tile->apply(q, tile->parse(parse_steps("tile(i, 16)")[0]), Target{});
  CHECK(e.find("i.o (4) × i.i (16)") != std::string::npos);
  CHECK(q.kernels[size_t(q.current)].loops[0].name == "i.o");
}

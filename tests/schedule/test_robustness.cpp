// Inputs that used to be accepted wrongly or never finished: a model tensor named with the
// generated code's reserved ts_ prefix, an op named twice in fuse, a keyword argument given twice.
#include "build_paths.h"
#include "fixtures.h"
#include "tests/support/run_command.h"

#include <string>

using namespace tilescope;
using namespace tilescope::schedule;
using tilescope::test::run_command;

namespace {

// Runs the CLI under a time limit: before the fix the ts_ case looped forever, and a test that
// hangs reports nothing.
test::CommandResult run_cli_limited(const std::string& args) {
  return run_command("timeout 60 '" + std::string(TILESCOPE_CLI_PATH) + "' " + args);
}

}  // namespace

TEST_CASE("a tensor named ts_x is renamed out of the reserved prefix; the code compiles") {
  // Rule: generated names starting with ts_ belong to the generator, so a model's ts_x must end
  // up as an identifier without that prefix, and the program must still emit and verify.
  const auto model = test::write_scratch_file("ts.model", "ts_x: [4,4]\ny = relu(ts_x)\n");
  const auto emitted = run_cli_limited("schedule '" + model.string() + "' --emit cpp");
  INFO(emitted.out);
  REQUIRE(emitted.code == 0);  // 124 would be the time limit: the old loop never ended
  CHECK(emitted.out.find("t_ts_x") != std::string::npos);

  const auto source = test::write_scratch_file("ts_kernel.cpp", emitted.out);
  const auto compiled = run_command("c++ -std=c++17 -fsyntax-only '" + source.string() + "'");
  INFO(compiled.out);
  CHECK(compiled.code == 0);

  const auto verified = run_cli_limited("schedule '" + model.string() + "' --verify --quiet");
  INFO(verified.out);
  CHECK(verified.code == 0);
  CHECK(verified.out.find("(ok)") != std::string::npos);
}

TEST_CASE("a ts_ name that collides after renaming still gets a distinct identifier") {
  // Rule: t_ts_x (the renamed ts_x) and a model's own t_ts_x must not share one identifier.
  const auto model = test::write_scratch_file("ts_collide.model",
                                              "ts_x: [4,4]\nt_ts_x: [4,4]\ny = ts_x + t_ts_x\n");
  const auto emitted = run_cli_limited("schedule '" + model.string() + "' --emit cpp");
  INFO(emitted.out);
  REQUIRE(emitted.code == 0);
  CHECK(emitted.out.find("t_ts_x_") != std::string::npos);
  const auto verified = run_cli_limited("schedule '" + model.string() + "' --verify --quiet");
  CHECK(verified.code == 0);
}

TEST_CASE("fuse refuses an op named twice instead of reporting a no-op as a fusion") {
  const Program p = lower_graph(tsfix::linear_relu(16, 32, 8));
  const StepResult r = tsfix::try_step(p, "fuse(matmul0, matmul0)");
  INFO(r.explanation);
  CHECK_FALSE(r.ok);
  CHECK(r.explanation.find("matmul0 is named twice") != std::string::npos);
  // The same op later in a longer list is caught too.
  const StepResult later = tsfix::try_step(p, "fuse(matmul0, add0, add0)");
  CHECK_FALSE(later.ok);
  CHECK(later.explanation.find("add0 is named twice") != std::string::npos);
}

TEST_CASE("a keyword argument given twice is refused, not resolved by taking the first") {
  // Rule: every step that reads key=value refuses a repeated key. Each step below is legal with
  // either value alone, so only the repetition can make it fail.
  const Program tiled = tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 128, 64)),
                                         "fuse(matmul0, add0, relu0); tile(i, 32); tile(j, 64); "
                                         "tile(k, 16); reorder(i.o, j.o, k.o, i.i, j.i, k.i)");
  REQUIRE(tsfix::try_step(tiled, "stage(W, shared, at=k.o)").ok);
  REQUIRE(tsfix::try_step(tiled, "stage(W, shared, at=j.o)").ok);
  const StepResult stage = tsfix::try_step(tiled, "stage(W, shared, at=k.o, at=j.o)");
  INFO(stage.explanation);
  CHECK_FALSE(stage.ok);
  CHECK(stage.explanation.find("at= is given twice (at=k.o and at=j.o)") != std::string::npos);

  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {6, 5});
  auto W = tsfix::tensor(*g, "W", {5, 7}, graph::Role::Weight);
  auto s = tsfix::op(*g, graph::OpKind::Sigmoid, "sig0", {x});
  tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {s, W});
  const Program two = lower_graph(g);
  REQUIRE(tsfix::try_step(two, "compute_at(sig0, matmul0, at=i)").ok);
  REQUIRE(tsfix::try_step(two, "compute_at(sig0, matmul0, at=inline)").ok);
  const StepResult at = tsfix::try_step(two, "compute_at(sig0, matmul0, at=i, at=inline)");
  CHECK_FALSE(at.ok);
  CHECK(at.explanation.find("at= is given twice") != std::string::npos);
}

TEST_CASE("schedule --apply reports a repeated keyword on the command line") {
  const auto r = run_cli_limited(
      "schedule default --apply 'fuse(matmul0, add0, relu0); tile(i, "
      "16); stage(W, shared, at=k, at=j)'");
  CHECK(r.code == 1);
  CHECK(r.out.find("at= is given twice") != std::string::npos);
}

// The step history is data: undo / redo, branching by truncation, printing and replaying; and the
// CLI drives the same path end to end.
#include "fixtures.h"
#include "tests/support/run_command.h"

#include "sim/lang/parser.h"
#include "sim/schedule/codegen.h"

#include <cstdio>
#include <memory>

using namespace tilescope;
using namespace tilescope::schedule;

TEST_CASE("history: undo, redo, and a new step after undo drops the undone ones") {
  History h(lower_graph(tsfix::linear_relu(16, 16, 16)));
  for (const auto& s : parse_steps("fuse(matmul0, add0, relu0); tile(i, 4); tile(j, 8)"))
    REQUIRE(h.apply(s).ok);
  CHECK(h.size() == 3);
  CHECK(h.current().kernels[0].loops.size() == 5);  // i.o i.i j.o j.i k
  REQUIRE(h.undo());
  CHECK(h.current().kernels[0].loops.size() == 4);
  CHECK(h.can_redo());
  REQUIRE(h.redo());
  CHECK(h.current().kernels[0].loops.size() == 5);
  REQUIRE(h.undo());
  REQUIRE(h.undo());
  CHECK(h.to_text() == "fuse(matmul0, add0, relu0)");
  REQUIRE(h.apply(parse_steps("tile(k, 2)")[0]).ok);  // branch: tile(i)/tile(j) are gone
  CHECK_FALSE(h.can_redo());
  CHECK(h.to_text() == "fuse(matmul0, add0, relu0); tile(k, 2)");
  REQUIRE(h.undo());
  REQUIRE(h.undo());
  CHECK(h.current().kernels.size() == 3);  // back to the default lowering
  CHECK_FALSE(h.undo());
}

TEST_CASE("history: the saved text replays to the same program") {
  const auto initial = lower_graph(tsfix::linear_relu(40, 72, 24));
  History h = History::replay(initial, tsfix::kMustShowSteps);
  History again = History::replay(initial, h.to_text());
  CHECK(again.to_text() == h.to_text());
  CHECK(emit_cuda(again.current().kernels[0]) == emit_cuda(h.current().kernels[0]));
  CHECK(print_program(again.current()) == print_program(h.current()));
  // A refused step in replayed text names itself and where it is.
  try {
    History::replay(initial, "fuse(matmul0, add0, relu0);\n  tile(i, 0)");
    FAIL("expected a refusal");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()).rfind("2:3: tile(i, 0) refused:", 0) == 0);
  }
}

namespace {

using Run = tilescope::test::CommandResult;
Run cli(const std::string& args) {
  return tilescope::test::run_cli(args);
}

}  // namespace

TEST_CASE("cli: schedule prints each step's loop nest and explanation, and emits source") {
  const Run r =
      cli("schedule default --apply \"fuse(matmul0, add0, relu0); tile(i, 32)\" --verify");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("step 0: default lowering (3 kernels)") != std::string::npos);
  CHECK(r.out.find("step 2: tile(i, 32)") != std::string::npos);
  CHECK(r.out.find("Loop i (64 iterations) is now i.o (2) × i.i (32)") != std::string::npos);
  CHECK(r.out.find("for i.i in 0..32:") != std::string::npos);
  CHECK(r.out.find("(ok)") != std::string::npos);
  const Run cpp = cli("schedule default --apply \"fuse(matmul0, add0, relu0)\" --emit cpp");
  CHECK(cpp.code == 0);
  CHECK(cpp.out.find("extern \"C\" void ts_kernel(float* const* args)") != std::string::npos);
  const Run cu = cli(std::string("schedule default --apply \"") + tsfix::kMustShowSteps +
                     "\" --emit cuda --launch");
  CHECK(cu.code == 0);
  CHECK(cu.out.find("__global__") != std::string::npos);
  CHECK(cu.out.find("launch: grid 8×2×1 = 16 blocks, block 16×8×1 = 128 threads, dynamic shared memory 6144 B") !=
        std::string::npos);
}

TEST_CASE("cli: a refused step exits 1 with the reason and where it is") {
  const Run r = cli("schedule default --apply \"tile(k, 2048)\"");
  CHECK(r.code == 1);
  CHECK(r.out.find("1:1: tile(k, 2048) refused on machine h200: tile(k, 2048): loop k has only "
                   "1024 iterations") != std::string::npos);
  const Run bad = cli("schedule default --apply \"tile(k 2)\"");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("1:8: expected ',' or ')'") != std::string::npos);
}

TEST_CASE("history: at most kMaxScheduleSteps steps, and kMaxHistoryKernels kernels over all entries") {
  // Issue #25: 8,000 chained steps took 25 s and 8 GB; 890 steps on a 1,779-kernel program 8 GB.
  // 3 kernels (matmul0, add0, relu0): the step limit, 256, comes first (258 × 3 < 100,000).
  History h(lower_graph(tsfix::linear_relu(4, 4, 4)));
  const TransformStep pick = parse_steps("kernel(add0)")[0];
  for (size_t i = 0; i < kMaxScheduleSteps; ++i) REQUIRE(h.apply(pick).ok);
  const StepResult over = h.apply(pick);
  CHECK_FALSE(over.ok);
  CHECK(over.explanation.find("a schedule of 257 steps is past the limit of 256") == 0);
  CHECK(h.size() == kMaxScheduleSteps);

  // A chain of 1,000 ReLUs lowers to 1,000 kernels: entry e (0-based) is refused when
  // (e + 2) x 1,000 > 100,000, so e = 99 is the first refused and 99 steps apply.
  std::string model = "x: [4]\ny0 = relu(x)\n";
  for (int i = 1; i < 1000; ++i)
    model += "y" + std::to_string(i) + " = relu(y" + std::to_string(i - 1) + ")\n";
  History big(lower_graph(std::make_shared<const graph::Graph>(lang::parse_model(model))));
  REQUIRE(big.current().kernels.size() == 1000);
  const TransformStep first = parse_steps("kernel(relu0)")[0];
  size_t applied = 0;
  while (big.apply(first).ok) ++applied;
  CHECK(applied == 99);
  CHECK(big.apply(first).explanation.find("would hold 101 copies of a 1000-kernel program") !=
        std::string::npos);
}

// Re-targeting a history: the same steps checked against another machine's capacities. The step
// that no longer fits is named with the refusal apply_step gives, and nothing is dropped.
#include "fixtures.h"

#include "sim/lang/parser.h"

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

// C = A @ B, 256 × 256 × 256, from the model language.
Program gemm256() {
  const std::string text = "A: [256, 256]\nB: [256, 256]\nC = A @ B\n";
  return lower_graph(std::make_shared<const graph::Graph>(lang::parse_model(text, "gemm.model")));
}

// 64×64 output tiles on a 4×4 grid, 16×16 threads of 4×4 outputs each. Every step before the
// last is legal on any GPU with 256 threads a block.
constexpr const char* kMapped =
    "tile(i, j, 64, 64); bind(i.o, block.y); bind(j.o, block.x); tile(i.i, 4); tile(j.i, 4); "
    "reorder(i.i.o, j.i.o, i.i.i, j.i.i); bind(i.i.o, thread.y); bind(j.i.o, thread.x)";
constexpr size_t kMappedSteps = 8;
// The block's rows of A at j.o: 64 rows × 256 k × 4 B = 65536 B = 64 KiB.
constexpr const char* kStageA = "stage(A, shared, at=j.o)";
constexpr int64_t kTileBytes = 64 * 256 * 4;

const Target kSmall{.smem_bytes_per_block = 48 * 1024};

History mapped_history() {
  History h(gemm256());
  for (const auto& s : parse_steps(kMapped)) REQUIRE(h.apply(s).ok);
  REQUIRE(h.size() == kMappedSteps);
  return h;
}

}  // namespace

TEST_CASE("retarget: a 64 KiB shared tile fits the default target and not a 48 KiB block") {
  static_assert(kTileBytes == 64 * 1024);
  const History h = mapped_history();
  const TransformStep stage = parse_steps(kStageA).at(0);
  const StepResult big = apply_step(h.current(), stage, Target{});
  INFO(big.explanation);
  CHECK(big.ok);
  CHECK(big.explanation.find("64 KiB") != std::string::npos);
  const StepResult small = apply_step(h.current(), stage, kSmall);
  INFO(small.explanation);
  CHECK_FALSE(small.ok);
  CHECK(small.explanation.find("48 KiB") != std::string::npos);
  CHECK(small.explanation.find("64 KiB") != std::string::npos);
}

TEST_CASE("retarget: first_refused names the step a smaller target refuses, by index and text") {
  History h = mapped_history();
  REQUIRE(h.apply(parse_steps(kStageA)[0]).ok);
  REQUIRE(h.apply(parse_steps("unroll(j.i.i)")[0]).ok);
  CHECK_FALSE(h.first_refused(Target{}).has_value());
  const auto r = h.first_refused(kSmall);
  REQUIRE(r.has_value());
  CHECK(r->index == kMappedSteps);  // 0-based: the step right after the eight mapping steps
  CHECK(r->step == "stage(A, shared, at=j.o)");
  // The same text apply_step gives for that step on that target.
  Program p = gemm256();
  for (const auto& s : parse_steps(kMapped)) {
    StepResult step = apply_step(p, s, kSmall);
    REQUIRE(step.ok);
    p = std::move(step.program);
  }
  CHECK(r->message == apply_step(p, parse_steps(kStageA)[0], kSmall).explanation);
  CHECK(r->message.find("48 KiB") != std::string::npos);
  // Asking changes nothing.
  CHECK(h.size() == kMappedSteps + 2);
}

TEST_CASE(
    "retarget: a history legal on both targets reports nothing; the redo stack is not asked") {
  History h = mapped_history();
  CHECK_FALSE(h.first_refused(Target{}).has_value());
  CHECK_FALSE(h.first_refused(kSmall).has_value());
  // An undone step that the small target would refuse is not part of the applied history.
  REQUIRE(h.apply(parse_steps(kStageA)[0]).ok);
  REQUIRE(h.undo());
  CHECK_FALSE(h.first_refused(kSmall).has_value());
  REQUIRE(h.redo());
  CHECK(h.first_refused(kSmall).has_value());
}

TEST_CASE("retarget: set_target keeps every step and checks new steps against the new target") {
  History h = mapped_history();
  REQUIRE(h.apply(parse_steps(kStageA)[0]).ok);
  const std::string text = h.to_text();
  h.set_target(kSmall);
  CHECK(h.target().smem_bytes_per_block == 48 * 1024);
  CHECK(h.size() == kMappedSteps + 1);
  CHECK(h.to_text() == text);
  REQUIRE(h.first_refused(h.target()).has_value());
  CHECK(h.first_refused(h.target())->index == kMappedSteps);
  // Undoing the stage, the same step is now refused by apply, and the history is unchanged.
  REQUIRE(h.undo());
  const StepResult again = h.apply(parse_steps(kStageA)[0]);
  CHECK_FALSE(again.ok);
  CHECK(again.explanation.find("48 KiB") != std::string::npos);
  CHECK(h.can_redo());
  // Back on the default target the stage applies again.
  h.set_target(Target{});
  CHECK(h.apply(parse_steps(kStageA)[0]).ok);
}

TEST_CASE(
    "retarget: explanations of the steps that still apply are re-derived for the new target") {
  // A reorder's explanation compares one k iteration's working set with the target's L1.
  History h(gemm256());
  REQUIRE(h.apply(parse_steps("tile(i, j, 64, 64)")[0]).ok);
  CHECK(h.explanation(0).find("fits the 48 KiB L1 cache") != std::string::npos);
  Target t;
  t.cpu_l1_bytes = 32 * 1024;
  h.set_target(t);
  CHECK(h.explanation(0).find("fits the 32 KiB L1 cache") != std::string::npos);
  CHECK(h.explanation(0).find("48 KiB") == std::string::npos);
  // A GPU machine: its SM's L1 (28 KiB on the H200's largest carve-out), named as whose it is.
  Target gpu;
  gpu.gpu_l1_bytes = 28 * 1024;
  gpu.machine = "h200";
  h.set_target(gpu);
  CHECK(h.explanation(0).find("fits the 28 KiB L1 of one h200 SM") != std::string::npos);
  CHECK(h.explanation(0).find("48 KiB") == std::string::npos);
}

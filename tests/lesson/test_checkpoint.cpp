// Checkpoint blocks: the format's errors at file:line:col, `learner` bound to a learner's own
// state (and to nothing else), the check `lesson check` makes (the solution reaches the goal, the
// start does not), a learner who changed the model instead of scheduling it, and progress.
// Expected values are hand counts written beside them.
#include "sim/lesson/checker.h"
#include "sim/lesson/mutate.h"
#include "sim/lesson/progress.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";
// `small`: Y = relu(X + bias) on a 64 × 64 fp32 X (16 KiB), two kernels; `small_fused` one. The
// lesson's minimum bytes: unfused X, bias read, T written, T read, Y written = 4·16384 + 2·256
// (bias read by the add only: 64 floats = 256 B, once); fused 2·16384 + 256.
const std::string kModels =
    "```model id=small\nX: [64, 64]\nbias: [64] weight\nY = relu(X + bias)\n```\n"
    "```steps id=small_fused model=small\nfuse(add0, relu0)\n```\n"
    "```check model=small\nops(small) == 2\n```\n";

std::string checkpoint(const std::string& attrs, const std::string& body) {
  return "```checkpoint " + attrs + "\n" + body + "```\n";
}

const std::string kGoal = "goal: Fuse it.\nhint: fuse(add0, relu0)\n";

std::string error_of(const std::string& text) {
  try {
    LessonSession s(parse_lesson(text, "c.md"));
  } catch (const LessonError& e) {
    return e.what();
  }
  return "";
}

const Block& first_checkpoint(const LessonSession& s) {
  for (const Block& b : s.lesson().blocks)
    if (b.kind == BlockKind::Checkpoint) return b;
  FAIL("no checkpoint block");
  throw 0;
}

}  // namespace

TEST_CASE("a checkpoint block parses into goal, hint, model, solution and checks") {
  const Lesson l = parse_lesson(
      kHead + kModels +
          checkpoint("id=fuse model=small machine=tiny solution=small_fused",
                     "# a comment\ngoal: Fuse the add and the ReLU.\nhint: fuse(add0, relu0)\n"
                     "kernels(learner) == 1\nbytes(learner) < bytes(small)\n"),
      "c.md");
  const Block& b = l.blocks.back();
  REQUIRE(b.kind == BlockKind::Checkpoint);
  CHECK(b.checkpoint.id == "fuse");
  CHECK(b.checkpoint.goal == "Fuse the add and the ReLU.");
  CHECK(b.checkpoint.hint == "fuse(add0, relu0)");
  CHECK(b.checkpoint.model == "small");
  CHECK(b.checkpoint.solution == "small_fused");
  REQUIRE(b.checks.size() == 2);
  CHECK(b.checks[0].text == "kernels(learner) == 1");
}

TEST_CASE("malformed checkpoint blocks are refused at file:line:col") {
  // The checkpoint's fence is on line 16 of each lesson: 5 head lines, 10 model lines.
  const std::string m = kHead + kModels;
  auto parse_error = [&](const std::string& block) {
    try {
      parse_lesson(m + block, "c.md");
    } catch (const LessonError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(parse_error(checkpoint("model=small solution=small_fused", kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:1: error: a checkpoint block needs id=NAME") == 0);
  CHECK(parse_error(checkpoint("id=c solution=small_fused", kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:1: error: a checkpoint block needs model=ID") == 0);
  CHECK(parse_error(checkpoint("id=c model=small", kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:1: error: a checkpoint block needs solution=ID") == 0);
  CHECK(parse_error(
            checkpoint("id=c model=small solution=small_fused", "hint: h\nops(learner) == 2\n"))
            .find("c.md:17:1: error: a checkpoint block needs a 'goal:' line") == 0);
  CHECK(parse_error(
            checkpoint("id=c model=small solution=small_fused", "goal: g\nops(learner) == 2\n"))
            .find("c.md:17:1: error: a checkpoint block needs a 'hint:' line") == 0);
  CHECK(parse_error(checkpoint("id=c model=small solution=small_fused", kGoal))
            .find("c.md:17:1: error: a checkpoint block needs at least one check line") == 0);
  CHECK(parse_error(checkpoint("id=c model=small solution=small_fused",
                               "goals: g\nhint: h\nops(learner) == 2\n"))
            .find("c.md:18:1: error: unknown key 'goals' in a checkpoint block; did you mean "
                  "'goal'?") == 0);
  CHECK(parse_error(checkpoint("id=c model=small solution=small_fused",
                               "goal: g\ngoal: again\nhint: h\nops(learner) == 2\n"))
            .find("c.md:19:1: error: 'goal:' is given twice in this checkpoint block (first at "
                  "line 18)") == 0);
  CHECK(parse_error(checkpoint("id=c model=small solution=small_fused",
                               "goal:\nhint: h\nops(learner) == 2\n"))
            .find("c.md:18:6: error: 'goal:' is empty") == 0);
  CHECK(parse_error(checkpoint("id=learner model=small solution=small_fused",
                               kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:15: error: id 'learner' is reserved") == 0);
  CHECK(parse_error(checkpoint("id=c model=small solution=small_fused speed=1",
                               kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:53: error: unknown attribute 'speed' on a checkpoint block") == 0);
}

TEST_CASE("the checker refuses a checkpoint whose names do not resolve") {
  const std::string m = kHead + kModels;
  CHECK(error_of(m +
                 checkpoint("id=c model=nope solution=small_fused", kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:20: error: model=nope: no model block with that id") == 0);
  CHECK(error_of(m + checkpoint("id=c model=small solution=nope", kGoal + "ops(learner) == 2\n"))
            .find("c.md:17:32: error: solution=nope: no steps or model block with that id") == 0);
  // A solution must schedule the model the learner starts from.
  const std::string other = "```model id=other\nA: [8]\nB = relu(A)\n```\n";
  CHECK(error_of(m + other +
                 checkpoint("id=c model=other solution=small_fused", kGoal + "ops(learner) == 1\n"))
            .find("solution=small_fused schedules model small, but the learner starts from "
                  "model=other") != std::string::npos);
  // Every checkpoint looks at the learner.
  CHECK(
      error_of(m + checkpoint("id=c model=small solution=small_fused", kGoal + "ops(small) == 2\n"))
          .find("c.md:17:1: error: checkpoint c never looks at the learner") == 0);
  // `learner` is no subject outside a checkpoint block.
  CHECK(error_of(m + "```check model=small\nkernels(learner) == 1\n```\n")
            .find("c.md:18:9: error: unknown model or steps id 'learner'") == 0);
  // A train= model has no text the learner's editor could hold.
  CHECK(error_of(m + "```model id=t train=small\n```\n" +
                 checkpoint("id=c model=t solution=t", kGoal + "ops(learner) == 2\n"))
            .find("model=t is a train= model") != std::string::npos);
}

TEST_CASE("lesson check: the solution reaches the goal and the start does not") {
  LessonSession s(parse_lesson(
      kHead + kModels +
          checkpoint("id=c model=small machine=tiny solution=small_fused",
                     kGoal + "kernels(learner) == 1\nbytes(learner) == 2 * 16384 + 256\n"),
      "c.md"));
  const CheckpointCheck c = s.check_checkpoint(first_checkpoint(s));
  INFO(c.error);
  CHECK(c.pass);
  REQUIRE(c.solution.checks.size() == 2);
  CHECK(c.solution.checks[1].lhs.number == 2 * 16384 + 256);
  // The start, unfused: two kernels and 4·16384 + 256 bytes.
  CHECK_FALSE(c.start.pass);
  CHECK(c.start.checks[0].lhs.number == 2);
  CHECK(c.start.checks[1].lhs.number == 4 * 16384 + 256);
}

TEST_CASE("lesson check: a goal that holds before the learner acts is a defect") {
  LessonSession s(parse_lesson(
      kHead + kModels +
          checkpoint("id=c model=small solution=small_fused", kGoal + "ops(learner) == 2\n"),
      "c.md"));
  const CheckpointCheck c = s.check_checkpoint(first_checkpoint(s));
  CHECK_FALSE(c.pass);
  CHECK(c.error.find("already holds on the starting model small") != std::string::npos);
}

TEST_CASE("lesson check: a solution that misses the goal fails with the failing check") {
  LessonSession s(parse_lesson(
      kHead + kModels +
          checkpoint("id=c model=small solution=small_fused", kGoal + "kernels(learner) == 3\n"),
      "c.md"));
  const CheckpointCheck c = s.check_checkpoint(first_checkpoint(s));
  CHECK_FALSE(c.pass);
  CHECK(c.error.find("the solution small_fused does not reach the goal: kernels(learner) == 3 "
                     "is 1") != std::string::npos);
}

TEST_CASE("the learner's own steps, each binding simulated afresh") {
  LessonSession s(
      parse_lesson(kHead + kModels +
                       checkpoint("id=c model=small machine=tiny solution=small_fused",
                                  kGoal + "dram_bytes(learner) <= 0.55 * dram_bytes(small)\n"),
                   "c.md"));
  const Block& b = first_checkpoint(s);
  const CheckpointResult fused = s.run_checkpoint(b, s.state_with_steps(b, "fuse(add0, relu0)"));
  const CheckpointResult none = s.run_checkpoint(b, s.state_with_steps(b, ""));
  const CheckpointResult again = s.run_checkpoint(b, s.state_with_steps(b, "fuse(add0, relu0)"));
  CHECK(fused.pass);
  CHECK_FALSE(none.pass);
  CHECK(again.pass);
  // On tiny nothing of the 16 KiB tensors stays cached between kernels: unfused, the temporary
  // costs three tensors of DRAM traffic more (fetched on its first write, written back, read).
  CHECK(none.checks[0].lhs.number - fused.checks[0].lhs.number == 3 * 64 * 64 * 4);
  CHECK(again.checks[0].lhs.number == fused.checks[0].lhs.number);
  // A refused or unreadable step is the learner's error, said plainly.
  CHECK_THROWS_WITH_AS(s.state_with_steps(b, "fuse(relu0, add0)"), doctest::Contains("is refused"),
                       LessonError);
  CHECK_THROWS_AS(s.state_with_steps(b, "fuse(add0,"), LessonError);
}

TEST_CASE("a learner who changed the model instead of scheduling it is told so") {
  LessonSession s(parse_lesson(kHead + kModels +
                                   checkpoint("id=c model=small machine=tiny solution=small_fused",
                                              kGoal + "dram_bytes(learner) <= 0.55 * "
                                                      "dram_bytes(small)\n"),
                               "c.md"));
  const Block& b = first_checkpoint(s);
  LessonSession shrunk(parse_lesson(
      kHead + "```model id=s\nX: [16, 16]\nbias: [16] weight\nY = relu(X + bias)\n```\n"
              "```check model=s\nops(s) == 2\n```\n",
      "s.md"));
  LearnerState state;
  state.graph = shrunk.model("s");
  state.program = shrunk.program("s")->program;
  const CheckpointResult r = s.run_checkpoint(b, state);
  CHECK_FALSE(r.pass);
  CHECK(r.error.find("tensor X is [64, 64] fp32 in the lesson; yours is X [16, 16] fp32") !=
        std::string::npos);
  LearnerState empty;
  CHECK(s.run_checkpoint(b, empty).error.find("no model to check") != std::string::npos);
}

TEST_CASE("a model solution: the learner edits the model") {
  // The learner is to add a ReLU after the add: model `two` is the solution.
  LessonSession s(parse_lesson(
      kHead +
          "```model id=one\nX: [8, 8]\nbias: [8] weight\nY = X + bias\n```\n"
          "```model id=two\nX: [8, 8]\nbias: [8] weight\nY = relu(X + bias)\n```\n"
          "```check model=one\nops(one) == 1\n```\n" +
          checkpoint("id=c model=one solution=two", "goal: g\nhint: h\nops(learner) == 2\n"),
      "c.md"));
  const Block& b = first_checkpoint(s);
  CHECK(s.check_checkpoint(b).pass);
  const auto [text, steps] = s.solution_of(b);
  CHECK(text == "X: [8, 8]\nbias: [8] weight\nY = relu(X + bias)\n");
  CHECK(steps.empty());
}

TEST_CASE("Show me: the solution's model text and canonical steps") {
  LessonSession s(parse_lesson(
      kHead + kModels +
          checkpoint("id=c model=small solution=small_fused", kGoal + "kernels(learner) == 1\n"),
      "c.md"));
  const auto [text, steps] = s.solution_of(first_checkpoint(s));
  CHECK(text == "X: [64, 64]\nbias: [64] weight\nY = relu(X + bias)\n");
  CHECK(steps == "fuse(add0, relu0)");
}

TEST_CASE("progress: a checkpoint is not yet, shown (the lesson's doing) or reached by you") {
  // Issue #26: "Apply these steps" and a loaded solution counted as reaching the goal.
  const Lesson l = parse_lesson(
      kHead + "<!-- step: one -->\n## One\n" + kModels +
          checkpoint("id=c model=small solution=small_fused", kGoal + "kernels(learner) == 1\n"),
      "c.md");
  LessonProgress p(l);
  CHECK(p.checkpoint_state("c") == CheckpointState::NotYet);
  CHECK_FALSE(p.record_checkpoint("c", 100, CheckpointState::NotYet));
  CHECK(p.record_checkpoint("c", 100, CheckpointState::Shown));
  CHECK(p.checkpoint_state("c") == CheckpointState::Shown);
  CHECK_FALSE(p.checkpoint_reached("c"));
  CHECK(p.checkpoints_missing("one").empty());  // shown settles the step
  // Shown stays shown: an edit after "Show me" is not the learner's reach.
  CHECK(p.record_checkpoint("c", 200, CheckpointState::Reached));
  CHECK(p.checkpoint_state("c") == CheckpointState::Shown);
  CHECK_FALSE(p.checkpoint_reached_at("c").has_value());
  const LessonGrade g = p.grade();
  CHECK(g.checkpoints == 1);
  CHECK(g.reached == 0);
  CHECK(g.shown == 1);
  // Reached stays reached.
  LessonProgress mine(l);
  CHECK(mine.record_checkpoint("c", 200, CheckpointState::Reached));
  CHECK(mine.record_checkpoint("c", 300, CheckpointState::Shown));
  CHECK(mine.checkpoint_state("c") == CheckpointState::Reached);
  CHECK(*mine.checkpoint_reached_at("c") == 200);
  // Through JSON; a shown one stays shown.
  LessonProgress q(l);
  CHECK(q.record_checkpoint("c", 100, CheckpointState::Shown));
  LessonProgress r(l);
  r.restore_json(q.to_json());
  CHECK(r.checkpoint_state("c") == CheckpointState::Shown);
  CHECK(r.grade().shown == 1);
  CHECK(std::string(checkpoint_state_name(CheckpointState::Reached)) == "reached by you");
}

TEST_CASE(
    "progress: a step with a checkpoint is done when it is reached and its predictions made") {
  const Lesson l = parse_lesson(
      kHead + "<!-- step: one -->\n## One\n" + kModels +
          checkpoint("id=c model=small solution=small_fused", kGoal + "kernels(learner) == 1\n") +
          "<!-- step: two -->\n## Two\n",
      "c.md");
  LessonProgress p(l);
  CHECK(p.checkpoints_missing("one") == std::vector<std::string>{"c"});
  CHECK(p.mark_completed(100) == 0);
  CHECK_FALSE(p.record_checkpoint("nope", 100));
  CHECK(p.record_checkpoint("c", 100));
  CHECK(p.record_checkpoint("c", 200));  // reached once: the first time stays
  CHECK(*p.checkpoint_reached_at("c") == 100);
  CHECK(p.mark_completed(300) == 1);  // step one; step two has nothing to reach
  CHECK(p.is_done("one"));
  CHECK_FALSE(p.is_done("two"));

  const nlohmann::json j = p.to_json();
  CHECK(j["checkpoints"] ==
        nlohmann::json::parse(R"([{"id": "c", "reached": "1970-01-01T00:01:40Z", "by": "you"}])"));
  LessonProgress q(l);
  q.restore_json(j);
  CHECK(q.checkpoint_reached("c"));
  // Progress written before checkpoints existed restores with none reached.
  nlohmann::json old = j;
  old.erase("checkpoints");
  q.restore_json(old);
  CHECK_FALSE(q.checkpoint_reached("c"));
  nlohmann::json twice = j;
  twice["checkpoints"].push_back(twice["checkpoints"][0]);
  CHECK_THROWS_WITH_AS(q.restore_json(twice),
                       "lesson progress: /checkpoints/1/id: checkpoint 'c' is given twice",
                       ProgressError);
  p.reset();
  CHECK_FALSE(p.checkpoint_reached("c"));
}

TEST_CASE("the terminal shows the goal and keeps the hint for after a failed attempt") {
  const Lesson l =
      parse_lesson(kHead + "<!-- step: one -->\n## One\n" + kModels +
                       checkpoint("id=c model=small solution=small_fused",
                                  "goal: Fuse it.\nhint: the secret step\nkernels(learner) == 1\n"),
                   "c.md");
  const std::string shown = render_for_terminal(l);
  CHECK(shown.find("1 check, 1 checkpoint") != std::string::npos);
  CHECK(shown.find("goal: Fuse it.") != std::string::npos);
  CHECK(shown.find("the secret step") == std::string::npos);
  RenderOptions answers;
  answers.answers = true;
  CHECK(render_for_terminal(l, answers).find("hint: the secret step") != std::string::npos);
}

TEST_CASE("mutants of a checkpoint's checks, as the solution evaluates them") {
  LessonSession s(parse_lesson(kHead + kModels +
                                   checkpoint("id=c model=small solution=small_fused",
                                              kGoal + "bytes(learner) <= 3 * 16384\n"),
                               "c.md"));
  const CheckpointCheck c = s.check_checkpoint(first_checkpoint(s));
  REQUIRE(c.pass);
  // 2·16384 + 256 against a bound of 3·16384: moved 10% towards it (44236.8) it still holds.
  const std::vector<Mutant> m = mutate_check(c.solution.checks[0]);
  REQUIRE(m.size() == 2);
  CHECK_FALSE(m[0].killed);
  CHECK(m[1].killed);
}

TEST_CASE("lesson check refuses a checkpoint that the model its step loads already meets") {
  // Issue #26: lesson 1's step 2 named the checkpoint's solution (layer128) first, so entering
  // the step loaded it and the goal showed "reached" before the learner did anything. Here the
  // step names `double` first — a model with twice the rows, which meets "twice the FLOPs".
  const std::string models =
      "```model id=single\nx: [4, 8]\nW: [2, 8] weight\ny = x @ W.T\n```\n"
      "```check model=single\nops(single) == 1\n```\n";
  const std::string step =
      "<!-- step: grow -->\n## Grow\n"
      "```model id=double\nx: [8, 8]\nW: [2, 8] weight\ny = x @ W.T\n```\n" +
      checkpoint("id=twice model=single solution=double",
                 "goal: Twice the FLOPs.\nhint: Double the rows.\n"
                 "flops(learner) == 2 * flops(single)\n");
  LessonSession s(parse_lesson(kHead + models + step, "c.md"));
  const CheckpointCheck c = s.check_checkpoint(first_checkpoint(s));
  CHECK_FALSE(c.pass);
  CHECK(c.entry_model == "double");
  CHECK(c.error ==
        "entering step 'grow' loads model double, which already meets the goal: the learner "
        "would reach it by pressing Next (start the step on single, or name double later in the "
        "step)");
  // Named after the checkpoint, the step starts on its model (`single`, which the checkpoint
  // block names first): refused no more.
  const std::string fixed = "<!-- step: grow -->\n## Grow\n" +
                            checkpoint("id=twice model=single solution=double",
                                       "goal: Twice the FLOPs.\nhint: Double the rows.\n"
                                       "flops(learner) == 2 * flops(single)\n") +
                            "```model id=double\nx: [8, 8]\nW: [2, 8] weight\ny = x @ W.T\n```\n";
  LessonSession ok(parse_lesson(kHead + models + fixed, "c.md"));
  CHECK(ok.check_checkpoint(first_checkpoint(ok)).pass);
}

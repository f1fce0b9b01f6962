// `tilescope-cli lesson check|show|run` with predict blocks: the answer stays hidden unless
// --answers (or the learner's own --predict) asks for it; lessons are found by number; a headless
// run grades predictions and reports progress.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <filesystem>
#include <string>

namespace {

using tilescope::test::run_cli;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// x [37, 41] @ W.T with W [43, 41]: flops(matmul0) = 2·37·43·41 = 130462, shown as 130.5 kFLOP.
// Neither "130462" nor "130.5" occurs anywhere else in the file or in what the CLI prints
// about it (line numbers run to 29; the model prints as 37, 41, 43).
const std::string kLesson =
    "---\ntitle: Hidden answers\nlevel: beginner\nminutes: 10\n---\n"
    "```model id=m\nx: [37, 41]\nW: [43, 41] weight\ny = x @ W.T\n```\n"
    "### Step 1: Count\n"
    "```check\nops(m) == 1\n```\n"   // 12-14
    "```predict id=flops model=m\n"  // 15
    "question: How many FLOPs does the MatMul do?\nanswer: flops(matmul0)\nwithin 5%\n"
    "unit: FLOP\nexplain: Two per multiply-add, for each of the outputs.\n```\n"
    "### Step 2: Pick\n"
    "```predict id=kind\n"  // 23
    "question: Which kind of op is it?\nchoices: Add | MatMul\nanswer: kind(matmul0)\n"
    "explain: It multiplies matrices.\n```\n";

std::string lesson_path() {
  static const std::string path =
      tilescope::test::write_scratch_file("hidden.md", kLesson).string();
  return path;
}

}  // namespace

TEST_CASE("lesson check: a predict answer is computed but not printed without --answers") {
  const auto hidden = run_cli("lesson check '" + lesson_path() + "'");
  INFO(hidden.out);
  CHECK(hidden.code == 0);
  CHECK(has(hidden.out, "PASS  15: predict flops: answer computed (hidden; --answers shows it)"));
  CHECK(has(hidden.out, "PASS  23: predict kind: answer computed (hidden; --answers shows it)"));
  CHECK(has(hidden.out, "1 of 1 checks pass, 2 of 2 predict answers computed"));
  CHECK_FALSE(has(hidden.out, "130462"));
  CHECK_FALSE(has(hidden.out, "130.5"));
  CHECK_FALSE(has(hidden.out, "B) MatMul"));

  const auto shown = run_cli("lesson check --answers '" + lesson_path() + "'");
  INFO(shown.out);
  CHECK(shown.code == 0);
  CHECK(has(shown.out, "flops(matmul0) = 130.5 kFLOP within 5%"));
  CHECK(has(shown.out, "kind(matmul0) = B) MatMul"));
}

TEST_CASE("lesson check --mutate grades slipped predictions, and says why a choice has none") {
  const auto r = run_cli("lesson check --mutate '" + lesson_path() + "'");
  INFO(r.out);
  CHECK(r.code == 0);
  // ops(m) == 1: 3 mutants; flops within 5%: 2x, half, 0 — 6 in all, every one killed.
  CHECK(has(r.out, "6 mutants of 1 checks and 2 predict blocks: 6 killed, 0 survived"));
  CHECK(has(r.out, ":23: predict kind is multiple choice: graded by the exact choice"));
  CHECK_FALSE(has(r.out, "130.5"));
  // A tolerance of 60% passes half the answer.
  std::string loose = kLesson;
  loose.replace(loose.find("within 5%"), 9, "within 60%");
  const auto path = tilescope::test::write_scratch_file("loose.md", loose);
  const auto m = run_cli("lesson check --mutate '" + path.string() + "'");
  INFO(m.out);
  CHECK(m.code == 1);
  CHECK(has(m.out, path.string() + ":15: survives: predict flops (within 60%)"));
  CHECK(has(m.out, "    still passes with a prediction of half the answer\n"));
  CHECK(has(m.out, "6 mutants of 1 checks and 2 predict blocks: 5 killed, 1 survived"));
}

TEST_CASE("lesson show hides the answer and the explanation unless --answers") {
  const auto r = run_cli("lesson show '" + lesson_path() + "'");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(has(r.out,
            "Steps:\n  1. Count  [step-1] 1 check, 1 prediction\n"
            "  2. Pick  [step-2] 0 checks, 1 prediction\n"));
  CHECK(has(r.out, "question: How many FLOPs does the MatMul do?"));
  CHECK(has(r.out, "answer: (hidden until you answer; --answers shows it)"));
  CHECK(has(r.out, "choices: A) Add | B) MatMul"));
  CHECK_FALSE(has(r.out, "flops(matmul0)"));
  CHECK_FALSE(has(r.out, "Two per multiply-add"));
  const auto a = run_cli("lesson show --answers '" + lesson_path() + "'");
  INFO(a.out);
  CHECK(has(a.out, "answer: flops(matmul0)   → 130.5 kFLOP within 5%"));
  CHECK(has(a.out, "explain: Two per multiply-add"));
  CHECK(has(a.out, "answer: kind(matmul0)   → B) MatMul"));
}

TEST_CASE("lesson show and run find a lesson by its number") {
  const auto two = run_cli("lesson show 2");
  CHECK(two.code == 0);
  CHECK(two.out.rfind("Data movement is the bottleneck — fusion\n", 0) == 0);
  CHECK(run_cli("lesson show 02").out == two.out);
  const auto none = run_cli("lesson show 99");
  CHECK(none.code == 1);
  CHECK(has(none.out, "lesson show: no lesson 99 in '"));
  CHECK(has(none.out, "lessons' (no 99-*.md)"));
  // A folder given to `lesson check` stands for its lessons (two quick ones here: the whole
  // curriculum is played by the lesson suite).
  const auto source = std::filesystem::path(TILESCOPE_SOURCE_DIR) / "lessons";
  const auto dir = tilescope::test::scratch_dir() / "two-lessons";
  std::filesystem::create_directories(dir);
  for (const char* name : {"01-model-to-graph.md", "06-training-graphs.md"})
    std::filesystem::copy_file(source / name, dir / name,
                               std::filesystem::copy_options::overwrite_existing);
  const auto folder = run_cli("lesson check --quiet '" + dir.string() + "'");
  CHECK(folder.code == 0);
  CHECK(has(folder.out, "2 of 2 lessons pass"));
  const auto missing = run_cli("lesson run /nonexistent/x.md");
  CHECK(missing.code == 1);
  CHECK(has(missing.out, "/nonexistent/x.md"));
}

TEST_CASE("lesson run plays the steps, grades --predict, and reports progress") {
  const auto quiet = run_cli("lesson run '" + lesson_path() + "'");
  INFO(quiet.out);
  CHECK(quiet.code == 0);
  CHECK(has(quiet.out, "model m: 1 op, 130.5 kFLOP, at least"));  // the model's own count
  CHECK(has(quiet.out, "[1/2] Count  (step-1)\n  PASS  13: ops(m) == 1\n"));
  CHECK(has(quiet.out, "answer hidden: predict it with --predict flops=VALUE (unit: FLOP)"));
  CHECK(has(quiet.out, "0 of 2 steps done by their checks, predictions and checkpoints"));
  CHECK(has(quiet.out, "step step-1 waits for a prediction: flops"));
  CHECK_FALSE(has(quiet.out, "kFLOP within"));

  // 120k against 130462: |120000 − 130462| / 130462 = 8.019% off.
  const auto played =
      run_cli("lesson run '" + lesson_path() + "' --predict flops=120k --predict kind=b");
  INFO(played.out);
  CHECK(played.code == 0);
  CHECK(has(played.out, "your prediction 120 kFLOP: WRONG — 8.019% off, not within 5%"));
  CHECK(has(played.out, "answer: 130.5 kFLOP within 5%   (flops(matmul0))"));
  CHECK(has(played.out, "why: Two per multiply-add, for each of the outputs."));
  CHECK(has(played.out, "your prediction B) MatMul: RIGHT"));
  CHECK(has(played.out, "2 predictions made, 1 right; 2 of 2 steps done"));

  const auto bad = run_cli("lesson run '" + lesson_path() + "' --predict flops=lots");
  CHECK(bad.code == 1);
  CHECK(has(bad.out,
            "lesson run: --predict flops=lots: 'lots' does not start with a number: type "
            "a number of FLOPs"));
  CHECK_FALSE(has(bad.out, "PASS"));  // refused before anything is played
  const auto unknown = run_cli("lesson run '" + lesson_path() + "' --predict nope=3");
  CHECK(unknown.code == 1);
  CHECK(has(unknown.out, "expected ID=VALUE with ID a predict block of"));
  CHECK(has(unknown.out, "(flops, kind)"));
  const auto answers = run_cli("lesson run '" + lesson_path() + "' --answers");
  CHECK(has(answers.out, "answer: B) MatMul   (kind(matmul0))"));
}

TEST_CASE("lesson run --try judges the learner's own steps for a checkpoint") {
  // Lesson 2's checkpoint on `small` (64 × 64 on tiny): fusing the add and the ReLU reaches it; a
  // tiling alone does not, and the hint follows; a refused step is said plainly.
  const auto tried = run_cli(
      "lesson run 2 --try fewer-dram-bytes='tile(i, 8)' --try fuse-layer='fuse(matmul0, add0, "
      "relu0)'");
  INFO(tried.out);
  CHECK(tried.code == 0);
  CHECK(has(tried.out, "checkpoint fewer-dram-bytes: On `tiny`"));
  CHECK(has(tried.out, "your steps on small: tile(i, 8)"));
  CHECK(has(tried.out, "NOT YET\n    hint: The temporary between the add and the ReLU"));
  CHECK(has(tried.out, "your steps on layer: fuse(matmul0, add0, relu0)"));
  CHECK(has(tried.out, "step simulate waits for a checkpoint: fewer-dram-bytes"));
  CHECK_FALSE(has(tried.out, "step gemm-epilogue waits for a checkpoint"));
  // Without --try a checkpoint shows the lesson's solution, which is not the learner's progress.
  const auto shown = run_cli("lesson run 2");
  CHECK(has(shown.out, "the lesson's solution (small_fused): fuse(add0, relu0)"));
  CHECK(has(shown.out, "step simulate waits for a checkpoint: fewer-dram-bytes"));
  CHECK_FALSE(has(shown.out, "hint:"));
  const auto refused = run_cli("lesson run 2 --try fuse-layer='fuse(relu0, add0)'");
  CHECK(refused.code == 1);
  CHECK(has(refused.out, "step fuse(relu0, add0) is refused"));
  const auto unknown = run_cli("lesson run 2 --try nope=x");
  CHECK(unknown.code == 1);
  CHECK(has(unknown.out, "--try nope=x: expected ID=STEPS with ID a checkpoint of"));
  CHECK(has(unknown.out, "(fuse-epilogue, fewer-dram-bytes, fuse-layer)"));
}

TEST_CASE("lesson check names the file and line of a checkpoint its step's model already meets") {
  const auto lesson = tilescope::test::write_scratch_file(
      "entry-meets.md",
      "---\ntitle: T\nlevel: beginner\nminutes: 5\n---\n"                           // 1-5
      "```model id=single\nx: [4, 8]\nW: [2, 8] weight\ny = x @ W.T\n```\n"       // 6-10
      "```check model=single\nops(single) == 1\n```\n"                             // 11-13
      "<!-- step: grow -->\n## Grow\n"                                              // 14-15
      "```model id=double\nx: [8, 8]\nW: [2, 8] weight\ny = x @ W.T\n```\n"       // 16-20
      "```checkpoint id=twice model=single solution=double\n"                       // 21
      "goal: Twice the FLOPs.\nhint: Double the rows.\nflops(learner) == 2 * flops(single)\n```\n");
  const auto r = run_cli("lesson check '" + lesson.string() + "'");
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(has(r.out, lesson.string() + ":21: error: entering step 'grow' loads model double"));
}

TEST_CASE("lesson grade: two learners' sessions, one row each, against a hand count") {
  namespace fs = std::filesystem;
  const fs::path dir = tilescope::test::scratch_dir() / "grade-lessons";
  fs::create_directories(dir);
  // Two steps: a prediction (2 · 4 · 2 · 8 = 128 FLOPs), then a checkpoint.
  std::ofstream(dir / "01-g.md")
      << "---\ntitle: Graded\nlevel: beginner\nminutes: 5\n---\n"
         "<!-- step: guess -->\n## Guess\n"
         "```model id=m\nx: [4, 8]\nW: [2, 8] weight\ny = relu(x @ W.T)\n```\n"
         "```predict id=flops model=m\nquestion: q\nanswer: flops(matmul0)\nwithin 10%\n"
         "unit: FLOP\nexplain: e\n```\n"
         "```check model=m\nops(m) == 2\n```\n"
         "<!-- step: fuse -->\n## Fuse\n"
         "```checkpoint id=one model=m solution=fused\ngoal: One kernel.\nhint: fuse.\n"
         "kernels(learner) == 1\n```\n"
         "```steps id=fused model=m\nfuse(matmul0, relu0)\n```\n";
  // alice: right at the first try, reached the goal herself, both steps done. bob: right at his
  // second try, the goal only shown, one step done. carol: never opened the lesson.
  const auto session = [](const std::string& prediction, const std::string& checkpoint,
                          const std::string& steps) {
    return std::string(R"({"schema": "tilescope-session/1", "lesson_progress": {"01-g": )") +
           R"({"lesson": "01-g", "steps": [)" + steps + R"(], "predictions": [)" + prediction +
           R"(], "checkpoints": [)" + checkpoint + "]}}}";
  };
  const std::string t = R"("2026-12-01T09:30:00Z")";
  const auto alice = tilescope::test::write_scratch_file(
      "alice.json",
      session(R"({"id": "flops", "input": "128", "pass": true, "attempts": 1, "revealed": false,
                  "when": )" + t + R"(, "value": 128, "answer": 128, "relative_error": 0})",
              R"({"id": "one", "reached": )" + t + R"(, "by": "you"})",
              R"({"id": "guess", "done": )" + t + R"(}, {"id": "fuse", "done": )" + t + "}"));
  const auto bob = tilescope::test::write_scratch_file(
      "bob.json",
      session(R"({"id": "flops", "input": "130", "pass": true, "attempts": 2, "revealed": false,
                  "when": )" + t + R"(, "value": 130, "answer": 128, "relative_error": 0.015625})",
              R"({"id": "one", "reached": )" + t + R"(, "by": "shown"})",
              R"({"id": "guess", "done": )" + t + "}"));
  const auto carol =
      tilescope::test::write_scratch_file("carol.json", R"({"schema": "tilescope-session/1"})");
  const auto r = run_cli("lesson grade --dir '" + dir.string() + "' --csv '" + alice.string() +
                         "' '" + bob.string() + "' '" + carol.string() + "'");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out ==
        "learner,lesson,title,steps_done,steps,predictions,first_try,after_retries,revealed,open,"
        "checkpoints,reached,shown,not_yet\n"
        "alice,01-g,Graded,2,2,1,1,0,0,0,1,1,0,0\n"
        "bob,01-g,Graded,1,2,1,0,1,0,0,1,0,1,0\n"
        "carol,01-g,Graded,0,2,1,0,0,0,1,1,0,0,1\n");
  const auto j = run_cli("lesson grade --dir '" + dir.string() + "' --json '" + bob.string() + "'");
  CHECK(has(j.out, "\"after_retries\": 1"));
  CHECK(has(j.out, "\"learner\": \"bob\""));
}

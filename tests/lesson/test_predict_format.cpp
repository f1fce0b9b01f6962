// Predict blocks in lesson files: a well-formed numeric and multiple-choice block parse to their
// fields, and each malformed one is rejected at the file:line:col of its mistake.
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";  // lines 1-5

const std::string kModel =
    "```model id=m\n"  // line 6
    "x: [4, 8]\n"
    "W: [2, 8] weight\n"
    "y = relu(x @ W.T)\n"
    "```\n"       // line 10
    "```check\n"  // line 11
    "ops(m) == 2\n"
    "```\n";  // line 13

// A lesson whose predict block opens at line 14 with `info` and holds `body` (lines 15...).
std::string lesson_with(const std::string& info, const std::string& body) {
  return kHead + kModel + "```predict " + info + "\n" + body + "```\n";
}

// The error the lesson raises when parsed and loaded by the checker, "" when it loads.
std::string load_error(const std::string& text) {
  try {
    LessonSession s(parse_lesson(text, "bad.md"));
  } catch (const LessonError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

const std::string kNumeric =
    "question: How many FLOPs does the MatMul do?\n"  // 15
    "answer: flops(matmul0)\n"                        // 16
    "within 10%\n"                                    // 17
    "unit: FLOP\n"                                    // 18
    "explain: 2 per multiply-add,\n"                  // 19
    "  4 x 2 outputs of 8 each.\n";                   // 20

}  // namespace

TEST_CASE("predict format: a numeric block's fields, in any order, explain running to the end") {
  const Lesson l = parse_lesson(lesson_with("id=flops model=m", kNumeric), "ok.md");
  REQUIRE(l.blocks.size() == 3);
  const Block& b = l.blocks[2];
  CHECK(b.kind == BlockKind::Predict);
  CHECK(b.loc.line == 14);
  const PredictBlock& p = b.predict;
  CHECK(p.id == "flops");
  CHECK(p.question == "How many FLOPs does the MatMul do?");
  CHECK(p.answer_text == "flops(matmul0)");
  CHECK(p.answer.kind == Expr::Kind::Call);
  CHECK(p.answer_loc.line == 16);
  CHECK(p.answer_loc.col == 9);
  CHECK(p.relative);
  CHECK(p.tolerance == doctest::Approx(0.10));
  CHECK(p.unit == "FLOP");
  CHECK(p.explain == "2 per multiply-add,\n4 x 2 outputs of 8 each.");
  CHECK(p.explain_line == 19);
  CHECK_FALSE(p.is_choice());
  CHECK(load_error(lesson_with("id=flops model=m", kNumeric)) == "");
  // Absolute tolerances are in the unit: `within 1 KiB` is 1024 bytes; for %, points.
  const Lesson a = parse_lesson(
      lesson_with("id=b", "unit: bytes\nwithin 1 KiB\nquestion: q\nanswer: bytes(m)\nexplain: e\n"),
      "ok.md");
  CHECK_FALSE(a.blocks[2].predict.relative);
  CHECK(a.blocks[2].predict.tolerance == 1024);
  const Lesson pc = parse_lesson(
      lesson_with("id=s", "question: q\nanswer: share(matmul0)\nunit: %\nwithin 2\nexplain: e\n"),
      "ok.md");
  CHECK(pc.blocks[2].predict.tolerance == doctest::Approx(0.02));
}

TEST_CASE("predict format: multiple choice by letter, by number, or by an expression") {
  const std::string q = "question: Which op does the arithmetic?\nchoices: MatMul | ReLU | Add\n";
  const Lesson l1 = parse_lesson(lesson_with("id=c", q + "answer: A\nexplain: e\n"), "ok.md");
  CHECK(l1.blocks[2].predict.choices == std::vector<std::string>{"MatMul", "ReLU", "Add"});
  CHECK(l1.blocks[2].predict.answer_choice == 0);
  const Lesson l2 = parse_lesson(lesson_with("id=c", q + "answer: 3\nexplain: e\n"), "ok.md");
  CHECK(l2.blocks[2].predict.answer_choice == 2);
  const Lesson l4 = parse_lesson(
      lesson_with("id=c", "question: q\nchoices: 1 | 2 | 16\nanswer: 16\nexplain: e\n"), "ok.md");
  CHECK(l4.blocks[2].predict.answer_choice == 2);
  const Lesson l3 =
      parse_lesson(lesson_with("id=c", q + "answer: kind(matmul0)\nexplain: e\n"), "ok.md");
  CHECK(l3.blocks[2].predict.answer_choice == -1);
  CHECK(l3.blocks[2].predict.answer.text == "kind");
  CHECK(load_error(lesson_with("id=c", q + "answer: kind(matmul0)\nexplain: e\n")) == "");
}

// [SECTION] Malformed predict blocks: each error names file:line:col.

TEST_CASE("predict malformed: block attributes") {
  // 1. No id: progress could not record the answer.
  CHECK(starts_with(load_error(lesson_with("model=m", kNumeric)),
                    "bad.md:14:1: error: a predict block needs id=NAME so the learner's progress"));
  // 2. An attribute a predict block does not take.
  CHECK(starts_with(load_error(lesson_with("id=p unit=x", kNumeric)),
                    "bad.md:14:17: error: unknown attribute 'unit' on a predict block"));
  // 3. An id another block already has.
  CHECK(starts_with(load_error(lesson_with("id=m", kNumeric)),
                    "bad.md:14:12: error: id 'm' is already used by the model block at line 6"));
  // 4. Two predict blocks with one id.
  CHECK(starts_with(
      load_error(lesson_with("id=p", kNumeric) + "```predict id=p\n" + kNumeric + "```\n"),
      "bad.md:22:12: error: id 'p' is already used by the predict block at line 14"));
  // 5. A machine the presets do not have.
  CHECK(starts_with(load_error(lesson_with("id=p machine=nosuch", kNumeric)),
                    "bad.md:14:17: error: machine=nosuch"));
}

TEST_CASE("predict malformed: keys") {
  // 6. A misspelt key, with the key it was meant to be.
  CHECK(starts_with(
      load_error(
          lesson_with("id=p", "question: q\nanwser: flops(matmul0)\nwithin 5%\nexplain: e\n")),
      "bad.md:16:1: error: unknown key 'anwser' in a predict block; did you mean 'answer'?"));
  // 7. A line that is not `key: value`.
  CHECK(starts_with(
      load_error(lesson_with("id=p", "question: q\n  the answer is flops\nexplain: e\n")),
      "bad.md:16:3: error: a predict line reads 'key: value'"));
  // 8. A key given twice.
  CHECK(starts_with(load_error(lesson_with("id=p", "question: q\nquestion: r\nexplain: e\n")),
                    "bad.md:16:1: error: 'question:' is given twice in this predict block (first "
                    "at line 15)"));
  // 9. Two tolerance lines.
  CHECK(starts_with(load_error(lesson_with("id=p",
                                           "question: q\nanswer: flops(matmul0)\nwithin "
                                           "5%\nwithin 6%\nexplain: e\n")),
                    "bad.md:18:1: error: 'within' is given twice"));
  // 10. An empty value.
  CHECK(starts_with(load_error(lesson_with("id=p", "question:\nexplain: e\n")),
                    "bad.md:15:10: error: 'question:' is empty"));
}

TEST_CASE("predict malformed: missing parts") {
  // 11. No question.
  CHECK(starts_with(
      load_error(lesson_with("id=p", "answer: flops(matmul0)\nwithin 5%\nexplain: e\n")),
      "bad.md:14:1: error: a predict block needs a 'question:' line"));
  // 12. No answer.
  CHECK(starts_with(load_error(lesson_with("id=p", "question: q\nwithin 5%\nexplain: e\n")),
                    "bad.md:14:1: error: a predict block needs an 'answer:' line"));
  // 13. No explanation.
  CHECK(starts_with(
      load_error(lesson_with("id=p", "question: q\nanswer: flops(matmul0)\nwithin 5%\n")),
      "bad.md:14:1: error: a predict block needs an 'explain:' line"));
  // 14. An explanation with nothing in it.
  CHECK(starts_with(load_error(lesson_with(
                        "id=p", "question: q\nanswer: flops(matmul0)\nwithin 5%\nexplain:\n\n")),
                    "bad.md:18:9: error: the explanation is empty"));
  // 15. A numeric answer without a tolerance.
  CHECK(starts_with(
      load_error(lesson_with("id=p", "question: q\nanswer: flops(matmul0)\nexplain: e\n")),
      "bad.md:14:1: error: a predict block needs a tolerance line"));
}

TEST_CASE("predict malformed: answers") {
  // 16. A typed number is no computed answer.
  CHECK(starts_with(
      load_error(lesson_with("id=p", "question: q\nanswer: 2 * 64\nwithin 5%\nexplain: e\n")),
      "bad.md:16:9: error: the answer '2 * 64' is typed, not computed"));
  // 17. An answer that does not parse, at its column.
  CHECK(starts_with(load_error(lesson_with(
                        "id=p", "question: q\nanswer: flops(matmul0\nwithin 5%\nexplain: e\n")),
                    "bad.md:16:22: error: expected ')' to close flops("));
  // 18. An answer naming an op the model does not have (found when the checker loads).
  CHECK(starts_with(load_error(lesson_with(
                        "id=p", "question: q\nanswer: flops(matmul9)\nwithin 5%\nexplain: e\n")),
                    "bad.md:16:15: error: model m has no op 'matmul9'; did you mean 'matmul0'?"));
  // 19. An answer that simulates, in a block without a machine.
  CHECK(starts_with(load_error(lesson_with(
                        "id=p", "question: q\nanswer: dram_bytes(m)\nwithin 5%\nexplain: e\n")),
                    "bad.md:16:9: error: dram_bytes() simulates on a machine"));
}

TEST_CASE("predict malformed: tolerances and units") {
  const std::string qa = "question: q\nanswer: flops(matmul0)\n";  // 15-16
  // 20. Not a number.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "within ten%\nexplain: e\n")),
                    "bad.md:17:8: error: bad tolerance 'ten%'"));
  // 21. Nothing after `within`.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "within\nexplain: e\n")),
                    "bad.md:17:7: error: expected a tolerance after 'within'"));
  // 22. Negative.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "within -5%\nexplain: e\n")),
                    "bad.md:17:8: error: a tolerance cannot be negative"));
  // 23. So wide that any guess of the right sign passes.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "within 100%\nexplain: e\n")),
                    "bad.md:17:8: error: a relative tolerance of 100% would pass any guess"));
  // 24. An absolute tolerance in a unit the answer does not have.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "unit: bytes\nwithin 2 ms\nexplain: e\n")),
                    "bad.md:18:8: error: bad tolerance '2 ms'"));
  // 25. A unit tilescope does not know, with the one meant.
  CHECK(starts_with(load_error(lesson_with("id=p", qa + "within 5%\nunit: byte\nexplain: e\n")),
                    "bad.md:18:7: error: unknown unit 'byte'; did you mean 'bytes'?"));
}

TEST_CASE("predict malformed: multiple choice") {
  const std::string q = "question: Which?\n";  // 15
  // 26. An empty choice, at its column.
  CHECK(
      starts_with(load_error(lesson_with("id=p", q + "choices: A |  | C\nanswer: A\nexplain: e\n")),
                  "bad.md:16:13: error: choice 2 is empty"));
  // 27. One choice is no choice.
  CHECK(starts_with(load_error(lesson_with("id=p", q + "choices: only\nanswer: A\nexplain: e\n")),
                    "bad.md:16:10: error: a multiple-choice question needs at least two choices"));
  // 28. The same choice twice.
  CHECK(starts_with(
      load_error(lesson_with("id=p", q + "choices: x | y | x\nanswer: A\nexplain: e\n")),
      "bad.md:16:18: error: choice 3 'x' repeats choice 1"));
  // 29. A letter past the last choice.
  CHECK(starts_with(load_error(lesson_with("id=p", q + "choices: x | y\nanswer: C\nexplain: e\n")),
                    "bad.md:17:9: error: answer C is out of range: the choices are A to B"));
  // 30. A number past the last choice.
  CHECK(
      starts_with(load_error(lesson_with("id=p", q + "choices: x | y\nanswer: 3\nexplain: e\n")),
                  "bad.md:17:9: error: answer 3 is out of range: the choices are numbered 1 to 2"));
  // 30b. With numeric choices a number names a choice by its value.
  CHECK(starts_with(
      load_error(lesson_with("id=p", q + "choices: 1 | 2 | 16\nanswer: 4\nexplain: e\n")),
      "bad.md:17:9: error: answer 4 is none of the choices: they are numbers"));
  // 31. A tolerance on a right-or-wrong answer.
  CHECK(starts_with(
      load_error(lesson_with("id=p", q + "choices: x | y\nanswer: A\nwithin 5%\nexplain: e\n")),
      "bad.md:18:1: error: 'within' is for numeric answers"));
  // 32. A unit on one.
  CHECK(starts_with(
      load_error(lesson_with("id=p", q + "choices: x | y\nanswer: A\nunit: x\nexplain: e\n")),
      "bad.md:18:1: error: 'unit:' is for numeric answers"));
  // 33. `choices:` with nothing after it.
  CHECK(starts_with(load_error(lesson_with("id=p", q + "choices:\nanswer: A\nexplain: e\n")),
                    "bad.md:16:9: error: 'choices:' is empty"));
}

TEST_CASE("predict format: a predict block is never closed") {
  CHECK(starts_with(load_error(kHead + kModel + "```predict id=p\nquestion: q\n"),
                    "bad.md:14:1: error: this ``` block is never closed"));
}

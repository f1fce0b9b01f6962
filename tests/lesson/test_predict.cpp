// Grading predictions: learner quantities with units, numeric answers within a relative or an
// absolute tolerance, multiple choice, the self-check `lesson check` makes, and the mutants of a
// predict block. Every expected value is a hand count written beside it.
#include "sim/lesson/mutate.h"
#include "sim/lesson/predict.h"
#include "sim/lesson/quantity.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";
// x [2, 3] @ W.T with W [4, 3], then ReLU: the MatMul does 2·2·4·3 = 48 FLOPs, the ReLU 2·4 = 8;
// x is 1024 × 1024 floats in `big`: 4 MiB.
const std::string kModels =
    "```model id=m\nx: [2, 3]\nW: [4, 3] weight\ny = relu(x @ W.T)\n```\n"
    "```model id=big\nx: [1024, 1024]\ny = relu(x)\n```\n"
    "```check model=m\nops(m) == 2\n```\n";

// A session over a lesson with one predict block (id p, default model m) holding `body`.
struct OnePredict {
  explicit OnePredict(const std::string& body)
      : session(
            parse_lesson(kHead + kModels + "```predict id=p model=m\n" + body + "```\n", "p.md")) {
    for (const Block& b : session.lesson().blocks)
      if (b.kind == BlockKind::Predict) block = &b;
    REQUIRE(block != nullptr);
    answer = evaluate_predict(session, *block);
  }
  Grade operator()(const std::string& input) const { return grade(block->predict, answer, input); }
  LessonSession session;
  const Block* block = nullptr;
  Answer answer;
};

}  // namespace

TEST_CASE("quantities: a learner's number with units, in the unit's base") {
  auto value = [](const char* text, const char* unit) {
    const Quantity q = parse_quantity(text, unit);
    INFO(text << " in '" << unit << "': " << q.error);
    REQUIRE(q.ok);
    return q.value;
  };
  CHECK(value("2.5 MiB", "bytes") == 2.5 * 1024 * 1024);
  CHECK(value("2.5MiB", "bytes") == 2.5 * 1024 * 1024);
  CHECK(value("512 KB", "bytes") == 512 * 1000);
  CHECK(value("4e6", "bytes") == 4000000);
  CHECK(value("1,048,576", "bytes") == 1024 * 1024);
  CHECK(value("3 gib", "bytes") == 3.0 * 1024 * 1024 * 1024);
  CHECK(value("37%", "%") == doctest::Approx(0.37));
  CHECK(value("37", "%") == doctest::Approx(0.37));  // a bare number is in percent too
  CHECK(value("37%", "") == doctest::Approx(0.37));
  CHECK(value("3x", "x") == 3);
  CHECK(value("3 \xC3\x97", "x") == 3);  // ×
  CHECK(value("2.5", "x") == 2.5);
  CHECK(value("1.2 ms", "s") == doctest::Approx(1.2e-3));
  CHECK(value("350 us", "s") == doctest::Approx(350e-6));
  CHECK(value("350 \xC2\xB5s", "s") == doctest::Approx(350e-6));  // µs
  CHECK(value("0.004", "s") == doctest::Approx(0.004));
  CHECK(value("1.5 GFLOP", "FLOP") == 1.5e9);
  CHECK(value("67 TFLOP/s", "FLOP/s") == 67e12);
  CHECK(value("900 GB/s", "B/s") == 900e9);
  CHECK(value("-2", "") == -2);
  // A prefix alone: decimal multiples of the unit.
  CHECK(value("120k", "FLOP") == 120e3);
  CHECK(value("4M", "bytes") == 4 * 1024 * 1024);  // as machine files read "48K"
  CHECK(value("3k", "") == 3000);
}

TEST_CASE("quantities: input that is not a quantity says what was expected") {
  auto error = [](const char* text, const char* unit) {
    const Quantity q = parse_quantity(text, unit);
    CHECK_FALSE(q.ok);
    return q.error;
  };
  CHECK(error("lots", "bytes") ==
        "'lots' does not start with a number: type a number of bytes, such as '2.5 MiB', '4e6' or "
        "'512 KB'");
  CHECK(
      error("3 ms", "bytes") ==
      "'ms' is not a unit of bytes: type a number of bytes, such as '2.5 MiB', '4e6' or '512 KB'");
  CHECK(error("", "x") == "nothing typed: type a ratio, such as '3x', '2.5' or '4\xC3\x97'");
  CHECK(error("2 MiB", "") ==
        "'MiB' is not a suffix of a plain number: type a number, such as "
        "'2.5', '4e6', '3k' or '37%'");
  CHECK(error("1,00", "") ==
        "',00' is not a suffix of a plain number: type a number, such as '2.5', '4e6', '3k' or "
        "'37%'");
  CHECK(error("2 m", "s").find("is not a unit of time") != std::string::npos);  // milli or minutes?
  CHECK(error("1.2 ms", "%").find("type a percentage") != std::string::npos);
  // Finite as typed, infinite once scaled: refused, not stored as infinity.
  CHECK(error("1e300 PiB", "bytes").rfind("'1e300 PiB' is too large", 0) == 0);
  CHECK(error("1e999", "").rfind("'1e999' is too large", 0) == 0);
}

TEST_CASE("quantities: formatted as a learner writes them, and read back") {
  CHECK(format_quantity(2.25 * 1024 * 1024, "bytes") == "2.25 MiB");
  CHECK(format_quantity(512, "bytes") == "512 B");
  CHECK(format_quantity(64.0 * 1024 * 1024, "bytes") == "64 MiB");
  CHECK(format_quantity(1.2e-3, "s") == "1.2 ms");
  CHECK(format_quantity(350e-6, "s") == "350 \xC2\xB5s");
  CHECK(format_quantity(0.37, "%") == "37%");
  CHECK(format_quantity(2.0 / 3.0 * 3.0045, "x") == "2.003x");
  CHECK(format_quantity(1.5e9, "FLOP") == "1.5 GFLOP");
  CHECK(format_quantity(4.8e12, "B/s") == "4.8 TB/s");
  CHECK(format_quantity(130462, "") == "1.305e+05");
  for (const char* unit : {"bytes", "s", "%", "x", "FLOP", "FLOP/s", "B/s", ""}) {
    const double v = 123456.789;
    const Quantity q = parse_quantity(format_quantity(v, unit), unit);
    CAPTURE(unit);
    REQUIRE(q.ok);
    CHECK(std::fabs(q.value - v) / v < 5e-4);  // 4 significant digits
  }
}

TEST_CASE("grade: a numeric answer within a relative tolerance") {
  const OnePredict p(
      "question: FLOPs of the MatMul?\nanswer: flops(matmul0)\nwithin 10%\n"
      "unit: FLOP\nexplain: 2 per multiply-add.\n");
  REQUIRE(p.answer.ok);
  CHECK(p.answer.value == 2 * 2 * 4 * 3);
  CHECK(p.answer.shown == "48 FLOP");
  const Grade right = p("48");
  CHECK(right.understood);
  CHECK(right.graded);
  CHECK(right.pass);
  CHECK(right.relative_error == 0);
  CHECK(right.explanation == "2 per multiply-add.");
  CHECK(right.answer_shown == "48 FLOP");
  // 10% of 48 is 4.8: the bound itself passes, a hair past it does not.
  CHECK(p("52.8").pass);
  CHECK(p("43.2").pass);
  CHECK_FALSE(p("52.9").pass);
  const Grade wrong = p("60");
  CHECK(wrong.graded);
  CHECK_FALSE(wrong.pass);
  CHECK(wrong.learner == 60);
  CHECK(wrong.relative_error == doctest::Approx(12.0 / 48));
  CHECK(wrong.explanation == "2 per multiply-add.");  // the reveal comes with a wrong answer too
  CHECK(p("0.048 kFLOP").pass);
  // Not a number: no attempt, nothing revealed.
  const Grade junk = p("lots");
  CHECK_FALSE(junk.understood);
  CHECK_FALSE(junk.graded);
  CHECK(junk.message.find("type a number of FLOPs") != std::string::npos);
  CHECK(junk.explanation.empty());
  CHECK(junk.answer_shown.empty());
}

TEST_CASE("grade: absolute tolerances, bytes, and percent") {
  const OnePredict abs("question: q\nanswer: flops(matmul0)\nwithin 5\nexplain: e\n");
  CHECK(abs("53").pass);  // |53 − 48| = 5
  CHECK_FALSE(abs("53.5").pass);
  const OnePredict bytes(
      "question: q\nanswer: tensor_bytes(x, model=big)\nwithin 5%\nunit: bytes\nexplain: e\n");
  REQUIRE(bytes.answer.ok);
  CHECK(bytes.answer.value == 4.0 * 1024 * 1024);
  CHECK(bytes.answer.shown == "4 MiB");
  CHECK(bytes("4 MiB").pass);
  CHECK(bytes("4.2 MB").pass);       // 4 200 000 against 4 194 304: 0.14% off
  CHECK(bytes("4e6").pass);          // 4.6% off
  CHECK_FALSE(bytes("3.9e6").pass);  // 7.0% off
  CHECK(bytes("3.9e6").relative_error == doctest::Approx((4194304.0 - 3.9e6) / 4194304.0));
  // share(matmul0) = 48 / (48 + 8) = 85.71%; within 2 points.
  const OnePredict pct("question: q\nanswer: share(matmul0)\nunit: %\nwithin 2\nexplain: e\n");
  CHECK(pct.answer.value == doctest::Approx(48.0 / 56));
  CHECK(pct.answer.shown == "85.71%");
  CHECK(pct("86%").pass);
  CHECK(pct("84").pass);
  CHECK_FALSE(pct("83").pass);
  CHECK_FALSE(pct("0.857").pass);  // 0.857 percent, not 85.7
}

TEST_CASE("grade: multiple choice by letter, number or text") {
  const OnePredict p(
      "question: Which op does the arithmetic?\nchoices: MatMul | ReLU | Add\n"
      "answer: kind(matmul0)\nexplain: 48 of the 56 FLOPs.\n");
  REQUIRE(p.answer.ok);
  CHECK(p.answer.choice == 0);
  CHECK(p.answer.shown == "A) MatMul");
  for (const char* right : {"A", "a", "1", "matmul", " MatMul "}) {
    CAPTURE(right);
    CHECK(p(right).pass);
  }
  const Grade b = p("B");
  CHECK(b.graded);
  CHECK_FALSE(b.pass);
  CHECK(b.learner_choice == 1);
  CHECK(b.learner_shown == "B) ReLU");
  CHECK(b.answer_shown == "A) MatMul");
  CHECK(b.explanation == "48 of the 56 FLOPs.");
  const Grade d = p("D");
  CHECK_FALSE(d.understood);
  CHECK(
      d.message ==
      "there is no choice D: type a choice: a letter A to C, a number 1 to 3, or a choice's text");
  CHECK_FALSE(p("conv").understood);
  // A number picks the choice with that number: ops(m) is 2, so B.
  const OnePredict by_number(
      "question: q\nchoices: one | two | three\nanswer: ops(m)\nexplain: e\n");
  CHECK(by_number.answer.choice == 1);
  // When the choices are numbers, a number picks the choice of that value: ops(m) = 2 is the
  // first choice here, not the second; the learner types a value too.
  const OnePredict by_value("question: q\nchoices: 2 | 1 | 16\nanswer: ops(m)\nexplain: e\n");
  CHECK(by_value.answer.choice == 0);
  CHECK(by_value("2").learner_choice == 0);
  CHECK(by_value("16").learner_choice == 2);
  CHECK(by_value("b").learner_choice == 1);
  CHECK(by_value("3").message ==
        "there is no choice 3: type a choice: a letter A to C, or one of the numbers");
  // A letter in the block.
  const OnePredict by_letter("question: q\nchoices: one | two | three\nanswer: C\nexplain: e\n");
  CHECK(by_letter("three").pass);
}

TEST_CASE("check_predict: an answer that is computed and passes its own grading") {
  OnePredict ok("question: q\nanswer: flops(matmul0)\nwithin 1%\nexplain: e\n");
  const PredictResult r = check_predict(ok.session, *ok.block);
  CHECK(r.pass);
  CHECK(r.error.empty());
  // 48 / 7 = 6.857142…, shown as 6.857: an exact tolerance fails the learner who types it.
  OnePredict exact("question: q\nanswer: flops(matmul0) / 7\nwithin 0\nexplain: e\n");
  const PredictResult e = check_predict(exact.session, *exact.block);
  CHECK_FALSE(e.pass);
  CHECK(e.error.find("fails its own tolerance (within 0)") != std::string::npos);
  CHECK(e.error.find("6.857") == std::string::npos);  // the answer stays hidden
  // A value that picks no choice.
  OnePredict none("question: q\nchoices: MatMul | Add\nanswer: kind(relu0)\nexplain: e\n");
  const PredictResult n = check_predict(none.session, *none.block);
  CHECK_FALSE(n.pass);
  CHECK(n.error ==
        "the answer kind(relu0) is \"ReLU\", which picks no choice: it must be a "
        "choice's text or a number from 1 to 2");
  // A string where a number was asked.
  OnePredict text("question: q\nanswer: kind(matmul0)\nwithin 1%\nexplain: e\n");
  CHECK(check_predict(text.session, *text.block).error ==
        "the answer kind(matmul0) is not a number");
  // Failing evaluation: division by zero (flops(relu0) − 8 is 0).
  OnePredict zero("question: q\nanswer: 1 / (flops(relu0) - 8)\nwithin 1%\nexplain: e\n");
  CHECK(check_predict(zero.session, *zero.block).error.find("division by zero") == 0);
  CHECK_FALSE(zero("1").graded);
}

TEST_CASE("mutate_predict: a tolerance that passes a factor-2 slip survives") {
  auto survivors = [](const std::string& tolerance) {
    const OnePredict p("question: q\nanswer: flops(matmul0)\nwithin " + tolerance +
                       "\nexplain: e\n");
    std::vector<std::string> out;
    for (const Mutant& m : mutate_predict(p.block->predict, p.answer))
      if (!m.killed) out.push_back(m.what);
    return out;
  };
  // The mutants of 48: 96, 24 and 0.
  CHECK(survivors("10%").empty());
  // 60%: 24 is 50% off, inside; 96 is 100% off and 0 is 100% off.
  CHECK(survivors("60%") == std::vector<std::string>{"a prediction of half the answer"});
  // Absolute 30: 96 is 48 off, 24 is 24 off (inside), 0 is 48 off.
  CHECK(survivors("30") == std::vector<std::string>{"a prediction of half the answer"});
  // Absolute 50: all three inside.
  CHECK(survivors("50").size() == 3);
  // Multiple choice has no mutants.
  const OnePredict c("question: q\nchoices: MatMul | Add\nanswer: A\nexplain: e\n");
  CHECK(mutate_predict(c.block->predict, c.answer).empty());
}

// Predict blocks: answers computed through the checker, learner input parsed with units and
// graded within the block's tolerance or by the exact choice.
#include "sim/lesson/predict.h"

#include "sim/io/input.h"
#include "sim/lesson/quantity.h"

#include <cctype>
#include <cmath>
#include <limits>

namespace tilescope::lesson {

namespace {

std::string lettered(const PredictBlock& p, int choice) {
  return std::string(1, static_cast<char>('A' + choice)) + ") " +
         p.choices[static_cast<size_t>(choice)];
}

std::string lower(std::string s) {
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x80) c = static_cast<char>(std::tolower(c));
  return s;
}

using io::trim;

// The choice a learner means by `input`: a choice's text, a letter, or a number (see
// PredictBlock::choice_for_number); -1 with `message` set when none.
int learner_choice(const PredictBlock& p, const std::string& input, std::string& message) {
  const int n = static_cast<int>(p.choices.size());
  const std::string last(1, static_cast<char>('A' + n - 1));
  const std::string expected =
      "type a choice: a letter A to " + last +
      (p.numeric_choices() ? ", or one of the numbers"
                           : ", a number 1 to " + std::to_string(n) + ", or a choice's text");
  if (input.empty()) {
    message = "nothing typed: " + expected;
    return -1;
  }
  for (int k = 0; k < n; ++k)
    if (lower(p.choices[static_cast<size_t>(k)]) == lower(input)) return k;
  if (input.size() == 1 && std::isalpha(static_cast<unsigned char>(input[0]))) {
    const int k = std::toupper(static_cast<unsigned char>(input[0])) - 'A';
    if (k < n) return k;
    message = "there is no choice " + input + ": " + expected;
    return -1;
  }
  if (const Quantity q = parse_quantity(input, ""); q.ok) {
    const int k = p.choice_for_number(q.value);
    if (k >= 0) return k;
    message = "there is no choice " + input + ": " + expected;
    return -1;
  }
  message = "'" + input + "' is none of the choices: " + expected;
  return -1;
}

}  // namespace

Answer evaluate_predict(LessonSession& session, const Block& block) {
  const PredictBlock& p = block.predict;
  Answer a;
  a.unit = p.unit;
  if (p.is_choice() && p.answer_choice >= 0) {
    a.ok = true;
    a.choice = p.answer_choice;
    a.shown = lettered(p, a.choice);
    return a;
  }
  Value v;
  if (!session.evaluate(block, p.answer, v, a.error)) return a;
  if (p.is_choice()) {
    const int n = static_cast<int>(p.choices.size());
    if (v.kind == Value::Kind::String) {
      for (int k = 0; k < n && a.choice < 0; ++k)
        if (p.choices[static_cast<size_t>(k)] == v.text) a.choice = k;
    } else if (v.kind == Value::Kind::Number) {
      a.choice = p.choice_for_number(v.number);
    }
    if (a.choice < 0) {
      a.error = "the answer " + p.answer_text + " is " + v.to_string() +
                ", which picks no choice: it must be a choice's text or " +
                (p.numeric_choices() ? std::string("one of the numbers")
                                     : "a number from 1 to " + std::to_string(n));
      return a;
    }
    a.ok = true;
    a.shown = lettered(p, a.choice);
    return a;
  }
  if (v.kind != Value::Kind::Number) {
    a.error = "the answer " + p.answer_text + " is not a number";
    return a;
  }
  if (!std::isfinite(v.number)) {
    a.error = "the answer " + p.answer_text + " is not finite";
    return a;
  }
  a.ok = true;
  a.value = v.number;
  a.shown = format_quantity(v.number, p.unit);
  return a;
}

namespace {

void collect_calls(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == Expr::Kind::Call) out.push_back(&e);
  for (const Expr& a : e.args) collect_calls(a, out);  // depth bounded by kMaxCheckNesting
}

}  // namespace

std::vector<AnswerOperand> answer_operands(LessonSession& session, const Block& block,
                                           const Answer& answer) {
  std::vector<AnswerOperand> out;
  if (!answer.ok) return out;
  const Expr& a = block.predict.answer;
  const std::string answer_function = a.kind == Expr::Kind::Call ? a.text : "";
  if (block.predict.is_choice()) {
    // A choice named by a letter computes nothing; one computed (conflicts(staged, "W") → 16)
    // is given away by that number ("16 wavefronts" in the Tiles view).
    Value v;
    std::string error;
    if (block.predict.answer_text.size() == 1 || block.predict.answer.kind == Expr::Kind::Number ||
        !session.evaluate(block, block.predict.answer, v, error) || v.kind != Value::Kind::Number)
      return out;
    out.push_back({v.number, answer_function});
  } else {
    out.push_back({answer.value, answer_function});
  }
  std::vector<const Expr*> calls;
  collect_calls(block.predict.answer, calls);
  for (const Expr* call : calls) {
    Value v;
    std::string error;
    if (session.evaluate(block, *call, v, error) && v.kind == Value::Kind::Number &&
        std::isfinite(v.number))
      out.push_back({v.number, call->text});
  }
  return out;
}

std::string retry_hint(const PredictBlock& block, const Grade& grade, int tries_left) {
  std::string out;
  if (block.is_choice()) {
    out = "Not this one.";
  } else {
    const double a = std::fabs(grade.answer), l = std::fabs(grade.learner);
    const bool low = grade.learner < grade.answer;
    const double factor = a == 0 || l == 0 ? INFINITY : std::max(a / l, l / a);
    const char* band = factor < 1.25   ? "close, but"
                       : factor < 2.5  ? "off by less than 2.5×:"
                       : factor < 10.0 ? "off by 2.5× to 10×:"
                                       : "off by more than 10×:";
    out = std::string("Not yet — ") + band + (low ? " too low." : " too high.");
    if (grade.learner != 0 && grade.answer != 0 && (grade.learner < 0) != (grade.answer < 0))
      out = "Not yet — the sign is wrong.";
  }
  if (!block.hint.empty()) out += " Hint: " + block.hint;
  out += " " + std::to_string(tries_left) + (tries_left == 1 ? " try" : " tries") + " left.";
  return out;
}

bool within_tolerance(const PredictBlock& p, double learner, double answer) {
  const double diff = std::fabs(learner - answer);
  // Room for the rounding of decimal input: 2.2 - 2 is a hair above 0.2 in binary.
  const double slack = 1e-9 * std::max(std::fabs(learner), std::fabs(answer));
  const double bound = p.relative ? p.tolerance * std::fabs(answer) : p.tolerance;
  return diff <= bound + slack;
}

Grade grade(const PredictBlock& p, const Answer& answer, std::string_view learner_input) {
  Grade g;
  const std::string input = trim(learner_input);
  if (p.is_choice()) {
    g.learner_choice = learner_choice(p, input, g.message);
    if (g.learner_choice < 0) return g;
    g.understood = true;
    g.learner_shown = lettered(p, g.learner_choice);
  } else {
    const Quantity q = parse_quantity(input, p.unit);
    if (!q.ok) {
      g.message = q.error;
      return g;
    }
    g.understood = true;
    g.learner = q.value;
    g.learner_shown = format_quantity(q.value, p.unit);
  }
  if (!answer.ok) {
    g.message =
        "this prediction cannot be graded: its answer could not be computed (" + answer.error + ")";
    return g;
  }
  g.graded = true;
  g.answer_shown = answer.shown;
  g.explanation = p.explain;
  if (p.is_choice()) {
    g.answer_choice = answer.choice;
    g.pass = g.learner_choice == answer.choice;
    return g;
  }
  g.answer = answer.value;
  if (answer.value != 0)
    g.relative_error = std::fabs(g.learner - answer.value) / std::fabs(answer.value);
  else
    g.relative_error = g.learner == 0 ? 0 : std::numeric_limits<double>::infinity();
  g.pass = within_tolerance(p, g.learner, answer.value);
  return g;
}

PredictResult check_predict(LessonSession& session, const Block& block) {
  PredictResult r;
  r.block = &block;
  r.answer = evaluate_predict(session, block);
  if (!r.answer.ok) {
    r.error = r.answer.error;
    return r;
  }
  // A learner who types exactly what the reveal will show must pass.
  const std::string typed = block.predict.is_choice()
                                ? std::string(1, static_cast<char>('A' + r.answer.choice))
                                : r.answer.shown;
  const Grade g = grade(block.predict, r.answer, typed);
  r.pass = g.pass;
  if (!g.understood)
    r.error = "the answer as shown to the learner does not read back as a prediction: " + g.message;
  else if (!g.pass)
    r.error =
        "the answer as shown to the learner (4 significant digits) fails its own tolerance "
        "(within " +
        block.predict.tolerance_text + "); widen the tolerance to at least the rounding";
  return r;
}

std::vector<PredictResult> run_predicts(LessonSession& session) {
  std::vector<PredictResult> out;
  for (const Block& b : session.lesson().blocks)
    if (b.kind == BlockKind::Predict) out.push_back(check_predict(session, b));
  return out;
}

}  // namespace tilescope::lesson

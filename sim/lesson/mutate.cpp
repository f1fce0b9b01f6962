// Lesson check mutants: see mutate.h.
#include "sim/lesson/mutate.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilescope::lesson {

namespace {

Compare flipped(Compare op) {
  switch (op) {
    case Compare::Lt:
      return Compare::Ge;
    case Compare::Le:
      return Compare::Gt;
    case Compare::Gt:
      return Compare::Le;
    case Compare::Ge:
      return Compare::Lt;
    case Compare::Eq:
      return Compare::Ne;
    case Compare::Ne:
      return Compare::Eq;
  }
  return op;
}

}  // namespace

std::vector<Mutant> mutate_check(const CheckResult& r) {
  std::vector<Mutant> out;
  if (!r.pass || !r.error.empty()) return out;
  const Compare op = r.check.op;
  const double t = r.check.tolerance;
  auto judge = [&](const std::string& what, const Value& expected, Compare with) {
    bool holds = false;
    try {
      holds = check_holds(r.lhs, with, expected, t);
    } catch (const std::invalid_argument&) {
      holds = false;
    }
    out.push_back({what, !holds});
  };
  auto number = [&](double v) {
    return "expected " + r.rhs.to_string() + " → " + Value::of(v).to_string();
  };
  const Value& v = r.rhs;
  if (op == Compare::Ne) {
    judge("expected replaced by the computed " + r.lhs.to_string(), r.lhs, op);
    return out;
  }
  if (v.kind == Value::Kind::Number) {
    const double x = v.number;
    if (op == Compare::Eq) {
      const double up = t == 0 ? (x == 0 ? x + 1 : x * 1.1) : x * (1.1 + 2 * t);
      judge(number(up), Value::of(up), op);
      const double down = t == 0 ? x - 1 : x * (0.9 - 2 * t);
      judge(number(down), Value::of(down), op);
      if (x != 0) judge(number(-x), Value::of(-x), op);
    } else {
      // Move the bound towards the computed side: a bound with more slack than that guards
      // nothing the words claim.
      const bool above = op == Compare::Gt || op == Compare::Ge;  // computed must be above
      const double toward = x == 0  ? (above ? 0.1 : -0.1)
                            : above ? (x > 0 ? x * 1.1 : x * 0.9)
                                    : (x > 0 ? x * 0.9 : x * 1.1);
      judge(number(toward), Value::of(toward), op);
      judge(std::string(compare_text(op)) + " became " + compare_text(flipped(op)), v, flipped(op));
    }
    return out;
  }
  if (v.kind == Value::Kind::String) {
    judge("expected \"" + v.text + "\" → \"" + v.text + "!\"", Value::of(v.text + "!"), op);
    const std::string other = v.text.empty() ? "x" : "";
    judge("expected \"" + v.text + "\" → \"" + other + "\"", Value::of(other), op);
    return out;
  }
  // A list: each item dropped in turn, then the order reversed.
  for (size_t i = 0; i < v.items.size() && i < 5; ++i) {
    Value dropped = v;
    dropped.items.erase(dropped.items.begin() + static_cast<std::ptrdiff_t>(i));
    judge("item " + v.items[i].to_string() + " dropped from the expected list", dropped, op);
  }
  if (v.items.size() >= 2) {
    Value reversed = v;
    std::reverse(reversed.items.begin(), reversed.items.end());
    if (!values_equal(reversed, v, 0)) judge("the expected list reversed", reversed, op);
  }
  return out;
}

std::vector<Mutant> mutate_predict(const PredictBlock& block, const Answer& answer) {
  std::vector<Mutant> out;
  if (block.is_choice() || !answer.ok) return out;
  auto judge = [&](const std::string& what, double learner) {
    out.push_back({"a prediction of " + what, !within_tolerance(block, learner, answer.value)});
  };
  const double v = answer.value;
  if (v == 0) {
    judge("1 where the answer is 0", 1);
    return out;
  }
  judge("twice the answer", 2 * v);
  judge("half the answer", v / 2);
  judge("0", 0);
  return out;
}

}  // namespace tilescope::lesson

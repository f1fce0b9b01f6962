// Check-language values: construction and the text `lesson check` prints.
#include "sim/lesson/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tilescope::lesson {

Value Value::of(double v) {
  Value x;
  x.number = v;
  return x;
}

Value Value::of(std::string s) {
  Value x;
  x.kind = Kind::String;
  x.text = std::move(s);
  return x;
}

Value Value::list(std::vector<Value> items) {
  Value x;
  x.kind = Kind::List;
  x.items = std::move(items);
  return x;
}

std::string Value::to_string() const {
  switch (kind) {
    case Kind::Number: {
      char buf[64];
      if (std::fabs(number) < 1e15 && number == std::floor(number))
        std::snprintf(buf, sizeof buf, "%.0f", number);
      else
        std::snprintf(buf, sizeof buf, "%.4g", number);
      return buf;
    }
    case Kind::String:
      return "\"" + text + "\"";
    case Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].to_string();
      return s + "]";
    }
  }
  return "?";
}

// [SECTION] Comparing values

bool values_equal(const Value& a, const Value& b, double tol) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::Number: {
      if (tol == 0) return a.number == b.number;
      const double scale = std::max(std::fabs(a.number), std::fabs(b.number));
      return std::fabs(a.number - b.number) <= tol * scale;
    }
    case Value::Kind::String:
      return a.text == b.text;
    case Value::Kind::List:
      if (a.items.size() != b.items.size()) return false;
      for (size_t i = 0; i < a.items.size(); ++i)
        if (!values_equal(a.items[i], b.items[i], tol)) return false;
      return true;
  }
  return false;
}

bool check_holds(const Value& lhs, Compare op, const Value& rhs, double tolerance) {
  // An infinity or NaN is a computation gone wrong (a division by zero), never a claim that
  // holds: inf == inf and inf > 1 were passing.
  for (const Value* v : {&lhs, &rhs})
    if (v->kind == Value::Kind::Number && !std::isfinite(v->number))
      throw std::invalid_argument(v->to_string() + " is not a finite number");
  if (op == Compare::Eq) return values_equal(lhs, rhs, tolerance);
  if (op == Compare::Ne) return !values_equal(lhs, rhs, tolerance);
  if (lhs.kind != Value::Kind::Number || rhs.kind != Value::Kind::Number)
    throw std::invalid_argument(std::string("'") + compare_text(op) + "' compares numbers; " +
                                lhs.to_string() + " and " + rhs.to_string() +
                                " are not both numbers");
  const double a = lhs.number, b = rhs.number;
  switch (op) {
    case Compare::Lt:
      return a < b;
    case Compare::Le:
      return a <= b;
    case Compare::Gt:
      return a > b;
    case Compare::Ge:
      return a >= b;
    default:
      return false;
  }
}

}  // namespace tilescope::lesson

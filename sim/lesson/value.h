// A value of the lesson check language: a number, a string or a list, as checks, predict answers
// and recorded measurements produce them.
#pragma once

#include "sim/lesson/check_language.h"

#include <string>
#include <vector>

namespace tilescope::lesson {

struct Value {
  enum class Kind { Number, String, List };
  Kind kind = Kind::Number;
  double number = 0;
  std::string text;
  std::vector<Value> items;

  static Value of(double v);
  static Value of(std::string s);
  static Value list(std::vector<Value> items);
  std::string to_string() const;  // integers exactly, others with 4 significant digits
};

// Equal within a relative tolerance (numbers), exactly (strings), item by item (lists).
bool values_equal(const Value& a, const Value& b, double tolerance);

// The comparison a check makes, on evaluated values. Throws std::invalid_argument when an
// ordered comparison meets something other than two numbers, or meets an infinity or NaN.
bool check_holds(const Value& lhs, Compare op, const Value& rhs, double tolerance);

}  // namespace tilescope::lesson

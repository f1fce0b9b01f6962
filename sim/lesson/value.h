// A value of the lesson check language: a number, a string or a list, as checks, predict answers
// and recorded measurements produce them.
#pragma once

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
  std::string to_string() const;  // integers exactly, others with 4 significant digits
};

}  // namespace tilescope::lesson

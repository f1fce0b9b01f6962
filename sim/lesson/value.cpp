// Check-language values: construction and the text `lesson check` prints.
#include "sim/lesson/value.h"

#include <cmath>
#include <cstdio>

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

}  // namespace tilescope::lesson

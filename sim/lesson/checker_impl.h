// Private to the checker's files (checker.cpp, checkpoints.cpp, check_call.cpp, check_eval.cpp,
// curriculum.cpp): what they share and no caller needs.
#pragma once

#include <string>
#include <vector>

namespace tilescope::lesson::detail {

// An evaluation failure inside a check (not a malformed lesson): the check fails with this text.
struct EvalError {
  std::string message;
};

// "a, b, c" (at most `limit` items, then ", ...").
inline std::string join(const std::vector<std::string>& v, size_t limit = 12) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < limit; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > limit) s += ", ...";
  return s;
}

}  // namespace tilescope::lesson::detail

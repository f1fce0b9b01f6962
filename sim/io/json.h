// JSON from files a user names (sessions, hand-outs, recordings): parsed only after a linear scan
// has bounded how deeply it nests. Header-only, so the bench library (no sim) uses it too.
//
// nlohmann::json parses iteratively, but copying, comparing and printing a value recurse once per
// level: a 40 KB session of nested arrays overflowed the stack under ASan, and 300,000 levels
// crashed the app on every start (issue #25). Real tilescope documents nest fewer than 10 levels.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace tilescope::io {

inline constexpr size_t kMaxJsonDepth = 64;

struct JsonInput {
  bool ok = false;
  nlohmann::json value;  // when ok
  std::string error;     // when !ok: "line 3, column 7: ..." (nlohmann's message or the depth)
};


// The deepest nesting of arrays and objects in `text` outside strings, and where it first passes
// `max_depth` (1-based line and column; 0 when it never does). Linear, no recursion.
struct JsonDepth {
  size_t depth = 0;
  size_t line = 0, column = 0;
};

inline JsonDepth json_depth(std::string_view text, size_t max_depth) {
  JsonDepth d;
  size_t depth = 0, line = 1, column = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++depth;
      if (depth > d.depth) d.depth = depth;
      if (depth > max_depth && d.line == 0) {
        d.line = line;
        d.column = column;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return d;
}

// Parses `text` when it nests at most `max_depth` arrays and objects; never throws.
inline JsonInput parse_json(std::string_view text, size_t max_depth = kMaxJsonDepth) {
  JsonInput r;
  const JsonDepth d = json_depth(text, max_depth);
  if (d.line != 0) {
    r.error = "line " + std::to_string(d.line) + ", column " + std::to_string(d.column) +
              ": nests " + std::to_string(d.depth) + " levels of lists and objects deep (at most " +
              std::to_string(max_depth) + " are read)";
    return r;
  }
  try {
    r.value = nlohmann::json::parse(text);
    r.ok = true;
  } catch (const nlohmann::json::exception& e) {
    r.error = e.what();
  }
  return r;
}


}  // namespace tilescope::io

// The step language as text: parsing steps (with line:col for errors) and printing them back in
// canonical form, the replayable trace that sessions, lessons and the CLI use.
#include "sim/schedule/transform.h"

#include <cctype>

namespace tilescope::schedule {

// [SECTION] Step text

std::string TransformStep::option(const std::string& key, const std::string& fallback) const {
  for (const auto& [k, v] : options)
    if (k == key) return v;
  return fallback;
}

std::string TransformStep::to_string() const {
  std::string s = name + "(";
  bool first = true;
  for (const auto& a : args) {
    s += (first ? "" : ", ") + a;
    first = false;
  }
  for (const auto& [k, v] : options) {
    s += (first ? "" : ", ") + k + "=" + v;
    first = false;
  }
  return s + ")";
}

std::string steps_to_string(const std::vector<TransformStep>& steps) {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i) s += (i ? "; " : "") + steps[i].to_string();
  return s;
}

namespace {

class StepParser {
 public:
  explicit StepParser(std::string_view t) : m_t(t) {}

  std::vector<TransformStep> run() {
    std::vector<TransformStep> steps;
    for (;;) {
      skip_separators();
      if (m_pos >= m_t.size()) break;
      steps.push_back(step());
    }
    return steps;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw ScheduleError(std::to_string(m_line) + ":" + std::to_string(m_col) + ": " + msg);
  }
  char peek() const { return m_pos < m_t.size() ? m_t[m_pos] : '\0'; }
  void advance() {
    if (m_t[m_pos] == '\n') {
      ++m_line;
      m_col = 1;
    } else {
      ++m_col;
    }
    ++m_pos;
  }
  void skip_space() {
    while (m_pos < m_t.size()) {
      const char c = m_t[m_pos];
      if (c == '#') {
        while (m_pos < m_t.size() && m_t[m_pos] != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        advance();
      } else {
        break;
      }
    }
  }
  void skip_separators() {
    for (;;) {
      skip_space();
      if (peek() == ';')
        advance();
      else
        break;
    }
  }
  static bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '+';
  }
  std::string word(const std::string& what) {
    skip_space();
    const size_t start = m_pos;
    while (m_pos < m_t.size() && word_char(m_t[m_pos])) advance();
    if (m_pos == start) {
      if (m_pos >= m_t.size())
        fail(std::string("expected ") + what + ", found the end of the text");
      fail(std::string("expected ") + what + ", found '" + std::string(1, m_t[m_pos]) + "'");
    }
    return std::string(m_t.substr(start, m_pos - start));
  }
  TransformStep step() {
    skip_space();
    TransformStep s;
    s.line = m_line;
    s.col = m_col;
    s.name = word("a step name such as tile or fuse");
    skip_space();
    if (peek() != '(') fail("expected '(' after '" + s.name + "'");
    advance();
    skip_space();
    if (peek() == ')') {
      advance();
      return s;
    }
    for (;;) {
      std::string a = word("an argument");
      skip_space();
      if (peek() == '=') {
        advance();
        std::string v = word("a value after '" + a + "='");
        s.options.emplace_back(a, v);
      } else {
        s.args.push_back(a);  // flags may follow options: stage(W, shared, at=k.o, double)
      }
      skip_space();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ')') {
        advance();
        break;
      }
      if (m_pos >= m_t.size()) fail("expected ')' to close " + s.name + "(");
      fail("expected ',' or ')' in " + s.name + "(...), found '" + std::string(1, peek()) + "'");
    }
    return s;
  }

  std::string_view m_t;
  size_t m_pos = 0;
  int m_line = 1, m_col = 1;
};

}  // namespace

std::vector<TransformStep> parse_steps(std::string_view text) {
  return StepParser(text).run();
}

}  // namespace tilescope::schedule

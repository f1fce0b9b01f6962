// Tokenizer and recursive-descent parser of the lesson check language (grammar in
// check_language.h).
#include "sim/lesson/check_language.h"

#include "sim/io/input.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace tilescope::lesson {

namespace {

// Messages quote the lesson's own text (a bad character, a name, a path), which may hold NUL, ESC
// or broken UTF-8: escape it so the message can be printed, and what() (a C string) keeps it all.
std::string shown(const std::string& text) {
  return io::printable(text, 2000, /*keep_newlines=*/true);
}

}  // namespace

LessonError::LessonError(graph::SourceLoc loc, const std::string& message)
    : std::runtime_error((loc.to_string().empty() ? "" : shown(loc.to_string()) + ": ") +
                         "error: " + shown(message)),
      m_loc(std::move(loc)),
      m_message(shown(message)) {}

const Expr* Expr::keyword(const std::string& name) const {
  const size_t first = positional();
  for (size_t i = 0; i < keywords.size(); ++i)
    if (keywords[i] == name) return &args[first + i];
  return nullptr;
}

namespace {

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

std::string Expr::to_string() const {
  switch (kind) {
    case Kind::Number:
      return number_text(number);
    case Kind::String:
      return "\"" + text + "\"";
    case Kind::Name:
      return text;
    case Kind::List: {
      std::string s = "[";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i].to_string();
      return s + "]";
    }
    case Kind::Call: {
      std::string s = text + "(";
      const size_t first = positional();
      for (size_t i = 0; i < args.size(); ++i) {
        s += i ? ", " : "";
        if (i >= first) s += keywords[i - first] + "=";
        s += args[i].to_string();
      }
      return s + ")";
    }
    // Built with append rather than "literal" + string: GCC 12 at -O3 raises a false -Wrestrict
    // on the latter (a known GCC bug), which -Werror turns into a failed Release build.
    case Kind::Negate: {
      std::string s = "-";
      s.append(args[0].to_string());
      return s;
    }
    case Kind::Binary: {
      // Left-associative, so `a - b + c` reads "((a - b) + c)".
      std::string s(ops.size(), '(');
      s.append(args[0].to_string());
      for (size_t i = 0; i < ops.size(); ++i) {
        s.append(" ");
        s += ops[i];
        s.append(" ");
        s.append(args[i + 1].to_string()).append(")");
      }
      return s;
    }
  }
  return "";
}

const char* compare_text(Compare c) {
  switch (c) {
    case Compare::Eq:
      return "==";
    case Compare::Ne:
      return "!=";
    case Compare::Lt:
      return "<";
    case Compare::Le:
      return "<=";
    case Compare::Gt:
      return ">";
    case Compare::Ge:
      return ">=";
  }
  return "?";
}

namespace {

struct Token {
  enum class Kind { Number, String, Name, Symbol, End };
  Kind kind = Kind::End;
  std::string text;  // Symbol: "==", "(", ...; Name / String: the text
  double number = 0;
  int col = 0;  // 0-based offset into the line
};

class Parser {
 public:
  Parser(std::string_view text, const graph::SourceLoc& loc) : m_text(text), m_loc(loc) {
    tokenize();
  }

  Check check() {
    Check c;
    c.loc = m_loc;
    c.lhs = expr();
    const Token& t = peek();
    static const char* const kOps[] = {"==", "!=", "<=", ">=", "<", ">"};
    static const Compare kCmp[] = {Compare::Eq, Compare::Ne, Compare::Le,
                                   Compare::Ge, Compare::Lt, Compare::Gt};
    bool found = false;
    if (t.kind == Token::Kind::Symbol) {
      for (int i = 0; i < 6; ++i)
        if (t.text == kOps[i]) {
          c.op = kCmp[i];
          found = true;
        }
    }
    if (!found) {
      if (t.kind == Token::Kind::Symbol && t.text == "=")
        fail(t, "'=' is not a comparison; write '==' to claim two values are equal");
      fail(t, "expected a comparison (==, !=, <, <=, >, >=) after '" + c.lhs.to_string() +
                  "', found " + describe(t));
    }
    next();
    c.rhs = expr();
    if (peek().kind == Token::Kind::Name && peek().text == "within") {
      next();
      const Token n = next();
      if (n.kind != Token::Kind::Number)
        fail(n, "expected a tolerance after 'within' (e.g. 'within 5%'), found " + describe(n));
      c.tolerance = n.number;
      if (peek().kind == Token::Kind::Symbol && peek().text == "%") {
        next();
        c.tolerance /= 100.0;
      }
      if (c.tolerance < 0) fail(n, "a tolerance cannot be negative");
      // Relative to the larger side: at 100 % any two numbers of one sign are "equal".
      if (c.tolerance >= 1.0)
        fail(n, "a tolerance of " + n.text + (c.tolerance == n.number ? "" : "%") +
                    " passes any two numbers of the same sign; a claim needs less than 100%");
      if (c.op != Compare::Eq && c.op != Compare::Ne)
        fail(n, "'within' only makes sense with == or !=");
    }
    expect_end();
    return c;
  }

  Expr whole_expr() {
    Expr e = expr();
    expect_end();
    return e;
  }

 private:
  [[noreturn]] void fail(const Token& t, const std::string& message) const {
    graph::SourceLoc l = m_loc;
    l.col = m_loc.col + t.col;
    throw LessonError(l, message);
  }

  graph::SourceLoc loc_of(const Token& t) const {
    graph::SourceLoc l = m_loc;
    l.col = m_loc.col + t.col;
    return l;
  }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Token::Kind::End:
        return "the end of the line";
      case Token::Kind::Number:
        return "number " + number_text(t.number);
      case Token::Kind::String:
        return "string \"" + t.text + "\"";
      case Token::Kind::Name:
        return "'" + t.text + "'";
      case Token::Kind::Symbol:
        return "'" + t.text + "'";
    }
    return "?";
  }

  void tokenize() {
    size_t i = 0;
    const size_t n = m_text.size();
    while (i < n) {
      const char c = m_text[i];
      if (c == ' ' || c == '\t') {
        ++i;
        continue;
      }
      if (c == '#') break;
      Token t;
      t.col = static_cast<int>(i);
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(m_text[i + 1])))) {
        size_t j = i;
        while (j < n && (std::isdigit(static_cast<unsigned char>(m_text[j])) || m_text[j] == '.'))
          ++j;
        if (j < n && (m_text[j] == 'e' || m_text[j] == 'E')) {
          size_t k = j + 1;
          if (k < n && (m_text[k] == '+' || m_text[k] == '-')) ++k;
          if (k < n && std::isdigit(static_cast<unsigned char>(m_text[k]))) {
            j = k;
            while (j < n && std::isdigit(static_cast<unsigned char>(m_text[j]))) ++j;
          }
        }
        const std::string s(m_text.substr(i, j - i));
        char* end = nullptr;
        t.number = std::strtod(s.c_str(), &end);
        if (end != s.c_str() + s.size()) {
          graph::SourceLoc l = m_loc;
          l.col += static_cast<int>(i);
          throw LessonError(l, "malformed number '" + s + "'");
        }
        // 1e999 is read as infinity, and `1e999 == 1e999` then held (issue #25).
        if (!std::isfinite(t.number) || (t.number == 0 && s.find_first_of("123456789") !=
                                                               std::string::npos)) {
          graph::SourceLoc l = m_loc;
          l.col += static_cast<int>(i);
          throw LessonError(l, "'" + s + "' is " +
                                   (t.number == 0 ? "too small to tell from 0" : "too large") +
                                   " for a number (about 1e-308 to 1e308)");
        }
        if (j < n && (std::isalpha(static_cast<unsigned char>(m_text[j])) || m_text[j] == '_')) {
          graph::SourceLoc l = m_loc;
          l.col += static_cast<int>(j);
          throw LessonError(l, "a number runs into a name here; put an operator between them");
        }
        t.kind = Token::Kind::Number;
        t.text = s;
        i = j;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        size_t j = i;
        while (j < n && (std::isalnum(static_cast<unsigned char>(m_text[j])) || m_text[j] == '_'))
          ++j;
        t.kind = Token::Kind::Name;
        t.text = std::string(m_text.substr(i, j - i));
        i = j;
      } else if (c == '"') {
        size_t j = i + 1;
        std::string s;
        bool closed = false;
        while (j < n) {
          if (m_text[j] == '\\' && j + 1 < n) {
            s += m_text[j + 1];
            j += 2;
            continue;
          }
          if (m_text[j] == '"') {
            closed = true;
            ++j;
            break;
          }
          s += m_text[j++];
        }
        if (!closed) {
          graph::SourceLoc l = m_loc;
          l.col += static_cast<int>(i);
          throw LessonError(l, "unterminated string (a \" is missing before the end of the line)");
        }
        t.kind = Token::Kind::String;
        t.text = s;
        i = j;
      } else {
        static const char* const kTwo[] = {"==", "!=", "<=", ">="};
        bool two = false;
        for (const char* s : kTwo)
          if (i + 1 < n && m_text[i] == s[0] && m_text[i + 1] == s[1]) two = true;
        const std::string one = "+-*/()[],=<>%";
        if (!two && one.find(c) == std::string::npos) {
          graph::SourceLoc l = m_loc;
          l.col += static_cast<int>(i);
          // Quote a whole UTF-8 sequence, not its first byte ('×' where '*' was meant).
          size_t j = i + 1;
          while (j < n && (static_cast<unsigned char>(m_text[j]) & 0xC0) == 0x80) ++j;
          throw LessonError(
              l, "unexpected character '" + std::string(m_text.substr(i, j - i)) + "' in a check");
        }
        t.kind = Token::Kind::Symbol;
        t.text = std::string(m_text.substr(i, two ? 2 : 1));
        i += two ? 2 : 1;
      }
      m_tokens.push_back(t);
    }
    Token end;
    end.kind = Token::Kind::End;
    end.col = static_cast<int>(n);
    m_tokens.push_back(end);
  }

  const Token& peek(size_t ahead = 0) const {
    return m_tokens[std::min(m_pos + ahead, m_tokens.size() - 1)];
  }
  Token next() {
    Token t = peek();
    if (m_pos + 1 < m_tokens.size()) ++m_pos;
    return t;
  }
  bool is_symbol(const std::string& s, size_t ahead = 0) const {
    return peek(ahead).kind == Token::Kind::Symbol && peek(ahead).text == s;
  }
  void expect_symbol(const std::string& s, const std::string& context) {
    if (!is_symbol(s))
      fail(peek(), "expected '" + s + "' " + context + ", found " + describe(peek()));
    next();
  }
  void expect_end() {
    if (peek().kind != Token::Kind::End)
      fail(peek(), "unexpected " + describe(peek()) + " after a complete check");
  }

  // One level of brackets, call, list or unary '-' while it is being parsed; past the limit the
  // check is refused at `t`, the token that opens the level too many.
  struct Nesting {
    Nesting(Parser& p, const Token& t) : m_p(p) {
      if (m_p.m_depth >= kMaxCheckNesting)
        m_p.fail(t, "expression nested deeper than " + std::to_string(kMaxCheckNesting) +
                        " levels (brackets, calls, lists and unary '-' count)");
      ++m_p.m_depth;
    }
    ~Nesting() { --m_p.m_depth; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    Parser& m_p;
  };

  // `operand {op operand}` for one precedence level, as one Binary node located at its first
  // operator: a loop, however many terms the line has.
  template <typename Operand>
  Expr chain(const char* op1, const char* op2, Operand operand) {
    Expr first = (this->*operand)();
    if (!is_symbol(op1) && !is_symbol(op2)) return first;
    Expr b;
    b.kind = Expr::Kind::Binary;
    b.loc = loc_of(peek());
    b.args.push_back(std::move(first));
    while (is_symbol(op1) || is_symbol(op2)) {
      b.ops += next().text[0];
      b.args.push_back((this->*operand)());
    }
    return b;
  }

  Expr expr() { return chain("+", "-", &Parser::term); }

  Expr term() { return chain("*", "/", &Parser::unary); }

  Expr unary() {
    if (is_symbol("-")) {
      const Token op = next();
      const Nesting level(*this, op);
      Expr e;
      e.kind = Expr::Kind::Negate;
      e.loc = loc_of(op);
      e.args.push_back(unary());
      return e;
    }
    return primary();
  }

  Expr primary() {
    const Token t = next();
    Expr e;
    e.loc = loc_of(t);
    switch (t.kind) {
      case Token::Kind::Number:
        e.kind = Expr::Kind::Number;
        e.number = t.number;
        return e;
      case Token::Kind::String:
        e.kind = Expr::Kind::String;
        e.text = t.text;
        return e;
      case Token::Kind::Name:
        e.text = t.text;
        if (!is_symbol("(")) {
          e.kind = Expr::Kind::Name;
          return e;
        }
        return call(std::move(e), t);
      case Token::Kind::Symbol:
        if (t.text == "(") {
          const Nesting level(*this, t);
          Expr inner = expr();
          expect_symbol(")", "to close '('");
          return inner;
        }
        if (t.text == "[") return list(std::move(e), t);
        fail(t, "expected a value (a number, a string, a name, a call or a list), found " +
                    describe(t));
      case Token::Kind::End:
        fail(t, "expected a value, found the end of the line");
    }
    fail(t, "expected a value");
  }

  // NAME "(" [arg {"," arg}] ")", the name already read into `e`; the next token is the '('.
  Expr call(Expr e, const Token& name) {
    const Nesting level(*this, name);
    e.kind = Expr::Kind::Call;
    next();
    if (is_symbol(")")) {
      next();
      return e;
    }
    for (;;) {
      if (peek().kind == Token::Kind::Name && is_symbol("=", 1)) {
        const Token key = next();
        next();
        for (const auto& k : e.keywords)
          if (k == key.text) fail(key, "keyword argument '" + k + "' is given twice");
        e.keywords.push_back(key.text);
        e.args.push_back(expr());
      } else {
        if (!e.keywords.empty())
          fail(peek(),
               "a positional argument cannot follow keyword arguments in " + e.text + "(...)");
        e.args.push_back(expr());
      }
      if (is_symbol(",")) {
        next();
        continue;
      }
      expect_symbol(")", "to close " + e.text + "(");
      return e;
    }
  }

  // "[" [expr {"," expr}] "]", the '[' (`open`) already read.
  Expr list(Expr e, const Token& open) {
    const Nesting level(*this, open);
    e.kind = Expr::Kind::List;
    if (is_symbol("]")) {
      next();
      return e;
    }
    for (;;) {
      e.args.push_back(expr());
      if (is_symbol(",")) {
        next();
        continue;
      }
      expect_symbol("]", "to close the list");
      return e;
    }
  }

  std::string_view m_text;
  graph::SourceLoc m_loc;
  std::vector<Token> m_tokens;
  size_t m_pos = 0;
  int m_depth = 0;  // levels of Nesting open now
};

std::string trimmed_without_comment(std::string_view text) {
  // A '#' inside a string literal is text, not a comment.
  bool in_string = false;
  size_t end = text.size();
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] == '"') in_string = !in_string;
    if (!in_string && text[i] == '#') {
      end = i;
      break;
    }
  }
  std::string s(text.substr(0, end));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t first = 0;
  while (first < s.size() && std::isspace(static_cast<unsigned char>(s[first]))) ++first;
  return s.substr(first);
}

}  // namespace

namespace {

// Levenshtein distance, for "did you mean" hints.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string suggestion(const std::string& name, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 3;
  for (const auto& k : known) {
    const size_t d = edit_distance(name, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

Check parse_check(std::string_view text, const graph::SourceLoc& loc) {
  Check c = Parser(text, loc).check();
  c.text = trimmed_without_comment(text);
  // The check's own location is its first non-blank column.
  size_t first = 0;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\t')) ++first;
  c.loc.col = loc.col + static_cast<int>(first);
  return c;
}

Expr parse_expr(std::string_view text, const graph::SourceLoc& loc) {
  return Parser(text, loc).whole_expr();
}

}  // namespace tilescope::lesson

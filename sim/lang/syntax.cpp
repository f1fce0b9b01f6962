// The model language's lexer and parser: text → tokens → syntax tree, with located errors.
#include "sim/lang/syntax.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

namespace tilescope::lang::syntax {

// [SECTION] Source text

namespace {
bool is_continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}
}  // namespace

SourceText::SourceText(std::string_view text, std::string file)
    : m_text(text), m_file(std::move(file)) {
  m_line_starts.push_back(0);
  for (size_t i = 0; i < m_text.size(); ++i) {
    if (m_text[i] == '\n') m_line_starts.push_back(i + 1);
  }
}

size_t SourceText::line_index(size_t offset) const {
  offset = std::min(offset, m_text.size());
  auto it = std::upper_bound(m_line_starts.begin(), m_line_starts.end(), offset);
  return static_cast<size_t>(it - m_line_starts.begin()) - 1;
}

SourceLoc SourceText::loc(size_t offset) const {
  offset = std::min(offset, m_text.size());
  size_t line = line_index(offset);
  // Columns count characters, not bytes, so a caret under UTF-8 text lines up.
  const bool onward = line == m_memo_line && offset >= m_memo_offset &&
                      m_memo_offset >= m_line_starts[line];
  int col = onward ? m_memo_col : 1;
  for (size_t i = onward ? m_memo_offset : m_line_starts[line]; i < offset; ++i) {
    if (!is_continuation_byte(m_text[i])) ++col;
  }
  m_memo_line = line;
  m_memo_offset = offset;
  m_memo_col = col;
  return SourceLoc{m_file, static_cast<int>(line) + 1, col};
}

std::string SourceText::excerpt(Span span) const {
  size_t line = line_index(span.begin);
  size_t start = m_line_starts[line];
  size_t stop = m_text.find('\n', start);
  if (stop == std::string_view::npos) stop = m_text.size();
  // A generated line can be megabytes long; show a window of it around the error, cut at
  // character boundaries, with "..." where text was left out.
  constexpr size_t kWindow = 120;
  std::string lead, tail;
  if (stop - start > kWindow) {
    size_t from = span.begin > start + kWindow / 2 ? span.begin - kWindow / 2 : start;
    while (from > start && is_continuation_byte(m_text[from])) --from;
    size_t to = std::min(stop, from + kWindow);
    while (to < stop && is_continuation_byte(m_text[to])) ++to;
    if (from > start) lead = "...";
    if (to < stop) tail = "...";
    start = from;
    stop = to;
  }
  std::string_view src_line = m_text.substr(start, stop - start);
  if (!src_line.empty() && src_line.back() == '\r') src_line.remove_suffix(1);

  std::string out = lead;
  // Control bytes would garble a terminal; show them as '?' (they are errors anyway).
  for (char c : src_line) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 && c != '\t') || u == 0x7F ? '?' : c;
  }
  out += tail + "\n" + std::string(lead.size(), ' ');
  size_t begin = std::min(span.begin, start + src_line.size());
  for (size_t i = start; i < begin; ++i) {
    if (m_text[i] == '\t') {
      out += '\t';
    } else if (!is_continuation_byte(m_text[i])) {
      out += ' ';
    }
  }
  out += '^';
  size_t end = std::min(std::max(span.end, begin + 1), start + src_line.size());
  for (size_t i = begin + 1; i < end; ++i) {
    if (!is_continuation_byte(m_text[i])) out += '~';
  }
  return out;
}

std::string SourceText::normalized(Span span) const {
  std::string out;
  bool pending_space = false;
  for (size_t i = span.begin; i < std::min(span.end, m_text.size()); ++i) {
    char c = m_text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space && c != ')' && c != ']' && out.back() != '(' && out.back() != '[') {
      out += ' ';
    }
    pending_space = false;
    out += c;
  }
  return out;
}

Span SourceText::end_span() const {
  // Point at the last character of the text rather than past it, so the excerpt shows a line.
  size_t end = m_text.size();
  while (end > 0 && (m_text[end - 1] == '\n' || m_text[end - 1] == '\r' || m_text[end - 1] == ' ' ||
                     m_text[end - 1] == '\t')) {
    --end;
  }
  return end == 0 ? Span{0, 0} : Span{end - 1, end};
}

void SourceText::fail(Span span, const std::string& message) const {
  throw GraphError(loc(span), message, excerpt(span));
}

// [SECTION] Lexer

const char* tok_kind_name(TokKind kind) {
  switch (kind) {
    case TokKind::Ident:
      return "a name";
    case TokKind::Int:
      return "an integer";
    case TokKind::Float:
      return "a number";
    case TokKind::String:
      return "a string";
    case TokKind::Newline:
      return "end of line";
    case TokKind::End:
      return "end of model";
    case TokKind::Colon:
      return "':'";
    case TokKind::Comma:
      return "','";
    case TokKind::Dot:
      return "'.'";
    case TokKind::LParen:
      return "'('";
    case TokKind::RParen:
      return "')'";
    case TokKind::LBracket:
      return "'['";
    case TokKind::RBracket:
      return "']'";
    case TokKind::Assign:
      return "'='";
    case TokKind::At:
      return "'@'";
    case TokKind::Plus:
      return "'+'";
    case TokKind::Minus:
      return "'-'";
    case TokKind::Star:
      return "'*'";
    case TokKind::StarStar:
      return "'**'";
    case TokKind::Slash:
      return "'/'";
    case TokKind::SlashSlash:
      return "'//'";
    case TokKind::Percent:
      return "'%'";
  }
  return "?";
}

namespace {

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

// How an unexpected byte is shown: the whole UTF-8 character when it is one, else its hex value.
std::string describe_char(std::string_view text, size_t i, size_t* length) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  *length = 1;
  if (c >= 0x20 && c < 0x7F) return std::string("'") + static_cast<char>(c) + "'";
  size_t n = c >= 0xF0 && c < 0xF8 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n > 0 && i + n <= text.size() &&
      std::all_of(text.begin() + static_cast<std::ptrdiff_t>(i + 1),
                  text.begin() + static_cast<std::ptrdiff_t>(i + n), is_continuation_byte)) {
    *length = n;
    return "'" + std::string(text.substr(i, n)) + "'";
  }
  static const char* hex = "0123456789ABCDEF";
  return std::string("byte 0x") + hex[c >> 4] + hex[c & 0xF];  // not text: show the value
}

class Lexer {
 public:
  explicit Lexer(const SourceText& src) : m_src(src), m_text(src.text()) {}

  std::vector<Token> run() {
    while (m_pos < m_text.size()) {
      char c = m_text[m_pos];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        ++m_pos;
      } else if (c == '#') {
        while (m_pos < m_text.size() && m_text[m_pos] != '\n') ++m_pos;
      } else if (c == '\n') {
        if (m_depth == 0) push_newline(m_pos);
        ++m_pos;
      } else if (c == '\\') {
        line_continuation();
      } else if (is_ident_start(c)) {
        identifier();
      } else if (is_digit(c) ||
                 (c == '.' && m_pos + 1 < m_text.size() && is_digit(m_text[m_pos + 1]))) {
        number();
      } else if (c == '\'' || c == '"') {
        string_literal(c);
      } else {
        punctuation();
      }
    }
    // Inside an unclosed bracket the text ends mid-expression; no newline, so the parser reports
    // the bracket that was never closed.
    if (m_depth == 0) push_newline(m_text.size());
    Token end;
    end.kind = TokKind::End;
    end.span = {m_text.size(), m_text.size()};
    m_tokens.push_back(end);
    return std::move(m_tokens);
  }

 private:
  void push(TokKind kind, size_t begin, size_t end, std::string text) {
    Token t;
    t.kind = kind;
    t.span = {begin, end};
    t.text = std::move(text);
    m_tokens.push_back(std::move(t));
  }

  void push_newline(size_t at) {
    // Blank lines and comment lines make no statement, so collapse repeated newlines.
    if (m_tokens.empty() || m_tokens.back().kind == TokKind::Newline) return;
    push(TokKind::Newline, at, at + 1, "\n");
  }

  void line_continuation() {
    size_t p = m_pos + 1;
    while (p < m_text.size() && (m_text[p] == ' ' || m_text[p] == '\t' || m_text[p] == '\r')) ++p;
    if (p < m_text.size() && m_text[p] != '\n') {
      m_src.fail({m_pos, m_pos + 1}, "a '\\' continues a line only at the very end of the line");
    }
    m_pos = p + 1;
  }

  void identifier() {
    size_t begin = m_pos;
    while (m_pos < m_text.size() && is_ident_char(m_text[m_pos])) ++m_pos;
    push(TokKind::Ident, begin, m_pos, std::string(m_text.substr(begin, m_pos - begin)));
  }

  void number() {
    size_t begin = m_pos;
    bool is_float = false;
    auto digits = [&] {
      while (m_pos < m_text.size() && (is_digit(m_text[m_pos]) || m_text[m_pos] == '_')) ++m_pos;
    };
    digits();
    if (m_pos < m_text.size() && m_text[m_pos] == '.' &&
        !(m_pos + 1 < m_text.size() && is_ident_start(m_text[m_pos + 1]))) {
      is_float = true;
      ++m_pos;
      digits();
    }
    if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
      size_t p = m_pos + 1;
      if (p < m_text.size() && (m_text[p] == '+' || m_text[p] == '-')) ++p;
      if (p < m_text.size() && is_digit(m_text[p])) {
        is_float = true;
        m_pos = p;
        digits();
      }
    }
    if (m_pos < m_text.size() && is_ident_char(m_text[m_pos])) {
      size_t end = m_pos;
      while (end < m_text.size() && is_ident_char(m_text[end])) ++end;
      m_src.fail({begin, end}, "invalid number '" + std::string(m_text.substr(begin, end - begin)) +
                                   "': a name cannot start with a digit");
    }
    std::string spelled(m_text.substr(begin, m_pos - begin));
    std::string clean;
    for (char c : spelled) {
      if (c != '_') clean += c;
    }
    if (spelled.back() == '_' || spelled.find("__") != std::string::npos) {
      m_src.fail({begin, m_pos}, "invalid number '" + spelled + "': '_' may only separate digits");
    }
    Token t;
    t.span = {begin, m_pos};
    t.text = spelled;
    if (is_float) {
      t.kind = TokKind::Float;
      t.float_value = std::strtod(clean.c_str(), nullptr);
      if (!std::isfinite(t.float_value)) {
        m_src.fail(t.span, "number '" + spelled + "' is too large");
      }
    } else {
      t.kind = TokKind::Int;
      int64_t v = 0;
      for (char c : clean) {
        if (__builtin_mul_overflow(v, int64_t{10}, &v) ||
            __builtin_add_overflow(v, int64_t{c - '0'}, &v)) {
          m_src.fail(t.span, "integer '" + spelled + "' is too large (the limit is 2^63 - 1)");
        }
      }
      t.int_value = v;
    }
    m_tokens.push_back(std::move(t));
  }

  void string_literal(char quote) {
    size_t begin = m_pos++;
    std::string value;
    while (true) {
      if (m_pos >= m_text.size() || m_text[m_pos] == '\n') {
        m_src.fail({begin, m_pos}, std::string("string is not closed: missing ") + quote);
      }
      char c = m_text[m_pos];
      if (c == quote) break;
      if (c == '\\' && m_pos + 1 < m_text.size() && m_text[m_pos + 1] != '\n') {
        ++m_pos;
        c = m_text[m_pos];
      }
      value += c;
      ++m_pos;
    }
    ++m_pos;
    push(TokKind::String, begin, m_pos, std::move(value));
  }

  void punctuation() {
    size_t begin = m_pos;
    char c = m_text[m_pos];
    char next = m_pos + 1 < m_text.size() ? m_text[m_pos + 1] : '\0';
    auto one = [&](TokKind kind) {
      ++m_pos;
      push(kind, begin, m_pos, std::string(1, c));
    };
    switch (c) {
      case ':':
        return one(TokKind::Colon);
      case ',':
        return one(TokKind::Comma);
      case '.':
        return one(TokKind::Dot);
      case '=':
        return one(TokKind::Assign);
      case '@':
        return one(TokKind::At);
      case '+':
        return one(TokKind::Plus);
      case '-':
        return one(TokKind::Minus);
      case '%':
        return one(TokKind::Percent);
      case '(':
      case '[':
        ++m_depth;
        return one(c == '(' ? TokKind::LParen : TokKind::LBracket);
      case ')':
      case ']':
        if (m_depth > 0) --m_depth;
        return one(c == ')' ? TokKind::RParen : TokKind::RBracket);
      case '*':
        if (next == '*') {
          m_pos += 2;
          return push(TokKind::StarStar, begin, m_pos, "**");
        }
        return one(TokKind::Star);
      case '/':
        if (next == '/') {
          m_pos += 2;
          return push(TokKind::SlashSlash, begin, m_pos, "//");
        }
        return one(TokKind::Slash);
      default:
        break;
    }
    size_t length = 1;
    std::string shown = describe_char(m_text, m_pos, &length);
    bool is_char = shown[0] == '\'';
    m_src.fail({begin, begin + length},
               std::string(is_char ? "unexpected character " : "unexpected ") + shown +
                   " (not part of the model language)");
  }

  const SourceText& m_src;
  std::string_view m_text;
  size_t m_pos = 0;
  int m_depth = 0;
  std::vector<Token> m_tokens;
};

}  // namespace

std::vector<Token> tokenize(const SourceText& src) {
  return Lexer(src).run();
}

// [SECTION] Syntax tree

Expr::~Expr() {
  // Children move to a worklist before they die, so each node is destroyed with no children
  // left and the stack stays flat however deep the tree is.
  std::vector<ExprPtr> pending;
  auto adopt = [&pending](Expr& e) {
    for (ExprPtr& child : e.children) {
      if (child) pending.push_back(std::move(child));
    }
    for (Arg& arg : e.args) {
      if (arg.value) pending.push_back(std::move(arg.value));
    }
  };
  adopt(*this);
  while (!pending.empty()) {
    ExprPtr node = std::move(pending.back());
    pending.pop_back();
    adopt(*node);
  }
}

// [SECTION] Parser

namespace {

const char* kSequentialHint =
    "a sequential model starts with a line such as 'input [1, 3, 224, 224]'";

class Parser {
 public:
  Parser(const SourceText& src, std::vector<Token> tokens)
      : m_src(src), m_tokens(std::move(tokens)) {}

  Module run() {
    Module module;
    skip_newlines();
    if (at(TokKind::End)) {
      m_src.fail({0, 0},
                 "empty model: declare tensors and compute with them ('x: [64, 1024]' then "
                 "'y = relu(x)'), or write a sequential model ('input [1, 3, 224, 224]' then "
                 "layers)");
    }
    module.form = detect_form();
    if (module.form == Form::Expressions) {
      expressions_form(module);
    } else {
      sequential_form(module);
    }
    return module;
  }

 private:
  // [SECTION] token helpers
  const Token& peek(size_t ahead = 0) const {
    return m_tokens[std::min(m_pos + ahead, m_tokens.size() - 1)];
  }
  bool at(TokKind kind, size_t ahead = 0) const { return peek(ahead).kind == kind; }
  bool at_ident(const char* text, size_t ahead = 0) const {
    return at(TokKind::Ident, ahead) && peek(ahead).text == text;
  }
  const Token& advance() {
    const Token& t = m_tokens[m_pos];
    if (m_pos + 1 < m_tokens.size()) ++m_pos;
    return t;
  }
  void skip_newlines() {
    while (at(TokKind::Newline)) advance();
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case TokKind::Ident:
        return "'" + t.text + "'";
      case TokKind::Int:
      case TokKind::Float:
        return "number " + t.text;
      case TokKind::String:
        return "a string";
      default:
        return tok_kind_name(t.kind);
    }
  }
  [[noreturn]] void unexpected(const std::string& wanted) const {
    const Token& t = peek();
    Span span = t.kind == TokKind::End ? m_src.end_span() : t.span;
    m_src.fail(span, "expected " + wanted + ", found " + describe(t));
  }
  const Token& expect(TokKind kind, const std::string& wanted) {
    if (!at(kind)) unexpected(wanted);
    return advance();
  }
  // A closing bracket. When the next token is on a later line the bracket was most likely
  // forgotten, and the useful place to point at is the one that was opened.
  const Token& expect_close(TokKind kind, const Token& open) {
    if (at(kind)) return advance();
    const Token& t = peek();
    const char* closer = kind == TokKind::RParen ? "')'" : "']'";
    bool later_line =
        t.kind == TokKind::End || m_src.loc(t.span).line > m_src.loc(m_tokens[m_pos - 1].span).line;
    if (later_line) {
      m_src.fail(open.span, std::string("'") + open.text + "' is never closed: missing " + closer);
    }
    unexpected(std::string("',' or ") + closer);
  }
  void end_of_statement() {
    if (at(TokKind::End)) return;
    if (!at(TokKind::Newline)) unexpected("end of line");
    skip_newlines();
  }

  // [SECTION] form detection
  bool at_sequential_call(size_t ahead) const {
    // Sequential( | nn.Sequential( | torch.nn.Sequential(
    size_t i = ahead;
    while (at(TokKind::Ident, i) && at(TokKind::Dot, i + 1)) i += 2;
    return at_ident("Sequential", i) && at(TokKind::LParen, i + 1);
  }

  Form detect_form() const {
    if (at(TokKind::Ident) && (at(TokKind::Colon, 1) || at(TokKind::Assign, 1))) {
      return at(TokKind::Assign, 1) && at_sequential_call(2) ? Form::Sequential : Form::Expressions;
    }
    if (at_ident("input")) return Form::Sequential;
    // A capitalised call (Conv2d(...), nn.ReLU()) is a layer: form 2, which will then ask for
    // the missing input line. Anything else reads best as a form-1 mistake.
    size_t i = 0;
    while (at(TokKind::Ident, i) && at(TokKind::Dot, i + 1)) i += 2;
    if (at(TokKind::Ident, i) && at(TokKind::LParen, i + 1)) {
      char first = peek(i).text[0];
      if (first >= 'A' && first <= 'Z') return Form::Sequential;
    }
    return Form::Expressions;
  }

  // [SECTION] form 1: declarations and assignments
  void expressions_form(Module& module) {
    while (!at(TokKind::End)) {
      if (!at(TokKind::Ident))
        unexpected("a declaration 'name: [dims]' or an assignment 'name = ...'");
      const Token& name = advance();
      Stmt stmt;
      stmt.name = name.text;
      stmt.name_span = name.span;
      if (at(TokKind::Colon)) {
        advance();
        stmt.kind = StmtKind::Decl;
        stmt.value = shape_list();
        words(stmt);
      } else if (at(TokKind::Assign)) {
        advance();
        stmt.kind = StmtKind::Assign;
        if (at(TokKind::Newline) || at(TokKind::End)) unexpected("an expression after '='");
        stmt.value = expression();
      } else if (at(TokKind::LBracket)) {
        m_src.fail(name.span, "missing ':' after '" + name.text + "': a declaration reads '" +
                                  name.text + ": [dims]'");
      } else {
        unexpected("':' (declaration) or '=' (assignment) after '" + name.text + "'");
      }
      stmt.span = {name.span.begin, m_tokens[m_pos - 1].span.end};
      end_of_statement();
      module.stmts.push_back(std::move(stmt));
    }
  }

  ExprPtr shape_list() {
    if (!at(TokKind::LBracket) && !at(TokKind::LParen)) unexpected("a shape such as [64, 1024]");
    return postfix();
  }

  void words(Stmt& stmt) {
    while (at(TokKind::Ident)) {
      const Token& w = advance();
      stmt.words.push_back({w.text, w.span});
    }
  }

  // [SECTION] form 2: input line and layers
  void sequential_form(Module& module) {
    if (at_ident("input")) {
      Stmt stmt;
      stmt.kind = StmtKind::Input;
      const Token& kw = advance();
      stmt.name = "input";
      stmt.name_span = kw.span;
      if (at(TokKind::Colon)) advance();
      stmt.value = shape_list();
      words(stmt);
      stmt.span = {kw.span.begin, m_tokens[m_pos - 1].span.end};
      end_of_statement();
      module.stmts.push_back(std::move(stmt));
    } else {
      m_src.fail(peek().span, std::string("missing input line: ") + kSequentialHint);
    }
    if (at(TokKind::End)) {
      m_src.fail(m_src.end_span(),
                 "no layers after the input line: add layers such as 'Linear(784, 10)'");
    }
    // Optional `model = nn.Sequential(`.
    if (at(TokKind::Ident) && at(TokKind::Assign, 1) && at_sequential_call(2)) {
      advance();
      advance();
    }
    if (at_sequential_call(0)) {
      while (!at(TokKind::LParen)) advance();
      const Token& open = advance();
      while (!at(TokKind::RParen)) {
        if (at(TokKind::End)) expect_close(TokKind::RParen, open);
        layer(module);
        if (!at(TokKind::Comma)) {
          if (at(TokKind::Ident)) {
            m_src.fail(peek().span,
                       "missing ',' before this layer: layers inside Sequential(...) are "
                       "separated by commas");
          }
          break;
        }
        advance();
      }
      expect_close(TokKind::RParen, open);
      end_of_statement();
      if (!at(TokKind::End)) unexpected("end of model after the closing ')' of Sequential");
      return;
    }
    while (!at(TokKind::End)) {
      layer(module);
      if (at(TokKind::Comma)) advance();  // tolerated: lines copied out of an nn.Sequential
      end_of_statement();
    }
  }

  void layer(Module& module) {
    if (at_ident("input")) {
      m_src.fail(peek().span, "a sequential model has exactly one input line, at the top");
    }
    if (!at(TokKind::Ident)) unexpected("a layer such as 'Linear(784, 10)'");
    Stmt stmt;
    stmt.kind = StmtKind::Layer;
    size_t begin = peek().span.begin;
    stmt.value = postfix();
    if (stmt.value->kind != ExprKind::Call) {
      m_src.fail(stmt.value->span, "expected a layer call such as 'ReLU()' (with parentheses)");
    }
    stmt.span = {begin, stmt.value->span.end};
    module.stmts.push_back(std::move(stmt));
  }

  // [SECTION] expressions
  static std::string nesting_message() {
    return "expression nested deeper than " + std::to_string(kMaxNesting) +
           " levels (brackets, calls, unary signs, '**' and '.' chains count)";
  }

  struct DepthGuard {
    DepthGuard(Parser& p, Span at) : m_p(p) {
      if (++m_p.m_depth > kMaxNesting) {
        m_p.m_src.fail(at, nesting_message());
      }
    }
    ~DepthGuard() { --m_p.m_depth; }
    Parser& m_p;
  };

  static ExprPtr make(ExprKind kind, Span span) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->span = span;
    return e;
  }

  static ExprPtr binary(ExprPtr lhs, const Token& op, ExprPtr rhs) {
    auto e = make(ExprKind::Binary, {lhs->span.begin, rhs->span.end});
    e->op_span = op.span;
    e->text = op.text;
    e->children.push_back(std::move(lhs));
    e->children.push_back(std::move(rhs));
    return e;
  }

  ExprPtr expression() {
    ExprPtr lhs = term();
    while (at(TokKind::Plus) || at(TokKind::Minus)) {
      const Token& op = advance();
      lhs = binary(std::move(lhs), op, term());
    }
    return lhs;
  }

  ExprPtr term() {
    ExprPtr lhs = unary();
    while (at(TokKind::Star) || at(TokKind::At) || at(TokKind::Slash) || at(TokKind::SlashSlash) ||
           at(TokKind::Percent)) {
      const Token& op = advance();
      lhs = binary(std::move(lhs), op, unary());
    }
    return lhs;
  }

  ExprPtr unary() {
    if (at(TokKind::Minus) || at(TokKind::Plus)) {
      const Token& op = advance();
      DepthGuard guard(*this, op.span);
      ExprPtr operand = unary();
      auto e = make(ExprKind::Unary, {op.span.begin, operand->span.end});
      e->op_span = op.span;
      e->text = op.text;
      e->children.push_back(std::move(operand));
      return e;
    }
    return power();
  }

  ExprPtr power() {
    ExprPtr base = postfix();
    if (at(TokKind::StarStar)) {
      const Token& op = advance();
      DepthGuard guard(*this, op.span);
      return binary(std::move(base), op, unary());
    }
    return base;
  }

  ExprPtr postfix() {
    ExprPtr e = primary();
    size_t chain = 0;
    while (at(TokKind::Dot) || at(TokKind::LParen)) {
      // Long chains (x.T.T.T...) nest in the tree too; keep them under the same limit.
      if (++chain > static_cast<size_t>(kMaxNesting)) {
        m_src.fail(peek().span, nesting_message());
      }
      if (at(TokKind::Dot)) {
        advance();
        const Token& name = expect(TokKind::Ident, "a name after '.'");
        auto a = make(ExprKind::Attribute, {e->span.begin, name.span.end});
        a->op_span = name.span;
        a->text = name.text;
        a->children.push_back(std::move(e));
        e = std::move(a);
      } else {
        e = call(std::move(e));
      }
    }
    return e;
  }

  ExprPtr call(ExprPtr callee) {
    const Token& open = advance();
    DepthGuard guard(*this, open.span);
    auto c = make(ExprKind::Call, callee->span);
    c->op_span = callee->kind == ExprKind::Attribute || callee->kind == ExprKind::Name
                     ? (callee->kind == ExprKind::Attribute ? callee->op_span : callee->span)
                     : callee->span;
    c->children.push_back(std::move(callee));
    bool seen_keyword = false;
    while (!at(TokKind::RParen)) {
      Arg arg;
      if (at(TokKind::Ident) && at(TokKind::Assign, 1)) {
        const Token& kw = advance();
        advance();
        arg.keyword = kw.text;
        arg.keyword_span = kw.span;
        seen_keyword = true;
      } else if (seen_keyword && !at(TokKind::End) && !at(TokKind::Newline)) {
        m_src.fail(peek().span, "a positional argument cannot follow a keyword argument");
      }
      if (at(TokKind::End) || at(TokKind::Newline)) expect_close(TokKind::RParen, open);
      arg.value = expression();
      c->args.push_back(std::move(arg));
      if (!at(TokKind::Comma)) break;
      advance();
    }
    const Token& close = expect_close(TokKind::RParen, open);
    c->span.end = close.span.end;
    return c;
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TokKind::Ident: {
        advance();
        auto e = make(ExprKind::Name, t.span);
        e->text = t.text;
        return e;
      }
      case TokKind::Int: {
        advance();
        auto e = make(ExprKind::Int, t.span);
        e->int_value = t.int_value;
        return e;
      }
      case TokKind::Float: {
        advance();
        auto e = make(ExprKind::Float, t.span);
        e->float_value = t.float_value;
        return e;
      }
      case TokKind::String: {
        advance();
        auto e = make(ExprKind::String, t.span);
        e->text = t.text;
        return e;
      }
      case TokKind::LParen:
      case TokKind::LBracket:
        return bracketed();
      default:
        break;
    }
    unexpected("a name, a number or '('");
  }

  // (expr) is grouping; (a,) (a, b) () are tuples; [..] is a list.
  ExprPtr bracketed() {
    const Token& open = advance();
    DepthGuard guard(*this, open.span);
    bool is_list = open.kind == TokKind::LBracket;
    TokKind close_kind = is_list ? TokKind::RBracket : TokKind::RParen;
    std::vector<ExprPtr> items;
    bool trailing_comma = false;
    while (!at(close_kind)) {
      if (at(TokKind::End) || at(TokKind::Newline)) expect_close(close_kind, open);
      items.push_back(expression());
      trailing_comma = false;
      if (!at(TokKind::Comma)) break;
      advance();
      trailing_comma = true;
    }
    const Token& close = expect_close(close_kind, open);
    if (!is_list && items.size() == 1 && !trailing_comma) {
      ExprPtr inner = std::move(items[0]);
      inner->span = {open.span.begin, close.span.end};
      return inner;
    }
    auto e = make(is_list ? ExprKind::List : ExprKind::Tuple, {open.span.begin, close.span.end});
    e->children = std::move(items);
    return e;
  }

  const SourceText& m_src;
  std::vector<Token> m_tokens;
  size_t m_pos = 0;
  int m_depth = 0;
};

}  // namespace

Module parse_module(const SourceText& src) {
  return Parser(src, tokenize(src)).run();
}

}  // namespace tilescope::lang::syntax

// The model language before any graph exists: source text with locations, tokens, syntax tree,
// parser.
//
// parser.cpp (with builder.cpp) turns the tree into a Graph; this part only knows grammar. Both forms share one
// expression grammar (Python's precedence: + - < * @ / // % < unary < ** < .attr and calls), so the
// same parser reads `relu(x @ W.T + b)` and `Conv2d(3, 16, kernel_size=(3, 3))`.
#pragma once

#include "sim/graph/graph.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lang {

// The language's product is the graph IR: its vocabulary is used here unqualified.
using graph::DType;
using graph::Graph;
using graph::GraphError;
using graph::Layout;
using graph::Op;
using graph::OpAttrs;
using graph::OpKind;
using graph::Role;
using graph::Shape;
using graph::shape_to_string;
using graph::SourceLoc;
using graph::Tensor;
using graph::TensorId;

}  // namespace tilescope::lang

namespace tilescope::lang::syntax {

// [SECTION] Source text, spans and errors

// A half-open byte range [begin, end) of the source text.
struct Span {
  size_t begin = 0;
  size_t end = 0;
};

// The text being parsed plus what errors need: "file:line:col" and the caret excerpt.
class SourceText {
 public:
  SourceText(std::string_view text, std::string file);

  std::string_view text() const { return m_text; }
  const std::string& file() const { return m_file; }
  SourceLoc loc(size_t offset) const;
  SourceLoc loc(Span span) const { return loc(span.begin); }
  // "<source line>\n^~~~" underlining `span` (clipped to its first line); GraphError indents it.
  std::string excerpt(Span span) const;
  // The span's text with runs of whitespace (newlines included) collapsed to one space.
  std::string normalized(Span span) const;
  // A span covering the end of the text (for "unexpected end of model" errors).
  Span end_span() const;

  [[noreturn]] void fail(Span span, const std::string& message) const;

 private:
  size_t line_index(size_t offset) const;

  std::string_view m_text;
  std::string m_file;
  std::vector<size_t> m_line_starts;
  // The last loc() answered: the parser asks in order along a line, so counting the columns on
  // from there keeps a 60,000-term one-line model linear (counting from the line's start each
  // time made it quadratic: 2.7 s at 60,000 terms, issue #25's fuzzing).
  mutable size_t m_memo_offset = 0, m_memo_line = 0;
  mutable int m_memo_col = 1;
};

// [SECTION] Tokens

enum class TokKind {
  Ident,
  Int,
  Float,
  String,
  Newline,  // end of a logical line (never inside brackets)
  End,
  Colon,
  Comma,
  Dot,
  LParen,
  RParen,
  LBracket,
  RBracket,
  Assign,
  At,
  Plus,
  Minus,
  Star,
  StarStar,
  Slash,
  SlashSlash,
  Percent,
};
const char* tok_kind_name(TokKind kind);  // "identifier", "')'", ...

struct Token {
  TokKind kind = TokKind::End;
  Span span;
  std::string text;  // identifier text, string contents, or the punctuation itself
  int64_t int_value = 0;
  double float_value = 0.0;
};

// Splits the text into tokens; throws GraphError at the first character that is not part of the
// language. Newlines inside () and [] are dropped, as in Python, so calls may span lines.
std::vector<Token> tokenize(const SourceText& src);

// [SECTION] Syntax tree

enum class ExprKind { Name, Int, Float, String, List, Tuple, Unary, Binary, Call, Attribute };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Arg {
  std::string keyword;  // empty for a positional argument
  Span keyword_span;
  ExprPtr value;
};

struct Expr {
  Expr() = default;
  Expr(Expr&&) = default;
  Expr& operator=(Expr&&) = default;
  // Frees the subtree without recursion: `x + x + ... + x` is a left-deep chain as long as the
  // line, and destroying it node by node through ~unique_ptr would overflow the stack.
  ~Expr();

  ExprKind kind = ExprKind::Name;
  Span span;     // the whole expression
  Span op_span;  // Unary/Binary: the operator; Call: the callee's last name; Attribute: the name
  std::string text;  // Name / Attribute: the identifier; String: contents; Unary/Binary: operator
  int64_t int_value = 0;
  double float_value = 0.0;
  // List/Tuple: the items; Unary: [operand]; Binary: [lhs, rhs]; Call: [callee]; Attribute:
  // [object]
  std::vector<ExprPtr> children;
  std::vector<Arg> args;  // Call only
};

struct Word {  // a trailing word of a declaration: role, dtype or layout
  std::string text;
  Span span;
};

enum class StmtKind {
  Decl,    // name: [dims] words        (form 1)
  Assign,  // name = expr               (form 1)
  Input,   // input [dims] words        (form 2)
  Layer,   // Conv2d(...)               (form 2)
};

struct Stmt {
  StmtKind kind = StmtKind::Decl;
  Span span;
  std::string name;  // Decl / Assign target
  Span name_span;
  ExprPtr value;  // Decl/Input: the shape list; Assign: the right-hand side; Layer: the call
  std::vector<Word> words;
};

enum class Form { Expressions, Sequential };

struct Module {
  Form form = Form::Expressions;
  std::vector<Stmt> stmts;
};

// Parses the whole text. Form 2 is recognised by its first statement (`input [...]`, a layer call,
// or `[name =] nn.Sequential(`); anything else is form 1.
Module parse_module(const SourceText& src);

// Deepest nesting of brackets / unary operators the parser accepts; deeper input is an error,
// not a stack overflow.
inline constexpr int kMaxNesting = 64;

}  // namespace tilescope::lang::syntax

// The lesson check language: one claim per line, `expr CMP expr [within N%]`, parsed to a small
// AST.
//
// Grammar (whitespace between tokens is free; `#` starts a comment):
//   check   := expr cmp expr [ "within" NUMBER ["%"] ]        cmp := == != < <= > >=
//   expr    := term { ("+" | "-") term }
//   term    := unary { ("*" | "/") unary }
//   unary   := "-" unary | primary
//   primary := NUMBER | STRING | NAME | NAME "(" [arg {"," arg}] ")" | "[" [expr {"," expr}] "]"
//              | "(" expr ")"
//   arg     := expr | NAME "=" expr                           (keyword arguments come last)
// Numbers are decimal (`1e6`, `0.5`); strings are double-quoted with \" and \\ escapes; names are
// identifiers (letters, digits, `_`). What a name means (an op, a model or steps id, a machine, a
// cache level) is decided by the checker, which knows the lesson's models.
//
// A chain such as `a + b - c` is one Binary node with every operand, not a tree one level per
// operator, so the tree is only as deep as the brackets, calls, lists and unary '-' nest; that
// nesting is capped at kMaxCheckNesting, so nothing that walks a check can run out of stack.
#pragma once

#include "sim/graph/graph.h"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

// Anything wrong with a lesson file: what() is "file:line:col: error: message". Control
// characters and invalid UTF-8 in the message (quoted from the lesson) are escaped as \xNN.
class LessonError : public std::runtime_error {
 public:
  LessonError(graph::SourceLoc loc, const std::string& message);
  const graph::SourceLoc& loc() const { return m_loc; }
  const std::string& message() const { return m_message; }

 private:
  graph::SourceLoc m_loc;
  std::string m_message;
};

// Deepest nesting of brackets, calls, lists and unary '-' a check may have; deeper is an error
// at the column where the limit is crossed, not a stack overflow.
inline constexpr int kMaxCheckNesting = 64;

struct Expr {
  enum class Kind { Number, String, Name, List, Call, Negate, Binary };
  Kind kind = Kind::Number;
  double number = 0;
  std::string text;  // String: the value; Name: the identifier; Call: the function name
  // Binary: the operators between the operands, left to right, each '+', '-', '*' or '/'
  // (`a - b + c` has "-+"); one chain holds operators of one precedence level only.
  std::string ops;
  // List: items; Call: positional arguments, then keyword arguments (names in `keywords`);
  // Negate: the operand; Binary: the operands, ops.size() + 1 of them, evaluated left to right.
  std::vector<Expr> args;
  std::vector<std::string> keywords;  // Call: names of the last keywords.size() args
  graph::SourceLoc loc;               // Binary: its first operator

  size_t positional() const { return args.size() - keywords.size(); }
  // The keyword argument `name`, or nullptr.
  const Expr* keyword(const std::string& name) const;
  std::string to_string() const;  // canonical text, for messages
};

enum class Compare { Eq, Ne, Lt, Le, Gt, Ge };
const char* compare_text(Compare);

struct Check {
  Expr lhs;
  Compare op = Compare::Eq;
  Expr rhs;
  double tolerance = 0;  // relative; `within 5%` → 0.05, `within 0.01` → 0.01
  std::string text;      // the line as written (trimmed, without the comment)
  graph::SourceLoc loc;  // where the line's text starts
};

// Parses one check line. `loc` is where `text` starts in the lesson file (columns count from it).
// Throws LessonError at the offending column.
Check parse_check(std::string_view text, const graph::SourceLoc& loc);

// "; did you mean 'flops'?" when one of `known` is within two edits of `name`, else "" — for
// messages about a misspelt function, op, predict key or unit.
std::string suggestion(const std::string& name, const std::vector<std::string>& known);

// Parses a single expression (the whole text); used by tests and the player's "evaluate" box.
Expr parse_expr(std::string_view text, const graph::SourceLoc& loc);

}  // namespace tilescope::lesson

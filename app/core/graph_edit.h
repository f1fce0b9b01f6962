// The graph view's palette as edits of the model text (the single source of truth): add an input
// or weight declaration, append `t1 = relu(x)` for an op on named tensors, delete an unused line.
//
// Pure C++ (no ImGui): every edit is a function from text to text, and every result is checked by
// the model parser, so an edit that would not parse (a shape mismatch, say) is refused with the
// parser's own message and the text stays as it was.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// One op the palette offers: its palette name, how many tensor operands it takes, and the
// expression it writes (operands $0 $1 $2; extra `key=value` arguments go where $k is).
struct PaletteOp {
  const char* name;      // "relu", "matmul_t", ...
  int arity;             // tensor operands
  const char* pattern;   // "relu($0$k)", "$0 @ $1.T"
  const char* label;     // button text: "relu", "A @ B.T"
  const char* help;      // one line for the tooltip
  const char* defaults;  // key=value arguments written when the user gives none ("" = none)
};
std::span<const PaletteOp> palette_ops();
const PaletteOp* find_palette_op(std::string_view name);

struct TextEdit {
  bool ok = false;
  std::string text;     // the new model text (the old text when refused)
  std::string message;  // what was done, or why it was refused (the parser's message when it is)
  std::string name;     // the tensor the edit added or removed
};

// A named tensor of the text: a declaration `x: [..]` or an assignment `y = ...` (constants such
// as `D = 256` are assignments too), with its lines and the names its right-hand side uses.
struct NamedLine {
  std::string name;
  bool declaration = false;
  bool constant = false;              // `D = 256`, `N = 2 * D`: a number, not a tensor
  int first_line = 0, last_line = 0;  // 1-based, inclusive (a call may span lines)
  std::vector<std::string> uses;      // names read by the right-hand side
};
struct ModelOutline {
  bool expressions = true;  // form 1; false for an nn.Sequential-style list (form 2)
  std::vector<NamedLine> lines;
  std::vector<std::string> identifiers;  // every identifier in the text (fresh names avoid them)
  std::string error;                     // the syntax error, when the text does not parse
};
ModelOutline outline_model(std::string_view text);

// The tensor names (declarations and tensor assignments, not constants), in text order, once each.
std::vector<std::string> named_tensors(const ModelOutline& outline);

// "t1", "t2", ...: the first not used anywhere in the text.
std::string fresh_tensor_name(std::string_view text);

// Adds `name: [dims]` (plus " weight" for a weight, plus a dtype word when given) after the last
// declaration. `dims` is "64,128" or "64 128" or "[T, D]" (names of constants allowed).
TextEdit palette_add_input(std::string_view text, const std::string& name, std::string_view dims,
                           bool weight, const std::string& dtype = {});

// Appends `out = <op pattern over operands>`; out is fresh when empty. `keywords` are extra
// `key=value` arguments for ops that take them (conv2d padding=1, max_pool2d kernel_size=3).
TextEdit palette_add_op(std::string_view text, const std::string& op,
                        const std::vector<std::string>& operands,
                        const std::vector<std::string>& keywords = {}, const std::string& out = {});

// Removes the line(s) that define `name` when no later line uses it; otherwise refuses and says
// which lines use it.
TextEdit palette_delete(std::string_view text, const std::string& name);

// A whole palette command's arguments (what follows `palette` in a script line):
//   input NAME DIMS [fp16|bf16|int8]      weight NAME DIMS [dtype]
//   add OP A [B [C]] [key=value ...] [as NAME]      delete NAME
TextEdit apply_palette_command(std::string_view text, std::string_view args);

}  // namespace tilescope::core

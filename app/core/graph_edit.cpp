// The palette's text edits: outline the model's named lines, add declarations and op lines, delete
// unused lines; every edit re-parsed by the model parser before it is accepted.
#include "app/core/graph_edit.h"

#include "sim/pipeline.h"
#include "sim/lang/syntax.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <set>

namespace tilescope::core {
namespace {

namespace syn = lang::syntax;

// [SECTION] The ops

// Operands are $0 $1 $2; $k is ", key=value, ..." (the user's keywords, else the defaults).
constexpr PaletteOp kOps[] = {
    {"relu", 1, "relu($0$k)", "relu", "max(x, 0) elementwise", ""},
    {"gelu", 1, "gelu($0$k)", "gelu", "GELU (tanh approximation) elementwise", ""},
    {"sigmoid", 1, "sigmoid($0$k)", "sigmoid", "1 / (1 + exp(-x)) elementwise", ""},
    {"tanh", 1, "tanh($0$k)", "tanh", "tanh elementwise", ""},
    {"softmax", 1, "softmax($0$k)", "softmax", "softmax along the last dim", "dim=-1"},
    {"transpose", 1, "$0.T", "A.T", "swap the last two dims (a copy)", ""},
    {"flatten", 1, "flatten($0$k)", "flatten", "flatten all dims after the first", "start_dim=1"},
    {"maxpool", 1, "max_pool2d($0$k)", "maxpool", "2-D max pooling of an NCHW tensor",
     "kernel_size=2"},
    {"avgpool", 1, "avg_pool2d($0$k)", "avgpool", "2-D average pooling of an NCHW tensor",
     "kernel_size=2"},
    {"sum", 1, "sum($0$k)", "sum", "sum over the last dim", "dim=-1"},
    {"mean", 1, "mean($0$k)", "mean", "mean over the last dim", "dim=-1"},
    {"matmul", 2, "$0 @ $1", "A @ B", "matrix product: A [.., M, K] @ B [K, N]", ""},
    {"matmul_t", 2, "$0 @ $1.T", "A @ B.T", "A [.., M, K] @ B.T with B [N, K], as nn.Linear", ""},
    {"add", 2, "$0 + $1", "A + B", "elementwise sum, broadcasting (a bias is a [N] B)", ""},
    {"sub", 2, "$0 - $1", "A - B", "elementwise difference, broadcasting", ""},
    {"mul", 2, "$0 * $1", "A * B", "elementwise product, broadcasting", ""},
    {"conv2d", 2, "conv2d($0, $1$k)", "conv2d",
     "A [N, C, H, W] conv B [K, C, R, S]; e.g. padding=1 stride=2", ""},
    {"layernorm", 3, "layer_norm($0, $1, $2$k)", "layernorm",
     "normalize A over its last dim D; B = gamma [D], C = beta [D]", ""},
};

// [SECTION] Helpers

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Both walks below use an explicit stack: a model line may be a 20,000-term chain, whose syntax
// tree is 20,000 levels deep on one side.
void collect_names(const syn::Expr& root, std::vector<std::string>& out) {
  std::vector<const syn::Expr*> todo = {&root};
  while (!todo.empty()) {
    const syn::Expr& e = *todo.back();
    todo.pop_back();
    if (e.kind == syn::ExprKind::Name && std::find(out.begin(), out.end(), e.text) == out.end())
      out.push_back(e.text);
    // Children are pushed in reverse so names come out in reading order.
    for (auto a = e.args.rbegin(); a != e.args.rend(); ++a)
      if (a->value) todo.push_back(a->value.get());
    for (auto c = e.children.rbegin(); c != e.children.rend(); ++c)
      if (*c) todo.push_back(c->get());
  }
}

// Whether an expression is a number made of numbers and earlier constants (`2 * D`).
bool is_constant_expr(const syn::Expr& root, const std::set<std::string>& constants) {
  std::vector<const syn::Expr*> todo = {&root};
  while (!todo.empty()) {
    const syn::Expr& e = *todo.back();
    todo.pop_back();
    switch (e.kind) {
      case syn::ExprKind::Int:
      case syn::ExprKind::Float:
        break;
      case syn::ExprKind::Name:
        if (!constants.count(e.text)) return false;
        break;
      case syn::ExprKind::Unary:
      case syn::ExprKind::Binary:
        for (const syn::ExprPtr& c : e.children) {
          if (!c) return false;
          todo.push_back(c.get());
        }
        break;
      default:
        return false;
    }
  }
  return true;
}

// A model that only declares tensors does not parse ("computes nothing"), but it is where a model
// built with the palette starts: the palette accepts it and the editor shows the parser's hint.
bool unfinished_only(const graph::GraphError& e) {
  return e.message().rfind("the model computes nothing", 0) == 0 ||
         e.message().rfind("empty model", 0) == 0;
}

// Byte offset where 1-based line `line` starts; text.size() past the end.
size_t line_start(std::string_view text, int line) {
  size_t pos = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return text.size();
    pos = nl + 1;
  }
  return pos;
}

std::string located(const graph::GraphError& e) {
  const graph::SourceLoc& loc = e.loc();
  if (loc.line <= 0) return e.message();
  return "line " + std::to_string(loc.line) + ", col " + std::to_string(loc.col) + ": " +
         e.message();
}

TextEdit refuse(std::string_view text, std::string message) {
  TextEdit r;
  r.text = std::string(text);
  r.message = std::move(message);
  return r;
}

// The common preconditions: the text parses now and is in form 1.
std::optional<TextEdit> check_base(std::string_view text, const ModelOutline& outline) {
  if (!outline.error.empty())
    return refuse(text, "the model text has an error; fix it first (" + outline.error + ")");
  if (!outline.expressions) {
    return refuse(text,
                  "the palette edits models written as expressions (x: [64, 128], y = relu(x)); "
                  "this model is an nn.Sequential-style list of layers, so edit its text");
  }
  try {
    pipeline::parse({std::string(text), "<model>"});
  } catch (const graph::GraphError& e) {
    if (!unfinished_only(e))
      return refuse(text, "the model text has an error; fix it first (" + located(e) + ")");
  }
  return std::nullopt;
}

const NamedLine* last_definition(const ModelOutline& o, const std::string& name) {
  const NamedLine* found = nullptr;
  for (const NamedLine& l : o.lines)
    if (l.name == name) found = &l;
  return found;
}

std::string named_list(const ModelOutline& o) {
  std::string s;
  for (const std::string& name : named_tensors(o)) s += (s.empty() ? "" : ", ") + name;
  return s.empty() ? "none" : s;
}

// Accepts `candidate` when it parses; otherwise refuses with the parser's message.
TextEdit validated(std::string_view old_text, std::string candidate, const std::string& what,
                   const std::string& name, const std::string& done) {
  try {
    pipeline::parse({candidate, "<model>"});
  } catch (const graph::GraphError& e) {
    if (!unfinished_only(e)) return refuse(old_text, "cannot " + what + ": " + located(e));
  }
  TextEdit r;
  r.ok = true;
  r.text = std::move(candidate);
  r.name = name;
  r.message = done;
  return r;
}

// Inserts `line` (no newline) before 1-based line `before` (past the end = append).
std::string insert_line(std::string_view text, int before, const std::string& line) {
  std::string out(text);
  size_t at = line_start(text, before);
  if (at == out.size() && !out.empty() && out.back() != '\n') {
    out.push_back('\n');
    at = out.size();
  }
  out.insert(at, line + "\n");
  return out;
}

}  // namespace

// [SECTION] Public API

std::span<const PaletteOp> palette_ops() {
  return kOps;
}

const PaletteOp* find_palette_op(std::string_view name) {
  for (const PaletteOp& op : kOps)
    if (name == op.name) return &op;
  return nullptr;
}

ModelOutline outline_model(std::string_view text) {
  ModelOutline o;
  try {
    const syn::SourceText src(text, "");
    for (const syn::Token& t : syn::tokenize(src))
      if (t.kind == syn::TokKind::Ident) o.identifiers.push_back(t.text);
    const syn::Module m = syn::parse_module(src);
    o.expressions = m.form == syn::Form::Expressions;
    std::set<std::string> constants;
    for (const syn::Stmt& s : m.stmts) {
      if (s.kind != syn::StmtKind::Decl && s.kind != syn::StmtKind::Assign) continue;
      NamedLine l;
      l.name = s.name;
      l.declaration = s.kind == syn::StmtKind::Decl;
      l.first_line = src.loc(s.span.begin).line;
      l.last_line = src.loc(s.span.end > s.span.begin ? s.span.end - 1 : s.span.begin).line;
      if (s.value) collect_names(*s.value, l.uses);
      l.constant = !l.declaration && s.value && is_constant_expr(*s.value, constants);
      if (l.constant) constants.insert(l.name);
      o.lines.push_back(std::move(l));
    }
  } catch (const graph::GraphError& e) {
    if (!unfinished_only(e)) o.error = located(e);  // an empty text has no lines, no error
  }
  return o;
}

std::vector<std::string> named_tensors(const ModelOutline& outline) {
  std::vector<std::string> out;
  for (const NamedLine& l : outline.lines)
    if (!l.constant && std::find(out.begin(), out.end(), l.name) == out.end())
      out.push_back(l.name);
  return out;
}

std::string fresh_tensor_name(std::string_view text) {
  const ModelOutline o = outline_model(text);
  std::set<std::string> used(o.identifiers.begin(), o.identifiers.end());
  for (int i = 1;; ++i) {
    std::string name = "t" + std::to_string(i);
    if (!used.count(name)) return name;
  }
}

TextEdit palette_add_input(std::string_view text, const std::string& name, std::string_view dims,
                           bool weight, const std::string& dtype) {
  const char* kind = weight ? "weight" : "input";
  const ModelOutline o = outline_model(text);
  if (auto bad = check_base(text, o)) return *bad;
  if (!is_identifier(name))
    return refuse(text, std::string(kind) + ": '" + name + "' is not a name (letters, digits, _)");
  if (const NamedLine* l = last_definition(o, name)) {
    return refuse(text, std::string(kind) + ": '" + name + "' is already defined on line " +
                            std::to_string(l->first_line));
  }
  std::string d(dims);
  std::replace_if(
      d.begin(), d.end(), [](char c) { return c == '[' || c == ']' || c == ','; }, ' ');
  const std::vector<std::string> parts = split_words(d);
  if (parts.empty())
    return refuse(text, std::string(kind) + " " + name + ": needs a shape such as 64,128");
  std::string line = name + ": [";
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? ", " : "") + parts[i];
  line += "]";
  if (weight) line += " weight";
  if (!dtype.empty()) line += " " + dtype;
  // After the last declaration; with none, before the first statement; else at the end.
  constexpr int kEnd = 1 << 30;
  int before = kEnd;
  for (const NamedLine& l : o.lines)
    if (l.declaration) before = l.last_line + 1;
  if (before == kEnd && !o.lines.empty()) before = o.lines.front().first_line;
  return validated(text, insert_line(text, before, line), "add '" + line + "'", name,
                   "added '" + line + "'");
}

TextEdit palette_add_op(std::string_view text, const std::string& op_name,
                        const std::vector<std::string>& operands,
                        const std::vector<std::string>& keywords, const std::string& out) {
  const PaletteOp* op = find_palette_op(op_name);
  if (!op) {
    std::string known;
    for (const PaletteOp& k : kOps) known += (known.empty() ? "" : ", ") + std::string(k.name);
    return refuse(text, "add: unknown op '" + op_name + "' (known: " + known + ")");
  }
  const ModelOutline o = outline_model(text);
  if (auto bad = check_base(text, o)) return *bad;
  if (static_cast<int>(operands.size()) != op->arity) {
    return refuse(text, "add " + op_name + ": needs " + std::to_string(op->arity) + " tensor" +
                            (op->arity == 1 ? "" : "s") + ", got " +
                            std::to_string(operands.size()));
  }
  for (const std::string& name : operands) {
    const NamedLine* def = last_definition(o, name);
    if (!def || def->constant) {
      return refuse(text, "add " + op_name + ": '" + name +
                              "' is not a named tensor of the model text (named: " + named_list(o) +
                              ")");
    }
  }
  for (const std::string& kw : keywords) {
    const size_t eq = kw.find('=');
    if (eq == std::string::npos || !is_identifier(kw.substr(0, eq)) || eq + 1 == kw.size())
      return refuse(text, "add " + op_name + ": expected key=value, got '" + kw + "'");
    if (kw.find_first_of("\n#") != std::string::npos)
      return refuse(text, "add " + op_name + ": '" + kw + "' may not hold a newline or '#'");
  }
  if (!keywords.empty() && !std::strstr(op->pattern, "$k"))
    return refuse(text, "add " + op_name + ": takes no key=value arguments");
  std::string name = out.empty() ? fresh_tensor_name(text) : out;
  if (!is_identifier(name)) return refuse(text, "add: '" + name + "' is not a name");
  if (const NamedLine* l = last_definition(o, name)) {
    return refuse(text, "add: '" + name + "' is already defined on line " +
                            std::to_string(l->first_line) + "; pick another name");
  }
  std::string kwtext;
  if (!keywords.empty()) {
    for (const std::string& kw : keywords) kwtext += ", " + kw;
  } else if (*op->defaults) {
    kwtext = std::string(", ") + op->defaults;
  }
  std::string expr;
  for (const char* p = op->pattern; *p; ++p) {
    if (*p == '$' && p[1] >= '0' && p[1] <= '2') {
      expr += operands[static_cast<size_t>(p[1] - '0')];
      ++p;
    } else if (*p == '$' && p[1] == 'k') {
      expr += kwtext;
      ++p;
    } else {
      expr.push_back(*p);
    }
  }
  const std::string line = name + " = " + expr;
  return validated(text, insert_line(text, 1 << 30, line), "add '" + line + "'", name,
                   "added '" + line + "'");
}

TextEdit palette_delete(std::string_view text, const std::string& name) {
  const ModelOutline o = outline_model(text);
  if (auto bad = check_base(text, o)) return *bad;
  const NamedLine* def = last_definition(o, name);
  if (!def) {
    return refuse(text, "delete: no line defines '" + name + "' (named: " + named_list(o) + ")");
  }
  std::string users;
  int count = 0;
  for (const NamedLine& l : o.lines) {
    if (l.first_line <= def->first_line) continue;
    if (std::find(l.uses.begin(), l.uses.end(), name) == l.uses.end()) continue;
    users += (users.empty() ? "" : ", ") +
             ("line " + std::to_string(l.first_line) + " (" + l.name + ")");
    ++count;
  }
  if (count > 0) {
    return refuse(text, "delete: '" + name + "' is used by " + users + "; delete " +
                            (count == 1 ? "that line" : "those lines") + " first");
  }
  std::string candidate(text);
  const size_t begin = line_start(text, def->first_line);
  const size_t end = line_start(text, def->last_line + 1);
  candidate.erase(begin, end - begin);
  const std::string what =
      def->first_line == def->last_line
          ? "line " + std::to_string(def->first_line)
          : "lines " + std::to_string(def->first_line) + "-" + std::to_string(def->last_line);
  return validated(text, std::move(candidate), "delete '" + name + "'", name,
                   "deleted " + what + " ('" + name + "')");
}

TextEdit apply_palette_command(std::string_view text, std::string_view args) {
  std::vector<std::string> w = split_words(args);
  const std::string verb = w.empty() ? std::string() : w[0];
  if (verb == "input" || verb == "weight") {
    if (w.size() < 3)
      return refuse(text, "palette " + verb + ": expected NAME DIMS, e.g. x 64,128");
    std::string dtype;
    static const std::set<std::string> kDtypes = {"fp32", "fp16", "bf16", "int8"};
    if (w.size() > 3 && kDtypes.count(w.back())) {
      dtype = w.back();
      w.pop_back();
    }
    std::string dims;
    for (size_t i = 2; i < w.size(); ++i) dims += w[i] + " ";
    return palette_add_input(text, w[1], dims, verb == "weight", dtype);
  }
  if (verb == "add") {
    if (w.size() < 3) return refuse(text, "palette add: expected OP A [B [C]], e.g. add relu x");
    std::vector<std::string> operands, keywords;
    std::string out;
    for (size_t i = 2; i < w.size(); ++i) {
      if (w[i] == "as") {
        if (i + 2 != w.size()) return refuse(text, "palette add: 'as' takes one name, at the end");
        out = w[i + 1];
        break;
      }
      (w[i].find('=') != std::string::npos ? keywords : operands).push_back(w[i]);
    }
    return palette_add_op(text, w[1], operands, keywords, out);
  }
  if (verb == "delete") {
    if (w.size() != 2) return refuse(text, "palette delete: expected one tensor name");
    return palette_delete(text, w[1]);
  }
  return refuse(text, "palette: expected input, weight, add or delete, got '" + verb + "'");
}

}  // namespace tilescope::core

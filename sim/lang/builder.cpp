// The model language's shared lowering: name suggestions, values, argument binding, and the
// Builder's conversions, graph construction and evaluation that both forms use.
#include "sim/lang/builder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace tilescope::lang::detail {

// [SECTION] limits and names

namespace {

// Optimal-string-alignment distance; a case change costs half, so 'Conv2D' → 'Conv2d' wins.
int edit_distance_x2(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(2 * i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(2 * j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int sub = a[i - 1] == b[j - 1] ? 0
                : std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]))
                    ? 1
                    : 2;
      d[i][j] = std::min({d[i - 1][j] + 2, d[i][j - 1] + 2, d[i - 1][j - 1] + sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 2);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  if (name.size() > 64) return {};
  const std::string* best = nullptr;
  int best_d = 0;
  for (const std::string& c : candidates) {
    if (c.size() > 64) continue;
    int dist = edit_distance_x2(name, c);
    if (!best || dist < best_d) {
      best = &c;
      best_d = dist;
    }
  }
  // Allow about one edit per three characters (at least one), counted in half-edits.
  int allowed = 2 * std::max<int>(1, static_cast<int>(name.size()) / 3);
  if (!best || best_d > allowed) return {};
  return " \xE2\x80\x94 did you mean '" + *best + "'?";
}

std::string plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::optional<int64_t> checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxNumel) return std::nullopt;
  }
  return n;
}

// [SECTION] values

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::None:
      return "None";
    case Value::Kind::Bool:
      return "True/False";
    case Value::Kind::Int:
      return "an integer";
    case Value::Kind::Float:
      return "a number";
    case Value::Kind::String:
      return "a string";
    case Value::Kind::List:
      return "a list";
    case Value::Kind::Tensor:
      return "a tensor";
  }
  return "?";
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// [SECTION] argument binding

std::string primary_name(const std::string& spec) {
  return spec.substr(0, spec.find('|'));
}

bool name_matches(const std::string& spec, const std::string& keyword) {
  size_t start = 0;
  while (start <= spec.size()) {
    size_t bar = spec.find('|', start);
    if (bar == std::string::npos) bar = spec.size();
    if (spec.compare(start, bar - start, keyword) == 0) return true;
    start = bar + 1;
  }
  return false;
}

// [SECTION] the builder (shared by both forms)

Graph Builder::build(const Module& module) {
  if (module.form == Form::Expressions) {
    build_expressions(module);
  } else {
    build_sequential(module);
  }
  return std::move(m_graph);
}

int64_t Builder::to_int(const Value& v, const std::string& what, int64_t lo, int64_t hi) const {
  if (v.kind == Value::Kind::Float) {
    fail(v.span, what + " must be an integer, got " + format_number(v.real) +
                     (v.real == std::floor(v.real) ? " (use // for integer division)" : ""));
  }
  if (v.kind != Value::Kind::Int) {
    fail(v.span, what + " must be an integer, got " + kind_name(v.kind));
  }
  if (v.integer < lo) {
    fail(v.span,
         what + " must be at least " + std::to_string(lo) + ", got " + std::to_string(v.integer));
  }
  if (v.integer > hi) {
    fail(v.span,
         what + " must be at most " + std::to_string(hi) + ", got " + std::to_string(v.integer));
  }
  return v.integer;
}

std::array<int64_t, 2> Builder::to_pair(const Value& v, const std::string& what, int64_t lo) const {
  if (v.kind == Value::Kind::List) {
    if (v.items.size() != 2) {
      fail(v.span, what + " must be one integer or a pair (height, width), got " +
                       plural(static_cast<int64_t>(v.items.size()), "value"));
    }
    return {to_int(v.items[0], what, lo, kMaxWindowInt),
            to_int(v.items[1], what, lo, kMaxWindowInt)};
  }
  int64_t x = to_int(v, what, lo, kMaxWindowInt);
  return {x, x};
}

bool Builder::to_bool(const Value& v, const std::string& what) const {
  if (v.kind != Value::Kind::Bool) {
    fail(v.span, what + " must be True or False, got " + kind_name(v.kind));
  }
  return v.boolean;
}

double Builder::to_double(const Value& v, const std::string& what) const {
  if (!v.is_number()) fail(v.span, what + " must be a number, got " + kind_name(v.kind));
  return v.as_double();
}

std::string Builder::to_string_value(const Value& v, const std::string& what) const {
  if (v.kind != Value::Kind::String) {
    fail(v.span, what + " must be a string, got " + kind_name(v.kind));
  }
  return v.text;
}

// A dimension index as PyTorch takes it: -rank..rank-1, returned non-negative.
int Builder::to_dim(const Value& v, const std::string& what, const Shape& shape) const {
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t d = to_int(v, what, INT64_MIN, INT64_MAX);
  if (rank == 0 || d < -rank || d >= rank) {
    fail(v.span,
         what + " " + std::to_string(d) + " is out of range for a " + std::to_string(rank) +
             "-D tensor " + shape_to_string(shape) +
             (rank ? " (valid: " + std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")"
                   : ""));
  }
  return static_cast<int>(d < 0 ? d + rank : d);
}

// A list of integers (a shape or a list of dims); a single integer counts as a list of one.
std::vector<int64_t> Builder::to_int_list(const Value& v, const std::string& what, int64_t lo,
                                          int64_t hi) const {
  if (v.kind == Value::Kind::Int) return {to_int(v, what, lo, hi)};
  if (v.kind != Value::Kind::List) {
    fail(v.span, what + " must be a list of integers, got " + kind_name(v.kind));
  }
  std::vector<int64_t> out;
  for (const Value& item : v.items) out.push_back(to_int(item, what, lo, hi));
  return out;
}

// Matches evaluated arguments to a parameter list, the way Python does.
BoundArgs Builder::bind(const std::string& callee, const Params& params, const CallArgs& args,
                        Span call_span) const {
  BoundArgs bound;
  bound.values.resize(params.names.size());
  if (args.positional.size() > params.names.size()) {
    const Value& extra = args.positional[params.names.size()];
    fail(extra.span, callee + " takes at most " +
                         plural(static_cast<int64_t>(params.names.size()), "argument") + " but " +
                         std::to_string(args.positional.size()) + " were given");
  }
  for (size_t i = 0; i < args.positional.size(); ++i) bound.values[i] = args.positional[i];
  for (size_t k = 0; k < args.keyword.size(); ++k) {
    const auto& [keyword, value] = args.keyword[k];
    size_t index = params.names.size();
    for (size_t i = 0; i < params.names.size(); ++i) {
      if (name_matches(params.names[i], keyword)) index = i;
    }
    if (index == params.names.size()) {
      std::vector<std::string> known;
      for (const auto& p : params.names) known.push_back(primary_name(p));
      std::string list;
      for (const auto& p : known) list += (list.empty() ? "" : ", ") + p;
      std::string hint = suggestion(keyword, known);
      fail(args.keyword_spans[k],
           callee + " has no argument '" + keyword + "'" +
               (hint.empty() ? " (it takes: " + (list.empty() ? "none" : list) + ")" : hint));
    }
    if (bound.values[index]) {
      fail(args.keyword_spans[k],
           callee + " got two values for argument '" + primary_name(params.names[index]) + "'");
    }
    bound.values[index] = value;
  }
  for (size_t i = 0; i < params.required; ++i) {
    if (!bound.values[i]) {
      fail(call_span,
           callee + " is missing its required argument '" + primary_name(params.names[i]) + "'");
    }
  }
  return bound;
}

// A name no tensor, op or user declaration uses: "matmul0", "matmul1", ...
std::string Builder::fresh_name(const std::string& stem) {
  int& next = m_next_index[stem];
  while (true) {
    std::string name = stem + std::to_string(next++);
    if (!m_reserved.count(name) && !m_graph.find_op(name) && !m_graph.find_tensor(name)) {
      return name;
    }
  }
}

// Work (multiply-adds or window steps per output element) of the op, for the size guard.
int64_t Builder::work_per_output(const Op& op, const std::vector<const Tensor*>& in) {
  switch (op.kind) {
    case OpKind::MatMul: {
      const Shape& a = in[0]->shape;
      return op.attrs.trans_a ? a[a.size() - 2] : a.back();
    }
    case OpKind::Conv2D: {
      const Shape& w = in[1]->shape;
      return w[1] * w[2] * w[3];  // ≤ numel(w) ≤ 2^40
    }
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
      return op.attrs.kernel[0] * op.attrs.kernel[1];  // ≤ 2^62
    default:
      return 1;
  }
}

// Adds one op; shape errors come back at `at`, the expression or layer that made the op.
TensorId Builder::emit(OpKind kind, const std::string& stem, std::vector<TensorId> inputs,
                       OpAttrs attrs, Span at, const std::string& out_name,
                       const std::string& origin, const std::string& op_name) {
  Op op;
  op.kind = kind;
  op.name = op_name.empty() ? fresh_name(stem) : op_name;
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.loc = m_src.loc(at);
  op.origin = origin;
  std::vector<const Tensor*> in;
  for (TensorId id : op.inputs) in.push_back(&m_graph.tensor(id));
  Shape out;
  try {
    out = infer_shape(op, in);
  } catch (const GraphError& e) {
    fail(at, e.message());
  }
  std::optional<int64_t> numel = checked_numel(out);
  if (!numel) {
    fail(at, op.name + " (" + op_kind_name(kind) + ") would produce " + shape_to_string(out) +
                 ", more than 2^40 elements");
  }
  int64_t work = 0;
  if (__builtin_mul_overflow(*numel, work_per_output(op, in), &work) ||
      __builtin_add_overflow(m_total_work, work, &m_total_work) || m_total_work > kMaxWork) {
    fail(at, "model too large: " + op.name + " (" + op_kind_name(kind) +
                 ") brings the model past 2^54 multiply-adds");
  }
  try {
    return m_graph.add_op(std::move(op), out_name);
  } catch (const GraphError& e) {
    fail(at, e.message());
  }
}

TensorId Builder::declare(const std::string& name, const Shape& shape, DType dtype, Layout layout,
                          Role role, Span at) {
  Tensor t;
  t.name = name;
  t.shape = shape;
  t.dtype = dtype;
  t.layout = layout;
  t.role = role;
  t.loc = m_src.loc(at);
  try {
    return m_graph.add_tensor(std::move(t));
  } catch (const GraphError& e) {
    fail(at, e.message());
  }
}

Shape Builder::checked_shape(const Value& v, const std::string& what) const {
  if (v.kind != Value::Kind::List) {
    fail(v.span, what + " must be a list of sizes such as [64, 1024], got " + kind_name(v.kind));
  }
  if (v.items.empty()) fail(v.span, what + " needs at least one dimension");
  Shape shape;
  for (const Value& item : v.items) shape.push_back(to_int(item, "a dimension", 1, kMaxNumel));
  if (!checked_numel(shape)) {
    fail(v.span, what + " " + shape_to_string(shape) +
                     " has more than 2^40 elements; tilescope models are far smaller");
  }
  return shape;
}

// Trailing words of a declaration or input line: role, dtype, layout (each at most once).
void Builder::apply_words(const std::vector<syntax::Word>& words, const Shape& shape, DType& dtype,
                          Layout& layout, Role& role, bool allow_role) const {
  static const std::vector<std::string> kWords = {"weight", "input", "fp32", "fp16",    "bf16",
                                                  "int8",   "nchw",  "nhwc", "rowmajor"};
  bool seen_role = false, seen_dtype = false, seen_layout = false;
  for (const auto& w : words) {
    auto once = [&](bool& seen, const char* what) {
      if (seen) fail(w.span, std::string("a second ") + what + " word '" + w.text + "'");
      seen = true;
    };
    if (w.text == "weight" || w.text == "input") {
      if (!allow_role) fail(w.span, "the input line takes no role word");
      once(seen_role, "role");
      role = w.text == "weight" ? Role::Weight : Role::Input;
    } else if (w.text == "fp32" || w.text == "fp16" || w.text == "bf16" || w.text == "int8") {
      once(seen_dtype, "dtype");
      dtype = w.text == "fp32"   ? DType::F32
              : w.text == "fp16" ? DType::F16
              : w.text == "bf16" ? DType::BF16
                                 : DType::I8;
    } else if (w.text == "nchw" || w.text == "nhwc" || w.text == "rowmajor") {
      once(seen_layout, "layout");
      if (w.text != "rowmajor" && shape.size() != 4) {
        fail(w.span,
             "layout " + w.text + " needs a 4-D shape [N, C, H, W], got " + shape_to_string(shape));
      }
      layout = w.text == "nchw" ? Layout::NCHW : w.text == "nhwc" ? Layout::NHWC : Layout::RowMajor;
    } else {
      fail(w.span, "unknown word '" + w.text +
                       "' after the shape (expected weight|input, fp32|fp16|bf16|int8, "
                       "nchw|nhwc|rowmajor)" +
                       suggestion(w.text, kWords));
    }
  }
}

// PyTorch's padding argument: an int, a pair, or 'same' / 'valid'.
std::array<int64_t, 2> Builder::conv_padding(const Value& v, std::array<int64_t, 2> kernel,
                                             std::array<int64_t, 2> stride,
                                             std::array<int64_t, 2> dilation) const {
  if (v.kind != Value::Kind::String) return to_pair(v, "padding", 0);
  if (v.text == "valid") return {0, 0};
  if (v.text != "same") {
    fail(v.span, "padding must be an integer, a pair, 'same' or 'valid', got '" + v.text + "'");
  }
  if (stride[0] != 1 || stride[1] != 1) {
    fail(v.span, "padding='same' is not supported for strided convolutions (as in PyTorch)");
  }
  std::array<int64_t, 2> pad{};
  for (int i = 0; i < 2; ++i) {
    int64_t total = dilation[i] * (kernel[i] - 1);
    if (total % 2 != 0) {
      fail(v.span, "padding='same' with kernel " + std::to_string(kernel[i]) +
                       " needs uneven padding, which tilescope does not model; pad explicitly");
    }
    pad[i] = total / 2;
  }
  return pad;
}

// Max/avg pooling attrs from PyTorch's arguments (stride=None means stride = kernel).
OpAttrs Builder::pool_attrs(const BoundArgs& a, size_t kernel_i, size_t stride_i, size_t padding_i,
                            std::optional<size_t> dilation_i) const {
  OpAttrs attrs;
  auto kernel = to_pair(a.at(kernel_i), "kernel_size", 1);
  auto stride = a.has(stride_i) ? to_pair(a.at(stride_i), "stride", 1) : kernel;
  auto padding =
      a.has(padding_i) ? to_pair(a.at(padding_i), "padding", 0) : std::array<int64_t, 2>{0, 0};
  auto dilation = dilation_i && a.has(*dilation_i) ? to_pair(a.at(*dilation_i), "dilation", 1)
                                                   : std::array<int64_t, 2>{1, 1};
  for (int i = 0; i < 2; ++i) {
    if (padding[i] > kernel[i] / 2) {
      fail(a.has(padding_i) ? a.at(padding_i).span : a.at(kernel_i).span,
           "padding should be at most half of the kernel size, but got padding=" +
               std::to_string(padding[i]) + " and kernel_size=" + std::to_string(kernel[i]));
    }
    attrs.kernel[i] = kernel[i];
    attrs.stride[i] = stride[i];
    attrs.padding[i] = padding[i];
    attrs.dilation[i] = dilation[i];
  }
  return attrs;
}

void Builder::reject_unsupported_flag(const BoundArgs& a, size_t i, const std::string& what,
                                      bool supported_value) const {
  if (a.has(i) && to_bool(a.at(i), what) != supported_value) {
    fail(a.at(i).span,
         what + "=" + (supported_value ? "False" : "True") + " is not supported by tilescope");
  }
}

Value Builder::literal(const Expr& e) const {
  Value v;
  v.span = e.span;
  if (e.kind == ExprKind::Int) {
    v.kind = Value::Kind::Int;
    v.integer = e.int_value;
  } else if (e.kind == ExprKind::Float) {
    v.kind = Value::Kind::Float;
    v.real = e.float_value;
  } else {
    v.kind = Value::Kind::String;
    v.text = e.text;
  }
  return v;
}

std::optional<Value> Builder::builtin_constant(const std::string& name, Span span) {
  Value v;
  v.span = span;
  if (name == "True" || name == "False") {
    v.kind = Value::Kind::Bool;
    v.boolean = name == "True";
    return v;
  }
  if (name == "None") return v;
  return std::nullopt;
}

// Number arithmetic, Python semantics; integers are overflow-checked.
Value Builder::number_binary(const Expr& e, const Value& l, const Value& r) const {
  Value v;
  v.span = e.span;
  const std::string& op = e.text;
  if (op == "@") fail(e.op_span, "'@' multiplies matrices: both sides must be tensors");
  bool both_int = l.kind == Value::Kind::Int && r.kind == Value::Kind::Int;
  if (both_int && op != "/") {
    int64_t a = l.integer, b = r.integer, out = 0;
    bool overflow = false;
    if (op == "+") {
      overflow = __builtin_add_overflow(a, b, &out);
    } else if (op == "-") {
      overflow = __builtin_sub_overflow(a, b, &out);
    } else if (op == "*") {
      overflow = __builtin_mul_overflow(a, b, &out);
    } else if (op == "//" || op == "%") {
      if (b == 0) fail(e.op_span, "integer division by zero");
      if (a == INT64_MIN && b == -1) {
        overflow = true;
      } else {
        int64_t q = a / b, m = a % b;
        if (m != 0 && ((m < 0) != (b < 0))) {  // Python floors; C++ truncates
          --q;
          m += b;
        }
        out = op == "//" ? q : m;
      }
    } else if (op == "**") {
      if (b < 0) {
        v.kind = Value::Kind::Float;
        v.real = std::pow(static_cast<double>(a), static_cast<double>(b));
        return v;
      }
      out = 1;
      int64_t base = a;
      while (b > 0 && !overflow) {
        if (b & 1) overflow = __builtin_mul_overflow(out, base, &out);
        b >>= 1;
        if (b > 0 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
      }
    }
    if (overflow) fail(e.span, "integer overflow: the result does not fit in 64 bits");
    v.kind = Value::Kind::Int;
    v.integer = out;
    return v;
  }
  double a = l.as_double(), b = r.as_double(), out = 0.0;
  if (op == "+") {
    out = a + b;
  } else if (op == "-") {
    out = a - b;
  } else if (op == "*") {
    out = a * b;
  } else if (op == "/" || op == "//" || op == "%") {
    if (b == 0.0) fail(e.op_span, "division by zero");
    out = op == "/" ? a / b : op == "//" ? std::floor(a / b) : a - b * std::floor(a / b);
  } else {
    out = std::pow(a, b);
  }
  if (!std::isfinite(out)) fail(e.span, "the result of this arithmetic is not a finite number");
  v.kind = Value::Kind::Float;
  v.real = out;
  return v;
}

// Lists, tuples, numbers, strings and constants; form 1 adds tensors on top of this.
Value Builder::eval_value(const Expr& e, bool tensors_allowed) {
  switch (e.kind) {
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
      return literal(e);
    case ExprKind::List:
    case ExprKind::Tuple: {
      Value v;
      v.kind = Value::Kind::List;
      v.span = e.span;
      for (const auto& child : e.children) v.items.push_back(eval(*child, {}, tensors_allowed));
      return v;
    }
    default:
      break;
  }
  return eval(e, {}, tensors_allowed);
}

Value Builder::eval(const Expr& e, const std::string& out_name, bool tensors_allowed) {
  switch (e.kind) {
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::List:
    case ExprKind::Tuple:
      return eval_value(e, tensors_allowed);
    case ExprKind::Name:
      return lookup(e, tensors_allowed);
    case ExprKind::Unary: {
      // Unary '+' makes no op, so the name passes to its operand: `y = +(x @ W)` names the
      // matmul.
      Value operand =
          eval(*e.children[0], e.text == "+" ? out_name : std::string(), tensors_allowed);
      if (operand.kind == Value::Kind::Tensor) {
        if (e.text == "+") return operand;
        OpAttrs attrs;
        attrs.alpha = -1.0;
        return tensor_value(
            emit(OpKind::Scale, "scale", {materialize(operand)}, attrs, e.op_span, out_name),
            e.span);
      }
      if (!operand.is_number()) {
        fail(e.op_span,
             "unary '" + e.text + "' needs a number or a tensor, got " + kind_name(operand.kind));
      }
      Value v = operand;
      v.span = e.span;
      if (e.text == "-") {
        if (v.kind == Value::Kind::Int) {
          if (__builtin_sub_overflow(int64_t{0}, v.integer, &v.integer)) {
            fail(e.span, "integer overflow: the result does not fit in 64 bits");
          }
        } else {
          v.real = -v.real;
        }
      }
      return v;
    }
    case ExprKind::Binary:
      return binary_chain(e, out_name, tensors_allowed);
    case ExprKind::Attribute:
      return attribute(e, tensors_allowed);
    case ExprKind::Call:
      if (!tensors_allowed) {
        fail(e.span,
             "a layer's arguments are numbers, tuples, True/False/None or strings, "
             "not calls");
      }
      return call(e, out_name);
  }
  fail(e.span, "unsupported expression");
}

// The parser builds `a + b - c + ...` as a left-deep tree, one level per operator, so a long
// line is a deep tree. The left spine is walked with a loop and combined on the way back up, in
// source order; only right operands recurse, and the parser bounds their nesting.
Value Builder::binary_chain(const Expr& top, const std::string& out_name, bool tensors_allowed) {
  std::vector<const Expr*> spine;
  for (const Expr* n = &top; n->kind == ExprKind::Binary; n = n->children[0].get()) {
    spine.push_back(n);
  }
  Value acc = eval(*spine.back()->children[0], {}, tensors_allowed);
  for (size_t i = spine.size(); i-- > 0;) {
    const Expr& e = *spine[i];
    Value r = eval(*e.children[1], {}, tensors_allowed);
    acc = binary(e, acc, r, i == 0 ? out_name : std::string());
  }
  return acc;
}

// One operator applied to its two evaluated operands; `out_name` names the op it makes.
Value Builder::binary(const Expr& e, const Value& l, const Value& r, const std::string& out_name) {
  if (l.kind == Value::Kind::Tensor || r.kind == Value::Kind::Tensor) {
    return tensor_binary(e, l, r, out_name);
  }
  if (!l.is_number() || !r.is_number()) {
    const Value& bad = l.is_number() ? r : l;
    fail(bad.span, "'" + e.text + "' needs numbers or tensors, got " + kind_name(bad.kind));
  }
  return number_binary(e, l, r);
}

Value Builder::lookup(const Expr& e, bool tensors_allowed) {
  if (auto it = m_scope.find(e.text); it != m_scope.end()) {
    Value v = it->second;
    v.span = e.span;
    return v;
  }
  if (auto c = builtin_constant(e.text, e.span)) return *c;
  if (!tensors_allowed) {
    fail(e.span, "unknown name '" + e.text +
                     "': a layer's arguments are numbers, tuples, True/False/None or strings");
  }
  if (m_functions.count(e.text)) {
    fail(e.span, "'" + e.text + "' is a function: call it, e.g. " + e.text + "(x)");
  }
  if (auto later = m_declared_at.find(e.text); later != m_declared_at.end()) {
    fail(e.span, "'" + e.text + "' is used before its declaration on line " +
                     std::to_string(m_src.loc(later->second).line));
  }
  std::vector<std::string> known;
  for (const auto& [name, value] : m_scope) known.push_back(name);
  fail(e.span, "unknown tensor '" + e.text + "'" + suggestion(e.text, known));
}

}  // namespace tilescope::lang::detail

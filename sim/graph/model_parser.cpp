// The model language's meaning: lowers the syntax tree of either form into a Graph, with located
// errors.
//
// Index: [SECTION] limits and names · values · argument binding · the builder (shared) ·
//        form 1 (declarations, expressions, functions) · form 2 (layers) · entry points
#include "sim/graph/model_parser.h"

#include "sim/graph/model_syntax.h"
#include "sim/io/input.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace tilescope::graph {

namespace {

using syntax::Arg;
using syntax::Expr;
using syntax::ExprKind;
using syntax::Form;
using syntax::Module;
using syntax::SourceText;
using syntax::Span;
using syntax::Stmt;
using syntax::StmtKind;

// [SECTION] limits and names

// No tensor may hold more than 2^40 elements: it keeps every byte count and every shape product
// far from int64 overflow, and no model a learner studies comes near it.
constexpr int64_t kMaxNumel = int64_t{1} << 40;
// Sum over ops of (output elements x work per element: K for MatMul, C/g*R*S for conv, the window
// for pooling). 2^54 multiply-adds leaves room below 2^63 for FLOP counts of training graphs.
constexpr int64_t kMaxWork = int64_t{1} << 54;
// Kernel sizes, strides, paddings, dilations, groups: bounded so window arithmetic cannot overflow.
constexpr int64_t kMaxWindowInt = (int64_t{1} << 31) - 1;

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

// " — did you mean 'x'?" when some candidate is close enough to be a likely typo, else "".
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

// Product of dims, or nullopt when it exceeds the element limit (or overflows on the way).
std::optional<int64_t> checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > kMaxNumel) return std::nullopt;
  }
  return n;
}

// [SECTION] values

// What an expression evaluates to. A tensor may carry a pending transpose of its last two dims
// (from `.T` / `.mT`): a MatMul folds it into trans flags, anything else materializes it.
struct Value {
  enum class Kind { None, Bool, Int, Float, String, List, Tensor };
  Kind kind = Kind::None;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0.0;
  std::string text;
  std::vector<Value> items;
  TensorId tensor = -1;
  bool transposed = false;
  Span span;

  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  double as_double() const { return kind == Kind::Int ? static_cast<double>(integer) : real; }
};

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

// A parameter list as PyTorch spells it. "scale|weight" accepts either keyword (first is shown).
struct Params {
  std::vector<std::string> names;
  size_t required = 0;
};

struct BoundArgs {
  std::vector<std::optional<Value>> values;
  bool has(size_t i) const { return values[i].has_value() && values[i]->kind != Value::Kind::None; }
  const Value& at(size_t i) const { return *values[i]; }
};

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

// A call's arguments, already evaluated; keyword arguments keep the span of their keyword.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  std::vector<Span> keyword_spans;
};

// [SECTION] the builder (shared by both forms)

class Builder {
 public:
  explicit Builder(const SourceText& src) : m_src(src) {}

  Graph build(const Module& module) {
    if (module.form == Form::Expressions) {
      build_expressions(module);
    } else {
      build_sequential(module);
    }
    return std::move(m_graph);
  }

 private:
  [[noreturn]] void fail(Span span, const std::string& message) const { m_src.fail(span, message); }

  // --- value conversions: each names the argument and points at it when the value is wrong.
  int64_t to_int(const Value& v, const std::string& what, int64_t lo, int64_t hi) const {
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

  std::array<int64_t, 2> to_pair(const Value& v, const std::string& what, int64_t lo) const {
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

  bool to_bool(const Value& v, const std::string& what) const {
    if (v.kind != Value::Kind::Bool) {
      fail(v.span, what + " must be True or False, got " + kind_name(v.kind));
    }
    return v.boolean;
  }

  double to_double(const Value& v, const std::string& what) const {
    if (!v.is_number()) fail(v.span, what + " must be a number, got " + kind_name(v.kind));
    return v.as_double();
  }

  std::string to_string_value(const Value& v, const std::string& what) const {
    if (v.kind != Value::Kind::String) {
      fail(v.span, what + " must be a string, got " + kind_name(v.kind));
    }
    return v.text;
  }

  // A dimension index as PyTorch takes it: -rank..rank-1, returned non-negative.
  int to_dim(const Value& v, const std::string& what, const Shape& shape) const {
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
  std::vector<int64_t> to_int_list(const Value& v, const std::string& what, int64_t lo,
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
  BoundArgs bind(const std::string& callee, const Params& params, const CallArgs& args,
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

  // --- graph construction

  // A name no tensor, op or user declaration uses: "matmul0", "matmul1", ...
  std::string fresh_name(const std::string& stem) {
    int& next = m_next_index[stem];
    while (true) {
      std::string name = stem + std::to_string(next++);
      if (!m_reserved.count(name) && !m_graph.find_op(name) && !m_graph.find_tensor(name)) {
        return name;
      }
    }
  }

  // Work (multiply-adds or window steps per output element) of the op, for the size guard.
  static int64_t work_per_output(const Op& op, const std::vector<const Tensor*>& in) {
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
  TensorId emit(OpKind kind, const std::string& stem, std::vector<TensorId> inputs, OpAttrs attrs,
                Span at, const std::string& out_name = {}, const std::string& origin = {},
                const std::string& op_name = {}) {
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

  TensorId declare(const std::string& name, const Shape& shape, DType dtype, Layout layout,
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

  Shape checked_shape(const Value& v, const std::string& what) const {
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
  void apply_words(const std::vector<syntax::Word>& words, const Shape& shape, DType& dtype,
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
          fail(w.span, "layout " + w.text + " needs a 4-D shape [N, C, H, W], got " +
                           shape_to_string(shape));
        }
        layout = w.text == "nchw"   ? Layout::NCHW
                 : w.text == "nhwc" ? Layout::NHWC
                                    : Layout::RowMajor;
      } else {
        fail(w.span, "unknown word '" + w.text +
                         "' after the shape (expected weight|input, fp32|fp16|bf16|int8, "
                         "nchw|nhwc|rowmajor)" +
                         suggestion(w.text, kWords));
      }
    }
  }

  // --- shared lowering helpers for conv and pooling

  // PyTorch's padding argument: an int, a pair, or 'same' / 'valid'.
  std::array<int64_t, 2> conv_padding(const Value& v, std::array<int64_t, 2> kernel,
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
  OpAttrs pool_attrs(const BoundArgs& a, size_t kernel_i, size_t stride_i, size_t padding_i,
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

  void reject_unsupported_flag(const BoundArgs& a, size_t i, const std::string& what,
                               bool supported_value) const {
    if (a.has(i) && to_bool(a.at(i), what) != supported_value) {
      fail(a.at(i).span,
           what + "=" + (supported_value ? "False" : "True") + " is not supported by tilescope");
    }
  }

  // --- evaluation shared by both forms

  Value literal(const Expr& e) const {
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

  static std::optional<Value> builtin_constant(const std::string& name, Span span) {
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
  Value number_binary(const Expr& e, const Value& l, const Value& r) const {
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
  Value eval_value(const Expr& e, bool tensors_allowed) {
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

  Value eval(const Expr& e, const std::string& out_name, bool tensors_allowed) {
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
  Value binary_chain(const Expr& top, const std::string& out_name, bool tensors_allowed) {
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
  Value binary(const Expr& e, const Value& l, const Value& r, const std::string& out_name) {
    if (l.kind == Value::Kind::Tensor || r.kind == Value::Kind::Tensor) {
      return tensor_binary(e, l, r, out_name);
    }
    if (!l.is_number() || !r.is_number()) {
      const Value& bad = l.is_number() ? r : l;
      fail(bad.span, "'" + e.text + "' needs numbers or tensors, got " + kind_name(bad.kind));
    }
    return number_binary(e, l, r);
  }

  Value lookup(const Expr& e, bool tensors_allowed) {
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

  // [SECTION] form 1: declarations, expressions and functions

  static Value tensor_value(TensorId id, Span span) {
    Value v;
    v.kind = Value::Kind::Tensor;
    v.tensor = id;
    v.span = span;
    return v;
  }

  const Tensor& tensor_of(const Value& v) const { return m_graph.tensor(v.tensor); }

  // The tensor as a real graph tensor: a pending `.T` becomes a Transpose op here.
  TensorId materialize(const Value& v, const std::string& out_name = {}) {
    if (v.kind != Value::Kind::Tensor) {
      fail(v.span, std::string("expected a tensor, got ") + kind_name(v.kind));
    }
    if (!v.transposed) return v.tensor;
    OpAttrs attrs;
    int rank = tensor_of(v).rank();
    for (int i = 0; i < rank; ++i) attrs.perm.push_back(i);
    std::swap(attrs.perm[static_cast<size_t>(rank - 1)], attrs.perm[static_cast<size_t>(rank - 2)]);
    return emit(OpKind::Transpose, "transpose", {v.tensor}, attrs, v.span, out_name);
  }

  Value tensor_binary(const Expr& e, const Value& l, const Value& r, const std::string& out_name) {
    const std::string& op = e.text;
    bool lt = l.kind == Value::Kind::Tensor, rt = r.kind == Value::Kind::Tensor;
    if (op == "@") {
      if (!lt || !rt) {
        fail((lt ? r : l).span,
             std::string("'@' needs tensors on both sides, got ") + kind_name((lt ? r : l).kind));
      }
      OpAttrs attrs;
      attrs.trans_a = l.transposed;
      attrs.trans_b = r.transposed;
      return tensor_value(
          emit(OpKind::MatMul, "matmul", {l.tensor, r.tensor}, attrs, e.op_span, out_name), e.span);
    }
    if (lt && rt) {
      OpKind kind = op == "+" ? OpKind::Add : op == "-" ? OpKind::Sub : OpKind::Mul;
      if (op != "+" && op != "-" && op != "*") {
        fail(e.op_span, "'" + op + "' between two tensors is not supported (only + - * @)");
      }
      const char* stem = op == "+" ? "add" : op == "-" ? "sub" : "mul";
      TensorId a = materialize(l), b = materialize(r);
      return tensor_value(emit(kind, stem, {a, b}, {}, e.op_span, out_name), e.span);
    }
    // tensor * number, number * tensor, tensor / number: a Scale op.
    const Value& t = lt ? l : r;
    const Value& n = lt ? r : l;
    if (!n.is_number()) {
      fail(n.span, "'" + op + "' cannot combine a tensor with " + std::string(kind_name(n.kind)));
    }
    double alpha = n.as_double();
    if (op == "*") {
      // alpha as is
    } else if (op == "/" && lt) {
      if (alpha == 0.0) fail(n.span, "division by zero");
      alpha = 1.0 / alpha;
    } else if (op == "+" || op == "-") {
      fail(e.op_span, "'" + op +
                          "' between a tensor and a number is not supported: there are no "
                          "constant tensors (declare one, e.g. 'c: [1] weight')");
    } else {
      fail(e.op_span, "'" + op + "' between a tensor and a number is not supported (use * or /)");
    }
    OpAttrs attrs;
    attrs.alpha = alpha;
    return tensor_value(emit(OpKind::Scale, "scale", {materialize(t)}, attrs, e.op_span, out_name),
                        e.span);
  }

  Value attribute(const Expr& e, bool tensors_allowed) {
    const Expr& object = *e.children[0];
    if (object.kind == ExprKind::Name && !m_scope.count(object.text) &&
        (object.text == "torch" || object.text == "nn" || object.text == "F")) {
      fail(e.span, "'" + m_src.normalized(e.span) + "' is a function: call it with arguments");
    }
    Value v = eval(object, {}, tensors_allowed);
    if (v.kind != Value::Kind::Tensor) {
      fail(e.op_span, "'." + e.text + "' needs a tensor, got " + kind_name(v.kind));
    }
    const Shape& shape = tensor_of(v).shape;
    if (e.text == "T") {
      if (shape.size() == 1) return v;  // PyTorch: .T of a vector is the vector
      if (shape.size() != 2) {
        fail(e.op_span, "'.T' needs a 2-D tensor, this one is " + shape_to_string(shape) +
                            "; use .mT or transpose(x, -2, -1) to swap the last two dims");
      }
    } else if (e.text == "mT") {
      if (shape.size() < 2) {
        fail(e.op_span, "'.mT' needs at least 2 dims, this tensor is " + shape_to_string(shape));
      }
    } else {
      fail(e.op_span, "unknown attribute '." + e.text +
                          "' (tensors have .T and .mT; methods "
                          "such as .reshape(...) need parentheses)" +
                          suggestion(e.text, {"T", "mT"}));
    }
    v.transposed = !v.transposed;
    v.span = e.span;
    return v;
  }

  // The dotted name of a callee such as torch.nn.functional.relu, or nullopt.
  static std::optional<std::vector<std::string>> dotted(const Expr& e) {
    if (e.kind == ExprKind::Name) return std::vector<std::string>{e.text};
    if (e.kind != ExprKind::Attribute) return std::nullopt;
    auto head = dotted(*e.children[0]);
    if (!head) return std::nullopt;
    head->push_back(e.text);
    return head;
  }

  static std::string join(const std::vector<std::string>& parts, size_t from = 0) {
    std::string out;
    for (size_t i = from; i < parts.size(); ++i) out += (i > from ? "." : "") + parts[i];
    return out;
  }

  // Strips torch. / torch.nn.functional. / F. / nn.functional. from a function name.
  static std::optional<std::string> strip_function_prefix(const std::vector<std::string>& p) {
    static const std::vector<std::vector<std::string>> kPrefixes = {
        {"torch", "nn", "functional"}, {"nn", "functional"}, {"torch"}, {"F"}};
    for (const auto& prefix : kPrefixes) {
      if (p.size() == prefix.size() + 1 && std::equal(prefix.begin(), prefix.end(), p.begin())) {
        return p.back();
      }
    }
    return std::nullopt;
  }

  Value call(const Expr& e, const std::string& out_name) {
    const Expr& callee = *e.children[0];
    CallArgs args;
    std::string fname;
    bool torch_spelling = false;  // F.batch_norm etc. take PyTorch's argument order
    auto path = dotted(callee);
    bool method = false;
    if (callee.kind == ExprKind::Name) {
      fname = callee.text;
      if (auto it = m_scope.find(fname); it != m_scope.end()) {
        fail(callee.span, "'" + fname + "' is " + kind_name(it->second.kind) + ", not a function");
      }
    } else if (callee.kind == ExprKind::Attribute && path && !m_scope.count((*path)[0]) &&
               ((*path)[0] == "torch" || (*path)[0] == "F" || (*path)[0] == "nn")) {
      auto stripped = strip_function_prefix(*path);
      if (!stripped) {
        fail(callee.span, "unknown function '" + join(*path) +
                              "' (write torch.relu, F.relu or relu; layers such as nn.Linear "
                              "belong to the sequential form)");
      }
      fname = *stripped;
      torch_spelling = true;
    } else if (callee.kind == ExprKind::Attribute) {
      Value self = eval(*callee.children[0], {}, true);
      if (self.kind != Value::Kind::Tensor) {
        fail(callee.op_span,
             "'." + callee.text + "(...)' needs a tensor, got " + kind_name(self.kind));
      }
      args.positional.push_back(self);
      fname = callee.text;
      method = true;
    } else {
      fail(callee.span, "this expression cannot be called");
    }
    auto fn = m_functions.find(fname);
    if (fn == m_functions.end() && !method && m_layers.count(fname)) {
      fail(e.op_span, "'" + fname +
                          "' is a layer of the sequential form ('input [...]' then one layer per "
                          "line); with declared tensors, write the computation, e.g. x @ W.T + b");
    }
    if (fn == m_functions.end()) {
      std::vector<std::string> known;
      for (const auto& [name, f] : m_functions) known.push_back(name);
      fail(e.op_span, std::string(method ? "unknown method '." : "unknown function '") + fname +
                          "'" + suggestion(fname, known));
    }
    for (const Arg& arg : e.args) {
      Value v = eval_value(*arg.value, true);
      if (arg.keyword.empty()) {
        args.positional.push_back(std::move(v));
      } else {
        args.keyword.emplace_back(arg.keyword, std::move(v));
        args.keyword_spans.push_back(arg.keyword_span);
      }
    }
    // x.reshape(2, 3), x.permute(0, 2, 1), x.view(-1, 8): the trailing integers form one list.
    if (method && (fname == "reshape" || fname == "view" || fname == "permute") &&
        args.positional.size() >= 2 && args.positional[1].kind == Value::Kind::Int) {
      Value list;
      list.kind = Value::Kind::List;
      list.span = {args.positional[1].span.begin, args.positional.back().span.end};
      list.items.assign(args.positional.begin() + 1, args.positional.end());
      args.positional.resize(1);
      args.positional.push_back(std::move(list));
    }
    Call c{fname, e.op_span, e.span, out_name, torch_spelling};
    return (this->*(fn->second))(c, args);
  }

  struct Call {
    std::string name;
    Span at;    // the function's name: where op errors point
    Span span;  // the whole call
    std::string out_name;
    bool torch_spelling;
  };
  using Function = Value (Builder::*)(const Call&, const CallArgs&);

  Value result(TensorId id, const Call& c) const { return tensor_value(id, c.span); }

  TensorId tensor_arg(const BoundArgs& a, size_t i, const std::string& what) {
    const Value& v = a.at(i);
    if (v.kind != Value::Kind::Tensor) {
      fail(v.span, what + " must be a tensor, got " + kind_name(v.kind));
    }
    return materialize(v);
  }

  Value fn_activation(const Call& c, const CallArgs& args) {
    Params p{{"input", c.name == "gelu" ? "approximate" : "inplace"}, 1};
    BoundArgs a = bind(c.name, p, args, c.span);
    if (a.has(1)) {
      if (c.name == "gelu") {
        std::string approx = to_string_value(a.at(1), "approximate");
        if (approx != "none" && approx != "tanh") {
          fail(a.at(1).span, "approximate must be 'none' or 'tanh', got '" + approx + "'");
        }
      } else {
        to_bool(a.at(1), "inplace");
      }
    }
    OpKind kind = c.name == "relu"      ? OpKind::ReLU
                  : c.name == "gelu"    ? OpKind::GELU
                  : c.name == "sigmoid" ? OpKind::Sigmoid
                                        : OpKind::Tanh;
    TensorId x = tensor_arg(a, 0, "input");
    return result(emit(kind, c.name, {x}, {}, c.at, c.out_name), c);
  }

  Value fn_softmax(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "dim"}, 1}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    OpAttrs attrs;
    attrs.axis =
        a.has(1) ? to_dim(a.at(1), "dim", m_graph.tensor(x).shape) : m_graph.tensor(x).rank() - 1;
    return result(emit(OpKind::Softmax, "softmax", {x}, attrs, c.at, c.out_name), c);
  }

  Value fn_layer_norm(const Call& c, const CallArgs& args) {
    // layer_norm(x, gamma, beta, eps) here; F.layer_norm(x, normalized_shape, weight, bias, eps).
    bool torch_form =
        c.torch_spelling ||
        (args.positional.size() >= 2 && args.positional[1].kind != Value::Kind::Tensor) ||
        std::any_of(args.keyword.begin(), args.keyword.end(),
                    [](const auto& k) { return k.first == "normalized_shape"; });
    if (!torch_form) {
      BoundArgs a = bind(c.name, {{"input", "gamma|weight", "beta|bias", "eps"}, 3}, args, c.span);
      return layer_norm(c, a, 0, 1, 2, 3);
    }
    BoundArgs a =
        bind(c.name, {{"input", "normalized_shape", "weight", "bias", "eps"}, 2}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    std::vector<int64_t> ns = to_int_list(a.at(1), "normalized_shape", 1, kMaxNumel);
    const Shape& shape = m_graph.tensor(x).shape;
    if (ns.size() != 1 || shape.empty() || ns[0] != shape.back()) {
      fail(a.at(1).span, "normalized_shape must be the last dimension [" +
                             std::to_string(shape.empty() ? 0 : shape.back()) + "] of input " +
                             shape_to_string(shape) +
                             " (tilescope's LayerNorm normalizes over the last dim)");
    }
    if (!a.has(2) || !a.has(3)) {
      fail(c.span, "layer_norm needs weight and bias tensors (tilescope's LayerNorm is affine)");
    }
    return layer_norm(c, a, 0, 2, 3, 4);
  }

  Value layer_norm(const Call& c, const BoundArgs& a, size_t x_i, size_t g_i, size_t b_i,
                   size_t eps_i) {
    TensorId x = tensor_arg(a, x_i, "input");
    TensorId g = tensor_arg(a, g_i, "weight");
    TensorId b = tensor_arg(a, b_i, "bias");
    OpAttrs attrs;
    if (a.has(eps_i)) attrs.eps = positive_eps(a.at(eps_i));
    return result(emit(OpKind::LayerNorm, "layernorm", {x, g, b}, attrs, c.at, c.out_name), c);
  }

  double positive_eps(const Value& v) const {
    double eps = to_double(v, "eps");
    if (!(eps >= 0.0)) fail(v.span, "eps must be >= 0, got " + format_number(eps));
    return eps;
  }

  Value fn_batch_norm(const Call& c, const CallArgs& args) {
    // batch_norm(x, scale, shift, mean, var) here; F.batch_norm(x, running_mean, running_var,
    // weight, bias, training, momentum, eps) when spelled the PyTorch way.
    if (c.torch_spelling) {
      BoundArgs a = bind(c.name,
                         {{"input", "running_mean", "running_var", "weight", "bias", "training",
                           "momentum", "eps"},
                          5},
                         args, c.span);
      reject_unsupported_flag(a, 5, "training", false);
      if (a.has(6)) to_double(a.at(6), "momentum");
      return batch_norm(c, a, {0, 3, 4, 1, 2}, 7);
    }
    BoundArgs a = bind(
        c.name,
        {{"input", "scale|weight", "shift|bias", "mean|running_mean", "var|running_var", "eps"}, 5},
        args, c.span);
    return batch_norm(c, a, {0, 1, 2, 3, 4}, 5);
  }

  Value batch_norm(const Call& c, const BoundArgs& a, std::array<size_t, 5> order, size_t eps_i) {
    static const char* kWhat[5] = {"input", "scale", "shift", "mean", "var"};
    std::vector<TensorId> in;
    for (size_t k = 0; k < 5; ++k) in.push_back(tensor_arg(a, order[k], kWhat[k]));
    OpAttrs attrs;
    if (a.has(eps_i)) attrs.eps = positive_eps(a.at(eps_i));
    return result(emit(OpKind::BatchNorm, "batchnorm", in, attrs, c.at, c.out_name), c);
  }

  Value fn_conv2d(const Call& c, const CallArgs& args) {
    BoundArgs a =
        bind(c.name, {{"input", "weight", "bias", "stride", "padding", "dilation", "groups"}, 2},
             args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    TensorId w = tensor_arg(a, 1, "weight");
    const Shape& ws = m_graph.tensor(w).shape;
    if (ws.size() != 4) {
      fail(a.at(1).span,
           "conv2d weight must be 4-D [out_channels, in_channels/groups, kH, kW], "
           "got " +
               shape_to_string(ws));
    }
    OpAttrs attrs;
    auto stride = a.has(3) ? to_pair(a.at(3), "stride", 1) : std::array<int64_t, 2>{1, 1};
    auto dilation = a.has(5) ? to_pair(a.at(5), "dilation", 1) : std::array<int64_t, 2>{1, 1};
    auto kernel = std::array<int64_t, 2>{ws[2], ws[3]};
    auto padding =
        a.has(4) ? conv_padding(a.at(4), kernel, stride, dilation) : std::array<int64_t, 2>{0, 0};
    for (int i = 0; i < 2; ++i) {
      attrs.kernel[i] = kernel[i];
      attrs.stride[i] = stride[i];
      attrs.padding[i] = padding[i];
      attrs.dilation[i] = dilation[i];
    }
    if (a.has(6)) attrs.groups = to_int(a.at(6), "groups", 1, kMaxWindowInt);
    if (!a.has(2)) return result(emit(OpKind::Conv2D, "conv", {x, w}, attrs, c.at, c.out_name), c);
    TensorId conv = emit(OpKind::Conv2D, "conv", {x, w}, attrs, c.at);
    TensorId b = tensor_arg(a, 2, "bias");
    if (m_graph.tensor(b).rank() == 1) {
      // A PyTorch bias is [K]; it broadcasts over [N, K, P, Q] only as [1, K, 1, 1].
      OpAttrs view;
      view.shape = {1, m_graph.tensor(b).shape[0], 1, 1};
      b = emit(OpKind::Reshape, "reshape", {b}, view, a.at(2).span);
    }
    return result(emit(OpKind::Add, "add", {conv, b}, {}, c.at, c.out_name), c);
  }

  Value fn_pool(const Call& c, const CallArgs& args) {
    bool is_max = c.name == "max_pool2d";
    Params p = is_max ? Params{{"input", "kernel_size", "stride", "padding", "dilation",
                                "ceil_mode", "return_indices"},
                               2}
                      : Params{{"input", "kernel_size", "stride", "padding", "ceil_mode",
                                "count_include_pad", "divisor_override"},
                               2};
    BoundArgs a = bind(c.name, p, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    OpAttrs attrs = pool_attrs(a, 1, 2, 3, is_max ? std::optional<size_t>(4) : std::nullopt);
    check_pool_flags(a, is_max, attrs, is_max ? 5 : 4, is_max ? 6 : 5, 6);
    return result(emit(is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D,
                       is_max ? "maxpool" : "avgpool", {x}, attrs, c.at, c.out_name),
                  c);
  }

  // ceil_mode / return_indices / count_include_pad / divisor_override: only PyTorch's defaults.
  void check_pool_flags(const BoundArgs& a, bool is_max, const OpAttrs& attrs, size_t ceil_i,
                        size_t second_i, size_t divisor_i) const {
    reject_unsupported_flag(a, ceil_i, "ceil_mode", false);
    if (is_max) {
      reject_unsupported_flag(a, second_i, "return_indices", false);
      return;
    }
    bool padded = attrs.padding[0] > 0 || attrs.padding[1] > 0;
    if (a.has(second_i) && !to_bool(a.at(second_i), "count_include_pad") && padded) {
      fail(a.at(second_i).span,
           "count_include_pad=False with padding is not supported by tilescope");
    }
    if (a.has(divisor_i)) fail(a.at(divisor_i).span, "divisor_override is not supported");
  }

  Value fn_flatten(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "start_dim", "end_dim"}, 1}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    Shape shape = m_graph.tensor(x).shape;
    if (shape.empty()) fail(c.at, "flatten needs a tensor with at least one dimension");
    int start = a.has(1) ? to_dim(a.at(1), "start_dim", shape) : 0;
    int end = a.has(2) ? to_dim(a.at(2), "end_dim", shape) : static_cast<int>(shape.size()) - 1;
    if (start > end) {
      fail(a.has(1) ? a.at(1).span : c.span, "flatten: start_dim " + std::to_string(start) +
                                                 " comes after end_dim " + std::to_string(end));
    }
    OpAttrs attrs;
    attrs.shape = flattened(shape, start, end);
    return result(emit(OpKind::Reshape, "flatten", {x}, attrs, c.at, c.out_name), c);
  }

  static Shape flattened(const Shape& shape, int start, int end) {
    Shape out(shape.begin(), shape.begin() + start);
    int64_t merged = 1;
    for (int i = start; i <= end; ++i) merged *= shape[static_cast<size_t>(i)];  // ≤ numel
    out.push_back(merged);
    out.insert(out.end(), shape.begin() + end + 1, shape.end());
    return out;
  }

  Value fn_reshape(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "shape"}, 2}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    OpAttrs attrs;
    attrs.shape = to_int_list(a.at(1), "shape", -1, kMaxNumel);
    Shape known;
    for (int64_t d : attrs.shape) {
      if (d == 0) fail(a.at(1).span, "shape sizes must be >= 1 (or -1 once), got 0");
      if (d > 0) known.push_back(d);
    }
    if (!checked_numel(known)) {
      fail(a.at(1).span, "target shape has more than 2^40 elements");
    }
    return result(emit(OpKind::Reshape, "reshape", {x}, attrs, c.at, c.out_name), c);
  }

  Value fn_transpose(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "dim0", "dim1"}, 3}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    const Shape& shape = m_graph.tensor(x).shape;
    int d0 = to_dim(a.at(1), "dim0", shape), d1 = to_dim(a.at(2), "dim1", shape);
    OpAttrs attrs;
    for (int i = 0; i < static_cast<int>(shape.size()); ++i) attrs.perm.push_back(i);
    std::swap(attrs.perm[static_cast<size_t>(d0)], attrs.perm[static_cast<size_t>(d1)]);
    return result(emit(OpKind::Transpose, "transpose", {x}, attrs, c.at, c.out_name), c);
  }

  Value fn_permute(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "dims"}, 2}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    const Shape& shape = m_graph.tensor(x).shape;
    const Value& dims = a.at(1);
    if (dims.kind != Value::Kind::List || dims.items.size() != shape.size()) {
      fail(dims.span, "permute needs one dim per dimension of the " + std::to_string(shape.size()) +
                          "-D input " + shape_to_string(shape));
    }
    OpAttrs attrs;
    for (const Value& d : dims.items) {
      int dim = to_dim(d, "dim", shape);
      if (std::find(attrs.perm.begin(), attrs.perm.end(), dim) != attrs.perm.end()) {
        fail(d.span, "permute lists dim " + std::to_string(dim) + " twice");
      }
      attrs.perm.push_back(dim);
    }
    return result(emit(OpKind::Transpose, "transpose", {x}, attrs, c.at, c.out_name), c);
  }

  Value fn_concat(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"tensors", "dim"}, 1}, args, c.span);
    const Value& list = a.at(0);
    if (list.kind != Value::Kind::List || list.items.empty()) {
      fail(list.span, c.name + " needs a non-empty list of tensors, e.g. " + c.name + "([a, b])");
    }
    std::vector<TensorId> in;
    for (const Value& item : list.items) {
      if (item.kind != Value::Kind::Tensor) {
        fail(item.span, c.name + " takes tensors, got " + kind_name(item.kind));
      }
      in.push_back(materialize(item));
    }
    OpAttrs attrs;
    attrs.axis = a.has(1) ? to_dim(a.at(1), "dim", m_graph.tensor(in[0]).shape) : 0;
    return result(emit(OpKind::Concat, "concat", in, attrs, c.at, c.out_name), c);
  }

  Value fn_reduce(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "dim", "keepdim"}, 1}, args, c.span);
    TensorId x = tensor_arg(a, 0, "input");
    const Shape& shape = m_graph.tensor(x).shape;
    OpAttrs attrs;
    if (a.has(1)) {
      const Value& dims = a.at(1);
      std::vector<Value> list = dims.kind == Value::Kind::List ? dims.items : std::vector{dims};
      for (const Value& d : list) {
        int dim = to_dim(d, "dim", shape);
        if (std::find(attrs.axes.begin(), attrs.axes.end(), dim) != attrs.axes.end()) {
          fail(d.span, "dim " + std::to_string(dim) + " is listed twice");
        }
        attrs.axes.push_back(dim);
      }
      if (attrs.axes.empty()) fail(dims.span, "dim must name at least one dimension");
    }
    if (a.has(2)) attrs.keepdim = to_bool(a.at(2), "keepdim");
    bool is_sum = c.name == "sum";
    return result(emit(is_sum ? OpKind::Sum : OpKind::Mean, c.name, {x}, attrs, c.at, c.out_name),
                  c);
  }

  Value fn_binary(const Call& c, const CallArgs& args) {
    BoundArgs a = bind(c.name, {{"input", "other"}, 2}, args, c.span);
    Value l = a.at(0), r = a.at(1);
    if (l.kind != Value::Kind::Tensor) fail(l.span, "input must be a tensor");
    Expr op;
    op.kind = ExprKind::Binary;
    op.span = c.span;
    op.op_span = c.at;
    op.text = c.name == "matmul" || c.name == "mm" ? "@"
              : c.name == "add"                    ? "+"
              : c.name == "sub"                    ? "-"
                                                   : "*";
    return tensor_binary(op, l, r, c.out_name);
  }

  const std::map<std::string, Function> m_functions = {
      {"relu", &Builder::fn_activation},
      {"gelu", &Builder::fn_activation},
      {"sigmoid", &Builder::fn_activation},
      {"tanh", &Builder::fn_activation},
      {"softmax", &Builder::fn_softmax},
      {"layer_norm", &Builder::fn_layer_norm},
      {"batch_norm", &Builder::fn_batch_norm},
      {"conv2d", &Builder::fn_conv2d},
      {"max_pool2d", &Builder::fn_pool},
      {"avg_pool2d", &Builder::fn_pool},
      {"flatten", &Builder::fn_flatten},
      {"reshape", &Builder::fn_reshape},
      {"view", &Builder::fn_reshape},
      {"transpose", &Builder::fn_transpose},
      {"permute", &Builder::fn_permute},
      {"concat", &Builder::fn_concat},
      {"cat", &Builder::fn_concat},
      {"sum", &Builder::fn_reduce},
      {"mean", &Builder::fn_reduce},
      {"matmul", &Builder::fn_binary},
      {"mm", &Builder::fn_binary},
      {"add", &Builder::fn_binary},
      {"sub", &Builder::fn_binary},
      {"mul", &Builder::fn_binary},
  };

  void build_expressions(const Module& module) {
    // Every name the file defines, first, so that a forward reference says "used before its
    // declaration" and generated names never take a name the user writes later.
    for (const Stmt& s : module.stmts) {
      m_reserved.insert(s.name);
      m_declared_at.emplace(s.name, s.name_span);
    }
    for (const Stmt& s : module.stmts) {
      if (auto it = m_scope.find(s.name); it != m_scope.end()) {
        fail(s.name_span, "duplicate declaration of '" + s.name + "' (first defined on line " +
                              std::to_string(m_src.loc(m_defined_at.at(s.name)).line) + ")");
      }
      if (builtin_constant(s.name, s.name_span) || s.name == "torch" || s.name == "F" ||
          s.name == "nn") {
        fail(s.name_span, "'" + s.name + "' is a reserved name");
      }
      if (s.kind == StmtKind::Decl) {
        declaration(s);
      } else {
        assignment(s);
      }
      m_defined_at[s.name] = s.name_span;
    }
    if (m_graph.ops().empty()) {
      fail(module.stmts.back().span,
           "the model computes nothing: add an assignment such as 'y = relu(x @ W.T + b)'");
    }
  }

  void declaration(const Stmt& s) {
    Shape shape = checked_shape(eval_value(*s.value, true), "the shape of '" + s.name + "'");
    DType dtype = DType::F32;
    Layout layout = Layout::RowMajor;
    Role role = Role::Input;
    apply_words(s.words, shape, dtype, layout, role, true);
    TensorId id = declare(s.name, shape, dtype, layout, role, s.name_span);
    m_scope[s.name] = tensor_value(id, s.name_span);
  }

  void assignment(const Stmt& s) {
    size_t ops_before = m_graph.ops().size();
    Value v = eval(*s.value, s.name, true);
    if (v.is_number()) {  // a constant such as `N = 64`, usable in shapes
      if (m_graph.ops().size() != ops_before) {
        fail(s.value->span, "a number cannot be computed from tensors");
      }
      m_scope[s.name] = v;
      return;
    }
    if (v.kind != Value::Kind::Tensor) {
      fail(s.value->span, std::string("the right-hand side must be a tensor expression or a "
                                      "number, got ") +
                              kind_name(v.kind));
    }
    if (v.transposed) {
      v = tensor_value(materialize(v, s.name), v.span);
    } else if (m_graph.tensor(v.tensor).name != s.name) {
      fail(s.value->span, "'" + s.name + " = " + m_graph.tensor(v.tensor).name +
                              "' only renames a tensor; the right-hand side must compute "
                              "something, e.g. relu(" +
                              m_graph.tensor(v.tensor).name + ")");
    }
    m_scope[s.name] = tensor_value(v.tensor, s.name_span);
  }

  // [SECTION] form 2: layers

  struct LayerCtx {
    int index = 0;       // position in the Sequential, as PyTorch numbers it
    std::string name;    // "Conv2d"
    std::string origin;  // the layer as written, whitespace collapsed
    Span at;             // the layer's name
    Span span;           // the whole call
  };
  using Layer = void (Builder::*)(const LayerCtx&, const BoundArgs&);
  struct LayerDef {
    Params params;
    Layer lower;
  };

  const Shape& current_shape() const { return m_graph.tensor(m_current).shape; }

  std::string shape_note() const { return "(shape " + shape_to_string(current_shape()) + ")"; }

  std::string prefix(const LayerCtx& l) const { return std::to_string(l.index); }

  TensorId weight(const LayerCtx& l, const std::string& what, const Shape& shape) {
    if (!checked_numel(shape)) {
      fail(l.span, l.name + "'s " + what + " " + shape_to_string(shape) +
                       " would have more than 2^40 elements");
    }
    return declare(prefix(l) + "." + what, shape, m_graph.tensor(m_input).dtype, Layout::RowMajor,
                   Role::Weight, l.at);
  }

  TensorId layer_op(const LayerCtx& l, OpKind kind, const std::string& op_name,
                    std::vector<TensorId> inputs, OpAttrs attrs = {}) {
    return emit(kind, op_name, std::move(inputs), std::move(attrs), l.at, {}, l.origin, op_name);
  }

  void require_4d(const LayerCtx& l) const {
    if (current_shape().size() != 4) {
      fail(l.at, l.name + " expects a 4-D input [N, C, H, W] but got " +
                     shape_to_string(current_shape()) +
                     (current_shape().size() == 2 ? " (it comes after a Flatten or Linear?)" : ""));
    }
  }

  void lower_conv(const LayerCtx& l, const BoundArgs& a) {
    require_4d(l);
    int64_t in = to_int(a.at(0), "in_channels", 1, kMaxNumel);
    int64_t out = to_int(a.at(1), "out_channels", 1, kMaxNumel);
    if (in != current_shape()[1]) {
      fail(a.at(0).span, "Conv2d expects in_channels=" + std::to_string(in) +
                             " but its input has " + std::to_string(current_shape()[1]) +
                             " channels " + shape_note());
    }
    auto kernel = to_pair(a.at(2), "kernel_size", 1);
    auto stride = a.has(3) ? to_pair(a.at(3), "stride", 1) : std::array<int64_t, 2>{1, 1};
    auto dilation = a.has(5) ? to_pair(a.at(5), "dilation", 1) : std::array<int64_t, 2>{1, 1};
    auto padding =
        a.has(4) ? conv_padding(a.at(4), kernel, stride, dilation) : std::array<int64_t, 2>{0, 0};
    int64_t groups = a.has(6) ? to_int(a.at(6), "groups", 1, kMaxWindowInt) : 1;
    if (in % groups != 0 || out % groups != 0) {
      fail(a.at(6).span, "in_channels (" + std::to_string(in) + ") and out_channels (" +
                             std::to_string(out) +
                             ") must both be divisible by groups=" + std::to_string(groups));
    }
    bool bias = a.has(7) ? to_bool(a.at(7), "bias") : true;
    if (a.has(8) && to_string_value(a.at(8), "padding_mode") != "zeros") {
      fail(a.at(8).span,
           "padding_mode='" + a.at(8).text + "' is not supported (tilescope pads with zeros)");
    }
    OpAttrs attrs;
    for (int i = 0; i < 2; ++i) {
      attrs.kernel[i] = kernel[i];
      attrs.stride[i] = stride[i];
      attrs.padding[i] = padding[i];
      attrs.dilation[i] = dilation[i];
    }
    attrs.groups = groups;
    TensorId w = weight(l, "weight", {out, in / groups, kernel[0], kernel[1]});
    std::string name = "conv" + prefix(l);
    m_current = layer_op(l, OpKind::Conv2D, name, {m_current, w}, attrs);
    if (bias) {
      TensorId b = weight(l, "bias", {1, out, 1, 1});
      m_current = layer_op(l, OpKind::Add, name + "_bias", {m_current, b});
    }
    m_flattened_from.reset();
  }

  void lower_linear(const LayerCtx& l, const BoundArgs& a) {
    int64_t in = to_int(a.at(0), "in_features", 1, kMaxNumel);
    int64_t out = to_int(a.at(1), "out_features", 1, kMaxNumel);
    bool bias = a.has(2) ? to_bool(a.at(2), "bias") : true;
    const Shape& shape = current_shape();
    if (shape.back() != in) {
      std::string why = "Linear expects in_features=" + std::to_string(in) + " but its input has " +
                        std::to_string(shape.back()) + " features ";
      if (m_flattened_from) {
        why += "(shape " + shape_to_string(*m_flattened_from) + " flattened)";
      } else if (shape.size() > 2 && *checked_numel(shape) / shape[0] == in) {
        why += shape_note() + "; add Flatten() before it";
      } else {
        why += shape_note();
      }
      fail(a.at(0).span, why);
    }
    if (shape.size() < 2) {
      fail(l.at, "Linear expects an input of at least 2 dims [N, in_features], got " +
                     shape_to_string(shape));
    }
    TensorId w = weight(l, "weight", {out, in});
    std::string name = "linear" + prefix(l);
    OpAttrs attrs;
    attrs.trans_b = true;  // y = x @ W.T with W stored [out, in], as PyTorch does
    m_current = layer_op(l, OpKind::MatMul, name, {m_current, w}, attrs);
    if (bias) {
      TensorId b = weight(l, "bias", {out});
      m_current = layer_op(l, OpKind::Add, name + "_bias", {m_current, b});
    }
    m_flattened_from.reset();
  }

  void lower_activation(const LayerCtx& l, const BoundArgs& a) {
    if (l.name == "GELU") {
      if (a.has(0)) {
        std::string approx = to_string_value(a.at(0), "approximate");
        if (approx != "none" && approx != "tanh") {
          fail(a.at(0).span, "approximate must be 'none' or 'tanh', got '" + approx + "'");
        }
      }
    } else if (l.name == "ReLU" && a.has(0)) {
      to_bool(a.at(0), "inplace");
    }
    OpKind kind = l.name == "ReLU"      ? OpKind::ReLU
                  : l.name == "GELU"    ? OpKind::GELU
                  : l.name == "Sigmoid" ? OpKind::Sigmoid
                                        : OpKind::Tanh;
    std::string stem = l.name == "ReLU"      ? "relu"
                       : l.name == "GELU"    ? "gelu"
                       : l.name == "Sigmoid" ? "sigmoid"
                                             : "tanh";
    m_current = layer_op(l, kind, stem + prefix(l), {m_current});
  }

  void lower_softmax(const LayerCtx& l, const BoundArgs& a) {
    OpAttrs attrs;
    const Shape& shape = current_shape();
    if (a.has(0)) {
      attrs.axis = to_dim(a.at(0), "dim", shape);
    } else {
      // PyTorch's legacy choice when dim is omitted (it warns about it): 0 for 0-, 1- and 3-D
      // inputs, else 1.
      size_t r = shape.size();
      attrs.axis = r == 0 || r == 1 || r == 3 ? 0 : 1;
    }
    m_current = layer_op(l, OpKind::Softmax, "softmax" + prefix(l), {m_current}, attrs);
  }

  void lower_pool(const LayerCtx& l, const BoundArgs& a) {
    require_4d(l);
    bool is_max = l.name == "MaxPool2d";
    OpAttrs attrs = pool_attrs(a, 0, 1, 2, is_max ? std::optional<size_t>(3) : std::nullopt);
    check_pool_flags(a, is_max, attrs, is_max ? 5 : 3, 4, 5);
    m_current = layer_op(l, is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D,
                         (is_max ? "maxpool" : "avgpool") + prefix(l), {m_current}, attrs);
    m_flattened_from.reset();
  }

  void lower_batch_norm(const LayerCtx& l, const BoundArgs& a) {
    require_4d(l);
    int64_t c = to_int(a.at(0), "num_features", 1, kMaxNumel);
    if (c != current_shape()[1]) {
      fail(a.at(0).span, "BatchNorm2d expects num_features=" + std::to_string(c) +
                             " but its input has " + std::to_string(current_shape()[1]) +
                             " channels " + shape_note());
    }
    OpAttrs attrs;
    if (a.has(1)) attrs.eps = positive_eps(a.at(1));
    if (a.has(2)) to_double(a.at(2), "momentum");
    reject_unsupported_flag(a, 3, "affine", true);
    reject_unsupported_flag(a, 4, "track_running_stats", true);
    std::vector<TensorId> in{m_current};
    for (const char* what : {"weight", "bias", "running_mean", "running_var"}) {
      in.push_back(weight(l, what, {c}));
    }
    m_current = layer_op(l, OpKind::BatchNorm, "batchnorm" + prefix(l), in, attrs);
  }

  void lower_layer_norm(const LayerCtx& l, const BoundArgs& a) {
    std::vector<int64_t> ns = to_int_list(a.at(0), "normalized_shape", 1, kMaxNumel);
    const Shape& shape = current_shape();
    if (ns.size() != 1) {
      fail(a.at(0).span,
           "tilescope's LayerNorm normalizes over the last dimension only; "
           "normalized_shape must have one entry");
    }
    if (ns[0] != shape.back()) {
      fail(a.at(0).span, "LayerNorm expects normalized_shape=[" + std::to_string(ns[0]) +
                             "] but its input's last dimension is " + std::to_string(shape.back()) +
                             " " + shape_note());
    }
    OpAttrs attrs;
    if (a.has(1)) attrs.eps = positive_eps(a.at(1));
    reject_unsupported_flag(a, 2, "elementwise_affine", true);
    reject_unsupported_flag(a, 3, "bias", true);
    TensorId g = weight(l, "weight", {ns[0]});
    TensorId b = weight(l, "bias", {ns[0]});
    m_current = layer_op(l, OpKind::LayerNorm, "layernorm" + prefix(l), {m_current, g, b}, attrs);
  }

  void lower_flatten(const LayerCtx& l, const BoundArgs& a) {
    Shape shape = current_shape();
    int start = a.has(0) ? to_dim(a.at(0), "start_dim", shape)
                         : std::min<int>(1, static_cast<int>(shape.size()) - 1);
    int end = a.has(1) ? to_dim(a.at(1), "end_dim", shape) : static_cast<int>(shape.size()) - 1;
    if (start > end) {
      fail(a.has(0) ? a.at(0).span : l.span, "Flatten: start_dim " + std::to_string(start) +
                                                 " comes after end_dim " + std::to_string(end));
    }
    OpAttrs attrs;
    attrs.shape = flattened(shape, start, end);
    m_current = layer_op(l, OpKind::Reshape, "flatten" + prefix(l), {m_current}, attrs);
    m_flattened_from = shape;
  }

  void lower_dropout(const LayerCtx&, const BoundArgs& a) {
    // Identity at inference: no op, but the index is used, as in PyTorch's numbering.
    if (a.has(0)) {
      double p = to_double(a.at(0), "p");
      if (!(p >= 0.0 && p <= 1.0)) {
        fail(a.at(0).span,
             "dropout probability has to be between 0 and 1, but got " + format_number(p));
      }
    }
    if (a.has(1)) to_bool(a.at(1), "inplace");
  }

  void lower_identity(const LayerCtx&, const BoundArgs&) {}

  const std::map<std::string, LayerDef> m_layers = {
      {"Conv2d",
       {{{"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
          "bias", "padding_mode"},
         3},
        &Builder::lower_conv}},
      {"Linear", {{{"in_features", "out_features", "bias"}, 2}, &Builder::lower_linear}},
      {"ReLU", {{{"inplace"}, 0}, &Builder::lower_activation}},
      {"GELU", {{{"approximate"}, 0}, &Builder::lower_activation}},
      {"Sigmoid", {{{}, 0}, &Builder::lower_activation}},
      {"Tanh", {{{}, 0}, &Builder::lower_activation}},
      {"Softmax", {{{"dim"}, 0}, &Builder::lower_softmax}},
      {"MaxPool2d",
       {{{"kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"}, 1},
        &Builder::lower_pool}},
      {"AvgPool2d",
       {{{"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"},
         1},
        &Builder::lower_pool}},
      {"BatchNorm2d",
       {{{"num_features", "eps", "momentum", "affine", "track_running_stats"}, 1},
        &Builder::lower_batch_norm}},
      {"LayerNorm",
       {{{"normalized_shape", "eps", "elementwise_affine", "bias"}, 1},
        &Builder::lower_layer_norm}},
      {"Flatten", {{{"start_dim", "end_dim"}, 0}, &Builder::lower_flatten}},
      {"Dropout", {{{"p", "inplace"}, 0}, &Builder::lower_dropout}},
      {"Identity", {{{}, 0}, &Builder::lower_identity}},
  };

  void build_sequential(const Module& module) {
    const Stmt& input = module.stmts.front();
    Shape shape = checked_shape(eval_value(*input.value, false), "the input shape");
    DType dtype = DType::F32;
    Layout layout = Layout::RowMajor;
    Role role = Role::Input;
    apply_words(input.words, shape, dtype, layout, role, false);
    m_input = m_current = declare("input", shape, dtype, layout, Role::Input, input.name_span);
    for (size_t i = 1; i < module.stmts.size(); ++i)
      layer(module.stmts[i], static_cast<int>(i - 1));
    if (module.stmts.size() == 1) {
      fail(input.span, "no layers after the input line: add layers such as 'Linear(784, 10)'");
    }
    if (m_graph.ops().empty()) {
      fail(module.stmts.back().span,
           "the model computes nothing: its layers are all Dropout/Identity");
    }
  }

  void layer(const Stmt& s, int index) {
    const Expr& callee = *s.value->children[0];
    auto path = dotted(callee);
    if (!path) fail(callee.span, "expected a layer name such as 'Conv2d' or 'nn.ReLU'");
    // nn.Conv2d / torch.nn.Conv2d / Conv2d
    size_t skip = 0;
    if (path->size() == 3 && (*path)[0] == "torch" && (*path)[1] == "nn") skip = 2;
    if (path->size() == 2 && (*path)[0] == "nn") skip = 1;
    if (path->size() != skip + 1) {
      fail(callee.span, "unknown layer '" + join(*path) + "' (write Conv2d or nn.Conv2d)");
    }
    const std::string& name = path->back();
    auto def = m_layers.find(name);
    if (def == m_layers.end()) {
      std::vector<std::string> known;
      for (const auto& [n, d] : m_layers) known.push_back(n);
      fail(s.value->op_span, "unknown layer '" + name + "'" + suggestion(name, known));
    }
    CallArgs args;
    for (const Arg& arg : s.value->args) {
      Value v = eval_value(*arg.value, false);
      if (arg.keyword.empty()) {
        args.positional.push_back(std::move(v));
      } else {
        args.keyword.emplace_back(arg.keyword, std::move(v));
        args.keyword_spans.push_back(arg.keyword_span);
      }
    }
    LayerCtx ctx{index, name, m_src.normalized(s.span), s.value->op_span, s.value->span};
    BoundArgs bound = bind(name, def->second.params, args, s.value->span);
    (this->*(def->second.lower))(ctx, bound);
  }

  const SourceText& m_src;
  Graph m_graph;
  std::map<std::string, Value> m_scope;       // form 1: names defined so far
  std::map<std::string, Span> m_declared_at;  // form 1: every name the file defines
  std::map<std::string, Span> m_defined_at;   // form 1: where a defined name was defined
  std::set<std::string> m_reserved;           // names generated names must avoid
  std::map<std::string, int> m_next_index;    // next suffix per generated-name stem
  int64_t m_total_work = 0;
  TensorId m_input = -1;                  // form 2: the input tensor
  TensorId m_current = -1;                // form 2: output of the layers so far
  std::optional<Shape> m_flattened_from;  // form 2: shape before the last Flatten
};

}  // namespace

// [SECTION] entry points

Graph parse_model(std::string_view text, const std::string& file) {
  SourceText src(text, file);
  Module module = syntax::parse_module(src);
  return Builder(src).build(module);
}

Graph parse_model_file(const std::string& path) {
  // Capped: /dev/zero, a FIFO or a 4 GB log named as a model is refused after 8 MiB, not read
  // until memory runs out.
  const io::TextInput input = io::read_text_input(path, io::kMaxModelBytes, "a model file");
  if (!input.ok) throw GraphError(SourceLoc{path, 0, 0}, input.error);
  return parse_model(input.text, path);
}

std::string_view default_model_text() {
  return "# One fully connected layer: 64 rows of 1024 features in, 512 features out.\n"
         "x: [64, 1024]\n"
         "W: [512, 1024] weight\n"
         "b: [512] weight\n"
         "y = relu(x @ W.T + b)\n";
}

}  // namespace tilescope::graph

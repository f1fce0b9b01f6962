// Private to sim/lang's .cpp files: values, argument binding and the Builder that lowers the
// syntax tree of either form of the model language into a Graph. Not part of the public API.
//
// The Builder's shared part (conversions, graph construction, evaluation) is builder.cpp;
// form 1 (declarations, expressions, functions) expressions.cpp; form 2 (layers)
// layers.cpp; the entry points parser.cpp.
#pragma once

#include "sim/graph/graph.h"
#include "sim/lang/syntax.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope::lang::detail {

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

// " — did you mean 'x'?" when some candidate is close enough to be a likely typo, else "".
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates);
std::string plural(int64_t n, const char* word);

// Product of dims, or nullopt when it exceeds the element limit (or overflows on the way).
std::optional<int64_t> checked_numel(const Shape& shape);

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

const char* kind_name(Value::Kind k);
std::string format_number(double v);

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

std::string primary_name(const std::string& spec);
bool name_matches(const std::string& spec, const std::string& keyword);

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
  Graph build(const Module& module);

 private:
  [[noreturn]] void fail(Span span, const std::string& message) const { m_src.fail(span, message); }

  // --- value conversions: each names the argument and points at it when the value is wrong.
  int64_t to_int(const Value& v, const std::string& what, int64_t lo, int64_t hi) const;
  std::array<int64_t, 2> to_pair(const Value& v, const std::string& what, int64_t lo) const;
  bool to_bool(const Value& v, const std::string& what) const;
  double to_double(const Value& v, const std::string& what) const;
  std::string to_string_value(const Value& v, const std::string& what) const;
  int to_dim(const Value& v, const std::string& what, const Shape& shape) const;
  std::vector<int64_t> to_int_list(const Value& v, const std::string& what, int64_t lo,
                                   int64_t hi) const;
  BoundArgs bind(const std::string& callee, const Params& params, const CallArgs& args,
                 Span call_span) const;

  // --- graph construction

  std::string fresh_name(const std::string& stem);
  static int64_t work_per_output(const Op& op, const std::vector<const Tensor*>& in);
  TensorId emit(OpKind kind, const std::string& stem, std::vector<TensorId> inputs, OpAttrs attrs,
                Span at, const std::string& out_name = {}, const std::string& origin = {},
                const std::string& op_name = {});
  TensorId declare(const std::string& name, const Shape& shape, DType dtype, Layout layout,
                   Role role, Span at);
  Shape checked_shape(const Value& v, const std::string& what) const;
  void apply_words(const std::vector<syntax::Word>& words, const Shape& shape, DType& dtype,
                   Layout& layout, Role& role, bool allow_role) const;

  // --- shared lowering helpers for conv and pooling

  std::array<int64_t, 2> conv_padding(const Value& v, std::array<int64_t, 2> kernel,
                                      std::array<int64_t, 2> stride,
                                      std::array<int64_t, 2> dilation) const;
  OpAttrs pool_attrs(const BoundArgs& a, size_t kernel_i, size_t stride_i, size_t padding_i,
                     std::optional<size_t> dilation_i) const;
  void reject_unsupported_flag(const BoundArgs& a, size_t i, const std::string& what,
                               bool supported_value) const;

  // --- evaluation shared by both forms

  Value literal(const Expr& e) const;
  static std::optional<Value> builtin_constant(const std::string& name, Span span);
  Value number_binary(const Expr& e, const Value& l, const Value& r) const;
  Value eval_value(const Expr& e, bool tensors_allowed);
  Value eval(const Expr& e, const std::string& out_name, bool tensors_allowed);
  Value binary_chain(const Expr& top, const std::string& out_name, bool tensors_allowed);
  Value binary(const Expr& e, const Value& l, const Value& r, const std::string& out_name);
  Value lookup(const Expr& e, bool tensors_allowed);

  // [SECTION] form 1: declarations, expressions and functions

  static Value tensor_value(TensorId id, Span span);
  const Tensor& tensor_of(const Value& v) const { return m_graph.tensor(v.tensor); }
  TensorId materialize(const Value& v, const std::string& out_name = {});
  Value tensor_binary(const Expr& e, const Value& l, const Value& r, const std::string& out_name);
  Value attribute(const Expr& e, bool tensors_allowed);
  static std::optional<std::vector<std::string>> dotted(const Expr& e);
  static std::string join(const std::vector<std::string>& parts, size_t from = 0);
  static std::optional<std::string> strip_function_prefix(const std::vector<std::string>& p);
  Value call(const Expr& e, const std::string& out_name);

  struct Call {
    std::string name;
    Span at;    // the function's name: where op errors point
    Span span;  // the whole call
    std::string out_name;
    bool torch_spelling;
  };
  using Function = Value (Builder::*)(const Call&, const CallArgs&);
  Value result(TensorId id, const Call& c) const { return tensor_value(id, c.span); }
  TensorId tensor_arg(const BoundArgs& a, size_t i, const std::string& what);
  Value fn_activation(const Call& c, const CallArgs& args);
  Value fn_softmax(const Call& c, const CallArgs& args);
  Value fn_attention(const Call& c, const CallArgs& args);
  Value fn_causal_mask(const Call& c, const CallArgs& args);
  Value fn_layer_norm(const Call& c, const CallArgs& args);
  Value layer_norm(const Call& c, const BoundArgs& a, size_t x_i, size_t g_i, size_t b_i,
                   size_t eps_i);
  double positive_eps(const Value& v) const;
  Value fn_batch_norm(const Call& c, const CallArgs& args);
  Value batch_norm(const Call& c, const BoundArgs& a, std::array<size_t, 5> order, size_t eps_i);
  Value fn_conv2d(const Call& c, const CallArgs& args);
  Value fn_pool(const Call& c, const CallArgs& args);
  void check_pool_flags(const BoundArgs& a, bool is_max, const OpAttrs& attrs, size_t ceil_i,
                        size_t second_i, size_t divisor_i) const;
  Value fn_flatten(const Call& c, const CallArgs& args);
  static Shape flattened(const Shape& shape, int start, int end);
  Value fn_reshape(const Call& c, const CallArgs& args);
  Value fn_transpose(const Call& c, const CallArgs& args);
  Value fn_permute(const Call& c, const CallArgs& args);
  Value fn_concat(const Call& c, const CallArgs& args);
  Value fn_narrow(const Call& c, const CallArgs& args);
  Value fn_reduce(const Call& c, const CallArgs& args);
  Value fn_binary(const Call& c, const CallArgs& args);

  const std::map<std::string, Function> m_functions = {
      {"relu", &Builder::fn_activation},
      {"relu6", &Builder::fn_activation},
      {"gelu", &Builder::fn_activation},
      {"sigmoid", &Builder::fn_activation},
      {"tanh", &Builder::fn_activation},
      {"softmax", &Builder::fn_softmax},
      {"attention", &Builder::fn_attention},
      {"scaled_dot_product_attention", &Builder::fn_attention},
      {"causal_mask", &Builder::fn_causal_mask},
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
      {"narrow", &Builder::fn_narrow},
      {"sum", &Builder::fn_reduce},
      {"mean", &Builder::fn_reduce},
      {"matmul", &Builder::fn_binary},
      {"mm", &Builder::fn_binary},
      {"add", &Builder::fn_binary},
      {"sub", &Builder::fn_binary},
      {"mul", &Builder::fn_binary},
  };

  void build_expressions(const Module& module);
  void declaration(const Stmt& s);
  void assignment(const Stmt& s);

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
  TensorId weight(const LayerCtx& l, const std::string& what, const Shape& shape);
  TensorId layer_op(const LayerCtx& l, OpKind kind, const std::string& op_name,
                    std::vector<TensorId> inputs, OpAttrs attrs = {});
  void require_4d(const LayerCtx& l) const;
  void lower_conv(const LayerCtx& l, const BoundArgs& a);
  void lower_linear(const LayerCtx& l, const BoundArgs& a);
  void lower_activation(const LayerCtx& l, const BoundArgs& a);
  void lower_softmax(const LayerCtx& l, const BoundArgs& a);
  void lower_pool(const LayerCtx& l, const BoundArgs& a);
  void lower_batch_norm(const LayerCtx& l, const BoundArgs& a);
  void lower_layer_norm(const LayerCtx& l, const BoundArgs& a);
  void lower_flatten(const LayerCtx& l, const BoundArgs& a);
  void lower_dropout(const LayerCtx&, const BoundArgs& a);
  void lower_identity(const LayerCtx&, const BoundArgs&) {}

  const std::map<std::string, LayerDef> m_layers = {
      {"Conv2d",
       {{{"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
          "bias", "padding_mode"},
         3},
        &Builder::lower_conv}},
      {"Linear", {{{"in_features", "out_features", "bias"}, 2}, &Builder::lower_linear}},
      {"ReLU", {{{"inplace"}, 0}, &Builder::lower_activation}},
      {"ReLU6", {{{"inplace"}, 0}, &Builder::lower_activation}},
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

  void build_sequential(const Module& module);
  void layer(const Stmt& s, int index);
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

}  // namespace tilescope::lang::detail

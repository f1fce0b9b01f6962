// The model language's form 1: declarations, expressions and PyTorch-style functions, lowered
// into graph ops by the Builder.
#include "sim/lang/builder.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace tilescope::lang::detail {

// [SECTION] form 1: declarations, expressions and functions

Value Builder::tensor_value(TensorId id, Span span) {
  Value v;
  v.kind = Value::Kind::Tensor;
  v.tensor = id;
  v.span = span;
  return v;
}

// The tensor as a real graph tensor: a pending `.T` becomes a Transpose op here.
TensorId Builder::materialize(const Value& v, const std::string& out_name) {
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

Value Builder::tensor_binary(const Expr& e, const Value& l, const Value& r,
                             const std::string& out_name) {
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

Value Builder::attribute(const Expr& e, bool tensors_allowed) {
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
std::optional<std::vector<std::string>> Builder::dotted(const Expr& e) {
  if (e.kind == ExprKind::Name) return std::vector<std::string>{e.text};
  if (e.kind != ExprKind::Attribute) return std::nullopt;
  auto head = dotted(*e.children[0]);
  if (!head) return std::nullopt;
  head->push_back(e.text);
  return head;
}

std::string Builder::join(const std::vector<std::string>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) out += (i > from ? "." : "") + parts[i];
  return out;
}

// Strips torch. / torch.nn.functional. / F. / nn.functional. from a function name.
std::optional<std::string> Builder::strip_function_prefix(const std::vector<std::string>& p) {
  static const std::vector<std::vector<std::string>> kPrefixes = {
      {"torch", "nn", "functional"}, {"nn", "functional"}, {"torch"}, {"F"}};
  for (const auto& prefix : kPrefixes) {
    if (p.size() == prefix.size() + 1 && std::equal(prefix.begin(), prefix.end(), p.begin())) {
      return p.back();
    }
  }
  return std::nullopt;
}

Value Builder::call(const Expr& e, const std::string& out_name) {
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
    fail(e.op_span, std::string(method ? "unknown method '." : "unknown function '") + fname + "'" +
                        suggestion(fname, known));
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

TensorId Builder::tensor_arg(const BoundArgs& a, size_t i, const std::string& what) {
  const Value& v = a.at(i);
  if (v.kind != Value::Kind::Tensor) {
    fail(v.span, what + " must be a tensor, got " + kind_name(v.kind));
  }
  return materialize(v);
}

Value Builder::fn_activation(const Call& c, const CallArgs& args) {
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
                : c.name == "relu6"   ? OpKind::ReLU6
                : c.name == "gelu"    ? OpKind::GELU
                : c.name == "sigmoid" ? OpKind::Sigmoid
                                      : OpKind::Tanh;
  TensorId x = tensor_arg(a, 0, "input");
  return result(emit(kind, c.name, {x}, {}, c.at, c.out_name), c);
}

Value Builder::fn_softmax(const Call& c, const CallArgs& args) {
  BoundArgs a = bind(c.name, {{"input", "dim"}, 1}, args, c.span);
  TensorId x = tensor_arg(a, 0, "input");
  OpAttrs attrs;
  attrs.axis =
      a.has(1) ? to_dim(a.at(1), "dim", m_graph.tensor(x).shape) : m_graph.tensor(x).rank() - 1;
  return result(emit(OpKind::Softmax, "softmax", {x}, attrs, c.at, c.out_name), c);
}

// causal_mask(s): the scores s with every entry above the diagonal (key j after query i) set to
// -inf, so softmax gives it weight 0 — the mask of causal attention, written by hand.
Value Builder::fn_causal_mask(const Call& c, const CallArgs& args) {
  BoundArgs a = bind(c.name, {{"input"}, 1}, args, c.span);
  OpAttrs attrs;
  attrs.alpha = -std::numeric_limits<double>::infinity();
  return result(
      emit(OpKind::CausalMask, "mask", {tensor_arg(a, 0, "input")}, attrs, c.at, c.out_name), c);
}

// attention(q, k, v) and F.scaled_dot_product_attention(query, key, value): the explicit pattern
// softmax(q @ k.T * scale) @ v, written out as its four ops (matmul, scale, softmax, matmul), so
// the schedule sees what the learner would have written by hand. scale defaults to 1/√d. With
// is_causal=True (causal=True) a causal mask sits between the scale and the softmax, as in
// PyTorch: query i sees keys 0..i (the mask is aligned to the top-left corner).
Value Builder::fn_attention(const Call& c, const CallArgs& args) {
  BoundArgs a = bind(
      c.name,
      {{"query|q", "key|k", "value|v", "attn_mask", "dropout_p", "is_causal|causal", "scale"}, 3},
      args, c.span);
  TensorId q = tensor_arg(a, 0, "query");
  TensorId k = tensor_arg(a, 1, "key");
  TensorId v = tensor_arg(a, 2, "value");
  if (a.has(3)) fail(a.at(3).span, "attn_mask is not supported: tilescope has no mask tensors");
  if (a.has(4) && to_double(a.at(4), "dropout_p") != 0.0)
    fail(a.at(4).span, "dropout_p must be 0 (tilescope models inference)");
  const bool causal = a.has(5) && to_bool(a.at(5), "is_causal");
  const Shape& qs = m_graph.tensor(q).shape;
  if (qs.empty()) fail(a.at(0).span, "query must have a last dimension (the head dim)");
  OpAttrs scores;
  scores.trans_b = true;
  TensorId s = emit(OpKind::MatMul, "matmul", {q, k}, scores, c.at);
  OpAttrs scale;
  scale.alpha = a.has(6) ? to_double(a.at(6), "scale") : 1.0 / std::sqrt(double(qs.back()));
  if (!(scale.alpha > 0.0)) fail(a.at(6).span, "scale must be > 0");
  TensorId scaled = emit(OpKind::Scale, "scale", {s}, scale, c.at);
  if (causal) {
    OpAttrs mask;
    mask.alpha = -std::numeric_limits<double>::infinity();
    scaled = emit(OpKind::CausalMask, "mask", {scaled}, mask, c.at);
  }
  OpAttrs softmax;
  softmax.axis = m_graph.tensor(scaled).rank() - 1;
  TensorId p = emit(OpKind::Softmax, "softmax", {scaled}, softmax, c.at);
  return result(emit(OpKind::MatMul, "matmul", {p, v}, {}, c.at, c.out_name), c);
}

Value Builder::fn_layer_norm(const Call& c, const CallArgs& args) {
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

Value Builder::layer_norm(const Call& c, const BoundArgs& a, size_t x_i, size_t g_i, size_t b_i,
                          size_t eps_i) {
  TensorId x = tensor_arg(a, x_i, "input");
  TensorId g = tensor_arg(a, g_i, "weight");
  TensorId b = tensor_arg(a, b_i, "bias");
  OpAttrs attrs;
  if (a.has(eps_i)) attrs.eps = positive_eps(a.at(eps_i));
  return result(emit(OpKind::LayerNorm, "layernorm", {x, g, b}, attrs, c.at, c.out_name), c);
}

double Builder::positive_eps(const Value& v) const {
  double eps = to_double(v, "eps");
  if (!(eps >= 0.0)) fail(v.span, "eps must be >= 0, got " + format_number(eps));
  return eps;
}

Value Builder::fn_batch_norm(const Call& c, const CallArgs& args) {
  // batch_norm(x, scale, shift, mean, var) here; F.batch_norm(x, running_mean, running_var,
  // weight, bias, training, momentum, eps) when spelled the PyTorch way.
  if (c.torch_spelling) {
    BoundArgs a = bind(
        c.name,
        {{"input", "running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"},
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

Value Builder::batch_norm(const Call& c, const BoundArgs& a, std::array<size_t, 5> order,
                          size_t eps_i) {
  static const char* kWhat[5] = {"input", "scale", "shift", "mean", "var"};
  std::vector<TensorId> in;
  for (size_t k = 0; k < 5; ++k) in.push_back(tensor_arg(a, order[k], kWhat[k]));
  OpAttrs attrs;
  if (a.has(eps_i)) attrs.eps = positive_eps(a.at(eps_i));
  return result(emit(OpKind::BatchNorm, "batchnorm", in, attrs, c.at, c.out_name), c);
}

Value Builder::fn_conv2d(const Call& c, const CallArgs& args) {
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

Value Builder::fn_pool(const Call& c, const CallArgs& args) {
  bool is_max = c.name == "max_pool2d";
  Params p = is_max ? Params{{"input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
                              "return_indices"},
                             2}
                    : Params{{"input", "kernel_size", "stride", "padding", "ceil_mode",
                              "count_include_pad", "divisor_override"},
                             2};
  BoundArgs a = bind(c.name, p, args, c.span);
  TensorId x = tensor_arg(a, 0, "input");
  OpAttrs attrs = pool_attrs(a, 1, 2, 3, is_max ? std::optional<size_t>(4) : std::nullopt);
  check_pool_flags(a, is_max, attrs, is_max ? 5 : 4, is_max ? 6 : 5, 6);
  return result(emit(is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D, is_max ? "maxpool" : "avgpool",
                     {x}, attrs, c.at, c.out_name),
                c);
}

// ceil_mode / return_indices / count_include_pad / divisor_override: only PyTorch's defaults.
void Builder::check_pool_flags(const BoundArgs& a, bool is_max, const OpAttrs& attrs, size_t ceil_i,
                               size_t second_i, size_t divisor_i) const {
  reject_unsupported_flag(a, ceil_i, "ceil_mode", false);
  if (is_max) {
    reject_unsupported_flag(a, second_i, "return_indices", false);
    return;
  }
  bool padded = attrs.padding[0] > 0 || attrs.padding[1] > 0;
  if (a.has(second_i) && !to_bool(a.at(second_i), "count_include_pad") && padded) {
    fail(a.at(second_i).span, "count_include_pad=False with padding is not supported by tilescope");
  }
  if (a.has(divisor_i)) fail(a.at(divisor_i).span, "divisor_override is not supported");
}

Value Builder::fn_flatten(const Call& c, const CallArgs& args) {
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

Shape Builder::flattened(const Shape& shape, int start, int end) {
  Shape out(shape.begin(), shape.begin() + start);
  int64_t merged = 1;
  for (int i = start; i <= end; ++i) merged *= shape[static_cast<size_t>(i)];  // ≤ numel
  out.push_back(merged);
  out.insert(out.end(), shape.begin() + end + 1, shape.end());
  return out;
}

Value Builder::fn_reshape(const Call& c, const CallArgs& args) {
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

Value Builder::fn_transpose(const Call& c, const CallArgs& args) {
  BoundArgs a = bind(c.name, {{"input", "dim0", "dim1"}, 3}, args, c.span);
  TensorId x = tensor_arg(a, 0, "input");
  const Shape& shape = m_graph.tensor(x).shape;
  int d0 = to_dim(a.at(1), "dim0", shape), d1 = to_dim(a.at(2), "dim1", shape);
  OpAttrs attrs;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) attrs.perm.push_back(i);
  std::swap(attrs.perm[static_cast<size_t>(d0)], attrs.perm[static_cast<size_t>(d1)]);
  return result(emit(OpKind::Transpose, "transpose", {x}, attrs, c.at, c.out_name), c);
}

Value Builder::fn_permute(const Call& c, const CallArgs& args) {
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

Value Builder::fn_concat(const Call& c, const CallArgs& args) {
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

// narrow(x, dim, start, length), as torch.narrow: a slice along one dimension (a Slice op).
Value Builder::fn_narrow(const Call& c, const CallArgs& args) {
  BoundArgs a = bind(c.name, {{"input", "dim", "start", "length"}, 4}, args, c.span);
  TensorId x = tensor_arg(a, 0, "input");
  const Shape& shape = m_graph.tensor(x).shape;
  const int dim = to_dim(a.at(1), "dim", shape);
  const int64_t size = shape[size_t(dim)];
  const int64_t start = to_int(a.at(2), "start", 0, size - 1);
  const int64_t length = to_int(a.at(3), "length", 1, size - start);
  OpAttrs attrs;
  attrs.shape = shape;
  attrs.shape[size_t(dim)] = length;
  attrs.starts.assign(shape.size(), 0);
  attrs.starts[size_t(dim)] = start;
  return result(emit(OpKind::Slice, "narrow", {x}, attrs, c.at, c.out_name), c);
}

Value Builder::fn_reduce(const Call& c, const CallArgs& args) {
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
  return result(emit(is_sum ? OpKind::Sum : OpKind::Mean, c.name, {x}, attrs, c.at, c.out_name), c);
}

Value Builder::fn_binary(const Call& c, const CallArgs& args) {
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

void Builder::build_expressions(const Module& module) {
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

void Builder::declaration(const Stmt& s) {
  Shape shape = checked_shape(eval_value(*s.value, true), "the shape of '" + s.name + "'");
  DType dtype = DType::F32;
  Layout layout = Layout::RowMajor;
  Role role = Role::Input;
  apply_words(s.words, shape, dtype, layout, role, true);
  TensorId id = declare(s.name, shape, dtype, layout, role, s.name_span);
  m_scope[s.name] = tensor_value(id, s.name_span);
}

void Builder::assignment(const Stmt& s) {
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

}  // namespace tilescope::lang::detail

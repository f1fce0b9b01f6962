// The model language's form 2: an nn.Sequential of layers, each lowered into graph ops (and its
// weights) by the Builder.
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

// [SECTION] form 2: layers

TensorId Builder::weight(const LayerCtx& l, const std::string& what, const Shape& shape) {
  if (!checked_numel(shape)) {
    fail(l.span, l.name + "'s " + what + " " + shape_to_string(shape) +
                     " would have more than 2^40 elements");
  }
  return declare(prefix(l) + "." + what, shape, m_graph.tensor(m_input).dtype, Layout::RowMajor,
                 Role::Weight, l.at);
}

TensorId Builder::layer_op(const LayerCtx& l, OpKind kind, const std::string& op_name,
                           std::vector<TensorId> inputs, OpAttrs attrs) {
  return emit(kind, op_name, std::move(inputs), std::move(attrs), l.at, {}, l.origin, op_name);
}

void Builder::require_4d(const LayerCtx& l) const {
  if (current_shape().size() != 4) {
    fail(l.at, l.name + " expects a 4-D input [N, C, H, W] but got " +
                   shape_to_string(current_shape()) +
                   (current_shape().size() == 2 ? " (it comes after a Flatten or Linear?)" : ""));
  }
}

void Builder::lower_conv(const LayerCtx& l, const BoundArgs& a) {
  require_4d(l);
  int64_t in = to_int(a.at(0), "in_channels", 1, kMaxNumel);
  int64_t out = to_int(a.at(1), "out_channels", 1, kMaxNumel);
  if (in != current_shape()[1]) {
    fail(a.at(0).span, "Conv2d expects in_channels=" + std::to_string(in) + " but its input has " +
                           std::to_string(current_shape()[1]) + " channels " + shape_note());
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

void Builder::lower_linear(const LayerCtx& l, const BoundArgs& a) {
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

void Builder::lower_activation(const LayerCtx& l, const BoundArgs& a) {
  if (l.name == "GELU") {
    if (a.has(0)) {
      std::string approx = to_string_value(a.at(0), "approximate");
      if (approx != "none" && approx != "tanh") {
        fail(a.at(0).span, "approximate must be 'none' or 'tanh', got '" + approx + "'");
      }
    }
  } else if ((l.name == "ReLU" || l.name == "ReLU6") && a.has(0)) {
    to_bool(a.at(0), "inplace");
  }
  OpKind kind = l.name == "ReLU"      ? OpKind::ReLU
                : l.name == "ReLU6"   ? OpKind::ReLU6
                : l.name == "GELU"    ? OpKind::GELU
                : l.name == "Sigmoid" ? OpKind::Sigmoid
                                      : OpKind::Tanh;
  std::string stem = l.name == "ReLU"      ? "relu"
                     : l.name == "ReLU6"   ? "relu6"
                     : l.name == "GELU"    ? "gelu"
                     : l.name == "Sigmoid" ? "sigmoid"
                                           : "tanh";
  m_current = layer_op(l, kind, stem + prefix(l), {m_current});
}

void Builder::lower_softmax(const LayerCtx& l, const BoundArgs& a) {
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

void Builder::lower_pool(const LayerCtx& l, const BoundArgs& a) {
  require_4d(l);
  bool is_max = l.name == "MaxPool2d";
  OpAttrs attrs = pool_attrs(a, 0, 1, 2, is_max ? std::optional<size_t>(3) : std::nullopt);
  check_pool_flags(a, is_max, attrs, is_max ? 5 : 3, 4, 5);
  m_current = layer_op(l, is_max ? OpKind::MaxPool2D : OpKind::AvgPool2D,
                       (is_max ? "maxpool" : "avgpool") + prefix(l), {m_current}, attrs);
  m_flattened_from.reset();
}

void Builder::lower_batch_norm(const LayerCtx& l, const BoundArgs& a) {
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

void Builder::lower_layer_norm(const LayerCtx& l, const BoundArgs& a) {
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

void Builder::lower_flatten(const LayerCtx& l, const BoundArgs& a) {
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

void Builder::lower_dropout(const LayerCtx&, const BoundArgs& a) {
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

void Builder::build_sequential(const Module& module) {
  const Stmt& input = module.stmts.front();
  Shape shape = checked_shape(eval_value(*input.value, false), "the input shape");
  DType dtype = DType::F32;
  Layout layout = Layout::RowMajor;
  Role role = Role::Input;
  apply_words(input.words, shape, dtype, layout, role, false);
  m_input = m_current = declare("input", shape, dtype, layout, Role::Input, input.name_span);
  for (size_t i = 1; i < module.stmts.size(); ++i) layer(module.stmts[i], static_cast<int>(i - 1));
  if (module.stmts.size() == 1) {
    fail(input.span, "no layers after the input line: add layers such as 'Linear(784, 10)'");
  }
  if (m_graph.ops().empty()) {
    fail(module.stmts.back().span,
         "the model computes nothing: its layers are all Dropout/Identity");
  }
}

void Builder::layer(const Stmt& s, int index) {
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

}  // namespace tilescope::lang::detail

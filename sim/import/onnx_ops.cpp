// The ONNX importer, one node at a time: translate() decides what a node is (folded into a
// pattern, after an unsupported node, or its operator's own function) and each op_* function
// writes its assignment. See onnx_importer.h.
#ifdef TILESCOPE_HAVE_ONNX

#include "sim/import/onnx_importer.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tilescope::import::detail {

void Importer::translate(int i) {
  m_node = i;
  const onnx::NodeProto& n = node(i);
  if (!n.domain().empty() && n.domain() != "ai.onnx") {
    unsupported("an operator of the domain '" + n.domain() +
                "', which tilescope does not read (export with the standard operators only)");
    return;
  }
  // A node that reads what an unsupported node made is not reported itself: the list names causes.
  for (const auto& in : n.input()) {
    if (!m_after_unsupported.count(in)) continue;
    for (const auto& o : n.output()) m_after_unsupported.insert(o);
    m_out.nodes[size_t(i)].note = "after a node with no tilescope op";
    return;
  }
  if (auto f = m_folded_into.find(i); f != m_folded_into.end()) {
    m_out.nodes[size_t(i)].note =
        "part of the pattern that ends at node " + std::to_string(f->second);
    return;
  }
  if (n.output_size() < 1) fail(node_desc(i) + ": has no output");
  if (auto p = m_pattern.find(i); p != m_pattern.end()) {
    op_pattern(n, n.output(0), p->second);
    return;
  }
  const auto& table = op_table();
  if (auto it = table.find(n.op_type()); it != table.end()) {
    (this->*(it->second))(n, n.output(0));
    return;
  }
  op_unknown(n);
}

const std::unordered_map<std::string, Importer::OpFn>& Importer::op_table() {
  static const std::unordered_map<std::string, OpFn> table = {
      {"Constant", &Importer::op_constant},
      {"Identity", &Importer::op_identity},
      {"Dropout", &Importer::op_identity},
      {"Relu", &Importer::op_activation},
      {"Sigmoid", &Importer::op_activation},
      {"Tanh", &Importer::op_activation},
      {"Gelu", &Importer::op_gelu},
      {"Clip", &Importer::op_clip},
      {"Add", &Importer::op_arith},
      {"Sub", &Importer::op_arith},
      {"Mul", &Importer::op_arith},
      {"Div", &Importer::op_arith},
      {"MatMul", &Importer::op_matmul},
      {"Gemm", &Importer::op_gemm},
      {"Conv", &Importer::op_window},
      {"MaxPool", &Importer::op_window},
      {"AveragePool", &Importer::op_window},
      {"GlobalAveragePool", &Importer::op_global_pool},
      {"GlobalMaxPool", &Importer::op_global_pool},
      {"BatchNormalization", &Importer::op_batch_norm},
      {"LayerNormalization", &Importer::op_layer_norm},
      {"Softmax", &Importer::op_softmax},
      {"ReduceMean", &Importer::op_reduce},
      {"ReduceSum", &Importer::op_reduce},
      {"Flatten", &Importer::op_flatten},
      {"Reshape", &Importer::op_reshape},
      {"Transpose", &Importer::op_transpose},
      {"Concat", &Importer::op_concat},
      {"Erf", &Importer::op_erf},
      {"Split", &Importer::op_split},
  };
  return table;
}

void Importer::op_pattern(const onnx::NodeProto& n, const std::string& out,
                          const PatternCall& call) {
  std::string args;
  for (const std::string& in : call.inputs) args += (args.empty() ? "" : ", ") + operand(value(in));
  emit(n, call.fn + "(" + args + call.extra + ")", out);
}

void Importer::op_unknown(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  static const std::map<std::string, std::string> kAdvice = {
      {"Pow", "element-wise powers outside LayerNorm's pattern have no tilescope op"},
      {"Sqrt", "element-wise square roots outside LayerNorm's pattern have no tilescope op"},
      {"Shape",
       "shapes computed at run time: export with static shapes and "
       "do_constant_folding=True"},
      {"Gather",
       "indexing (embeddings, shape arithmetic) has no tilescope op; export with static "
       "shapes, or start the model after the embedding"},
      {"If", "control flow has no tilescope op"},
      {"Loop", "control flow has no tilescope op"},
  };
  auto advice = kAdvice.find(op);
  unsupported(advice != kAdvice.end() ? advice->second
                                      : "no tilescope op for " + op +
                                            " (see `tilescope-cli import --help` for the "
                                            "operators read)");
}

void Importer::op_constant(const onnx::NodeProto& n, const std::string& out) {
  Val v;
  if (const auto* t = attr(n, "value"); t && t->has_t()) {
    v = const_from_tensor(t->t());
    check_constant(v, t->t());
  } else if (const auto* f = attr(n, "value_float")) {
    v.data = {f->f()};
  } else if (const auto* i = attr(n, "value_int")) {
    v.data = {double(i->i())};
  } else if (const auto* is = attr(n, "value_ints")) {
    for (int64_t x : is->ints()) v.data.push_back(double(x));
    v.shape = {int64_t(v.data.size())};
  } else if (const auto* fs = attr(n, "value_floats")) {
    for (float x : fs->floats()) v.data.push_back(x);
    v.shape = {int64_t(v.data.size())};
  } else {
    unsupported("a Constant holding a sparse tensor or strings (tilescope reads numbers)");
    return;
  }
  if (!v.is_const) v.has_data = v.shape_known = v.is_const = true;
  v.onnx_name = out;
  m_vals[out] = v;
  m_out.nodes[size_t(m_node)].note = "constant";
}

void Importer::op_identity(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  alias(out, n.input(0),
        std::string("same tensor as its input (") +
            (op == "Dropout" ? "dropout is the identity at inference" : "identity") + ")");
}

void Importer::op_activation(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  const char* fn = op == "Relu" ? "relu" : op == "Sigmoid" ? "sigmoid" : "tanh";
  emit(n, std::string(fn) + "(" + operand(n, 0) + ")", out);
}

void Importer::op_gelu(const onnx::NodeProto& n, const std::string& out) {
  const std::string approx = attr_string(n, "approximate", "none");
  emit(n, "gelu(" + operand(n, 0) + (approx == "tanh" ? ", approximate='tanh'" : "") + ")", out);
}

void Importer::op_clip(const onnx::NodeProto& n, const std::string& out) {
  std::optional<double> lo = scalar(n, 1), hi = scalar(n, 2);
  if (const auto* a = attr(n, "min")) lo = a->f();  // opset < 11
  if (const auto* a = attr(n, "max")) hi = a->f();
  if ((has_input(n, 1) && !lo) || (has_input(n, 2) && !hi)) {
    unsupported("Clip with bounds computed at run time (tilescope reads constant bounds)");
    return;
  }
  if (lo && *lo == 0.0 && (!hi || std::isinf(*hi))) {
    emit(n, "relu(" + operand(n, 0) + ")", out);
    return;
  }
  if (lo && hi && *lo == 0.0 && *hi == 6.0) {
    emit(n, "relu6(" + operand(n, 0) + ")", out);
    return;
  }
  unsupported("Clip(" + (lo ? fmt_number(*lo) : std::string("-inf")) + ", " +
              (hi ? fmt_number(*hi) : std::string("inf")) +
              ") has no tilescope op (Clip(0, inf) is ReLU, Clip(0, 6) is ReLU6)");
}

void Importer::op_arith(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  const char sym = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
  // A scalar constant times or over a tensor is a scale; anything else is element-wise.
  std::optional<double> s0 = scalar(n, 0), s1 = scalar(n, 1);
  if ((sym == '*' || sym == '/') && s1 && !s0) {
    if (sym == '/' && *s1 == 0.0) fail(node_desc(m_node) + ": divides by the constant 0");
    emit(n, operand(n, 0) + " " + sym + " " + fmt_number(*s1), out);
    return;
  }
  if (sym == '*' && s0 && !s1) {
    emit(n, fmt_number(*s0) + " * " + operand(n, 1), out);
    return;
  }
  if (sym == '/') {
    unsupported(
        "Div of a tensor by a tensor has no tilescope op (tilescope's element-wise ops "
        "are + - * and division by a constant number)");
    return;
  }
  emit(n, operand(n, 0) + " " + sym + " " + operand(n, 1), out);
}

void Importer::op_matmul(const onnx::NodeProto& n, const std::string& out) {
  emit(n, operand(n, 0) + " @ " + operand(n, 1), out);
}

void Importer::op_gemm(const onnx::NodeProto& n, const std::string& out) {
  const double alpha = attr_float(n, "alpha", 1.0), beta = attr_float(n, "beta", 1.0);
  std::string e = operand(n, 0) + (attr_int(n, "transA", 0) ? ".T" : "") + " @ " + operand(n, 1) +
                  (attr_int(n, "transB", 0) ? ".T" : "");
  if (alpha != 1.0) e = "(" + e + ") * " + fmt_number(alpha);
  if (has_input(n, 2) && beta != 0.0)
    e += " + " + operand(n, 2) + (beta != 1.0 ? " * " + fmt_number(beta) : "");
  emit(n, e, out);
}

void Importer::op_window(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  const int spatial = rank_of(input(n, 0)) - 2;
  if (spatial != 2) {
    unsupported(std::to_string(spatial) + "-D " + op +
                " (tilescope has 2-D convolution and "
                "pooling: inputs [N, C, H, W])");
    return;
  }
  const Shape& xs = shape_of(input(n, 0));
  std::vector<int64_t> kernel = attr_ints(n, "kernel_shape");
  if (op == "Conv" && kernel.empty()) {
    const Shape& ws = input(n, 1).shape;
    kernel = {ws.size() == 4 ? ws[2] : 1, ws.size() == 4 ? ws[3] : 1};
  }
  std::vector<int64_t> strides = attr_ints(n, "strides"), dil = attr_ints(n, "dilations"),
                       pads = attr_ints(n, "pads");
  if (strides.empty()) strides = {1, 1};
  if (dil.empty()) dil = {1, 1};
  if (kernel.size() != 2 || strides.size() != 2 || dil.size() != 2 ||
      std::min({kernel[0], kernel[1], strides[0], strides[1], dil[0], dil[1]}) < 1)
    fail(node_desc(m_node) + ": kernel_shape " + fmt_ints(kernel) + ", strides " +
         fmt_ints(strides) + " and dilations " + fmt_ints(dil) +
         " must be two whole numbers of at least 1 each for a 2-D " + op);
  const std::string auto_pad = attr_string(n, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    pads.assign(4, 0);
    for (int d = 0; d < 2; ++d) {
      const int64_t in = xs[size_t(2 + d)], o = (in + strides[size_t(d)] - 1) / strides[size_t(d)];
      const int64_t total = std::max<int64_t>(
          0, (o - 1) * strides[size_t(d)] + (kernel[size_t(d)] - 1) * dil[size_t(d)] + 1 - in);
      pads[size_t(d)] = total / 2;
      pads[size_t(d + 2)] = total - total / 2;
    }
  }
  if (pads.empty()) pads.assign(4, 0);
  // Each window attribute has one entry per spatial dim (pads two), in the ranges the model
  // language takes: anything else is a damaged file, not a model.
  auto check = [&](const char* what, const std::vector<int64_t>& v, size_t count, int64_t lo) {
    bool ok = v.size() == count;
    for (int64_t x : v) ok = ok && x >= lo && x <= (int64_t{1} << 31) - 1;
    if (!ok)
      fail(node_desc(m_node) + ": " + what + " " + fmt_ints(v) + " must be " +
           std::to_string(count) + " whole numbers of at least " + std::to_string(lo) +
           " for a 2-D " + op);
  };
  check("kernel_shape", kernel, 2, 1);
  check("strides", strides, 2, 1);
  check("dilations", dil, 2, 1);
  check("pads", pads, 4, 0);
  if (pads[0] != pads[2] || pads[1] != pads[3]) {
    unsupported("padding " + fmt_ints(pads) +
                " is not the same on both sides; tilescope pads "
                "symmetrically (as PyTorch's padding=)");
    return;
  }
  if (attr_int(n, "ceil_mode", 0)) {
    unsupported(
        "ceil_mode=1 (tilescope's pooling rounds the output size down, as PyTorch's "
        "default ceil_mode=False)");
    return;
  }
  std::string args = operand(n, 0);
  if (op == "Conv") {
    args += ", " + operand(n, 1);
    if (has_input(n, 2)) args += ", " + operand(n, 2);
  } else {
    args += ", kernel_size=" + fmt_ints(kernel, '(', ')');
  }
  // A pool's stride is always written: PyTorch's default for pools is the kernel, ONNX's is 1.
  if (op != "Conv" || strides[0] != 1 || strides[1] != 1)
    args += ", stride=" + fmt_ints(strides, '(', ')');
  if (pads[0] || pads[1]) args += ", padding=" + fmt_ints({pads[0], pads[1]}, '(', ')');
  if (dil[0] != 1 || dil[1] != 1) {
    if (op == "AveragePool") {
      unsupported("a dilated AveragePool");
      return;
    }
    args += ", dilation=" + fmt_ints(dil, '(', ')');
  }
  if (op == "Conv" && attr_int(n, "group", 1) != 1)
    args += ", groups=" + std::to_string(attr_int(n, "group", 1));
  if (op == "AveragePool" && (pads[0] || pads[1]) && !attr_int(n, "count_include_pad", 0)) {
    unsupported(
        "AveragePool with padding and count_include_pad=0 (tilescope averages over the "
        "whole window, padding included)");
    return;
  }
  emit(n,
       std::string(op == "Conv"      ? "conv2d"
                   : op == "MaxPool" ? "max_pool2d"
                                     : "avg_pool2d") +
           "(" + args + ")",
       out);
}

void Importer::op_global_pool(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  const Shape& xs = shape_of(input(n, 0));
  if (xs.size() != 4) {
    unsupported("a global pool over a " + std::to_string(xs.size()) +
                "-D input (tilescope pools "
                "[N, C, H, W])");
    return;
  }
  emit(n,
       std::string(op == "GlobalAveragePool" ? "avg_pool2d" : "max_pool2d") + "(" + operand(n, 0) +
           ", kernel_size=" + fmt_ints({xs[2], xs[3]}, '(', ')') + ")",
       out);
}

void Importer::op_batch_norm(const onnx::NodeProto& n, const std::string& out) {
  if (attr_int(n, "training_mode", 0)) {
    unsupported("BatchNormalization in training mode (export the model in eval mode)");
    return;
  }
  emit(n,
       "batch_norm(" + operand(n, 0) + ", " + operand(n, 1) + ", " + operand(n, 2) + ", " +
           operand(n, 3) + ", " + operand(n, 4) +
           ", eps=" + fmt_number(attr_float(n, "epsilon", 1e-5)) + ")",
       out);
}

void Importer::op_layer_norm(const onnx::NodeProto& n, const std::string& out) {
  const int rank = rank_of(input(n, 0));
  int64_t axis = attr_int(n, "axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) {
    unsupported("LayerNormalization over the last " + std::to_string(rank - axis) +
                " dimensions (tilescope normalizes over the last one)");
    return;
  }
  if (!has_input(n, 2)) {
    unsupported("LayerNormalization without a bias B (tilescope's layer_norm takes one)");
    return;
  }
  emit(n,
       "layer_norm(" + operand(n, 0) + ", " + operand(n, 1) + ", " + operand(n, 2) +
           ", eps=" + fmt_number(attr_float(n, "epsilon", 1e-5)) + ")",
       out);
}

void Importer::op_softmax(const onnx::NodeProto& n, const std::string& out) {
  const int rank = rank_of(input(n, 0));
  const int opset = static_cast<int>(m_out.opset);
  int64_t axis = attr_int(n, "axis", opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (opset < 13 && axis != rank - 1) {
    unsupported("Softmax before opset 13 over dimensions " + std::to_string(axis) + "… of a " +
                std::to_string(rank) + "-D input (flattened); re-export with opset 13 or later");
    return;
  }
  emit(n, "softmax(" + operand(n, 0) + ", dim=" + std::to_string(axis) + ")", out);
}

void Importer::op_reduce(const onnx::NodeProto& n, const std::string& out) {
  const std::string& op = n.op_type();
  std::vector<int64_t> axes = attr_ints(n, "axes");
  if (axes.empty() && has_input(n, 1)) axes = const_ints(n, 1, "axes");
  std::string e = std::string(op == "ReduceMean" ? "mean(" : "sum(") + operand(n, 0);
  if (!axes.empty()) e += ", dim=" + fmt_ints(axes);
  e += std::string(", keepdim=") + (attr_int(n, "keepdims", 1) ? "True" : "False") + ")";
  if (axes.empty() && attr_int(n, "noop_with_empty_axes", 0)) {
    alias(out, n.input(0), "no axes: the identity");
    return;
  }
  emit(n, e, out);
}

void Importer::op_flatten(const onnx::NodeProto& n, const std::string& out) {
  const Shape& xs = shape_of(input(n, 0));
  int64_t axis = attr_int(n, "axis", 1);
  if (axis < 0) axis += int64_t(xs.size());
  if (axis == 1) {
    emit(n, "flatten(" + operand(n, 0) + ", 1)", out);
    return;
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[size_t(d)];
  emit(n, "reshape(" + operand(n, 0) + ", " + fmt_ints({outer, -1}) + ")", out);
}

void Importer::op_reshape(const onnx::NodeProto& n, const std::string& out) {
  std::vector<int64_t> target = const_ints(n, 1, "target shape");
  const Shape& xs = shape_of(input(n, 0));
  if (!attr_int(n, "allowzero", 0)) {
    for (size_t d = 0; d < target.size(); ++d)
      if (target[d] == 0 && d < xs.size()) target[d] = xs[d];
  }
  emit(n, "reshape(" + operand(n, 0) + ", " + fmt_ints(target) + ")", out);
}

void Importer::op_transpose(const onnx::NodeProto& n, const std::string& out) {
  std::vector<int64_t> perm = attr_ints(n, "perm");
  if (perm.empty()) {
    const int rank = rank_of(input(n, 0));
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  emit(n, "permute(" + operand(n, 0) + ", " + fmt_ints(perm) + ")", out);
}

void Importer::op_concat(const onnx::NodeProto& n, const std::string& out) {
  std::string list;
  for (int k = 0; k < n.input_size(); ++k) list += (k ? ", " : "") + operand(n, k);
  emit(n, "concat([" + list + "], dim=" + std::to_string(attr_int(n, "axis", 0)) + ")", out);
}

// Split into parts along an axis: one narrow() (a Slice op) per output.
void Importer::op_split(const onnx::NodeProto& n, const std::string&) {
  const Shape& xs = shape_of(input(n, 0));
  int64_t axis = attr_int(n, "axis", 0);
  if (axis < 0) axis += int64_t(xs.size());
  if (axis < 0 || axis >= int64_t(xs.size())) fail(node_desc(m_node) + ": axis out of range");
  const int64_t size = xs[size_t(axis)];
  std::vector<int64_t> parts = attr_ints(n, "split");  // before opset 13
  if (parts.empty() && has_input(n, 1)) parts = const_ints(n, 1, "split sizes");
  const int64_t count = n.output_size();
  if (parts.empty()) {  // equal parts (opset 18: num_outputs; the last may be smaller)
    const int64_t each = (size + count - 1) / count;
    for (int64_t k = 0, left = size; k < count; ++k, left -= each)
      parts.push_back(std::min(each, left));
  }
  int64_t sum = 0;
  for (int64_t p : parts) sum += p;
  if (int64_t(parts.size()) != count || sum != size) {
    fail(node_desc(m_node) + ": split sizes " + fmt_ints(parts) + " do not cover the " +
         std::to_string(size) + " elements of axis " + std::to_string(axis) + " in " +
         std::to_string(count) + " outputs");
  }
  int64_t start = 0;
  for (int k = 0; k < n.output_size(); ++k) {
    if (parts[size_t(k)] < 1) fail(node_desc(m_node) + ": an empty part");
    emit(n,
         "narrow(" + operand(n, 0) + ", " + std::to_string(axis) + ", " + std::to_string(start) +
             ", " + std::to_string(parts[size_t(k)]) + ")",
         n.output(k));
    start += parts[size_t(k)];
  }
}

void Importer::op_erf(const onnx::NodeProto&, const std::string&) {
  unsupported("an Erf outside the GELU pattern 0.5·x·(1 + erf(x/√2)) (tilescope has no erf op)");
}

}  // namespace tilescope::import::detail

#endif  // TILESCOPE_HAVE_ONNX

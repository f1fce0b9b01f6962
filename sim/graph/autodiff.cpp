// Reverse-mode differentiation of a forward graph into graph ops, plus the loss and SGD updates.
//
// [SECTION] index: Which inputs carry gradients · Builder · Gradient rules · build_training_graph
#include "sim/graph/autodiff.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace tilescope::graph {

const char* loss_kind_name(LossKind k) {
  switch (k) {
    case LossKind::MSE:
      return "mse";
    case LossKind::CrossEntropy:
      return "cross-entropy";
  }
  return "?";
}

namespace {

// The backward helper of an activation whose gradient reads (dy, x).
OpKind gradient_of_activation(OpKind k) {
  return k == OpKind::ReLU    ? OpKind::ReLUGrad
         : k == OpKind::ReLU6 ? OpKind::ReLU6Grad
                              : OpKind::GELUGrad;
}

// Scale and CausalMask are their own gradients: Scale with the same factor, the mask filling with 0.
OpAttrs self_gradient_attrs(const Op& fwd) {
  OpAttrs a = fwd.attrs;
  if (fwd.kind == OpKind::CausalMask) a.alpha = 0.0;
  return a;
}

// [SECTION] Which inputs carry gradients

// Input positions of `op` that a gradient flows into. Loss targets, BatchNorm statistics and every
// input of a backward helper carry none.
std::vector<size_t> differentiable_inputs(const Op& op) {
  switch (op.kind) {
    case OpKind::MatMul:
    case OpKind::Conv2D:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      return {0, 1};
    case OpKind::ReLU:
    case OpKind::ReLU6:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
    case OpKind::Softmax:
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Scale:
    case OpKind::CausalMask:
    case OpKind::MSELoss:
    case OpKind::CrossEntropyLoss:
      return {0};
    case OpKind::BatchNorm:
    case OpKind::LayerNorm:
      return {0, 1, 2};
    case OpKind::Concat: {
      std::vector<size_t> all(op.inputs.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = i;
      return all;
    }
    default:
      return {};
  }
}

bool has_gradient_rule(OpKind k) {
  return !is_backward(k);
}

Shape batch_dims(const Shape& s) {
  return Shape(s.begin(), s.end() - 2);
}

// [SECTION] Builder

class Builder {
 public:
  Builder(const Graph& forward, const TrainingOptions& options) : m_g(forward), m_opt(options) {}

  Graph build();

 private:
  TensorId pick_prediction() const;
  TensorId add_loss(TensorId prediction);
  void mark_needs_grad(TensorId loss);
  void backward_op(OpId id);
  void add_updates();

  // Emits one backward op for forward op `fwd`; its output is named `name` (made unique).
  TensorId emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs, const std::string& name,
                const Op& fwd);
  // Sums `g` over broadcast dims down to `shape` (no op when it already has that shape).
  TensorId reduce_to(TensorId g, const Shape& shape, const std::string& name, const Op& fwd);
  // The gradient of `t`, summing the contributions of its consumers.
  TensorId gradient_of(TensorId t);
  // Name for the contribution of consumer `fwd` to the gradient of `t`.
  std::string contribution_name(TensorId t, const Op& fwd) const;
  void contribute(TensorId t, TensorId g) { m_contrib[t].push_back(g); }

  std::string fresh_tensor(const std::string& name) const {
    return m_g.find_tensor(name) ? m_g.unique_tensor_name(name + "_") : name;
  }
  std::string fresh_op(const std::string& name) const {
    return m_g.find_op(name) ? m_g.unique_op_name(name + "_") : name;
  }
  [[noreturn]] void fail(const Op& op, const std::string& why) const {
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): " + why);
  }

  Graph m_g;
  const TrainingOptions& m_opt;
  size_t m_forward_ops = 0;  // ops [0, m_forward_ops) get differentiated (the loss included)
  TensorId m_loss = -1;
  std::vector<bool> m_needs;           // tensor depends on a trainable leaf
  std::vector<bool> m_reaches;         // tensor's gradient is needed (it reaches the loss)
  std::map<TensorId, int> m_expected;  // how many contributions each gradient will receive
  std::map<TensorId, std::vector<TensorId>> m_contrib;
  std::map<TensorId, TensorId> m_grad;  // final gradient per forward tensor
  std::vector<bool> m_is_target;        // loss targets: never differentiated
};

TensorId Builder::pick_prediction() const {
  if (m_opt.prediction) {
    const TensorId p = *m_opt.prediction;
    if (p < 0 || static_cast<size_t>(p) >= m_g.tensors().size())
      throw GraphError(
          {}, "the prediction is tensor id " + std::to_string(p) + ", which is not in the graph");
    return p;
  }
  const std::vector<TensorId> outs = m_g.graph_outputs();
  if (outs.size() == 1) return outs[0];
  if (outs.empty()) throw GraphError({}, "the graph has no ops, so there is nothing to train");
  std::string names;
  for (TensorId t : outs) names += (names.empty() ? "" : ", ") + m_g.tensor(t).name;
  throw GraphError({}, "the graph has " + std::to_string(outs.size()) + " outputs (" + names +
                           "); say which one is the prediction");
}

TensorId Builder::add_loss(TensorId prediction) {
  const Tensor pred = m_g.tensor(prediction);
  if (pred.producer >= 0) {
    const OpKind k = m_g.op(pred.producer).kind;
    if (k == OpKind::MSELoss || k == OpKind::CrossEntropyLoss) return prediction;
  }
  Tensor target;
  target.name = fresh_tensor("target");
  target.role = Role::Input;
  target.dtype = DType::F32;
  target.loc = pred.loc;
  Op loss;
  loss.name = fresh_op("loss");
  loss.loc = pred.loc;
  loss.origin = std::string("loss (") + loss_kind_name(m_opt.loss) + ")";
  if (m_opt.loss == LossKind::MSE) {
    target.shape = pred.shape;
    target.dtype = pred.dtype;
    loss.kind = OpKind::MSELoss;
  } else {
    if (pred.rank() != 2)
      throw GraphError(pred.loc, "cross-entropy needs the prediction to be logits [N, classes]; '" +
                                     pred.name + "' is " + shape_to_string(pred.shape) + " (rank " +
                                     std::to_string(pred.rank()) + ")");
    if (pred.shape[1] < 2)
      throw GraphError(pred.loc, "cross-entropy needs at least 2 classes; '" + pred.name + "' is " +
                                     shape_to_string(pred.shape));
    target.shape = {pred.shape[0]};
    loss.kind = OpKind::CrossEntropyLoss;
  }
  const TensorId t = m_g.add_tensor(target);
  loss.inputs = {prediction, t};
  return m_g.add_op(loss, fresh_tensor("loss"), Role::Activation);
}

void Builder::mark_needs_grad(TensorId loss) {
  const size_t nt = m_g.tensors().size();
  m_is_target.assign(nt, false);
  for (size_t o = 0; o < m_forward_ops; ++o) {
    const Op& op = m_g.ops()[o];
    if ((op.kind == OpKind::MSELoss || op.kind == OpKind::CrossEntropyLoss))
      m_is_target[static_cast<size_t>(op.inputs[1])] = true;
  }
  m_needs.assign(nt, false);
  for (size_t i = 0; i < nt; ++i) {
    const Tensor& t = m_g.tensors()[i];
    if (t.producer >= 0 || m_is_target[i]) continue;
    m_needs[i] = t.role == Role::Weight || (t.role == Role::Input && m_opt.input_gradients);
  }
  for (size_t o = 0; o < m_forward_ops; ++o) {
    const Op& op = m_g.ops()[o];
    for (size_t i : differentiable_inputs(op))
      if (m_needs[static_cast<size_t>(op.inputs[i])])
        m_needs[static_cast<size_t>(op.outputs[0])] = true;
  }
  // Backwards from the loss: which tensors' gradients are wanted, and how many shares each gets.
  m_reaches.assign(nt, false);
  m_reaches[static_cast<size_t>(loss)] = true;
  for (size_t o = m_forward_ops; o-- > 0;) {
    const Op& op = m_g.ops()[o];
    const TensorId y = op.outputs[0];
    if (!m_reaches[static_cast<size_t>(y)] || !m_needs[static_cast<size_t>(y)]) continue;
    if (!has_gradient_rule(op.kind))
      fail(op, "is a backward helper and has no gradient of its own; differentiate forward graphs");
    for (size_t i : differentiable_inputs(op)) {
      const TensorId x = op.inputs[i];
      if (!m_needs[static_cast<size_t>(x)]) continue;
      m_reaches[static_cast<size_t>(x)] = true;
      ++m_expected[x];
    }
  }
}

TensorId Builder::emit(OpKind kind, std::vector<TensorId> inputs, OpAttrs attrs,
                       const std::string& name, const Op& fwd) {
  Op op;
  op.kind = kind;
  op.name = m_g.unique_op_name(fwd.name + "_bwd");
  op.inputs = std::move(inputs);
  op.attrs = std::move(attrs);
  op.loc = fwd.loc;
  op.origin = "backward of " + fwd.name;
  return m_g.add_op(op, fresh_tensor(name), Role::Gradient);
}

TensorId Builder::reduce_to(TensorId g, const Shape& shape, const std::string& name,
                            const Op& fwd) {
  if (m_g.tensor(g).shape == shape) return g;
  OpAttrs a;
  a.shape = shape;
  return emit(OpKind::ReduceToShape, {g}, a, name, fwd);
}

std::string Builder::contribution_name(TensorId t, const Op& fwd) const {
  const std::string base = "d" + m_g.tensor(t).name;
  return m_expected.at(t) == 1 ? base : base + "_via_" + fwd.name;
}

TensorId Builder::gradient_of(TensorId t) {
  if (auto it = m_grad.find(t); it != m_grad.end()) return it->second;
  const std::vector<TensorId>& parts = m_contrib.at(t);
  TensorId sum = parts[0];
  const std::string name = "d" + m_g.tensor(t).name;
  for (size_t i = 1; i < parts.size(); ++i) {
    Op add;
    add.kind = OpKind::Add;
    add.name = m_g.unique_op_name("grad_add");
    add.inputs = {sum, parts[i]};
    add.origin = "gradient accumulation for " + m_g.tensor(t).name;
    const bool last = i + 1 == parts.size();
    sum = m_g.add_op(add, fresh_tensor(last ? name : name + "_partial"), Role::Gradient);
  }
  m_grad[t] = sum;
  return sum;
}

// [SECTION] Gradient rules

void Builder::backward_op(OpId id) {
  const Op fwd = m_g.op(id);  // a copy: emitting ops grows the graph's vectors
  const TensorId y = fwd.outputs[0];
  if (!m_reaches[static_cast<size_t>(y)] || !m_needs[static_cast<size_t>(y)]) return;
  // The loss itself has gradient 1, which the loss-gradient ops fold in.
  const bool root = y == m_loss;
  const TensorId dy = root ? -1 : gradient_of(y);
  const OpAttrs& a = fwd.attrs;
  auto in = [&](size_t i) { return fwd.inputs[i]; };
  auto shape = [&](TensorId t) { return m_g.tensor(t).shape; };
  auto wants = [&](size_t i) { return m_needs[static_cast<size_t>(fwd.inputs[i])]; };
  auto name = [&](size_t i) { return contribution_name(fwd.inputs[i], fwd); };

  switch (fwd.kind) {
    case OpKind::MSELoss:
    case OpKind::CrossEntropyLoss: {
      const OpKind gk =
          fwd.kind == OpKind::MSELoss ? OpKind::MSELossGrad : OpKind::CrossEntropyLossGrad;
      TensorId g = emit(gk, {in(0), in(1)}, a, root ? name(0) : name(0) + "_unscaled", fwd);
      if (!root) g = emit(OpKind::Mul, {g, dy}, {}, name(0), fwd);  // dy is a scalar: broadcasts
      contribute(in(0), g);
      break;
    }
    case OpKind::Add:
    case OpKind::Sub:
      for (size_t i = 0; i < 2; ++i) {
        if (!wants(i)) continue;
        const bool negate = fwd.kind == OpKind::Sub && i == 1;
        TensorId g = reduce_to(dy, shape(in(i)), negate ? name(i) + "_pos" : name(i), fwd);
        if (negate) {
          OpAttrs s;
          s.alpha = -1.0;
          g = emit(OpKind::Scale, {g}, s, name(i), fwd);
        }
        contribute(in(i), g);
      }
      break;
    case OpKind::Mul:
      for (size_t i = 0; i < 2; ++i) {
        if (!wants(i)) continue;
        const TensorId other = in(1 - i);
        // dy * other has dy's shape; it needs reducing only when this input was broadcast.
        const bool broadcast = shape(in(i)) != shape(dy);
        TensorId g =
            emit(OpKind::Mul, {dy, other}, {}, broadcast ? name(i) + "_full" : name(i), fwd);
        contribute(in(i), reduce_to(g, shape(in(i)), name(i), fwd));
      }
      break;
    case OpKind::ReLU:  // the activations whose gradient reads (dy, x)
    case OpKind::ReLU6:
    case OpKind::GELU:
      contribute(in(0), emit(gradient_of_activation(fwd.kind), {dy, in(0)}, {}, name(0), fwd));
      break;
    case OpKind::Sigmoid:
      contribute(in(0), emit(OpKind::SigmoidGrad, {dy, y}, {}, name(0), fwd));
      break;
    case OpKind::Tanh:
      contribute(in(0), emit(OpKind::TanhGrad, {dy, y}, {}, name(0), fwd));
      break;
    case OpKind::Scale:       // dy · alpha
    case OpKind::CausalMask:  // dy where the mask kept x; 0 where it filled (nothing reached y)
      contribute(in(0), emit(fwd.kind, {dy}, self_gradient_attrs(fwd), name(0), fwd));
      break;
    case OpKind::MatMul: {
      // y = op(A) @ op(B). dA and dB are matmuls of dy with the other operand, with the
      // transpose flags chosen so no explicit Transpose op is needed; batch broadcasting is
      // undone by ReduceToShape.
      if (wants(0)) {
        OpAttrs m;
        std::vector<TensorId> ins;
        if (!a.trans_a) {  // dA = dy @ op(B)^T
          ins = {dy, in(1)};
          m.trans_b = !a.trans_b;
        } else {  // A^T = op(A): dA = op(B) @ dy^T
          ins = {in(1), dy};
          m.trans_a = a.trans_b;
          m.trans_b = true;
        }
        const bool reduce = batch_dims(shape(in(0))) != batch_dims(shape(dy));
        const TensorId g =
            emit(OpKind::MatMul, ins, m, reduce ? name(0) + "_batched" : name(0), fwd);
        contribute(in(0), reduce_to(g, shape(in(0)), name(0), fwd));
      }
      if (wants(1)) {
        OpAttrs m;
        std::vector<TensorId> ins;
        if (!a.trans_b) {  // dB = op(A)^T @ dy
          ins = {in(0), dy};
          m.trans_a = !a.trans_a;
        } else {  // B^T = op(B): dB = dy^T @ op(A)
          ins = {dy, in(0)};
          m.trans_a = true;
          m.trans_b = a.trans_a;
        }
        const bool reduce = batch_dims(shape(in(1))) != batch_dims(shape(dy));
        const TensorId g =
            emit(OpKind::MatMul, ins, m, reduce ? name(1) + "_batched" : name(1), fwd);
        contribute(in(1), reduce_to(g, shape(in(1)), name(1), fwd));
      }
      break;
    }
    case OpKind::Conv2D: {
      if (wants(0)) {
        OpAttrs c = a;
        c.shape = shape(in(0));
        contribute(in(0), emit(OpKind::Conv2DGradInput, {dy, in(1)}, c, name(0), fwd));
      }
      if (wants(1)) {
        OpAttrs c = a;
        c.shape = shape(in(1));
        contribute(in(1), emit(OpKind::Conv2DGradWeight, {in(0), dy}, c, name(1), fwd));
      }
      break;
    }
    case OpKind::MaxPool2D:
      contribute(in(0), emit(OpKind::MaxPool2DGrad, {dy, in(0)}, a, name(0), fwd));
      break;
    case OpKind::AvgPool2D: {
      OpAttrs p = a;
      p.shape = shape(in(0));
      contribute(in(0), emit(OpKind::AvgPool2DGrad, {dy}, p, name(0), fwd));
      break;
    }
    case OpKind::BatchNorm: {  // inputs x, scale, shift, mean, var
      if (wants(0))
        contribute(in(0), emit(OpKind::BatchNormGrad, {dy, in(1), in(4)}, a, name(0), fwd));
      if (wants(1))
        contribute(in(1),
                   emit(OpKind::BatchNormScaleGrad, {dy, in(0), in(3), in(4)}, a, name(1), fwd));
      if (wants(2)) {
        OpAttrs s;  // sum over every dim but the channel dim
        for (int d = 0; d < static_cast<int>(shape(dy).size()); ++d)
          if (d != 1) s.axes.push_back(d);
        contribute(in(2), emit(OpKind::Sum, {dy}, s, name(2), fwd));
      }
      break;
    }
    case OpKind::LayerNorm: {  // inputs x, gamma, beta
      if (wants(0))
        contribute(in(0), emit(OpKind::LayerNormGrad, {dy, in(0), in(1)}, a, name(0), fwd));
      if (wants(1))
        contribute(in(1), emit(OpKind::LayerNormGammaGrad, {dy, in(0)}, a, name(1), fwd));
      if (wants(2)) contribute(in(2), reduce_to(dy, shape(in(2)), name(2), fwd));
      break;
    }
    case OpKind::Softmax:
      contribute(in(0), emit(OpKind::SoftmaxGrad, {dy, y}, a, name(0), fwd));
      break;
    case OpKind::Reshape: {
      OpAttrs r;
      r.shape = shape(in(0));
      contribute(in(0), emit(OpKind::Reshape, {dy}, r, name(0), fwd));
      break;
    }
    case OpKind::Transpose: {
      OpAttrs t;
      t.perm.assign(a.perm.size(), 0);
      for (size_t d = 0; d < a.perm.size(); ++d)
        t.perm[static_cast<size_t>(a.perm[d])] = static_cast<int>(d);
      contribute(in(0), emit(OpKind::Transpose, {dy}, t, name(0), fwd));
      break;
    }
    case OpKind::Concat: {
      int64_t offset = 0;
      for (size_t i = 0; i < fwd.inputs.size(); ++i) {
        const Shape s = shape(in(i));
        if (wants(i)) {
          OpAttrs sl;
          sl.shape = s;
          sl.starts.assign(s.size(), 0);
          sl.starts[static_cast<size_t>(a.axis)] = offset;
          contribute(in(i), emit(OpKind::Slice, {dy}, sl, name(i), fwd));
        }
        offset += s[static_cast<size_t>(a.axis)];
      }
      break;
    }
    case OpKind::Sum:
    case OpKind::Mean: {
      // Put the reduced dims back as size 1 so broadcasting lines up, then spread dy over them.
      const Shape xs = shape(in(0));
      Shape kept = xs;
      for (int d : a.axes) kept[static_cast<size_t>(d)] = 1;
      TensorId g = dy;
      if (shape(dy) != kept) {
        OpAttrs r;
        r.shape = kept;
        g = emit(OpKind::Reshape, {g}, r, name(0) + "_kept", fwd);
      }
      OpAttrs b;
      b.shape = xs;
      const bool mean = fwd.kind == OpKind::Mean;
      g = emit(OpKind::BroadcastTo, {g}, b, mean ? name(0) + "_sum" : name(0), fwd);
      if (mean) {
        OpAttrs s;
        s.alpha = static_cast<double>(shape_numel(kept)) / static_cast<double>(shape_numel(xs));
        g = emit(OpKind::Scale, {g}, s, name(0), fwd);
      }
      contribute(in(0), g);
      break;
    }
    default:
      fail(fwd, "has no gradient rule");
  }
}

void Builder::add_updates() {
  for (size_t i = 0; i < m_g.tensors().size(); ++i) {
    const TensorId w = static_cast<TensorId>(i);
    const Tensor& t = m_g.tensor(w);
    if (t.role != Role::Weight || t.producer >= 0) continue;
    const auto it = m_grad.find(w);
    if (it == m_grad.end()) continue;  // does not affect the loss (or is a BN statistic)
    Op op;
    op.kind = OpKind::SGDUpdate;
    op.name = fresh_op("sgd_" + t.name);
    op.inputs = {w, it->second};
    op.attrs.alpha = m_opt.learning_rate;
    op.loc = t.loc;
    op.origin = "SGD update";
    m_g.add_op(op, fresh_tensor(t.name + "_next"), Role::Weight);
  }
}

Graph Builder::build() {
  if (!std::isfinite(m_opt.learning_rate) || m_opt.learning_rate <= 0)
    throw GraphError({}, "the learning rate must be a positive number, got " +
                             std::to_string(m_opt.learning_rate));
  for (const Op& op : m_g.ops())
    if (!has_gradient_rule(op.kind))
      fail(op, "is a backward helper: build_training_graph takes a forward graph");
  const TensorId prediction = pick_prediction();
  m_loss = add_loss(prediction);
  m_forward_ops = m_g.ops().size();
  mark_needs_grad(m_loss);
  if (!m_needs[static_cast<size_t>(m_loss)])
    throw GraphError(m_g.tensor(prediction).loc,
                     "nothing to train: '" + m_g.tensor(prediction).name +
                         "' depends on no weight" + (m_opt.input_gradients ? " or input" : ""));
  for (size_t o = m_forward_ops; o-- > 0;) backward_op(static_cast<OpId>(o));
  // Leaves get their final (accumulated) gradient named "d<name>".
  for (size_t i = 0; i < m_g.tensors().size(); ++i) {
    const TensorId t = static_cast<TensorId>(i);
    if (m_contrib.count(t) && !m_grad.count(t)) gradient_of(t);
  }
  add_updates();
  return std::move(m_g);
}

}  // namespace

Graph build_training_graph(const Graph& forward, const TrainingOptions& options) {
  return Builder(forward, options).build();
}

}  // namespace tilescope::graph

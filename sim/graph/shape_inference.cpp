// Shape inference for every op kind (infer_shape): each op's rules on its inputs' shapes and
// attributes, with errors that name the op.
#include "sim/graph/graph.h"

#include <algorithm>
#include <set>

namespace tilescope::graph {

// [SECTION] Shape inference

namespace {

// Errors during inference all start with "<op name> (<Kind>): " so the learner knows which op.
class Checker {
 public:
  Checker(const Op& op, const std::vector<const Tensor*>& in) : m_op(op), m_in(in) {}

  [[noreturn]] void fail(const std::string& why) const {
    std::string who = m_op.name.empty() ? std::string(op_kind_name(m_op.kind))
                                        : m_op.name + " (" + op_kind_name(m_op.kind) + ")";
    throw GraphError(m_op.loc, who + ": " + why);
  }

  void arity(size_t n) const {
    if (m_in.size() != n)
      fail("needs " + std::to_string(n) + " input" + (n == 1 ? "" : "s") + ", got " +
           std::to_string(m_in.size()));
  }

  const Shape& shape(size_t i) const { return m_in[i]->shape; }
  int rank(size_t i) const { return m_in[i]->rank(); }
  // "x [64, 1024]"
  std::string desc(size_t i) const { return m_in[i]->name + " " + shape_to_string(shape(i)); }

  void min_rank(size_t i, int r, const std::string& why) const {
    if (rank(i) < r) fail(desc(i) + " has rank " + std::to_string(rank(i)) + "; " + why);
  }
  void exact_rank(size_t i, int r, const std::string& why) const {
    if (rank(i) != r) fail(desc(i) + " has rank " + std::to_string(rank(i)) + "; " + why);
  }
  void same_shape(size_t i, size_t j) const {
    if (shape(i) != shape(j)) fail(desc(i) + " and " + desc(j) + " must have the same shape");
  }
  void vector_of(size_t i, int64_t n, const std::string& what) const {
    if (shape(i) != Shape{n})
      fail(desc(i) + " must be " + shape_to_string({n}) + " (" + what + ")");
  }

  // An axis in [-rank, rank) made non-negative.
  int axis(int a, int r, const char* what) const {
    if (a < -r || a >= r)
      fail(std::string(what) + " " + std::to_string(a) + " is out of range for rank " +
           std::to_string(r) + " (valid: " + std::to_string(-r) + " .. " + std::to_string(r - 1) +
           ")");
    return a < 0 ? a + r : a;
  }

  const Op& op() const { return m_op; }

 private:
  const Op& m_op;
  const std::vector<const Tensor*>& m_in;
};

// Numpy broadcasting: align right; each pair of sizes must match or one must be 1.
std::optional<Shape> try_broadcast(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Shape broadcast_or_fail(const Checker& c, const Shape& a, const std::string& a_desc, const Shape& b,
                        const std::string& b_desc) {
  if (auto out = try_broadcast(a, b)) return *out;
  const size_t r = std::max(a.size(), b.size());
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      c.fail("cannot broadcast " + a_desc + " with " + b_desc + ": dim " +
             std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(r)) + " is " +
             std::to_string(da) + " vs " + std::to_string(db) +
             " (sizes must match or one must be 1, aligned from the right)");
  }
  c.fail("cannot broadcast " + a_desc + " with " + b_desc);
}

// Output size of one spatial dim of a conv or pooling window; may be <= 0 (the caller reports),
// nullopt when absurd padding or dilation overflows the arithmetic.
std::optional<int64_t> window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  int64_t padded, reach;
  if (__builtin_mul_overflow(pad, 2, &padded) || __builtin_add_overflow(in, padded, &padded) ||
      __builtin_mul_overflow(dil, k - 1, &reach))
    return std::nullopt;
  const int64_t span = padded - reach - 1;  // both terms are >= 0, so this cannot overflow
  if (span < 0) return 0;
  return span / stride + 1;
}

void check_window_attrs(const Checker& c, const OpAttrs& a, bool check_kernel) {
  static const char* dims[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    if (check_kernel && a.kernel[i] < 1)
      c.fail(std::string("kernel ") + dims[i] + " must be >= 1, got " +
             std::to_string(a.kernel[i]));
    if (a.stride[i] < 1)
      c.fail(std::string("stride ") + dims[i] + " must be >= 1, got " +
             std::to_string(a.stride[i]));
    if (a.padding[i] < 0)
      c.fail(std::string("padding ") + dims[i] + " must be >= 0, got " +
             std::to_string(a.padding[i]));
    if (a.dilation[i] < 1)
      c.fail(std::string("dilation ") + dims[i] + " must be >= 1, got " +
             std::to_string(a.dilation[i]));
  }
}

// Spatial output [P, Q] of a window op over x (N,C,H,W) with kernel r x s.
std::pair<int64_t, int64_t> window_output(const Checker& c, const Shape& x,
                                          const std::string& x_desc, int64_t r, int64_t s,
                                          const OpAttrs& a) {
  const auto p = window_out(x[2], r, a.stride[0], a.padding[0], a.dilation[0]);
  const auto q = window_out(x[3], s, a.stride[1], a.padding[1], a.dilation[1]);
  if (!p || !q)
    c.fail("padding " + std::to_string(a.padding[p ? 1 : 0]) + " or dilation " +
           std::to_string(a.dilation[p ? 1 : 0]) + " is too large to compute an output size");
  if (*p < 1 || *q < 1) {
    const bool h = *p < 1;
    const int i = h ? 0 : 1;
    const int64_t k = h ? r : s;
    c.fail(std::string("output ") + (h ? "height" : "width") + " would be < 1: input " + x_desc +
           " has " + (h ? "H" : "W") + " = " + std::to_string(x[h ? 2 : 3]) + ", but the kernel " +
           std::to_string(k) + " with dilation " + std::to_string(a.dilation[i]) + " spans " +
           std::to_string(a.dilation[i] * (k - 1)) + " + 1 rows/cols and padding adds only " +
           std::to_string(a.padding[i]) + " on each side");
  }
  return {*p, *q};
}

// Output of Conv2D(x, w) with these attrs; shared by the conv and its two gradients.
Shape conv_output(const Checker& c, const Shape& x, const std::string& x_desc, const Shape& w,
                  const std::string& w_desc, const OpAttrs& a) {
  if (x.size() != 4)
    c.fail("input " + x_desc + " must be 4-D [N, C, H, W], it has rank " +
           std::to_string(x.size()));
  if (w.size() != 4)
    c.fail("weight " + w_desc + " must be 4-D [K, C/groups, R, S], it has rank " +
           std::to_string(w.size()));
  check_window_attrs(c, a, false);
  if (a.groups < 1) c.fail("groups must be >= 1, got " + std::to_string(a.groups));
  const int64_t channels = x[1], k = w[0];
  if (channels % a.groups != 0)
    c.fail("input " + x_desc + " has " + std::to_string(channels) +
           " channels, not divisible by groups=" + std::to_string(a.groups));
  if (k % a.groups != 0)
    c.fail("weight " + w_desc + " has " + std::to_string(k) +
           " output channels, not divisible by groups=" + std::to_string(a.groups));
  if (w[1] != channels / a.groups)
    c.fail("weight " + w_desc + " expects " + std::to_string(w[1]) +
           " input channels per group, but input " + x_desc + " has " + std::to_string(channels) +
           " channels / groups=" + std::to_string(a.groups) + " = " +
           std::to_string(channels / a.groups));
  const bool default_kernel = a.kernel[0] == 1 && a.kernel[1] == 1;
  if (!default_kernel && (a.kernel[0] != w[2] || a.kernel[1] != w[3]))
    c.fail("attrs.kernel (" + std::to_string(a.kernel[0]) + ", " + std::to_string(a.kernel[1]) +
           ") disagrees with weight " + w_desc);
  auto [p, q] = window_output(c, x, x_desc, w[2], w[3], a);
  return {x[0], k, p, q};
}

Shape pool_output(const Checker& c, const Shape& x, const std::string& x_desc, const OpAttrs& a) {
  if (x.size() != 4)
    c.fail("input " + x_desc + " must be 4-D [N, C, H, W], it has rank " +
           std::to_string(x.size()));
  check_window_attrs(c, a, true);
  for (int i = 0; i < 2; ++i)
    if (a.padding[i] > a.kernel[i] / 2)
      c.fail("padding " + std::to_string(a.padding[i]) + " must be at most half the kernel size " +
             std::to_string(a.kernel[i]) + " (otherwise a window could hold only padding)");
  auto [p, q] = window_output(c, x, x_desc, a.kernel[0], a.kernel[1], a);
  return {x[0], x[1], p, q};
}

std::vector<int> normalized_axes(const Checker& c, const std::vector<int>& axes, int rank) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < rank; ++i) out.push_back(i);
    return out;
  }
  for (int a : axes) {
    const int n = c.axis(a, rank, "axis");
    if (std::find(out.begin(), out.end(), n) != out.end())
      c.fail("axis " + std::to_string(a) + " is listed twice");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Reshape target with at most one -1, resolved against the input's element count.
Shape reshape_target(const Checker& c, const Shape& target, int64_t numel,
                     const std::string& x_desc) {
  Shape out = target;
  int wildcard = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (wildcard >= 0)
        c.fail("target shape " + shape_to_string(target) + " has more than one -1");
      wildcard = static_cast<int>(i);
    } else if (target[i] < 1) {
      c.fail("target shape " + shape_to_string(target) + " has size " + std::to_string(target[i]) +
             " at dim " + std::to_string(i) + "; sizes must be >= 1 (or -1 once)");
    } else if (__builtin_mul_overflow(known, target[i], &known)) {
      c.fail("target shape " + shape_to_string(target) + " has more elements than fit in 64 bits");
    }
  }
  if (wildcard >= 0) {
    if (numel % known != 0)
      c.fail("cannot reshape " + x_desc + " (" + std::to_string(numel) + " elements) to " +
             shape_to_string(target) + ": " + std::to_string(numel) + " is not divisible by " +
             std::to_string(known));
    out[static_cast<size_t>(wildcard)] = numel / known;
  } else if (known != numel) {
    c.fail("cannot reshape " + x_desc + " (" + std::to_string(numel) + " elements) to " +
           shape_to_string(target) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

// How an operand of MatMul reads: "W.T [1024, 500]" when transposed (shape shown as used).
std::string matmul_operand(const Tensor& t, bool trans) {
  Shape s = t.shape;
  if (trans && s.size() >= 2) std::swap(s[s.size() - 1], s[s.size() - 2]);
  return t.name + (trans ? ".T " : " ") + shape_to_string(s);
}

}  // namespace

namespace {

// MatMul and the convolutions (forward and both gradients).
Shape infer_gemm_shape(const Op& op, const std::vector<const Tensor*>& in) {
  const Checker c(op, in);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i]) c.fail("input " + std::to_string(i) + " is missing");
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::MatMul: {
      c.arity(2);
      c.min_rank(0, 2, "MatMul needs matrices (rank >= 2)");
      c.min_rank(1, 2, "MatMul needs matrices (rank >= 2)");
      const Shape& x = c.shape(0);
      const Shape& y = c.shape(1);
      const size_t rx = x.size(), ry = y.size();
      const int64_t m = a.trans_a ? x[rx - 1] : x[rx - 2];
      const int64_t kx = a.trans_a ? x[rx - 2] : x[rx - 1];
      const int64_t ky = a.trans_b ? y[ry - 1] : y[ry - 2];
      const int64_t n = a.trans_b ? y[ry - 2] : y[ry - 1];
      const std::string lhs = matmul_operand(*in[0], a.trans_a);
      const std::string rhs = matmul_operand(*in[1], a.trans_b);
      if (kx != ky)
        c.fail("inner dimensions differ: " + lhs + " @ " + rhs + " needs " + std::to_string(kx) +
               " == " + std::to_string(ky));
      const Shape bx(x.begin(), x.end() - 2), by(y.begin(), y.end() - 2);
      Shape out = broadcast_or_fail(c, bx, "batch dims of " + lhs, by, "batch dims of " + rhs);
      out.push_back(m);
      out.push_back(n);
      return out;
    }
    case OpKind::Conv2D:
      c.arity(2);
      return conv_output(c, c.shape(0), c.desc(0), c.shape(1), c.desc(1), a);
    case OpKind::Conv2DGradInput: {
      c.arity(2);
      const Shape y =
          conv_output(c, a.shape, "dx " + shape_to_string(a.shape), c.shape(1), c.desc(1), a);
      if (y != c.shape(0))
        c.fail("dy " + c.desc(0) + " must match the conv output " + shape_to_string(y));
      return a.shape;
    }
    case OpKind::Conv2DGradWeight: {
      c.arity(2);
      const Shape y =
          conv_output(c, c.shape(0), c.desc(0), a.shape, "dw " + shape_to_string(a.shape), a);
      if (y != c.shape(1))
        c.fail("dy " + c.desc(1) + " must match the conv output " + shape_to_string(y));
      return a.shape;
    }
    default:
      break;
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

// Element by element: arithmetic, activations, their gradients, the SGD update, the MSE gradient.
Shape infer_elementwise_shape(const Op& op, const std::vector<const Tensor*>& in) {
  const Checker c(op, in);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i]) c.fail("input " + std::to_string(i) + " is missing");
  switch (op.kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      c.arity(2);
      return broadcast_or_fail(c, c.shape(0), c.desc(0), c.shape(1), c.desc(1));
    case OpKind::ReLU:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::ReLU6:
    case OpKind::Scale:
      c.arity(1);
      return c.shape(0);
    case OpKind::CausalMask:
      c.arity(1);
      if (c.shape(0).size() < 2)
        c.fail("a causal mask needs a matrix (rows are queries, columns keys); got " +
               c.desc(0));
      return c.shape(0);
    case OpKind::ReLUGrad:
    case OpKind::ReLU6Grad:
    case OpKind::GELUGrad:
    case OpKind::SigmoidGrad:
    case OpKind::TanhGrad:
    case OpKind::MSELossGrad:
    case OpKind::SGDUpdate:
      c.arity(2);
      c.same_shape(0, 1);
      return c.shape(0);
    default:
      break;
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

// Pooling and normalization, forward and backward.
Shape infer_pool_norm_shape(const Op& op, const std::vector<const Tensor*>& in) {
  const Checker c(op, in);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i]) c.fail("input " + std::to_string(i) + " is missing");
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
      c.arity(1);
      return pool_output(c, c.shape(0), c.desc(0), a);
    case OpKind::BatchNorm: {
      c.arity(5);
      c.min_rank(0, 2, "BatchNorm needs [N, C, ...] with channels in dim 1");
      const int64_t ch = c.shape(0)[1];
      static const char* names[4] = {"scale", "shift", "mean", "var"};
      for (size_t i = 1; i < 5; ++i)
        c.vector_of(i, ch, std::string(names[i - 1]) + ": one per channel of " + c.desc(0));
      if (!(a.eps >= 0)) c.fail("eps must be >= 0, got " + std::to_string(a.eps));
      return c.shape(0);
    }
    case OpKind::LayerNorm: {
      c.arity(3);
      c.min_rank(0, 1, "LayerNorm normalizes over the last dim");
      const int64_t d = c.shape(0).back();
      c.vector_of(1, d, "gamma: one per element of the last dim of " + c.desc(0));
      c.vector_of(2, d, "beta: one per element of the last dim of " + c.desc(0));
      if (!(a.eps >= 0)) c.fail("eps must be >= 0, got " + std::to_string(a.eps));
      return c.shape(0);
    }
    case OpKind::MaxPool2DGrad: {
      c.arity(2);
      const Shape y = pool_output(c, c.shape(1), c.desc(1), a);
      if (y != c.shape(0))
        c.fail("dy " + c.desc(0) + " must match the pooled shape " + shape_to_string(y) + " of " +
               c.desc(1));
      return c.shape(1);
    }
    case OpKind::AvgPool2DGrad: {
      c.arity(1);
      const Shape y = pool_output(c, a.shape, "dx " + shape_to_string(a.shape), a);
      if (y != c.shape(0))
        c.fail("dy " + c.desc(0) + " must match the pooled shape " + shape_to_string(y) +
               " of dx " + shape_to_string(a.shape));
      return a.shape;
    }
    case OpKind::LayerNormGrad:
      c.arity(3);
      c.same_shape(0, 1);
      c.min_rank(1, 1, "LayerNorm normalizes over the last dim");
      c.vector_of(2, c.shape(1).back(), "gamma: one per element of the last dim");
      return c.shape(1);
    case OpKind::BatchNormGrad:
      c.arity(3);
      c.min_rank(0, 2, "BatchNorm needs [N, C, ...] with channels in dim 1");
      c.vector_of(1, c.shape(0)[1], "scale: one per channel");
      c.vector_of(2, c.shape(0)[1], "var: one per channel");
      return c.shape(0);
    case OpKind::BatchNormScaleGrad:
      c.arity(4);
      c.same_shape(0, 1);
      c.min_rank(1, 2, "BatchNorm needs [N, C, ...] with channels in dim 1");
      c.vector_of(2, c.shape(1)[1], "mean: one per channel");
      c.vector_of(3, c.shape(1)[1], "var: one per channel");
      return {c.shape(1)[1]};
    case OpKind::LayerNormGammaGrad:
      c.arity(2);
      c.same_shape(0, 1);
      c.min_rank(1, 1, "LayerNorm normalizes over the last dim");
      return {c.shape(1).back()};
    default:
      break;
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

// Softmax and the losses, forward and backward.
Shape infer_softmax_loss_shape(const Op& op, const std::vector<const Tensor*>& in) {
  const Checker c(op, in);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i]) c.fail("input " + std::to_string(i) + " is missing");
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::Softmax:
      c.arity(1);
      c.min_rank(0, 1, "Softmax needs at least one dim");
      c.axis(a.axis, c.rank(0), "softmax axis");
      return c.shape(0);
    case OpKind::MSELoss:
      c.arity(2);
      c.same_shape(0, 1);
      return {};
    case OpKind::CrossEntropyLoss:
    case OpKind::CrossEntropyLossGrad: {
      c.arity(2);
      c.exact_rank(0, 2, "cross-entropy needs logits [N, classes]");
      if (c.shape(1) != Shape{c.shape(0)[0]})
        c.fail("target " + c.desc(1) + " must be [" + std::to_string(c.shape(0)[0]) +
               "]: one class index per row of logits " + c.desc(0));
      return op.kind == OpKind::CrossEntropyLoss ? Shape{} : c.shape(0);
    }
    case OpKind::SoftmaxGrad:
      c.arity(2);
      c.same_shape(0, 1);
      c.min_rank(0, 1, "Softmax needs at least one dim");
      c.axis(a.axis, c.rank(0), "softmax axis");
      return c.shape(0);
    default:
      break;
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

// Reshapes, transposes, concatenation, slices, reductions and broadcasts.
Shape infer_layout_reduce_shape(const Op& op, const std::vector<const Tensor*>& in) {
  const Checker c(op, in);
  for (size_t i = 0; i < in.size(); ++i)
    if (!in[i]) c.fail("input " + std::to_string(i) + " is missing");
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::Reshape:
      c.arity(1);
      return reshape_target(c, a.shape, in[0]->numel(), c.desc(0));
    case OpKind::Transpose: {
      c.arity(1);
      const int r = c.rank(0);
      std::vector<int> perm = a.perm;
      if (perm.empty())
        for (int i = r - 1; i >= 0; --i) perm.push_back(i);  // numpy: reverse all dims
      if (static_cast<int>(perm.size()) != r)
        c.fail("perm has " + std::to_string(perm.size()) + " entries but " + c.desc(0) +
               " has rank " + std::to_string(r));
      std::vector<bool> seen(static_cast<size_t>(r), false);
      Shape out;
      for (int p : perm) {
        if (p < 0 || p >= r || seen[static_cast<size_t>(p)])
          c.fail("perm must list each dim 0.." + std::to_string(r - 1) + " exactly once; got " +
                 std::to_string(p) + (p >= 0 && p < r ? " twice" : " (out of range)"));
        seen[static_cast<size_t>(p)] = true;
        out.push_back(c.shape(0)[static_cast<size_t>(p)]);
      }
      return out;
    }
    case OpKind::Concat: {
      if (in.empty()) c.fail("needs at least one input");
      const int r = c.rank(0);
      c.min_rank(0, 1, "Concat needs at least one dim");
      const int ax = c.axis(a.axis, r, "concat axis");
      Shape out = c.shape(0);
      for (size_t i = 1; i < in.size(); ++i) {
        if (c.rank(i) != r)
          c.fail(c.desc(i) + " has rank " + std::to_string(c.rank(i)) + " but " + c.desc(0) +
                 " has rank " + std::to_string(r));
        for (int d = 0; d < r; ++d) {
          if (d == ax) continue;
          if (c.shape(i)[static_cast<size_t>(d)] != out[static_cast<size_t>(d)])
            c.fail(c.desc(i) + " and " + c.desc(0) + " differ in dim " + std::to_string(d) +
                   ", which is not the concat axis " + std::to_string(ax));
        }
        if (__builtin_add_overflow(out[static_cast<size_t>(ax)],
                                   c.shape(i)[static_cast<size_t>(ax)],
                                   &out[static_cast<size_t>(ax)]))
          c.fail("concatenated size overflows");
      }
      return out;
    }
    case OpKind::Sum:
    case OpKind::Mean: {
      c.arity(1);
      const std::vector<int> axes = normalized_axes(c, a.axes, c.rank(0));
      Shape out;
      for (int d = 0; d < c.rank(0); ++d) {
        const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (!reduced)
          out.push_back(c.shape(0)[static_cast<size_t>(d)]);
        else if (a.keepdim)
          out.push_back(1);
      }
      return out;
    }
    case OpKind::ReduceToShape: {
      c.arity(1);
      auto b = try_broadcast(a.shape, c.shape(0));
      if (!b || *b != c.shape(0))
        c.fail("target shape " + shape_to_string(a.shape) + " does not broadcast to " + c.desc(0) +
               ", so there is nothing to reduce it from");
      return a.shape;
    }
    case OpKind::BroadcastTo: {
      c.arity(1);
      auto b = try_broadcast(c.shape(0), a.shape);
      if (!b || *b != a.shape)
        c.fail(c.desc(0) + " does not broadcast to " + shape_to_string(a.shape) +
               " (sizes must match or be 1, aligned from the right)");
      return a.shape;
    }
    case OpKind::Slice: {
      c.arity(1);
      const Shape& x = c.shape(0);
      if (a.shape.size() != x.size() || a.starts.size() != x.size())
        c.fail("slice shape " + shape_to_string(a.shape) + " and starts " +
               shape_to_string(a.starts) + " need one entry per dim of " + c.desc(0));
      for (size_t d = 0; d < x.size(); ++d)
        if (a.starts[d] < 0 || a.shape[d] < 1 || a.starts[d] > x[d] - a.shape[d])
          c.fail("slice of dim " + std::to_string(d) + " starting at " +
                 std::to_string(a.starts[d]) + " with size " + std::to_string(a.shape[d]) +
                 " is outside " + c.desc(0));
      return a.shape;
    }
    default:
      break;
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

}  // namespace

Shape infer_shape(const Op& op, const std::vector<const Tensor*>& in) {
  switch (op_family(op.kind)) {
    case OpFamily::Gemm:
      return infer_gemm_shape(op, in);
    case OpFamily::Elementwise:
      return infer_elementwise_shape(op, in);
    case OpFamily::PoolNorm:
      return infer_pool_norm_shape(op, in);
    case OpFamily::SoftmaxLoss:
      return infer_softmax_loss_shape(op, in);
    case OpFamily::LayoutReduce:
      return infer_layout_reduce_shape(op, in);
  }
  Checker(op, in).fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

}  // namespace tilescope::graph

// The graph IR's implementation: names, errors, layouts, shape inference for every op kind, costs.
//
// [SECTION] index: Names and errors · Shapes and layouts · Shape inference · Graph · Costs
#include "sim/graph/graph.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace tilescope::graph {

// [SECTION] Names and errors

std::string SourceLoc::to_string() const {
  if (line <= 0) return file;  // "" when unknown; just the file when only that is known
  std::string where = std::to_string(line);
  if (col > 0) where += ":" + std::to_string(col);
  return file.empty() ? where : file + ":" + where;
}

namespace {

std::string format_error(const SourceLoc& loc, const std::string& message,
                         const std::string& excerpt) {
  std::string out;
  const std::string where = loc.to_string();
  if (!where.empty()) out = where + ": ";
  out += "error: " + message;
  size_t begin = 0;
  while (begin < excerpt.size()) {
    size_t end = excerpt.find('\n', begin);
    if (end == std::string::npos) end = excerpt.size();
    out += "\n  " + excerpt.substr(begin, end - begin);
    begin = end + 1;
  }
  return out;
}

}  // namespace

GraphError::GraphError(SourceLoc loc, std::string message, std::string excerpt)
    : std::runtime_error(format_error(loc, message, excerpt)),
      m_loc(std::move(loc)),
      m_message(std::move(message)) {}

int dtype_size(DType d) {
  switch (d) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::I8:
      return 1;
  }
  return 4;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32:
      return "fp32";
    case DType::F16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::I8:
      return "int8";
  }
  return "?";
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::RowMajor:
      return "row-major";
    case Layout::NCHW:
      return "NCHW";
    case Layout::NHWC:
      return "NHWC";
    case Layout::Transposed:
      return "transposed";
    case Layout::Strided:
      return "strided";
  }
  return "?";
}

const char* role_name(Role r) {
  switch (r) {
    case Role::Input:
      return "input";
    case Role::Weight:
      return "weight";
    case Role::Activation:
      return "activation";
    case Role::Gradient:
      return "gradient";
  }
  return "?";
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::MatMul:
      return "MatMul";
    case OpKind::Conv2D:
      return "Conv2D";
    case OpKind::Add:
      return "Add";
    case OpKind::Sub:
      return "Sub";
    case OpKind::Mul:
      return "Mul";
    case OpKind::ReLU:
      return "ReLU";
    case OpKind::GELU:
      return "GELU";
    case OpKind::Sigmoid:
      return "Sigmoid";
    case OpKind::Tanh:
      return "Tanh";
    case OpKind::MaxPool2D:
      return "MaxPool2D";
    case OpKind::AvgPool2D:
      return "AvgPool2D";
    case OpKind::BatchNorm:
      return "BatchNorm";
    case OpKind::LayerNorm:
      return "LayerNorm";
    case OpKind::Softmax:
      return "Softmax";
    case OpKind::Reshape:
      return "Reshape";
    case OpKind::Transpose:
      return "Transpose";
    case OpKind::Concat:
      return "Concat";
    case OpKind::Sum:
      return "Sum";
    case OpKind::Mean:
      return "Mean";
    case OpKind::MSELoss:
      return "MSELoss";
    case OpKind::CrossEntropyLoss:
      return "CrossEntropyLoss";
    case OpKind::ReLUGrad:
      return "ReLUGrad";
    case OpKind::GELUGrad:
      return "GELUGrad";
    case OpKind::SigmoidGrad:
      return "SigmoidGrad";
    case OpKind::TanhGrad:
      return "TanhGrad";
    case OpKind::MaxPool2DGrad:
      return "MaxPool2DGrad";
    case OpKind::AvgPool2DGrad:
      return "AvgPool2DGrad";
    case OpKind::Conv2DGradInput:
      return "Conv2DGradInput";
    case OpKind::Conv2DGradWeight:
      return "Conv2DGradWeight";
    case OpKind::SoftmaxGrad:
      return "SoftmaxGrad";
    case OpKind::LayerNormGrad:
      return "LayerNormGrad";
    case OpKind::BatchNormGrad:
      return "BatchNormGrad";
    case OpKind::MSELossGrad:
      return "MSELossGrad";
    case OpKind::CrossEntropyLossGrad:
      return "CrossEntropyLossGrad";
    case OpKind::ReduceToShape:
      return "ReduceToShape";
    case OpKind::Scale:
      return "Scale";
    case OpKind::SGDUpdate:
      return "SGDUpdate";
    case OpKind::Slice:
      return "Slice";
    case OpKind::BroadcastTo:
      return "BroadcastTo";
    case OpKind::BatchNormScaleGrad:
      return "BatchNormScaleGrad";
    case OpKind::LayerNormGammaGrad:
      return "LayerNormGammaGrad";
  }
  return "?";
}

bool is_elementwise(OpKind k) {
  // BatchNorm is a per-channel affine map but broadcasts along dim 1, not by numpy rules, so a
  // fuser must treat it on its own; it is not listed here.
  switch (k) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::ReLU:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::ReLUGrad:
    case OpKind::GELUGrad:
    case OpKind::SigmoidGrad:
    case OpKind::TanhGrad:
    case OpKind::MSELossGrad:
    case OpKind::Scale:
    case OpKind::SGDUpdate:
      return true;
    default:
      return false;
  }
}

bool is_backward(OpKind k) {
  // Scale sits among the backward helpers but is also the forward `x * c` / `x / c` of the model
  // language, so it does not mark an op as backward on its own (Op::origin does).
  return static_cast<int>(k) >= static_cast<int>(OpKind::ReLUGrad) && k != OpKind::Scale;
}

// [SECTION] Shapes and layouts

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (__builtin_mul_overflow(n, d, &n))
      throw GraphError({},
                       "shape " + shape_to_string(s) + " has more elements than fit in 64 bits");
  }
  return n;
}

namespace {

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

}  // namespace

std::vector<int64_t> layout_strides(const Shape& shape, Layout layout) {
  switch (layout) {
    case Layout::RowMajor:
      return row_major_strides(shape);
    case Layout::NCHW:
    case Layout::NHWC: {
      if (shape.size() != 4)
        throw GraphError({}, std::string("layout ") + layout_name(layout) +
                                 " needs a 4-D shape [N, C, H, W], got " + shape_to_string(shape));
      if (layout == Layout::NCHW) return row_major_strides(shape);
      // Logical N,C,H,W stored as N,H,W,C: channels are adjacent in memory.
      const int64_t c = shape[1], w = shape[3];
      return {shape[2] * w * c, 1, w * c, c};
    }
    case Layout::Transposed: {
      if (shape.size() < 2) return row_major_strides(shape);
      // Memory holds the shape with its last two dims swapped; logical strides swap back.
      Shape mem = shape;
      std::swap(mem[mem.size() - 1], mem[mem.size() - 2]);
      std::vector<int64_t> strides = row_major_strides(mem);
      std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
      return strides;
    }
    case Layout::Strided:
      throw GraphError({}, "a Strided tensor has no default strides: give them explicitly (shape " +
                               shape_to_string(shape) + ")");
  }
  return row_major_strides(shape);
}

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

Shape infer_shape(const Op& op, const std::vector<const Tensor*>& in) {
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
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
      c.arity(2);
      return broadcast_or_fail(c, c.shape(0), c.desc(0), c.shape(1), c.desc(1));
    case OpKind::ReLU:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Scale:
      c.arity(1);
      return c.shape(0);
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
    case OpKind::Softmax:
      c.arity(1);
      c.min_rank(0, 1, "Softmax needs at least one dim");
      c.axis(a.axis, c.rank(0), "softmax axis");
      return c.shape(0);
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
    case OpKind::ReLUGrad:
    case OpKind::GELUGrad:
    case OpKind::SigmoidGrad:
    case OpKind::TanhGrad:
    case OpKind::MSELossGrad:
    case OpKind::SGDUpdate:
      c.arity(2);
      c.same_shape(0, 1);
      return c.shape(0);
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
    case OpKind::SoftmaxGrad:
      c.arity(2);
      c.same_shape(0, 1);
      c.min_rank(0, 1, "Softmax needs at least one dim");
      c.axis(a.axis, c.rank(0), "softmax axis");
      return c.shape(0);
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
  }
  c.fail("unknown op kind " + std::to_string(static_cast<int>(op.kind)));
}

// [SECTION] Graph

TensorId Graph::add_tensor(Tensor t) {
  if (t.name.empty()) throw GraphError(t.loc, "a tensor needs a name");
  if (find_tensor(t.name)) throw GraphError(t.loc, "tensor '" + t.name + "' is already defined");
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (t.shape[i] < 1)
      throw GraphError(t.loc, "tensor '" + t.name + "' " + shape_to_string(t.shape) + ": dim " +
                                  std::to_string(i) + " is " + std::to_string(t.shape[i]) +
                                  "; sizes must be >= 1");
  try {
    shape_numel(t.shape);
    if (t.strides.empty()) t.strides = layout_strides(t.shape, t.layout);
  } catch (const GraphError& e) {
    throw GraphError(t.loc, "tensor '" + t.name + "': " + e.message());
  }
  if (t.strides.size() != t.shape.size())
    throw GraphError(t.loc, "tensor '" + t.name + "' " + shape_to_string(t.shape) + " has " +
                                std::to_string(t.strides.size()) + " strides; needs one per dim");
  m_tensors.push_back(std::move(t));
  const TensorId id = static_cast<TensorId>(m_tensors.size() - 1);
  m_tensor_index.emplace(m_tensors.back().name, id);
  return id;
}

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Attributes in one canonical form so later passes need not re-derive them (non-negative axes,
// the conv kernel taken from the weight, Transpose's default perm written out).
void normalize_attrs(Op& op, const std::vector<const Tensor*>& in, const Shape& out) {
  OpAttrs& a = op.attrs;
  auto pos = [](int axis, int rank) { return axis < 0 ? axis + rank : axis; };
  switch (op.kind) {
    case OpKind::Conv2D:
    case OpKind::Conv2DGradInput:
      a.kernel[0] = in[1]->shape[2];
      a.kernel[1] = in[1]->shape[3];
      break;
    case OpKind::Conv2DGradWeight:
      a.kernel[0] = out[2];
      a.kernel[1] = out[3];
      break;
    case OpKind::Softmax:
    case OpKind::SoftmaxGrad:
    case OpKind::Concat:
      a.axis = pos(a.axis, in[0]->rank());
      break;
    case OpKind::LayerNorm:
      a.axis = in[0]->rank() - 1;
      break;
    case OpKind::Sum:
    case OpKind::Mean: {
      std::vector<int> axes;
      if (a.axes.empty())
        for (int i = 0; i < in[0]->rank(); ++i) axes.push_back(i);
      for (int x : a.axes) axes.push_back(pos(x, in[0]->rank()));
      std::sort(axes.begin(), axes.end());
      a.axes = axes;
      break;
    }
    case OpKind::Transpose:
      if (a.perm.empty())
        for (int i = in[0]->rank() - 1; i >= 0; --i) a.perm.push_back(i);
      break;
    case OpKind::Reshape:
      a.shape = out;
      break;  // the -1 resolved
    default:
      break;
  }
}

}  // namespace

TensorId Graph::add_op(Op op, const std::string& out_name, Role out_role) {
  if (op.name.empty()) op.name = unique_op_name(lower(op_kind_name(op.kind)));
  if (find_op(op.name)) throw GraphError(op.loc, "an op named '" + op.name + "' already exists");
  std::vector<const Tensor*> in;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorId id = op.inputs[i];
    if (id < 0 || static_cast<size_t>(id) >= m_tensors.size())
      throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): input " +
                                   std::to_string(i) + " is tensor id " + std::to_string(id) +
                                   ", which does not exist");
    in.push_back(&m_tensors[static_cast<size_t>(id)]);
  }
  const Shape shape = infer_shape(op, in);
  normalize_attrs(op, in, shape);

  Tensor out;
  out.name = out_name.empty() ? op.name : out_name;
  if (find_tensor(out.name))
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): its output name '" +
                                 out.name + "' is already a tensor");
  out.shape = shape;
  out.dtype = in[0]->dtype;
  // Image-shaped ops keep their input's image layout; everything else is written row-major.
  const Layout lin = in[0]->layout;
  out.layout = (shape.size() == 4 && in[0]->rank() == 4 && op.kind != OpKind::Reshape &&
                op.kind != OpKind::Transpose && (lin == Layout::NCHW || lin == Layout::NHWC))
                   ? lin
                   : Layout::RowMajor;
  out.role = out_role;
  out.loc = op.loc;
  out.producer = static_cast<OpId>(m_ops.size());
  try {
    shape_numel(out.shape);
  } catch (const GraphError& e) {
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): output " + e.message());
  }
  out.strides = layout_strides(out.shape, out.layout);

  // Check the cost fits in 64 bits now, so op_cost() never overflows later.
  m_tensors.push_back(out);
  const TensorId out_id = static_cast<TensorId>(m_tensors.size() - 1);
  op.outputs = {out_id};
  m_ops.push_back(op);
  try {
    op_cost(static_cast<OpId>(m_ops.size() - 1));
  } catch (...) {
    m_ops.pop_back();
    m_tensors.pop_back();
    throw;
  }
  m_tensor_index.emplace(m_tensors.back().name, out_id);
  m_op_index.emplace(m_ops.back().name, static_cast<OpId>(m_ops.size() - 1));
  return out_id;
}

std::optional<TensorId> Graph::find_tensor(const std::string& name) const {
  const auto it = m_tensor_index.find(name);
  if (it == m_tensor_index.end()) return std::nullopt;
  return it->second;
}

std::optional<OpId> Graph::find_op(const std::string& name) const {
  const auto it = m_op_index.find(name);
  if (it == m_op_index.end()) return std::nullopt;
  return it->second;
}

std::vector<OpId> Graph::consumers(TensorId id) const {
  std::vector<OpId> out;
  for (size_t i = 0; i < m_ops.size(); ++i) {
    const auto& ins = m_ops[i].inputs;
    if (std::find(ins.begin(), ins.end(), id) != ins.end()) out.push_back(static_cast<OpId>(i));
  }
  return out;
}

std::vector<TensorId> Graph::graph_inputs() const {
  std::vector<TensorId> out;
  for (size_t i = 0; i < m_tensors.size(); ++i) {
    const Tensor& t = m_tensors[i];
    if (t.producer < 0 && (t.role == Role::Input || t.role == Role::Weight))
      out.push_back(static_cast<TensorId>(i));
  }
  return out;
}

std::vector<TensorId> Graph::graph_outputs() const {
  std::vector<bool> consumed(m_tensors.size(), false);
  for (const Op& op : m_ops)
    for (TensorId id : op.inputs) consumed[static_cast<size_t>(id)] = true;
  std::vector<TensorId> out;
  for (size_t i = 0; i < m_tensors.size(); ++i)
    if (m_tensors[i].producer >= 0 && !consumed[i]) out.push_back(static_cast<TensorId>(i));
  return out;
}

std::string Graph::unique_op_name(const std::string& stem) const {
  // The suffix stays at the name returned: the caller may not use it, and then it is still free.
  for (int& i = m_next_op_suffix[stem];; ++i) {
    std::string name = stem + std::to_string(i);
    if (!find_op(name)) return name;
  }
}

std::string Graph::unique_tensor_name(const std::string& stem) const {
  for (int& i = m_next_tensor_suffix[stem];; ++i) {
    std::string name = stem + std::to_string(i);
    if (!find_tensor(name)) return name;
  }
}

// [SECTION] Costs
//
// FLOPs per op. One multiply-add = 2 FLOPs. Every other elementary operation (add, subtract,
// multiply, divide, max/compare, exp, log, sqrt, tanh) = 1 FLOP. n = output elements unless noted.
// Bytes are the minimum traffic: each distinct input read once, the output written once. A
// Reshape of a contiguous tensor is a view: it moves 0 bytes. Any other Reshape copies. A Slice
// reads only the elements it keeps.
//
// clang-format off
//   MatMul [.., M, K] x [.., K, N]   2*M*N*K per batch entry
//   Conv2D                           2*N*K*P*Q*(C/groups)*R*S
//   Conv2DGradInput / GradWeight     2*N*K*P*Q*(C/groups)*R*S (the forward's multiply-adds)
//   Add, Sub, Mul, ReLU, Scale       1 per element (ReLU: one max)
//   Sigmoid 1/(1+exp(-x))            4 per element (negate, exp, add, divide)
//   Tanh                             1 per element (one tanh)
//   GELU (tanh approximation)        9 per element: x², x³, ·0.044715, +x, ·sqrt(2/π), tanh, +1,
//                                    ·x, ·0.5
//   MaxPool2D                        R*S per output (one compare per window element)
//   AvgPool2D                        R*S per output (R*S-1 adds + one scale by 1/(R*S))
//   BatchNorm (inference)            2 per element: y = x*a + b with a = scale/sqrt(var+eps) and
//                                    b = shift - mean*a folded per channel ahead of time (the 5*C
//                                    folding FLOPs are a one-off when weights load: not counted)
//   LayerNorm over D                 8 per element + 3 per row: mean D, variance 3D (subtract,
//                                    square, add), rstd 3 (add eps, sqrt, divide),
//                                    (x-mean)*rstd*gamma+beta 4D
//   Softmax over D                   5 per element (max, subtract, exp, sum, divide)
//   Sum, ReduceToShape               input elements - output elements (adds)
//   Mean                             input elements (the adds + one divide per output)
//   Reshape, Transpose, Concat,
//   Slice, BroadcastTo               0 (data movement only)
//   MSELoss                          3 per element (subtract, square, add) + 1 (divide by count)
//   CrossEntropyLoss [N, C]          4 per logit (max, subtract, exp, sum) + 4 per row (log,
//                                    subtract the target logit, negate, accumulate) + 1 (÷ N)
//   ReLUGrad                         1 per element (select)
//   GELUGrad                         18 per element: tanh argument 6, 0.5(1+t) 2,
//                                    0.5x(1-t²)·sqrt(2/π)(1+3·0.044715x²) 8, sum of both 1, ·dy 1
//   SigmoidGrad dy*y*(1-y)           3 per element
//   TanhGrad dy*(1-y²)               3 per element
//   MaxPool2DGrad                    R*S + 1 per dy element (find the max again, accumulate)
//   AvgPool2DGrad                    R*S + 1 per dy element (scale once, add into R*S inputs)
//   SoftmaxGrad y*(dy - Σdy*y)       4 per element
//   LayerNormGrad over D             14 per element + 5 per row: recompute x̂ 6D+3, g = dy*gamma D,
//                                    two row sums 3D, dx = rstd*(g - mean(g) - x̂*mean(g*x̂)) 4D+2
//   BatchNormGrad dy*scale*rstd      1 per element (scale*rstd folded per channel)
//   BatchNormScaleGrad               4 per input element (x-mean, ·rstd, ·dy, accumulate)
//   LayerNormGammaGrad over D        8 per input element + 3 per row (recompute x̂ 6D+3, ·dy,
//                                    accumulate)
//   MSELossGrad 2(p-t)/count         2 per element (subtract, scale)
//   CrossEntropyLossGrad [N, C]      6 per logit (softmax 5; subtract the one-hot and ÷N, folded 1)
//   SGDUpdate w - lr*dw              2 per element
// clang-format on

namespace {

class CostMath {
 public:
  explicit CostMath(const Op& op) : m_op(op) {}
  int64_t mul(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
  int64_t mul(std::initializer_list<int64_t> xs) const {
    int64_t r = 1;
    for (int64_t x : xs) r = mul(r, x);
    return r;
  }
  int64_t add(int64_t a, int64_t b) const {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }

 private:
  [[noreturn]] void overflow() const {
    throw GraphError(m_op.loc, m_op.name + " (" + op_kind_name(m_op.kind) +
                                   "): its FLOP or byte count does not fit in 64 bits");
  }
  const Op& m_op;
};

bool is_contiguous(const Tensor& t) {
  return t.strides == row_major_strides(t.shape);
}

}  // namespace

OpCost Graph::op_cost(OpId id) const {
  const Op& op = this->op(id);
  const CostMath m(op);
  const Tensor& out = tensor(op.outputs.at(0));
  auto in = [&](size_t i) -> const Tensor& { return tensor(op.inputs.at(i)); };
  const int64_t n = out.numel();
  const OpAttrs& a = op.attrs;
  OpCost cost;
  int64_t f = 0;
  switch (op.kind) {
    case OpKind::MatMul: {
      const Shape& x = in(0).shape;
      const int64_t k = a.trans_a ? x[x.size() - 2] : x[x.size() - 1];
      f = m.mul({2, n, k});
      break;
    }
    case OpKind::Conv2D:
      f = m.mul({2, n, in(1).shape[1], in(1).shape[2], in(1).shape[3]});
      break;
    case OpKind::Conv2DGradInput:
      f = m.mul({2, in(0).numel(), in(1).shape[1], in(1).shape[2], in(1).shape[3]});
      break;
    case OpKind::Conv2DGradWeight:
      f = m.mul({2, in(1).numel(), out.shape[1], out.shape[2], out.shape[3]});
      break;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::ReLU:
    case OpKind::Scale:
    case OpKind::Tanh:
    case OpKind::ReLUGrad:
    case OpKind::BatchNormGrad:
      f = n;
      break;
    case OpKind::Sigmoid:
      f = m.mul(4, n);
      break;
    case OpKind::GELU:
      f = m.mul(9, n);
      break;
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
      f = m.mul({n, a.kernel[0], a.kernel[1]});
      break;
    case OpKind::BatchNorm:
      f = m.mul(2, n);
      break;
    case OpKind::LayerNorm: {
      const int64_t rows = n / out.shape.back();
      f = m.add(m.mul(8, n), m.mul(3, rows));
      break;
    }
    case OpKind::Softmax:
      f = m.mul(5, n);
      break;
    case OpKind::Sum:
    case OpKind::ReduceToShape:
      f = in(0).numel() - n;
      break;
    case OpKind::Mean:
      f = in(0).numel();
      break;
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::BroadcastTo:
      f = 0;
      break;
    case OpKind::MSELoss:
      f = m.add(m.mul(3, in(0).numel()), 1);
      break;
    case OpKind::CrossEntropyLoss: {
      const int64_t rows = in(0).shape[0];
      f = m.add(m.add(m.mul(4, in(0).numel()), m.mul(4, rows)), 1);
      break;
    }
    case OpKind::GELUGrad:
      f = m.mul(18, n);
      break;
    case OpKind::SigmoidGrad:
    case OpKind::TanhGrad:
      f = m.mul(3, n);
      break;
    case OpKind::MaxPool2DGrad:
    case OpKind::AvgPool2DGrad:
      f = m.mul(in(0).numel(), m.add(m.mul(a.kernel[0], a.kernel[1]), 1));
      break;
    case OpKind::SoftmaxGrad:
      f = m.mul(4, n);
      break;
    case OpKind::LayerNormGrad: {
      const int64_t rows = n / out.shape.back();
      f = m.add(m.mul(14, n), m.mul(5, rows));
      break;
    }
    case OpKind::BatchNormScaleGrad:
      f = m.mul(4, in(1).numel());
      break;
    case OpKind::LayerNormGammaGrad: {
      const int64_t rows = in(1).numel() / n;
      f = m.add(m.mul(8, in(1).numel()), m.mul(3, rows));
      break;
    }
    case OpKind::MSELossGrad:
    case OpKind::SGDUpdate:
      f = m.mul(2, n);
      break;
    case OpKind::CrossEntropyLossGrad:
      f = m.mul(6, n);
      break;
  }
  cost.flops = f;

  if (op.kind == OpKind::Reshape && is_contiguous(in(0))) return cost;  // a view: nothing moves
  std::set<TensorId> distinct(op.inputs.begin(), op.inputs.end());
  if (op.kind == OpKind::Slice) distinct.clear();  // reads only the slice, counted below
  if (op.kind == OpKind::Slice) cost.bytes_read = m.mul(n, dtype_size(in(0).dtype));
  for (TensorId t : distinct)
    cost.bytes_read = m.add(cost.bytes_read, m.mul(tensor(t).numel(), dtype_size(tensor(t).dtype)));
  cost.bytes_written = m.mul(n, dtype_size(out.dtype));
  m.add(cost.bytes_read, cost.bytes_written);
  return cost;
}

OpCost Graph::total_cost() const {
  OpCost total;
  for (size_t i = 0; i < m_ops.size(); ++i) {
    const OpCost c = op_cost(static_cast<OpId>(i));
    const CostMath m(m_ops[i]);
    total.flops = m.add(total.flops, c.flops);
    total.bytes_read = m.add(total.bytes_read, c.bytes_read);
    total.bytes_written = m.add(total.bytes_written, c.bytes_written);
  }
  return total;
}

}  // namespace tilescope::graph

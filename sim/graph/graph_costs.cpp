// FLOPs and minimum bytes per op (Graph::op_cost), with the counting rules in one table.
#include "sim/graph/graph.h"

#include <algorithm>
#include <set>

namespace tilescope::graph {

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
//   ReLU6 min(max(x, 0), 6)          2 per element (a max and a min)
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
//   CausalMask                       0 (a select by position: no arithmetic on the values)
//   MSELoss                          3 per element (subtract, square, add) + 1 (divide by count)
//   CrossEntropyLoss [N, C]          4 per logit (max, subtract, exp, sum) + 4 per row (log,
//                                    subtract the target logit, negate, accumulate) + 1 (÷ N)
//   ReLUGrad                         1 per element (select)
//   ReLU6Grad                        2 per element (two compares)
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
  return t.strides == layout_strides(t.shape, Layout::RowMajor);
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
    case OpKind::ReLU6:      // a max and a min
    case OpKind::ReLU6Grad:  // two compares
      f = m.mul(2, n);
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
    case OpKind::CausalMask:
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

// The reference evaluator: each op kind as the plainest loops that match its definition.
//
// [SECTION] index: Index helpers · Op kernels · evaluate · random_feeds
#include "sim/graph/eval.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tilescope::graph {

namespace {

// [SECTION] Index helpers

std::vector<int64_t> strides_of(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// For every element of `out` (row-major), the row-major offset of the element of `in` it reads
// under numpy broadcasting (in's dims align to the right; size-1 dims repeat).
std::vector<int64_t> broadcast_map(const Shape& out, const Shape& in) {
  const size_t r = out.size(), lead = r - in.size();
  const std::vector<int64_t> in_st = strides_of(in);
  std::vector<int64_t> map(static_cast<size_t>(shape_numel(out)));
  std::vector<int64_t> idx(r, 0);
  for (size_t e = 0; e < map.size(); ++e) {
    int64_t off = 0;
    for (size_t d = lead; d < r; ++d)
      if (in[d - lead] != 1) off += idx[d] * in_st[d - lead];
    map[e] = off;
    for (size_t d = r; d-- > 0;) {  // odometer increment
      if (++idx[d] < out[d]) break;
      idx[d] = 0;
    }
  }
  return map;
}

struct OpContext {
  const Op& op;
  std::vector<const Tensor*> t;      // input tensors
  std::vector<const TensorData*> v;  // input values
  const Tensor& out;

  const Shape& shape(size_t i) const { return t[i]->shape; }
  const TensorData& val(size_t i) const { return *v[i]; }
  [[noreturn]] void fail(const std::string& why) const {
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): " + why);
  }
};

// Dimensions around an axis: a tensor viewed as [outer, len, inner].
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
  AxisSplit(const Shape& s, int axis) {
    for (int d = 0; d < static_cast<int>(s.size()); ++d) {
      if (d < axis) outer *= s[static_cast<size_t>(d)];
      if (d == axis) len = s[static_cast<size_t>(d)];
      if (d > axis) inner *= s[static_cast<size_t>(d)];
    }
  }
  size_t at(int64_t o, int64_t j, int64_t i) const {
    return static_cast<size_t>((o * len + j) * inner + i);
  }
};

int norm_axis(int axis, size_t rank) {
  return axis < 0 ? axis + static_cast<int>(rank) : axis;
}

constexpr double kGeluC = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluA = 0.044715;

double gelu(double x) {
  return 0.5 * x * (1.0 + std::tanh(kGeluC * (x + kGeluA * x * x * x)));
}
double gelu_grad(double x) {
  const double t = std::tanh(kGeluC * (x + kGeluA * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kGeluC * (1.0 + 3.0 * kGeluA * x * x);
}

// [SECTION] Op kernels

TensorData binary(const OpContext& c, double (*f)(double, double)) {
  const Shape& o = c.out.shape;
  const auto ma = broadcast_map(o, c.shape(0));
  const auto mb = broadcast_map(o, c.shape(1));
  TensorData y(ma.size());
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = f(c.val(0)[static_cast<size_t>(ma[i])], c.val(1)[static_cast<size_t>(mb[i])]);
  return y;
}

TensorData unary(const OpContext& c, double (*f)(double)) {
  TensorData y(c.val(0).size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = f(c.val(0)[i]);
  return y;
}

TensorData matmul(const OpContext& c) {
  const Shape& xs = c.shape(0);
  const Shape& ws = c.shape(1);
  const Shape& os = c.out.shape;
  const bool ta = c.op.attrs.trans_a, tb = c.op.attrs.trans_b;
  const int64_t m = os[os.size() - 2], n = os[os.size() - 1];
  const int64_t k = ta ? xs[xs.size() - 2] : xs[xs.size() - 1];
  const Shape ob(os.begin(), os.end() - 2);
  const auto bx = broadcast_map(ob, Shape(xs.begin(), xs.end() - 2));
  const auto bw = broadcast_map(ob, Shape(ws.begin(), ws.end() - 2));
  const int64_t xmat = xs[xs.size() - 2] * xs[xs.size() - 1];
  const int64_t wmat = ws[ws.size() - 2] * ws[ws.size() - 1];
  const int64_t xcols = xs[xs.size() - 1], wcols = ws[ws.size() - 1];
  TensorData y(static_cast<size_t>(c.out.numel()), 0.0);
  for (size_t b = 0; b < bx.size(); ++b) {
    const double* x = c.val(0).data() + bx[b] * xmat;
    const double* w = c.val(1).data() + bw[b] * wmat;
    double* out = y.data() + static_cast<int64_t>(b) * m * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          const double a = ta ? x[p * xcols + i] : x[i * xcols + p];   // op(A)[i, p]
          const double bv = tb ? w[j * wcols + p] : w[p * wcols + j];  // op(B)[p, j]
          acc += a * bv;
        }
        out[i * n + j] = acc;
      }
  }
  return y;
}

// The one conv loop nest; `visit(x_offset, w_offset, y_offset)` is called for every in-bounds
// multiply-add so the forward conv and both gradients share the index arithmetic.
template <class Visit>
void conv_nest(const Shape& xs, const Shape& ws, const Shape& ys, const OpAttrs& a, Visit visit) {
  const int64_t nb = xs[0], ch = xs[1], h = xs[2], w = xs[3];
  const int64_t kout = ws[0], cg = ws[1], r = ws[2], s = ws[3];
  const int64_t p_out = ys[2], q_out = ys[3];
  const int64_t k_per_group = kout / a.groups;
  for (int64_t n = 0; n < nb; ++n)
    for (int64_t k = 0; k < kout; ++k) {
      const int64_t g = k / k_per_group;
      for (int64_t p = 0; p < p_out; ++p)
        for (int64_t q = 0; q < q_out; ++q) {
          const int64_t yo = ((n * kout + k) * p_out + p) * q_out + q;
          for (int64_t cc = 0; cc < cg; ++cc)
            for (int64_t rr = 0; rr < r; ++rr) {
              const int64_t hi = p * a.stride[0] - a.padding[0] + rr * a.dilation[0];
              if (hi < 0 || hi >= h) continue;
              for (int64_t ss = 0; ss < s; ++ss) {
                const int64_t wi = q * a.stride[1] - a.padding[1] + ss * a.dilation[1];
                if (wi < 0 || wi >= w) continue;
                const int64_t xo = ((n * ch + g * cg + cc) * h + hi) * w + wi;
                const int64_t wo = ((k * cg + cc) * r + rr) * s + ss;
                visit(static_cast<size_t>(xo), static_cast<size_t>(wo), static_cast<size_t>(yo));
              }
            }
        }
    }
}

// The one pooling window walk: `visit(x_offset, y_offset)` for every in-bounds window element.
template <class Visit>
void pool_nest(const Shape& xs, const Shape& ys, const OpAttrs& a, Visit visit) {
  const int64_t h = xs[2], w = xs[3], p_out = ys[2], q_out = ys[3];
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t p = 0; p < p_out; ++p)
      for (int64_t q = 0; q < q_out; ++q) {
        const int64_t yo = (nc * p_out + p) * q_out + q;
        for (int64_t rr = 0; rr < a.kernel[0]; ++rr) {
          const int64_t hi = p * a.stride[0] - a.padding[0] + rr * a.dilation[0];
          if (hi < 0 || hi >= h) continue;
          for (int64_t ss = 0; ss < a.kernel[1]; ++ss) {
            const int64_t wi = q * a.stride[1] - a.padding[1] + ss * a.dilation[1];
            if (wi < 0 || wi >= w) continue;
            visit(static_cast<size_t>((nc * h + hi) * w + wi), static_cast<size_t>(yo));
          }
        }
      }
}

// Per-row statistics for LayerNorm: mean and 1/sqrt(var + eps) (biased variance, as PyTorch).
struct RowStats {
  double mean, rstd;
};
RowStats row_stats(const double* x, int64_t d, double eps) {
  double mean = 0.0;
  for (int64_t i = 0; i < d; ++i) mean += x[i];
  mean /= static_cast<double>(d);
  double var = 0.0;
  for (int64_t i = 0; i < d; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(d);
  return {mean, 1.0 / std::sqrt(var + eps)};
}

// Channel of each element of a [N, C, ...] tensor.
int64_t channel_of(size_t i, const Shape& s) {
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  return (static_cast<int64_t>(i) / inner) % s[1];
}

size_t class_index(const OpContext& c, double v, size_t row, int64_t classes) {
  if (!(v >= 0) || v >= static_cast<double>(classes) || v != std::floor(v))
    c.fail("target[" + std::to_string(row) + "] = " + std::to_string(v) +
           " is not a class index in 0.." + std::to_string(classes - 1));
  return static_cast<size_t>(v);
}

// Softmax of one row of logits into `p`; returns log(sum(exp(x - max))) + max (the logsumexp).
double softmax_row(const double* x, int64_t len, int64_t stride, double* p) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < len; ++j) mx = std::max(mx, x[j * stride]);
  double sum = 0.0;
  for (int64_t j = 0; j < len; ++j) sum += std::exp(x[j * stride] - mx);
  if (p)
    for (int64_t j = 0; j < len; ++j) p[j * stride] = std::exp(x[j * stride] - mx) / sum;
  return mx + std::log(sum);
}

// MatMul and the convolutions (forward and both gradients).
TensorData run_gemm_op(const OpContext& c) {
  const OpAttrs& a = c.op.attrs;
  const Shape& os = c.out.shape;
  const size_t n_out = static_cast<size_t>(c.out.numel());
  switch (c.op.kind) {
    case OpKind::MatMul:
      return matmul(c);
    case OpKind::Conv2D: {
      TensorData y(n_out, 0.0);
      conv_nest(c.shape(0), c.shape(1), os, a,
                [&](size_t xo, size_t wo, size_t yo) { y[yo] += c.val(0)[xo] * c.val(1)[wo]; });
      return y;
    }
    case OpKind::Conv2DGradInput: {  // (dy, w) → dx
      TensorData dx(n_out, 0.0);
      conv_nest(os, c.shape(1), c.shape(0), a,
                [&](size_t xo, size_t wo, size_t yo) { dx[xo] += c.val(0)[yo] * c.val(1)[wo]; });
      return dx;
    }
    case OpKind::Conv2DGradWeight: {  // (x, dy) → dw
      TensorData dw(n_out, 0.0);
      conv_nest(c.shape(0), os, c.shape(1), a,
                [&](size_t xo, size_t wo, size_t yo) { dw[wo] += c.val(0)[xo] * c.val(1)[yo]; });
      return dw;
    }
    default:
      break;
  }
  c.fail("the evaluator does not know this op kind");
}

// Element by element: arithmetic, activations, their gradients, the MSE gradient, the SGD update.
TensorData run_elementwise_op(const OpContext& c) {
  const OpAttrs& a = c.op.attrs;
  const size_t n_out = static_cast<size_t>(c.out.numel());
  switch (c.op.kind) {
    case OpKind::Add:
      return binary(c, [](double x, double y) { return x + y; });
    case OpKind::Sub:
      return binary(c, [](double x, double y) { return x - y; });
    case OpKind::Mul:
      return binary(c, [](double x, double y) { return x * y; });
    case OpKind::ReLU:
      return unary(c, [](double x) { return x > 0 ? x : 0.0; });
    case OpKind::ReLU6:
      return unary(c, [](double x) { return std::min(std::max(x, 0.0), 6.0); });
    case OpKind::GELU:
      return unary(c, gelu);
    case OpKind::Sigmoid:
      return unary(c, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case OpKind::Tanh:
      return unary(c, [](double x) { return std::tanh(x); });
    case OpKind::Scale: {
      TensorData y(c.val(0));
      for (double& e : y) e *= a.alpha;
      return y;
    }
    case OpKind::CausalMask: {  // entry (i, j) of each matrix: j > i takes alpha
      TensorData y(c.val(0));
      const Shape& s = c.shape(0);
      const size_t rows = size_t(s[s.size() - 2]), cols = size_t(s[s.size() - 1]);
      for (size_t e = 0; e < y.size(); ++e)
        if (e % cols > (e / cols) % rows) y[e] = a.alpha;
      return y;
    }
    case OpKind::ReLUGrad: {  // (dy, x)
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) g[i] = c.val(1)[i] > 0 ? c.val(0)[i] : 0.0;
      return g;
    }
    case OpKind::ReLU6Grad: {  // (dy, x)
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) {
        const double x = c.val(1)[i];
        g[i] = x > 0 && x < 6 ? c.val(0)[i] : 0.0;
      }
      return g;
    }
    case OpKind::GELUGrad: {  // (dy, x)
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) g[i] = c.val(0)[i] * gelu_grad(c.val(1)[i]);
      return g;
    }
    case OpKind::SigmoidGrad: {  // (dy, y)
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) g[i] = c.val(0)[i] * c.val(1)[i] * (1.0 - c.val(1)[i]);
      return g;
    }
    case OpKind::TanhGrad: {  // (dy, y)
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) g[i] = c.val(0)[i] * (1.0 - c.val(1)[i] * c.val(1)[i]);
      return g;
    }
    case OpKind::MSELossGrad: {
      const double scale = 2.0 / static_cast<double>(n_out);
      TensorData g(n_out);
      for (size_t i = 0; i < n_out; ++i) g[i] = scale * (c.val(0)[i] - c.val(1)[i]);
      return g;
    }
    case OpKind::SGDUpdate: {  // (w, dw)
      TensorData w(n_out);
      for (size_t i = 0; i < n_out; ++i) w[i] = c.val(0)[i] - a.alpha * c.val(1)[i];
      return w;
    }
    default:
      break;
  }
  c.fail("the evaluator does not know this op kind");
}

// Pooling and normalization, forward and backward.
TensorData run_pool_norm_op(const OpContext& c) {
  const OpAttrs& a = c.op.attrs;
  const Shape& os = c.out.shape;
  const size_t n_out = static_cast<size_t>(c.out.numel());
  switch (c.op.kind) {
    case OpKind::MaxPool2D: {
      TensorData y(n_out, -std::numeric_limits<double>::infinity());
      pool_nest(c.shape(0), os, a,
                [&](size_t xo, size_t yo) { y[yo] = std::max(y[yo], c.val(0)[xo]); });
      return y;
    }
    case OpKind::AvgPool2D: {
      // Divides by the full window (PyTorch's count_include_pad=True): padding counts as zeros.
      const double inv = 1.0 / static_cast<double>(a.kernel[0] * a.kernel[1]);
      TensorData y(n_out, 0.0);
      pool_nest(c.shape(0), os, a, [&](size_t xo, size_t yo) { y[yo] += c.val(0)[xo] * inv; });
      return y;
    }
    case OpKind::MaxPool2DGrad: {  // (dy, x): each dy goes to the first maximum of its window
      const Shape& xs = c.shape(1);
      TensorData dx(n_out, 0.0);
      std::vector<size_t> arg(static_cast<size_t>(shape_numel(c.shape(0))), SIZE_MAX);
      pool_nest(xs, c.shape(0), a, [&](size_t xo, size_t yo) {
        if (arg[yo] == SIZE_MAX || c.val(1)[xo] > c.val(1)[arg[yo]]) arg[yo] = xo;
      });
      for (size_t yo = 0; yo < arg.size(); ++yo) dx[arg[yo]] += c.val(0)[yo];
      return dx;
    }
    case OpKind::AvgPool2DGrad: {
      const double inv = 1.0 / static_cast<double>(a.kernel[0] * a.kernel[1]);
      TensorData dx(n_out, 0.0);
      pool_nest(os, c.shape(0), a, [&](size_t xo, size_t yo) { dx[xo] += c.val(0)[yo] * inv; });
      return dx;
    }
    case OpKind::BatchNorm: {  // (x, scale, shift, mean, var)
      TensorData y(n_out);
      for (size_t i = 0; i < n_out; ++i) {
        const size_t ch = static_cast<size_t>(channel_of(i, os));
        const double xhat = (c.val(0)[i] - c.val(3)[ch]) / std::sqrt(c.val(4)[ch] + a.eps);
        y[i] = xhat * c.val(1)[ch] + c.val(2)[ch];
      }
      return y;
    }
    case OpKind::BatchNormGrad: {  // (dy, scale, var)
      TensorData dx(n_out);
      for (size_t i = 0; i < n_out; ++i) {
        const size_t ch = static_cast<size_t>(channel_of(i, os));
        dx[i] = c.val(0)[i] * c.val(1)[ch] / std::sqrt(c.val(2)[ch] + a.eps);
      }
      return dx;
    }
    case OpKind::BatchNormScaleGrad: {  // (dy, x, mean, var) → [C]
      TensorData ds(n_out, 0.0);
      for (size_t i = 0; i < c.val(1).size(); ++i) {
        const size_t ch = static_cast<size_t>(channel_of(i, c.shape(1)));
        const double xhat = (c.val(1)[i] - c.val(2)[ch]) / std::sqrt(c.val(3)[ch] + a.eps);
        ds[ch] += c.val(0)[i] * xhat;
      }
      return ds;
    }
    case OpKind::LayerNorm: {  // (x, gamma, beta) over the last dim
      const int64_t d = os.back();
      TensorData y(n_out);
      for (size_t row = 0; row < n_out / static_cast<size_t>(d); ++row) {
        const double* x = c.val(0).data() + row * static_cast<size_t>(d);
        const RowStats st = row_stats(x, d, a.eps);
        for (int64_t j = 0; j < d; ++j)
          y[row * static_cast<size_t>(d) + static_cast<size_t>(j)] =
              (x[j] - st.mean) * st.rstd * c.val(1)[static_cast<size_t>(j)] +
              c.val(2)[static_cast<size_t>(j)];
      }
      return y;
    }
    case OpKind::LayerNormGrad: {  // (dy, x, gamma) → dx
      const int64_t d = os.back();
      const double dd = static_cast<double>(d);
      TensorData dx(n_out);
      for (size_t row = 0; row < n_out / static_cast<size_t>(d); ++row) {
        const size_t base = row * static_cast<size_t>(d);
        const double* x = c.val(1).data() + base;
        const double* dy = c.val(0).data() + base;
        const RowStats st = row_stats(x, d, a.eps);
        double mean_g = 0.0, mean_gx = 0.0;
        for (int64_t j = 0; j < d; ++j) {
          const double g = dy[j] * c.val(2)[static_cast<size_t>(j)];
          mean_g += g / dd;
          mean_gx += g * (x[j] - st.mean) * st.rstd / dd;
        }
        for (int64_t j = 0; j < d; ++j) {
          const double g = dy[j] * c.val(2)[static_cast<size_t>(j)];
          const double xhat = (x[j] - st.mean) * st.rstd;
          dx[base + static_cast<size_t>(j)] = st.rstd * (g - mean_g - xhat * mean_gx);
        }
      }
      return dx;
    }
    case OpKind::LayerNormGammaGrad: {  // (dy, x) → [D]
      const int64_t d = os.back();
      TensorData dg(n_out, 0.0);
      for (size_t row = 0; row < c.val(1).size() / static_cast<size_t>(d); ++row) {
        const size_t base = row * static_cast<size_t>(d);
        const RowStats st = row_stats(c.val(1).data() + base, d, a.eps);
        for (size_t j = 0; j < static_cast<size_t>(d); ++j)
          dg[j] += c.val(0)[base + j] * (c.val(1)[base + j] - st.mean) * st.rstd;
      }
      return dg;
    }
    default:
      break;
  }
  c.fail("the evaluator does not know this op kind");
}

// Softmax and the losses, forward and backward.
TensorData run_softmax_loss_op(const OpContext& c) {
  const OpAttrs& a = c.op.attrs;
  const Shape& os = c.out.shape;
  const size_t n_out = static_cast<size_t>(c.out.numel());
  switch (c.op.kind) {
    case OpKind::Softmax: {
      const AxisSplit s(os, norm_axis(a.axis, os.size()));
      TensorData y(n_out);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i)
          softmax_row(c.val(0).data() + s.at(o, 0, i), s.len, s.inner, y.data() + s.at(o, 0, i));
      return y;
    }
    case OpKind::SoftmaxGrad: {  // (dy, y): dx = y * (dy - sum(dy * y))
      const AxisSplit s(os, norm_axis(a.axis, os.size()));
      TensorData dx(n_out);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          double dot = 0.0;
          for (int64_t j = 0; j < s.len; ++j)
            dot += c.val(0)[s.at(o, j, i)] * c.val(1)[s.at(o, j, i)];
          for (int64_t j = 0; j < s.len; ++j)
            dx[s.at(o, j, i)] = c.val(1)[s.at(o, j, i)] * (c.val(0)[s.at(o, j, i)] - dot);
        }
      return dx;
    }
    case OpKind::MSELoss: {
      double sum = 0.0;
      for (size_t i = 0; i < c.val(0).size(); ++i) {
        const double d = c.val(0)[i] - c.val(1)[i];
        sum += d * d;
      }
      return {sum / static_cast<double>(c.val(0).size())};
    }
    case OpKind::CrossEntropyLoss:
    case OpKind::CrossEntropyLossGrad: {
      const int64_t rows = c.shape(0)[0], classes = c.shape(0)[1];
      const bool grad = c.op.kind == OpKind::CrossEntropyLossGrad;
      TensorData out(grad ? n_out : 1, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const size_t t =
            class_index(c, c.val(1)[static_cast<size_t>(r)], static_cast<size_t>(r), classes);
        const double* x = c.val(0).data() + r * classes;
        if (grad) {
          double* g = out.data() + r * classes;
          softmax_row(x, classes, 1, g);
          g[t] -= 1.0;
          for (int64_t j = 0; j < classes; ++j) g[j] /= static_cast<double>(rows);
        } else {
          out[0] += (softmax_row(x, classes, 1, nullptr) - x[t]) / static_cast<double>(rows);
        }
      }
      return out;
    }
    default:
      break;
  }
  c.fail("the evaluator does not know this op kind");
}

// Reshapes, transposes, concatenation, slices, reductions and broadcasts.
TensorData run_layout_reduce_op(const OpContext& c) {
  const OpAttrs& a = c.op.attrs;
  const Shape& os = c.out.shape;
  const size_t n_out = static_cast<size_t>(c.out.numel());
  switch (c.op.kind) {
    case OpKind::Reshape:
      return c.val(0);  // same row-major order, new shape
    case OpKind::Transpose: {
      const std::vector<int64_t> in_st = strides_of(c.shape(0));
      const std::vector<int64_t> out_st = strides_of(os);
      TensorData y(n_out);
      for (size_t e = 0; e < n_out; ++e) {
        int64_t rest = static_cast<int64_t>(e), src = 0;
        for (size_t d = 0; d < os.size(); ++d) {
          const int64_t i = rest / out_st[d];
          rest %= out_st[d];
          src += i * in_st[static_cast<size_t>(a.perm[d])];
        }
        y[e] = c.val(0)[static_cast<size_t>(src)];
      }
      return y;
    }
    case OpKind::Concat: {
      const int ax = norm_axis(a.axis, os.size());
      const AxisSplit so(os, ax);
      TensorData y(n_out);
      int64_t offset = 0;
      for (size_t t = 0; t < c.v.size(); ++t) {
        const AxisSplit si(c.shape(t), ax);
        for (int64_t o = 0; o < si.outer; ++o)
          for (int64_t j = 0; j < si.len; ++j)
            for (int64_t i = 0; i < si.inner; ++i)
              y[so.at(o, offset + j, i)] = c.val(t)[si.at(o, j, i)];
        offset += si.len;
      }
      return y;
    }
    case OpKind::Slice: {
      const std::vector<int64_t> in_st = strides_of(c.shape(0));
      const std::vector<int64_t> out_st = strides_of(os);
      TensorData y(n_out);
      for (size_t e = 0; e < n_out; ++e) {
        int64_t rest = static_cast<int64_t>(e), src = 0;
        for (size_t d = 0; d < os.size(); ++d) {
          src += (rest / out_st[d] + a.starts[d]) * in_st[d];
          rest %= out_st[d];
        }
        y[e] = c.val(0)[static_cast<size_t>(src)];
      }
      return y;
    }
    case OpKind::Sum:
    case OpKind::Mean: {
      // The keepdim shape has the same row-major order as the squeezed one, so map through it.
      Shape kept = c.shape(0);
      for (int ax : a.axes) kept[static_cast<size_t>(norm_axis(ax, kept.size()))] = 1;
      const auto map = broadcast_map(c.shape(0), kept);
      TensorData y(n_out, 0.0);
      for (size_t i = 0; i < map.size(); ++i) y[static_cast<size_t>(map[i])] += c.val(0)[i];
      if (c.op.kind == OpKind::Mean) {
        const double count = static_cast<double>(map.size()) / static_cast<double>(n_out);
        for (double& e : y) e /= count;
      }
      return y;
    }
    case OpKind::ReduceToShape: {
      const auto map = broadcast_map(c.shape(0), os);
      TensorData y(n_out, 0.0);
      for (size_t i = 0; i < map.size(); ++i) y[static_cast<size_t>(map[i])] += c.val(0)[i];
      return y;
    }
    case OpKind::BroadcastTo: {
      const auto map = broadcast_map(os, c.shape(0));
      TensorData y(n_out);
      for (size_t i = 0; i < n_out; ++i) y[i] = c.val(0)[static_cast<size_t>(map[i])];
      return y;
    }
    default:
      break;
  }
  c.fail("the evaluator does not know this op kind");
}

TensorData run_op(const OpContext& c) {
  switch (op_family(c.op.kind)) {
    case OpFamily::Gemm:
      return run_gemm_op(c);
    case OpFamily::Elementwise:
      return run_elementwise_op(c);
    case OpFamily::PoolNorm:
      return run_pool_norm_op(c);
    case OpFamily::SoftmaxLoss:
      return run_softmax_loss_op(c);
    case OpFamily::LayoutReduce:
      return run_layout_reduce_op(c);
  }
  c.fail("the evaluator does not know this op kind");
}

}  // namespace

// [SECTION] evaluate

TensorData evaluate_op(const Graph& g, OpId id, const std::vector<const TensorData*>& inputs) {
  const Op& op = g.op(id);
  OpContext c{op, {}, inputs, g.tensor(op.outputs.at(0))};
  if (inputs.size() != op.inputs.size())
    c.fail("given " + std::to_string(inputs.size()) + " input values for " +
           std::to_string(op.inputs.size()) + " inputs");
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    c.t.push_back(&g.tensor(op.inputs[i]));
    if (!inputs[i] || static_cast<int64_t>(inputs[i]->size()) != c.t.back()->numel())
      c.fail("input " + std::to_string(i) + " ('" + c.t.back()->name + "' " +
             shape_to_string(c.t.back()->shape) + ") needs " + std::to_string(c.t.back()->numel()) +
             " values, got " +
             (inputs[i] ? std::to_string(inputs[i]->size()) : std::string("none")));
  }
  return run_op(c);
}

std::vector<TensorData> evaluate(const Graph& g, const std::map<TensorId, TensorData>& feeds) {
  std::vector<TensorData> values(g.tensors().size());
  for (const auto& [id, data] : feeds) {
    if (id < 0 || static_cast<size_t>(id) >= values.size())
      throw GraphError({}, "feed for tensor id " + std::to_string(id) + ", which does not exist");
    const Tensor& t = g.tensor(id);
    if (t.producer >= 0)
      throw GraphError(t.loc, "feed for '" + t.name + "', which op '" + g.op(t.producer).name +
                                  "' computes; feed only inputs and weights");
    if (static_cast<int64_t>(data.size()) != t.numel())
      throw GraphError(t.loc, "feed for '" + t.name + "' " + shape_to_string(t.shape) + " has " +
                                  std::to_string(data.size()) + " values; it needs " +
                                  std::to_string(t.numel()));
    values[static_cast<size_t>(id)] = data;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const Tensor& t = g.tensors()[i];
    if (t.producer < 0 && !feeds.count(static_cast<TensorId>(i)))
      throw GraphError(t.loc, "no value fed for " + std::string(role_name(t.role)) + " '" + t.name +
                                  "' " + shape_to_string(t.shape));
  }
  for (size_t o = 0; o < g.ops().size(); ++o) {
    const Op& op = g.ops()[o];
    std::vector<const TensorData*> in;
    for (TensorId id : op.inputs) in.push_back(&values[static_cast<size_t>(id)]);
    values[static_cast<size_t>(op.outputs.at(0))] = evaluate_op(g, static_cast<OpId>(o), in);
  }
  return values;
}

std::vector<std::vector<float>> evaluate_f32(const Graph& g,
                                             const std::map<TensorId, std::vector<float>>& feeds) {
  std::map<TensorId, TensorData> wide;
  for (const auto& [id, data] : feeds) wide[id] = TensorData(data.begin(), data.end());
  std::vector<std::vector<float>> out;
  for (const TensorData& v : evaluate(g, wide)) {
    std::vector<float> f(v.size());
    for (size_t i = 0; i < v.size(); ++i) f[i] = static_cast<float>(v[i]);
    out.push_back(std::move(f));
  }
  return out;
}

// [SECTION] random_feeds

namespace {

// splitmix64: a tiny generator whose output is fixed by its definition on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : m_state(seed) {}
  uint64_t next() {
    uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t m_state;
};

enum class FeedKind { Signed, Variance, ClassIndex };

}  // namespace

std::map<TensorId, TensorData> random_feeds(const Graph& g, uint64_t seed) {
  // What a tensor feeds decides what values make sense for it.
  std::map<TensorId, std::pair<FeedKind, int64_t>> special;
  for (const Op& op : g.ops()) {
    auto mark = [&](size_t i, FeedKind k, int64_t classes = 0) {
      if (i < op.inputs.size()) special[op.inputs[i]] = {k, classes};
    };
    switch (op.kind) {
      case OpKind::BatchNorm:
        mark(4, FeedKind::Variance);
        break;
      case OpKind::BatchNormGrad:
        mark(2, FeedKind::Variance);
        break;
      case OpKind::BatchNormScaleGrad:
        mark(3, FeedKind::Variance);
        break;
      case OpKind::CrossEntropyLoss:
      case OpKind::CrossEntropyLossGrad:
        mark(1, FeedKind::ClassIndex, g.tensor(op.inputs.at(0)).shape.at(1));
        break;
      default:
        break;
    }
  }
  std::map<TensorId, TensorData> feeds;
  for (size_t i = 0; i < g.tensors().size(); ++i) {
    const Tensor& t = g.tensors()[i];
    if (t.producer >= 0) continue;
    // Each tensor gets its own stream so adding a tensor does not shift the others' values.
    SplitMix64 rng(seed ^ (0xA24BAED4963EE407ull * (i + 1)));
    const auto it = special.find(static_cast<TensorId>(i));
    const FeedKind kind = it == special.end() ? FeedKind::Signed : it->second.first;
    TensorData v(static_cast<size_t>(t.numel()));
    for (double& e : v) {
      switch (kind) {
        case FeedKind::Signed: {
          const double mag = 0.1 + 0.9 * rng.uniform();
          e = (rng.next() & 1) ? mag : -mag;
          break;
        }
        case FeedKind::Variance:
          e = 0.5 + rng.uniform();
          break;
        case FeedKind::ClassIndex:
          e = static_cast<double>(rng.next() % static_cast<uint64_t>(it->second.second));
          break;
      }
    }
    feeds[static_cast<TensorId>(i)] = std::move(v);
  }
  return feeds;
}

}  // namespace tilescope::graph

// Training graphs: every gradient agrees with central finite differences of the evaluated loss.
#include "sim/graph/autodiff.h"
#include "sim/graph/eval.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

using namespace tilescope::graph;

namespace {

struct Model {
  Graph g;
  TensorId in(const std::string& name, Shape shape, Role role = Role::Input) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.role = role;
    return g.add_tensor(t);
  }
  TensorId w(const std::string& name, Shape shape) {
    return in(name, std::move(shape), Role::Weight);
  }
  TensorId op(OpKind kind, std::vector<TensorId> ins, OpAttrs attrs = {},
              const std::string& name = {}) {
    Op o;
    o.kind = kind;
    o.name = name;
    o.inputs = std::move(ins);
    o.attrs = std::move(attrs);
    return g.add_op(o);
  }
};

OpAttrs scale_by(double alpha) {
  OpAttrs a;
  a.alpha = alpha;
  return a;
}

OpAttrs window(int64_t k, int64_t stride, int64_t pad, int64_t dil = 1, int64_t groups = 1) {
  OpAttrs a;
  a.kernel[0] = a.kernel[1] = k;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  a.dilation[0] = a.dilation[1] = dil;
  a.groups = groups;
  return a;
}

// How far the evaluated graph is from a point where the loss is not differentiable: a ReLU input
// at 0, or a max-pool window whose two largest values tie. Finite differences are only
// meaningful when the perturbation cannot cross such a point.
double kink_margin(const Graph& g, const std::vector<TensorData>& v) {
  double margin = std::numeric_limits<double>::infinity();
  for (const Op& op : g.ops()) {
    const TensorData& x = v[static_cast<size_t>(op.inputs[0])];
    if (op.kind == OpKind::ReLU)
      for (double e : x) margin = std::min(margin, std::abs(e));
    if (op.kind != OpKind::MaxPool2D) continue;
    const Shape& xs = g.tensor(op.inputs[0]).shape;
    const Shape& ys = g.tensor(op.outputs[0]).shape;
    const OpAttrs& a = op.attrs;
    for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
      for (int64_t p = 0; p < ys[2]; ++p)
        for (int64_t q = 0; q < ys[3]; ++q) {
          std::vector<double> win;
          for (int64_t r = 0; r < a.kernel[0]; ++r)
            for (int64_t s = 0; s < a.kernel[1]; ++s) {
              const int64_t h = p * a.stride[0] - a.padding[0] + r * a.dilation[0];
              const int64_t w = q * a.stride[1] - a.padding[1] + s * a.dilation[1];
              if (h >= 0 && h < xs[2] && w >= 0 && w < xs[3])
                win.push_back(x[static_cast<size_t>((nc * xs[2] + h) * xs[3] + w)]);
            }
          std::sort(win.rbegin(), win.rend());
          if (win.size() > 1) margin = std::min(margin, win[0] - win[1]);
        }
  }
  return margin;
}

// Compares every leaf gradient "d<leaf>" in a training graph with central differences of "loss".
// Returns the names of the gradients checked.
std::vector<std::string> check_gradients(const Graph& tg, uint64_t seed) {
  const auto loss = tg.find_tensor("loss");
  REQUIRE(loss);
  std::map<TensorId, TensorData> feeds;
  std::vector<TensorData> base;
  for (int attempt = 0;; ++attempt) {
    REQUIRE(attempt < 50);
    feeds = random_feeds(tg, seed + static_cast<uint64_t>(attempt));
    base = evaluate(tg, feeds);
    if (kink_margin(tg, base) > 1e-3) break;
  }
  // Step 1e-5: truncation error ~h^2 and rounding error ~1e-16/h balance near here; the worst
  // relative error measured over these graphs is ~5e-7, well inside the 1e-5 bound.
  const double h = 1e-5;
  std::vector<std::string> checked;
  for (const auto& [leaf, values] : feeds) {
    const auto grad = tg.find_tensor("d" + tg.tensor(leaf).name);
    if (!grad) continue;
    checked.push_back(tg.tensor(*grad).name);
    const TensorData& analytic = base[static_cast<size_t>(*grad)];
    REQUIRE(analytic.size() == values.size());
    TensorData numeric(values.size());
    for (size_t e = 0; e < values.size(); ++e) {
      auto f = feeds;
      f[leaf][e] = values[e] + h;
      const double up = evaluate(tg, f)[static_cast<size_t>(*loss)][0];
      f[leaf][e] = values[e] - h;
      const double down = evaluate(tg, f)[static_cast<size_t>(*loss)][0];
      numeric[e] = (up - down) / (2 * h);
    }
    double scale = 0;
    for (double x : numeric) scale = std::max(scale, std::abs(x));
    for (size_t e = 0; e < values.size(); ++e) {
      // Relative error, with a floor at 1e-3 of the tensor's largest entry so that entries that
      // are nearly 0 are judged against the gradient's own scale, not against rounding noise.
      const double denom =
          std::max({std::abs(numeric[e]), std::abs(analytic[e]), 1e-3 * scale, 1e-12});
      INFO(tg.tensor(*grad).name << "[" << e << "]: analytic " << analytic[e] << ", numeric "
                                 << numeric[e]);
      CHECK(std::abs(numeric[e] - analytic[e]) / denom < 1e-5);
    }
  }
  return checked;
}

bool has(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

// y = relu(x @ W.T + b)
Model linear_relu(int64_t batch, int64_t in, int64_t out) {
  Model m;
  const TensorId x = m.in("x", {batch, in});
  const TensorId w = m.w("W", {out, in});
  const TensorId b = m.w("b", {out});
  OpAttrs tb;
  tb.trans_b = true;
  const TensorId mm = m.op(OpKind::MatMul, {x, w}, tb, "matmul0");
  const TensorId add = m.op(OpKind::Add, {mm, b}, {}, "add0");
  m.op(OpKind::ReLU, {add}, {}, "y");
  return m;
}

}  // namespace

TEST_CASE("y = relu(x @ W.T + b) with MSE: dW, db, dx agree with finite differences") {
  const Model m = linear_relu(4, 5, 3);
  const Graph tg = build_training_graph(m.g, {});
  const auto checked = check_gradients(tg, 1);
  CHECK(has(checked, "dW"));
  CHECK(has(checked, "db"));
  CHECK(has(checked, "dx"));
  CHECK_FALSE(has(checked, "dtarget"));
  CHECK(checked.size() == 3);

  // Structure: the target input, the loss, a ReduceToShape for the broadcast bias, SGD updates.
  const auto target = tg.find_tensor("target");
  REQUIRE(target);
  CHECK(tg.tensor(*target).role == Role::Input);
  CHECK(tg.tensor(*target).shape == Shape{4, 3});
  const Tensor& db = tg.tensor(*tg.find_tensor("db"));
  CHECK(db.role == Role::Gradient);
  CHECK(db.shape == Shape{3});
  CHECK(tg.op(db.producer).kind == OpKind::ReduceToShape);
  CHECK(tg.op(db.producer).origin == "backward of add0");
  const Tensor& dw = tg.tensor(*tg.find_tensor("dW"));
  CHECK(tg.op(dw.producer).kind == OpKind::MatMul);
  CHECK(tg.op(dw.producer).origin == "backward of matmul0");
  const Tensor& wn = tg.tensor(*tg.find_tensor("W_next"));
  CHECK(tg.op(wn.producer).kind == OpKind::SGDUpdate);
  CHECK(tg.op(wn.producer).origin == "SGD update");
  CHECK(tg.find_tensor("b_next"));
  CHECK_FALSE(tg.find_tensor("x_next"));  // inputs get a gradient but no update
}

TEST_CASE("SGD step: w_next == w - lr * dw, numerically") {
  const Model m = linear_relu(3, 4, 2);
  TrainingOptions opt;
  opt.learning_rate = 0.125;
  const Graph tg = build_training_graph(m.g, opt);
  const auto v = evaluate(tg, random_feeds(tg, 7));
  for (const char* w : {"W", "b"}) {
    const TensorData& wv = v[static_cast<size_t>(*tg.find_tensor(w))];
    const TensorData& dw = v[static_cast<size_t>(*tg.find_tensor(std::string("d") + w))];
    const TensorData& next = v[static_cast<size_t>(*tg.find_tensor(std::string(w) + "_next"))];
    for (size_t i = 0; i < wv.size(); ++i) CHECK(next[i] == wv[i] - 0.125 * dw[i]);
  }
}

TEST_CASE("training ops are costed like forward ops: dW and dx matmuls cost as much as forward") {
  const Model m = linear_relu(64, 1024, 512);
  const Graph tg = build_training_graph(m.g, {});
  const int64_t fwd = 2LL * 64 * 512 * 1024;
  CHECK(tg.op_cost(*tg.find_op("matmul0")).flops == fwd);
  CHECK(tg.op_cost(tg.tensor(*tg.find_tensor("dW")).producer).flops == fwd);
  CHECK(tg.op_cost(tg.tensor(*tg.find_tensor("dx")).producer).flops == fwd);
  // db sums dy [64, 512] down to [512]: 63 adds per bias element.
  CHECK(tg.op_cost(tg.tensor(*tg.find_tensor("db")).producer).flops == 63LL * 512);
  // SGD on W: one multiply and one subtract per element.
  CHECK(tg.op_cost(tg.tensor(*tg.find_tensor("W_next")).producer).flops == 2LL * 512 * 1024);
}

TEST_CASE("conv with stride, padding and groups, tanh, max pool, flatten, linear, cross-entropy") {
  Model m;
  const TensorId x = m.in("x", {2, 4, 7, 7});
  const TensorId w = m.w("w", {6, 2, 3, 3});
  const TensorId b = m.w("b", {1, 6, 1, 1});
  const TensorId c = m.op(OpKind::Conv2D, {x, w}, window(3, 2, 1, 1, 2), "conv0");  // [2, 6, 4, 4]
  const TensorId cb = m.op(OpKind::Add, {c, b});
  const TensorId t = m.op(OpKind::Tanh, {cb});
  const TensorId p = m.op(OpKind::MaxPool2D, {t}, window(2, 2, 0));  // [2, 6, 2, 2]
  OpAttrs flat;
  flat.shape = {2, -1};
  const TensorId f = m.op(OpKind::Reshape, {p}, flat);
  const TensorId w2 = m.w("w2", {5, 24});
  OpAttrs tb;
  tb.trans_b = true;
  m.op(OpKind::MatMul, {f, w2}, tb);
  TrainingOptions opt;
  opt.loss = LossKind::CrossEntropy;
  const Graph tg = build_training_graph(m.g, opt);
  CHECK(tg.tensor(*tg.find_tensor("target")).shape == Shape{2});
  CHECK(tg.op(tg.tensor(*tg.find_tensor("dw")).producer).kind == OpKind::Conv2DGradWeight);
  CHECK(tg.op(tg.tensor(*tg.find_tensor("dx")).producer).kind == OpKind::Conv2DGradInput);
  const auto checked = check_gradients(tg, 11);
  for (const char* g : {"dx", "dw", "db", "dw2"}) CHECK(has(checked, g));
}

TEST_CASE("dilated conv, batch norm, sigmoid, padded avg pool and mean") {
  Model m;
  const TensorId x = m.in("x", {2, 3, 6, 6});
  const TensorId w = m.w("w", {4, 3, 2, 2});
  const TensorId c = m.op(OpKind::Conv2D, {x, w}, window(2, 1, 1, 2));  // [2, 4, 6, 6]
  const TensorId sc = m.w("scale", {4}), sh = m.w("shift", {4});
  const TensorId mu = m.w("mean", {4}), var = m.w("var", {4});
  const TensorId bn = m.op(OpKind::BatchNorm, {c, sc, sh, mu, var});
  const TensorId s = m.op(OpKind::Sigmoid, {bn});
  const TensorId s6 =
      m.op(OpKind::ReLU6, {m.op(OpKind::Scale, {s}, scale_by(8.0))});  // 0..8 → 0..6
  const TensorId p = m.op(OpKind::AvgPool2D, {s6}, window(3, 2, 1));   // [2, 4, 3, 3]
  OpAttrs mean;
  mean.axes = {2, 3};
  m.op(OpKind::Mean, {p}, mean);  // [2, 4]
  const Graph tg = build_training_graph(m.g, {});
  const auto checked = check_gradients(tg, 21);
  for (const char* g : {"dx", "dw", "dscale", "dshift"}) CHECK(has(checked, g));
  // Running statistics are constants: no gradient, no update.
  CHECK_FALSE(tg.find_tensor("dmean"));
  CHECK_FALSE(tg.find_tensor("var_next"));
}

TEST_CASE("layer norm, GELU, transpose, matmul, concat, softmax, mul, sub, sum, reshape") {
  Model m;
  const TensorId x = m.in("x", {3, 4});
  const TensorId gamma = m.w("gamma", {4}), beta = m.w("beta", {4});
  const TensorId ln = m.op(OpKind::LayerNorm, {x, gamma, beta});
  const TensorId h = m.op(OpKind::GELU, {ln}, {}, "h");
  OpAttrs t;
  t.perm = {1, 0};
  const TensorId ht = m.op(OpKind::Transpose, {h}, t);  // h feeds two ops: gradients accumulate
  const TensorId e = m.op(OpKind::MatMul, {h, ht});     // [3, 3]
  const TensorId z = m.w("z", {2, 3});
  OpAttrs cat;
  cat.axis = 0;
  const TensorId c = m.op(OpKind::Concat, {e, z}, cat);  // [5, 3]
  OpAttrs sm;
  sm.axis = 1;
  const TensorId s = m.op(OpKind::Softmax, {c}, sm);
  const TensorId v = m.w("v", {3});
  const TensorId mul = m.op(OpKind::Mul, {s, v});
  const TensorId u = m.w("u", {5, 1});
  const TensorId d = m.op(OpKind::Sub, {mul, u});
  OpAttrs sum;
  sum.axes = {1};
  const TensorId r = m.op(OpKind::Sum,
                          {
                              d,
                          },
                          sum);  // [5]
  OpAttrs rs;
  rs.shape = {5, 1};
  m.op(OpKind::Reshape, {r}, rs);
  const Graph tg = build_training_graph(m.g, {});
  // The accumulated gradient of h is an Add of its two consumers' shares.
  const Tensor& dh = tg.tensor(*tg.find_tensor("dh"));
  CHECK(tg.op(dh.producer).kind == OpKind::Add);
  CHECK(tg.find_tensor("dh_via_transpose0"));
  const auto checked = check_gradients(tg, 31);
  for (const char* g : {"dx", "dgamma", "dbeta", "dz", "dv", "du"}) CHECK(has(checked, g));
}

TEST_CASE("causal attention's scores: the mask's gradient lets through only what the mask kept") {
  Model m;
  const TensorId q = m.in("q", {4, 3});
  const TensorId k = m.w("k", {5, 3});
  OpAttrs nt;
  nt.trans_b = true;
  const TensorId s = m.op(OpKind::MatMul, {q, k}, nt);  // [4, 5]
  OpAttrs mask;
  mask.alpha = -std::numeric_limits<double>::infinity();
  const TensorId masked = m.op(OpKind::CausalMask, {s}, mask);
  OpAttrs sm;
  sm.axis = 1;
  const TensorId p = m.op(OpKind::Softmax, {masked}, sm);
  const TensorId v = m.w("v", {5, 2});
  m.op(OpKind::MatMul, {p, v});
  const Graph tg = build_training_graph(m.g, {});
  // The gradient of the mask is the mask again, filling with 0 instead of -inf.
  bool zero_fill = false;
  for (const Op& op : tg.ops())
    zero_fill = zero_fill || (op.kind == OpKind::CausalMask && op.attrs.alpha == 0.0);
  CHECK(zero_fill);
  const auto checked = check_gradients(tg, 51);
  for (const char* g : {"dq", "dk", "dv"}) CHECK(has(checked, g));
}

TEST_CASE("sum with keepdim and a squared term x * x") {
  Model m;
  const TensorId x = m.in("x", {2, 3, 2});
  const TensorId sq = m.op(OpKind::Mul, {x, x});
  OpAttrs sum;
  sum.axes = {0, 2};
  sum.keepdim = true;
  const TensorId s = m.op(OpKind::Sum, {sq}, sum);  // [1, 3, 1]
  const TensorId k = m.w("k", {1, 3, 1});
  m.op(OpKind::Mul, {s, k});
  const Graph tg = build_training_graph(m.g, {});
  const auto checked = check_gradients(tg, 41);
  CHECK(has(checked, "dx"));
  CHECK(has(checked, "dk"));
}

TEST_CASE("matmul gradients for every transpose combination, batched either side") {
  for (int flags = 0; flags < 4; ++flags) {
    const bool ta = flags & 1, tb = flags & 2;
    for (int batched = 0; batched < 2; ++batched) {
      CAPTURE(ta);
      CAPTURE(tb);
      CAPTURE(batched);
      Model m;
      // op(A) is [.., 3, 4], op(B) is [.., 4, 5]; the batch dim (2) sits on A or on B.
      Shape a = ta ? Shape{4, 3} : Shape{3, 4};
      Shape b = tb ? Shape{5, 4} : Shape{4, 5};
      (batched ? b : a).insert((batched ? b : a).begin(), 2);
      const TensorId at = m.w("A", a), bt = m.w("B", b);
      OpAttrs o;
      o.trans_a = ta;
      o.trans_b = tb;
      m.op(OpKind::MatMul, {at, bt}, o);
      const Graph tg = build_training_graph(m.g, {});
      const auto checked = check_gradients(tg, 51 + static_cast<uint64_t>(flags));
      CHECK(has(checked, "dA"));
      CHECK(has(checked, "dB"));
    }
  }
}

TEST_CASE("a forward graph that already ends in a loss is trained as it stands") {
  Model m;
  const TensorId x = m.in("x", {3, 4});
  const TensorId w = m.w("W", {4, 2});
  const TensorId logits = m.op(OpKind::MatMul, {x, w});
  const TensorId labels = m.in("labels", {3});
  m.op(OpKind::CrossEntropyLoss, {logits, labels}, {}, "loss");
  const Graph tg = build_training_graph(m.g, {});
  CHECK_FALSE(tg.find_tensor("target"));
  const auto checked = check_gradients(tg, 61);
  CHECK(has(checked, "dW"));
  CHECK_FALSE(has(checked, "dlabels"));  // class indices have no gradient
}

TEST_CASE("training-graph errors are GraphErrors that say what is wrong") {
  Model m;
  const TensorId x = m.in("x", {4});
  const TensorId w = m.w("W", {4});
  const TensorId y = m.op(OpKind::Mul, {x, w});
  TrainingOptions ce;
  ce.loss = LossKind::CrossEntropy;
  CHECK(error_of([&] {
          build_training_graph(m.g, ce);
        }).find("cross-entropy needs the prediction to be logits [N, classes]") !=
        std::string::npos);
  TrainingOptions lr;
  lr.learning_rate = -1;
  CHECK(error_of([&] { build_training_graph(m.g, lr); }).find("learning rate") !=
        std::string::npos);

  m.op(OpKind::Tanh, {x});  // now two outputs
  CHECK(error_of([&] { build_training_graph(m.g, {}); }).find("2 outputs") != std::string::npos);
  TrainingOptions pick;
  pick.prediction = y;
  CHECK_NOTHROW(build_training_graph(m.g, pick));

  Model frozen;
  const TensorId c = frozen.in("c", {2});
  frozen.op(OpKind::ReLU, {c});
  TrainingOptions no_inputs;
  no_inputs.input_gradients = false;
  CHECK(error_of([&] { build_training_graph(frozen.g, no_inputs); }).find("nothing to train") !=
        std::string::npos);

  Model bwd;
  const TensorId dy = bwd.in("dy", {2}), xx = bwd.in("xx", {2});
  bwd.op(OpKind::ReLUGrad, {dy, xx});
  CHECK(error_of([&] { build_training_graph(bwd.g, {}); }).find("backward helper") !=
        std::string::npos);
}

// The reference evaluator against hand-computed examples, closed forms and Eigen.
#include "sim/graph/eval.h"

#include <doctest/doctest.h>
#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <numbers>
#include <string>

using namespace tilescope::graph;

namespace {

struct Net {
  Graph g;
  std::map<TensorId, TensorData> feeds;

  TensorId in(const std::string& name, Shape shape, TensorData data, Role role = Role::Input) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.role = role;
    const TensorId id = g.add_tensor(t);
    feeds[id] = std::move(data);
    return id;
  }
  TensorId op(OpKind kind, std::vector<TensorId> ins, OpAttrs attrs = {}) {
    Op o;
    o.kind = kind;
    o.inputs = std::move(ins);
    o.attrs = std::move(attrs);
    return g.add_op(o);
  }
  TensorData run(TensorId out) { return evaluate(g, feeds)[static_cast<size_t>(out)]; }
};

TensorData iota(int64_t n, double start = 0.0) {
  TensorData v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i);
  return v;
}

void check_close(const TensorData& got, const TensorData& want, double tol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tol).scale(1.0));
  }
}

OpAttrs window(int64_t k, int64_t stride, int64_t pad, int64_t dil = 1) {
  OpAttrs a;
  a.kernel[0] = a.kernel[1] = k;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  a.dilation[0] = a.dilation[1] = dil;
  return a;
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

}  // namespace

TEST_CASE("2x2 matmul with and without transpose flags, by hand") {
  Net n;
  const TensorId a = n.in("a", {2, 2}, {1, 2, 3, 4});
  const TensorId b = n.in("b", {2, 2}, {5, 6, 7, 8});
  const TensorId ab = n.op(OpKind::MatMul, {a, b});
  OpAttrs tb;
  tb.trans_b = true;
  const TensorId abt = n.op(OpKind::MatMul, {a, b}, tb);
  OpAttrs ta;
  ta.trans_a = true;
  const TensorId atb = n.op(OpKind::MatMul, {a, b}, ta);
  const auto v = evaluate(n.g, n.feeds);
  check_close(v[static_cast<size_t>(ab)], {19, 22, 43, 50});
  check_close(v[static_cast<size_t>(abt)],
              {1 * 5 + 2 * 6, 1 * 7 + 2 * 8, 3 * 5 + 4 * 6, 3 * 7 + 4 * 8});
  check_close(v[static_cast<size_t>(atb)],
              {1 * 5 + 3 * 7, 1 * 6 + 3 * 8, 2 * 5 + 4 * 7, 2 * 6 + 4 * 8});
}

TEST_CASE("batched matmul broadcasting a 2-D operand agrees with Eigen per batch") {
  Net n;
  const TensorData av = iota(2 * 4 * 3, -7.0), bv = iota(5 * 4, -3.5);
  const TensorId a = n.in("a", {2, 4, 3}, av);  // used transposed: op(a) is [2, 3, 4]
  const TensorId b = n.in("b", {5, 4}, bv);     // used transposed: op(b) is [4, 5]
  OpAttrs t;
  t.trans_a = t.trans_b = true;
  const TensorData y = n.run(n.op(OpKind::MatMul, {a, b}, t));
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMat> bm(bv.data(), 5, 4);
  for (int batch = 0; batch < 2; ++batch) {
    const Eigen::Map<const RowMat> am(av.data() + batch * 12, 4, 3);
    const RowMat want = am.transpose() * bm.transpose();
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        CHECK(y[static_cast<size_t>(batch * 15 + i * 5 + j)] == want(i, j));
  }
}

TEST_CASE("a 3x3 conv by hand: padding 1, stride 2, all-ones kernel sums 2x2 corners") {
  Net n;
  const TensorId x = n.in("x", {1, 1, 3, 3}, iota(9, 1.0));  // 1..9
  const TensorId w = n.in("w", {1, 1, 3, 3}, TensorData(9, 1.0), Role::Weight);
  OpAttrs a = window(1, 2, 1);
  const TensorData y = n.run(n.op(OpKind::Conv2D, {x, w}, a));
  // Windows centred on (0,0), (0,2), (2,0), (2,2); the padding adds zeros.
  check_close(y, {1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9});
}

TEST_CASE("conv dilation and groups follow their closed forms") {
  Net n;
  // x[i][j] = 10 i + j on a 5x5 image; kernel [[1,0],[0,1]] dilated by 2 reads x[p][q] +
  // x[p+2][q+2].
  TensorData xv(25);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) xv[static_cast<size_t>(i * 5 + j)] = 10 * i + j;
  const TensorId x = n.in("x", {1, 1, 5, 5}, xv);
  const TensorId w = n.in("w", {1, 1, 2, 2}, {1, 0, 0, 1}, Role::Weight);
  const TensorData y = n.run(n.op(OpKind::Conv2D, {x, w}, window(1, 1, 0, 2)));
  REQUIRE(y.size() == 9);
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) CHECK(y[static_cast<size_t>(p * 3 + q)] == 20 * p + 2 * q + 22);

  // groups = 2 with 1x1 kernels: output channel k sees only input channel k.
  Net m;
  const TensorId x2 = m.in("x", {1, 2, 1, 2}, {1, 2, 3, 4});
  const TensorId w2 = m.in("w", {2, 1, 1, 1}, {10, 100}, Role::Weight);
  OpAttrs g = window(1, 1, 0);
  g.groups = 2;
  check_close(m.run(m.op(OpKind::Conv2D, {x2, w2}, g)), {10, 20, 300, 400});
}

TEST_CASE("pooling by hand, average pooling counts padding as zeros") {
  Net n;
  const TensorId x = n.in("x", {1, 1, 4, 4}, iota(16));
  check_close(n.run(n.op(OpKind::MaxPool2D, {x}, window(2, 2, 0))), {5, 7, 13, 15});
  check_close(n.run(n.op(OpKind::AvgPool2D, {x}, window(2, 2, 0))),
              {(0 + 1 + 4 + 5) / 4.0, (2 + 3 + 6 + 7) / 4.0, (8 + 9 + 12 + 13) / 4.0,
               (10 + 11 + 14 + 15) / 4.0});
  Net m;
  const TensorId s = m.in("s", {1, 1, 2, 2}, {1, 2, 3, 4});
  // Every 3x3 window over the padded 2x2 image holds all four values: 10 / 9.
  check_close(m.run(m.op(OpKind::AvgPool2D, {s}, window(3, 1, 1))), TensorData(4, 10.0 / 9.0));
}

TEST_CASE("softmax rows sum to 1 and match exp/sum; along axis 0 too") {
  Net n;
  const TensorId x = n.in("x", {2, 3}, {1, 2, 3, -1, 0, 4});
  OpAttrs a;
  a.axis = 1;
  const TensorData y = n.run(n.op(OpKind::Softmax, {x}, a));
  const double s0 = std::exp(1) + std::exp(2) + std::exp(3);
  CHECK(y[0] == doctest::Approx(std::exp(1) / s0));
  CHECK(y[2] == doctest::Approx(std::exp(3) / s0));
  CHECK(y[0] + y[1] + y[2] == doctest::Approx(1.0));
  CHECK(y[3] + y[4] + y[5] == doctest::Approx(1.0));
  a.axis = 0;
  const TensorData z = n.run(n.op(OpKind::Softmax, {x}, a));
  CHECK(z[0] == doctest::Approx(std::exp(1) / (std::exp(1) + std::exp(-1))));
  for (int j = 0; j < 3; ++j)
    CHECK(z[static_cast<size_t>(j)] + z[static_cast<size_t>(3 + j)] == doctest::Approx(1.0));
}

TEST_CASE("causal mask: entries above each matrix's diagonal take the fill, the rest pass") {
  Net n;
  // Two 2 x 3 matrices: rows are queries, columns keys.
  const TensorId x = n.in("x", {2, 2, 3}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6});
  OpAttrs a;
  a.alpha = -std::numeric_limits<double>::infinity();
  const TensorData y = n.run(n.op(OpKind::CausalMask, {x}, a));
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> want = {1, -inf, -inf, 4, 5, -inf, -1, -inf, -inf, -4, -5, -inf};
  REQUIRE(y.size() == want.size());
  for (size_t e = 0; e < y.size(); ++e) CHECK(y[e] == want[e]);
  a.alpha = 0.0;
  check_close(n.run(n.op(OpKind::CausalMask, {x}, a)), {1, 0, 0, 4, 5, 0, -1, 0, 0, -4, -5, 0});
}

TEST_CASE("activations at known points") {
  Net n;
  const TensorId x = n.in("x", {4}, {-2, -0.5, 1, 3});
  check_close(n.run(n.op(OpKind::ReLU, {x})), {0, 0, 1, 3});
  const TensorId wide = n.in("wide", {4}, {-1, 2, 6, 7.5});
  check_close(n.run(n.op(OpKind::ReLU6, {wide})), {0, 2, 6, 6});  // min(max(x, 0), 6)
  const TensorData s = n.run(n.op(OpKind::Sigmoid, {x}));
  CHECK(s[2] == doctest::Approx(1.0 / (1.0 + std::exp(-1.0))));
  const TensorData t = n.run(n.op(OpKind::Tanh, {x}));
  CHECK(t[3] == doctest::Approx(std::tanh(3.0)));
  const TensorData g = n.run(n.op(OpKind::GELU, {x}));
  // tanh-approximation GELU(1) = 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)).
  CHECK(g[2] == doctest::Approx(0.5 * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * 1.044715))));
  CHECK(g[2] == doctest::Approx(0.8411919906));
}

TEST_CASE("batch norm and layer norm match their formulas") {
  Net n;
  const TensorId x = n.in("x", {1, 2, 1, 2}, {1, 2, 3, 5});
  const TensorId sc = n.in("scale", {2}, {2, -1}, Role::Weight);
  const TensorId sh = n.in("shift", {2}, {0.5, 1}, Role::Weight);
  const TensorId mu = n.in("mean", {2}, {1, 4}, Role::Weight);
  const TensorId var = n.in("var", {2}, {4, 0.25}, Role::Weight);
  OpAttrs bn;
  bn.eps = 0.0;
  // Channel 0: (x - 1)/2 * 2 + 0.5; channel 1: (x - 4)/0.5 * -1 + 1.
  check_close(n.run(n.op(OpKind::BatchNorm, {x, sc, sh, mu, var}, bn)), {0.5, 1.5, 3, -1});

  Net m;
  const TensorId r = m.in("r", {2, 3}, {1, 2, 3, 0, 0, 6});
  const TensorId gamma = m.in("gamma", {3}, {1, 2, 3}, Role::Weight);
  const TensorId beta = m.in("beta", {3}, {0, 0, 1}, Role::Weight);
  OpAttrs ln;
  ln.eps = 1e-5;
  const TensorData y = m.run(m.op(OpKind::LayerNorm, {r, gamma, beta}, ln));
  const double rs0 = 1 / std::sqrt(2.0 / 3.0 + 1e-5);  // row 0: mean 2, variance 2/3
  const double rs1 = 1 / std::sqrt(8.0 + 1e-5);        // row 1: mean 2, variance (4+4+16)/3 = 8
  check_close(y, {-rs0, 0, 3 * rs0 + 1, -2 * rs1, -4 * rs1, 3 * 4 * rs1 + 1}, 1e-12);
}

TEST_CASE("data movement: reshape, transpose, concat, slice, broadcast, reduce") {
  Net n;
  const TensorId x = n.in("x", {2, 3}, iota(6));  // [[0,1,2],[3,4,5]]
  OpAttrs r;
  r.shape = {3, 2};
  check_close(n.run(n.op(OpKind::Reshape, {x}, r)), {0, 1, 2, 3, 4, 5});
  OpAttrs t;
  t.perm = {1, 0};
  check_close(n.run(n.op(OpKind::Transpose, {x}, t)), {0, 3, 1, 4, 2, 5});
  const TensorId z = n.in("z", {2, 1}, {10, 11});
  OpAttrs c;
  c.axis = 1;
  check_close(n.run(n.op(OpKind::Concat, {x, z}, c)), {0, 1, 2, 10, 3, 4, 5, 11});
  OpAttrs sl;
  sl.shape = {1, 2};
  sl.starts = {1, 1};
  check_close(n.run(n.op(OpKind::Slice, {x}, sl)), {4, 5});
  OpAttrs b;
  b.shape = {2, 2, 3};
  check_close(n.run(n.op(OpKind::BroadcastTo, {x}, b)), {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5});
  OpAttrs rs;
  rs.shape = {1, 3};
  check_close(n.run(n.op(OpKind::ReduceToShape, {x}, rs)), {3, 5, 7});
  OpAttrs s;
  s.axes = {1};
  check_close(n.run(n.op(OpKind::Sum, {x}, s)), {3, 12});
  s.keepdim = true;
  check_close(n.run(n.op(OpKind::Mean, {x}, s)), {1, 4});
  OpAttrs all;
  check_close(n.run(n.op(OpKind::Sum, {x}, all)), {15});
}

TEST_CASE("losses: MSE and cross-entropy by hand; a bad class index is a clear error") {
  Net n;
  const TensorId p = n.in("p", {2, 2}, {1, 2, 3, 4});
  const TensorId q = n.in("q", {2, 2}, {1, 0, 3, 7});
  check_close(n.run(n.op(OpKind::MSELoss, {p, q})), {(0 + 4 + 0 + 9) / 4.0});
  check_close(n.run(n.op(OpKind::MSELossGrad, {p, q})), {0, 2 * 2 / 4.0, 0, 2 * -3 / 4.0});
  const TensorId logits = n.in("logits", {2, 2}, {0, 0, 1, 3});
  const TensorId labels = n.in("labels", {2}, {1, 0});
  // Row 0: -log(1/2); row 1: -log(e^1 / (e^1 + e^3)) = log(1 + e^2).
  check_close(n.run(n.op(OpKind::CrossEntropyLoss, {logits, labels})),
              {(std::log(2.0) + std::log(1 + std::exp(2.0))) / 2});
  const double p1 = std::exp(1.0) / (std::exp(1.0) + std::exp(3.0));
  check_close(n.run(n.op(OpKind::CrossEntropyLossGrad, {logits, labels})),
              {0.25, -0.25, (p1 - 1) / 2, (1 - p1) / 2});

  Net m;
  const TensorId l2 = m.in("logits", {1, 3}, {0, 1, 2});
  const TensorId bad = m.in("labels", {1}, {3});
  Op o;
  o.kind = OpKind::CrossEntropyLoss;
  o.name = "ce";
  o.inputs = {l2, bad};
  m.g.add_op(o);
  CHECK(error_of([&] { evaluate(m.g, m.feeds); }).find("ce (CrossEntropyLoss): target[0] = 3") !=
        std::string::npos);
}

TEST_CASE("backward helpers for activations and SGD by hand") {
  Net n;
  const TensorId dy = n.in("dy", {3}, {1, 2, 3});
  const TensorId x = n.in("x", {3}, {-1, 0.5, 2});
  check_close(n.run(n.op(OpKind::ReLUGrad, {dy, x})), {0, 2, 3});
  const TensorId x6 = n.in("x6", {3}, {-1, 5.5, 7});
  check_close(n.run(n.op(OpKind::ReLU6Grad, {dy, x6})), {0, 2, 0});  // only 0 < x < 6 passes
  check_close(n.run(n.op(OpKind::SigmoidGrad, {dy, x})), {1 * -1 * 2, 2 * 0.5 * 0.5, 3 * 2 * -1});
  check_close(n.run(n.op(OpKind::TanhGrad, {dy, x})), {0, 2 * 0.75, 3 * -3});
  OpAttrs s;
  s.alpha = 0.1;
  check_close(n.run(n.op(OpKind::SGDUpdate, {x, dy}, s)), {-1.1, 0.3, 1.7});
  s.alpha = -2;
  check_close(n.run(n.op(OpKind::Scale, {x}, s)), {2, -1, -4});
}

TEST_CASE("evaluate reports missing, mis-sized and misplaced feeds") {
  Net n;
  const TensorId x = n.in("x", {2}, {1, 2});
  const TensorId y = n.op(OpKind::ReLU, {x});
  auto feeds = n.feeds;
  feeds.erase(x);
  CHECK(error_of([&] { evaluate(n.g, feeds); }).find("no value fed for input 'x' [2]") !=
        std::string::npos);
  feeds[x] = {1, 2, 3};
  CHECK(error_of([&] { evaluate(n.g, feeds); }).find("has 3 values; it needs 2") !=
        std::string::npos);
  feeds[x] = {1, 2};
  feeds[y] = {0, 0};
  CHECK(error_of([&] { evaluate(n.g, feeds); }).find("which op 'relu0' computes") !=
        std::string::npos);
}

TEST_CASE("evaluate_f32 computes in double and rounds the results to float") {
  Net n;
  const TensorId x = n.in("x", {3}, {0, 0, 0});
  const TensorId y = n.op(OpKind::Sigmoid, {x});
  const std::vector<float> in = {0.1f, -0.2f, 0.3f};
  const auto f = evaluate_f32(n.g, {{x, in}});
  for (size_t i = 0; i < 3; ++i)
    CHECK(f[static_cast<size_t>(y)][i] ==
          static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(in[i])))));
}

TEST_CASE("random feeds: deterministic, never zero, sensible for variances and class targets") {
  Graph g;
  auto add = [&](const std::string& name, Shape s, Role r) {
    Tensor t;
    t.name = name;
    t.shape = std::move(s);
    t.role = r;
    return g.add_tensor(t);
  };
  const TensorId x = add("x", {2, 3, 4, 4}, Role::Input);
  std::vector<TensorId> p;
  for (const char* nm : {"scale", "shift", "mean", "var"}) p.push_back(add(nm, {3}, Role::Weight));
  Op bn;
  bn.kind = OpKind::BatchNorm;
  bn.inputs = {x, p[0], p[1], p[2], p[3]};
  g.add_op(bn);
  const TensorId logits = add("logits", {50, 7}, Role::Input);
  const TensorId labels = add("labels", {50}, Role::Input);
  Op ce;
  ce.kind = OpKind::CrossEntropyLoss;
  ce.inputs = {logits, labels};
  g.add_op(ce);

  const auto f1 = random_feeds(g, 42), f2 = random_feeds(g, 42), f3 = random_feeds(g, 43);
  CHECK(f1 == f2);
  CHECK(f1.at(x) != f3.at(x));
  CHECK(f1.size() == 7);
  for (double v : f1.at(x)) {
    CHECK(std::abs(v) >= 0.1);
    CHECK(std::abs(v) <= 1.0);
  }
  for (double v : f1.at(p[3])) CHECK((v >= 0.5 && v <= 1.5));
  bool saw_last_class = false;
  for (double v : f1.at(labels)) {
    CHECK(v == std::floor(v));
    CHECK((v >= 0 && v < 7));
    saw_last_class |= v == 6;
  }
  CHECK(saw_last_class);
  CHECK_NOTHROW(evaluate(g, f1));
}

// Default lowering: one kernel per op with its natural loop nest; the interpreter running it agrees
// with the graph's plain-loop reference for every supported op kind.
#include "fixtures.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"

#include <cmath>
#include <limits>
#include <map>

using namespace tilescope;
using namespace tilescope::schedule;
using graph::OpKind;

TEST_CASE("lowering: y = relu(x @ W.T + b) is three kernels; the MatMul walks (i, j, k)") {
  auto g = tsfix::linear_relu(8, 6, 5);
  Program p = lower_graph(g);
  REQUIRE(p.kernels.size() == 3);
  const Kernel& mm = p.kernels[0];
  REQUIRE(mm.loops.size() == 3);
  CHECK(mm.loops[0].name == "i");
  CHECK(mm.loops[1].name == "j");
  CHECK(mm.loops[2].name == "k");
  CHECK(mm.loops[2].reduce);
  CHECK(mm.loops[2].extent == 5);
  // Inputs first, then the output: the generated code's argument order.
  CHECK(mm.tensors[0].name == "x");
  CHECK(mm.tensors[1].name == "W");
  CHECK(mm.tensors[2].role == TensorRole::Output);
  CHECK(p.current == 0);
  const std::string nest = print_loop_nest(mm);
  CHECK(nest.find("acc += x[i, k] * W[j, k]") != std::string::npos);
}

TEST_CASE("lowering: the MatMul kernel computes a hand-written triple loop") {
  auto g = tsfix::linear_relu(7, 5, 9);
  Program p = lower_graph(g);
  const Kernel& mm = p.kernels[0];
  std::vector<float> x(7 * 9), W(5 * 9);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 7) - 3) * 0.25f;
  for (size_t i = 0; i < W.size(); ++i) W[i] = float(int(i % 5) - 2) * 0.5f;
  std::vector<std::vector<float>> bufs = {x, W, std::vector<float>(7 * 5, -1.0f)};
  interpret_kernel(mm, bufs);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) {
      float s = 0;
      for (int k = 0; k < 9; ++k) s += x[size_t(i * 9 + k)] * W[size_t(j * 9 + k)];
      CHECK(bufs[2][size_t(i * 5 + j)] == doctest::Approx(s));
    }
}

namespace {

double lowered_error(std::shared_ptr<graph::Graph> g) {
  return tsfix::program_error(lower_graph(g));
}

graph::OpAttrs scaled(double alpha) {
  graph::OpAttrs a;
  a.alpha = alpha;
  return a;
}

}  // namespace

TEST_CASE("lowering: every supported op kind matches the reference evaluator") {
  using tsfix::op;
  using tsfix::tensor;
  SUBCASE("conv2d with padding and stride, bias, relu") {
    CHECK(lowered_error(tsfix::conv_relu(2, 3, 7, 6, 4, 3, 2, 1)) < 1e-5);
  }
  SUBCASE("grouped conv") {
    auto g = std::make_shared<graph::Graph>();
    auto x = tensor(*g, "x", {1, 4, 5, 5});
    auto w = tensor(*g, "w", {6, 2, 3, 3}, graph::Role::Weight);
    graph::OpAttrs a;
    a.groups = 2;
    a.padding[0] = a.padding[1] = 1;
    op(*g, OpKind::Conv2D, "conv0", {x, w}, a);
    CHECK(lowered_error(g) < 1e-5);
  }
  SUBCASE("max and average pooling with padding") {
    auto g = std::make_shared<graph::Graph>();
    auto x = tensor(*g, "x", {2, 3, 7, 7});
    graph::OpAttrs a;
    a.kernel[0] = a.kernel[1] = 3;
    a.stride[0] = a.stride[1] = 2;
    a.padding[0] = a.padding[1] = 1;
    op(*g, OpKind::MaxPool2D, "pool0", {x}, a);
    op(*g, OpKind::AvgPool2D, "pool1", {x}, a);
    CHECK(lowered_error(g) < 1e-5);
  }
  SUBCASE("softmax, layer norm, batch norm") {
    auto g = std::make_shared<graph::Graph>();
    auto x = tensor(*g, "x", {5, 9});
    auto gm = tensor(*g, "gamma", {9}, graph::Role::Weight);
    auto bt = tensor(*g, "beta", {9}, graph::Role::Weight);
    op(*g, OpKind::Softmax, "softmax0", {x});
    op(*g, OpKind::LayerNorm, "ln0", {x, gm, bt});
    auto im = tensor(*g, "im", {2, 3, 4, 4});
    std::vector<graph::TensorId> bn = {im};
    for (const char* n : {"scale", "shift", "mean", "var"})
      bn.push_back(tensor(*g, n, {3}, graph::Role::Weight));
    op(*g, OpKind::BatchNorm, "bn0", bn);
    CHECK(lowered_error(g) < 1e-5);
  }
  SUBCASE("elementwise chain with broadcasting, reductions, transpose, reshape") {
    auto g = std::make_shared<graph::Graph>();
    auto a = tensor(*g, "a", {4, 6});
    auto b = tensor(*g, "b", {1, 6});
    auto s = op(*g, OpKind::Sub, "sub0", {a, b});
    auto m = op(*g, OpKind::Mul, "mul0", {s, a});
    auto sg = op(*g, OpKind::Sigmoid, "sig0", {m});
    auto th = op(*g, OpKind::Tanh, "tanh0", {sg});
    op(*g, OpKind::GELU, "gelu0", {th});
    graph::OpAttrs sum;
    sum.axes = {1};
    op(*g, OpKind::Sum, "sum0", {a}, sum);
    graph::OpAttrs mean;
    mean.axes = {0};
    mean.keepdim = true;
    op(*g, OpKind::Mean, "mean0", {a}, mean);
    graph::OpAttrs tr;
    tr.perm = {1, 0};
    op(*g, OpKind::Transpose, "tr0", {a}, tr);
    graph::OpAttrs rs;
    rs.shape = {3, 8};
    op(*g, OpKind::Reshape, "rs0", {a}, rs);
    graph::OpAttrs sl;  // a[1:3, 2:6]
    sl.shape = {2, 4};
    sl.starts = {1, 2};
    op(*g, OpKind::Slice, "slice0", {a}, sl);
    op(*g, OpKind::ReLU6, "relu6_0", {op(*g, OpKind::Scale, "x8", {a}, scaled(8.0))});
    CHECK(lowered_error(g) < 1e-5);
  }
  SUBCASE("concatenation along the last axis (three inputs) and along the first") {
    auto g = std::make_shared<graph::Graph>();
    auto a = tensor(*g, "a", {4, 6});
    auto b = tensor(*g, "b", {4, 2});
    auto c = tensor(*g, "c", {4, 5});
    graph::OpAttrs last;
    last.axis = -1;
    const auto abc = op(*g, OpKind::Concat, "cat0", {a, b, c}, last);
    CHECK(g->tensor(abc).shape == graph::Shape{4, 13});
    graph::OpAttrs first;
    first.axis = 0;
    op(*g, OpKind::Concat, "cat1", {a, a}, first);  // one tensor twice
    CHECK(lowered_error(g) < 1e-5);
  }
  SUBCASE("batched matmul broadcasting a shared matrix") {
    auto g = std::make_shared<graph::Graph>();
    auto a = tensor(*g, "a", {3, 4, 5});
    auto b = tensor(*g, "b", {5, 2});
    op(*g, OpKind::MatMul, "bmm0", {a, b});
    CHECK(lowered_error(g) < 1e-5);
  }
}

TEST_CASE(
    "lowering: a causal mask fills exactly the entries above the diagonal, fused or inlined") {
  // s = q @ k.T over 6 queries and 7 keys, masked, then a softmax over the keys.
  auto g = std::make_shared<graph::Graph>();
  auto q = tsfix::tensor(*g, "q", {6, 4});
  auto k = tsfix::tensor(*g, "k", {7, 4});
  graph::OpAttrs nt;
  nt.trans_b = true;
  auto s = tsfix::op(*g, OpKind::MatMul, "matmul0", {q, k}, nt);
  auto masked = tsfix::op(*g, OpKind::CausalMask, "mask0", {s},
                          scaled(-std::numeric_limits<double>::infinity()));
  auto p = tsfix::op(*g, OpKind::Softmax, "softmax0", {masked});
  const auto feeds64 = graph::random_feeds(*g, 3);
  std::map<graph::TensorId, std::vector<float>> feeds;
  for (const auto& [id, v] : feeds64) feeds[id] = std::vector<float>(v.begin(), v.end());
  // The masked scores against a plain loop: -inf where key j comes after query i, else the dot.
  auto check_masked = [&](const std::vector<float>& got) {
    REQUIRE(got.size() == 6 * 7);
    int masked_entries = 0;
    for (size_t i = 0; i < 6; ++i)
      for (size_t j = 0; j < 7; ++j) {
        float dot = 0;
        for (size_t d = 0; d < 4; ++d) dot += feeds[q][i * 4 + d] * feeds[k][j * 4 + d];
        const float y = got[i * 7 + j];
        if (j > i) {
          CHECK((std::isinf(y) && y < 0));
          ++masked_entries;
        } else {
          CHECK(y == doctest::Approx(dot).epsilon(1e-5));
        }
      }
    CHECK(masked_entries == 6 + 5 + 4 + 3 + 2 + 1);  // row i masks keys i+1 .. 6
  };
  // Each row of the softmax sums to 1 over its unmasked keys alone.
  auto check_softmax = [&](const std::vector<float>& got) {
    for (size_t i = 0; i < 6; ++i) {
      double sum = 0;
      for (size_t j = 0; j < 7; ++j) {
        if (j > i) CHECK(got[i * 7 + j] == 0.0f);
        sum += got[i * 7 + j];
      }
      CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
    }
  };
  schedule::Program lowered = lower_graph(g);
  CHECK(lowered.kernels.size() == 3);
  auto out = schedule::run_program(lowered, feeds);
  check_masked(out.at(masked));
  check_softmax(out.at(p));
  CHECK(tsfix::program_error(lowered, 3) < 1e-5);
  // In the matmul's epilogue, with the key loop split: the mask reads the split loop variables.
  schedule::Program fused = tsfix::apply_all(lowered, "fuse(matmul0, mask0); tile(j, 4)");
  CHECK(fused.kernels.size() == 2);
  check_masked(schedule::run_program(fused, feeds).at(masked));
  // Computed inside the softmax: the masked scores are never stored.
  schedule::Program inlined = tsfix::apply_all(lowered, "compute_at(mask0, softmax0)");
  CHECK(inlined.kernels.size() == 2);
  auto in_out = schedule::run_program(inlined, feeds);
  CHECK(in_out.count(masked) == 0);
  check_softmax(in_out.at(p));
  CHECK(tsfix::program_error(inlined, 3) < 1e-5);
  // In one pass over the keys (online softmax), in tiles of 4: a masked key adds nothing.
  schedule::Program online =
      tsfix::apply_all(inlined, "online_softmax(softmax0); tile(j, 4); unroll(j.i)");
  check_softmax(schedule::run_program(online, feeds).at(p));
  CHECK(tsfix::program_error(online, 3) < 1e-5);
}

TEST_CASE(
    "online_softmax: one pass keeps the maximum and the rescaled sum; the rows are unchanged") {
  const int64_t R = 4, D = 37;
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {R, D});
  auto gm = tsfix::tensor(*g, "gamma", {D}, graph::Role::Weight);
  auto bt = tsfix::tensor(*g, "beta", {D}, graph::Role::Weight);
  auto y = tsfix::op(*g, OpKind::Softmax, "softmax0", {x});
  tsfix::op(*g, OpKind::LayerNorm, "ln0", {x, gm, bt});
  const Program lowered = lower_graph(g);
  const Program online = tsfix::apply_all(lowered, "online_softmax(softmax0)");
  auto reduce_passes = [](const Kernel& k) {
    int n = 0;
    for (const Phase& ph : k.phases) n += ph.kind == PhaseKind::Reduce ? 1 : 0;
    return n;
  };
  CHECK(reduce_passes(lowered.kernels[0]) == 2);
  CHECK(reduce_passes(online.kernels[0]) == 1);
  const std::string nest = print_loop_nest(online.kernels[0]);
  CHECK(nest.find("a new running maximum: rescale the sum so far") != std::string::npos);
  CHECK(tsfix::program_error(online, 5) < 1e-5);
  // Rows where every score is a new maximum (rescaled at each step), where none is, and scores
  // near 700 (exp would overflow a float without the shift), in tiles of 8 with a partial last
  // tile: against a plain float64 softmax.
  std::map<graph::TensorId, std::vector<float>> feeds;
  auto& xs = feeds[x];
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < D; ++j)
      xs.push_back(i == 0   ? float(j)
                   : i == 1 ? -float(j) * 0.5f
                   : i == 2 ? 700.0f + float((j * 7) % 11)
                            : float((j * 13) % 5) - 2.0f);
  feeds[gm] = std::vector<float>(size_t(D), 1.0f);
  feeds[bt] = std::vector<float>(size_t(D), 0.0f);
  const Program tiled = tsfix::apply_all(online, "tile(j, 8)");
  const auto got = schedule::run_program(tiled, feeds).at(y);
  for (int64_t i = 0; i < R; ++i) {
    double m = -1e300, sum = 0;
    for (int64_t j = 0; j < D; ++j) m = std::max(m, double(xs[size_t(i * D + j)]));
    for (int64_t j = 0; j < D; ++j) sum += std::exp(double(xs[size_t(i * D + j)]) - m);
    for (int64_t j = 0; j < D; ++j) {
      const double want = std::exp(double(xs[size_t(i * D + j)]) - m) / sum;
      CHECK(got[size_t(i * D + j)] == doctest::Approx(want).epsilon(1e-5));
    }
  }
  // What it refuses: an op that is not a softmax, and a softmax already in one pass.
  auto refused = [&](const Program& p, const std::string& step) {
    const StepResult r = tsfix::try_step(p, step);
    CHECK_FALSE(r.ok);
    return r.explanation;
  };
  CHECK(refused(lowered, "online_softmax(ln0)") ==
        "online_softmax: ln0 is a LayerNorm, not a softmax");
  CHECK(refused(online, "online_softmax(softmax0)") ==
        "online_softmax: softmax0 already computes its maximum and sum in one pass over each row");
}

TEST_CASE("lowering: an op with no loop nest yet is a clear error naming it") {
  auto g = std::make_shared<graph::Graph>();
  auto logits = tsfix::tensor(*g, "logits", {2, 3});
  auto target = tsfix::tensor(*g, "target", {2});
  tsfix::op(*g, OpKind::CrossEntropyLoss, "ce0", {logits, target});
  try {
    lower_graph(g);
    FAIL("expected an error");
  } catch (const ScheduleError& e) {
    CHECK(std::string(e.what()) == "op 'ce0' (CrossEntropyLoss) has no loop-nest lowering yet");
  }
}

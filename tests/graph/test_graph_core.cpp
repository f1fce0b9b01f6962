// Graph IR core: names, errors, layouts, shape inference (and its messages) and the cost table.
#include "sim/graph/graph.h"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace tilescope::graph;

namespace {

TensorId input(Graph& g, const std::string& name, Shape shape, Role role = Role::Input) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.role = role;
  return g.add_tensor(t);
}

TensorId weight(Graph& g, const std::string& name, Shape shape) {
  return input(g, name, std::move(shape), Role::Weight);
}

TensorId op(Graph& g, OpKind kind, std::vector<TensorId> ins, OpAttrs attrs = {},
            const std::string& name = {}) {
  Op o;
  o.kind = kind;
  o.name = name;
  o.inputs = std::move(ins);
  o.attrs = std::move(attrs);
  return g.add_op(o);
}

// The message of the GraphError that `f` throws ("" when it does not throw one).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

OpAttrs conv_attrs(int64_t stride, int64_t pad, int64_t dil = 1, int64_t groups = 1) {
  OpAttrs a;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = pad;
  a.dilation[0] = a.dilation[1] = dil;
  a.groups = groups;
  return a;
}

OpAttrs pool_attrs(int64_t k, int64_t stride, int64_t pad = 0) {
  OpAttrs a = conv_attrs(stride, pad);
  a.kernel[0] = a.kernel[1] = k;
  return a;
}

}  // namespace

TEST_CASE("source locations print as file:line:col and errors carry an indented excerpt") {
  CHECK(SourceLoc{"m.model", 3, 7}.to_string() == "m.model:3:7");
  CHECK(SourceLoc{"", 3, 7}.to_string() == "3:7");
  CHECK(SourceLoc{}.to_string() == "");
  const GraphError e({"m.model", 3, 7}, "unknown name 'W2'", "y = x @ W2\n        ^~");
  CHECK(std::string(e.what()) ==
        "m.model:3:7: error: unknown name 'W2'\n  y = x @ W2\n          ^~");
  CHECK(e.message() == "unknown name 'W2'");
  CHECK(e.loc().line == 3);
  CHECK(std::string(GraphError({}, "bad").what()) == "error: bad");
}

TEST_CASE("every op kind has its own name; elementwise and backward sets are as documented") {
  std::set<std::string> names;
  const int last = static_cast<int>(OpKind::LayerNormGammaGrad);
  for (int k = 0; k <= last; ++k) names.insert(op_kind_name(static_cast<OpKind>(k)));
  CHECK(names.size() == static_cast<size_t>(last + 1));
  CHECK(names.count("?") == 0);
  CHECK(std::string(op_kind_name(OpKind::Conv2D)) == "Conv2D");
  CHECK(is_elementwise(OpKind::Add));
  CHECK(is_elementwise(OpKind::ReLU));
  CHECK_FALSE(is_elementwise(OpKind::MatMul));
  CHECK_FALSE(is_elementwise(OpKind::Softmax));
  CHECK_FALSE(is_backward(OpKind::CrossEntropyLoss));
  CHECK(is_backward(OpKind::ReLUGrad));
  CHECK(is_backward(OpKind::SGDUpdate));
  CHECK(is_backward(OpKind::Slice));
  CHECK_FALSE(is_backward(OpKind::Scale));  // also the forward x * c
  CHECK(dtype_size(DType::F32) == 4);
  CHECK(dtype_size(DType::BF16) == 2);
  CHECK(dtype_size(DType::I8) == 1);
  CHECK(std::string(dtype_name(DType::F16)) == "fp16");
}

TEST_CASE("layout strides: row-major, NCHW, NHWC and transposed views") {
  CHECK(layout_strides({2, 3, 4, 5}, Layout::RowMajor) == std::vector<int64_t>{60, 20, 5, 1});
  CHECK(layout_strides({2, 3, 4, 5}, Layout::NCHW) == std::vector<int64_t>{60, 20, 5, 1});
  // NHWC stores N,H,W,C: C is contiguous, W steps over C, H over W*C, N over H*W*C.
  CHECK(layout_strides({2, 3, 4, 5}, Layout::NHWC) == std::vector<int64_t>{4 * 5 * 3, 1, 5 * 3, 3});
  // A [3, 4] transposed view is stored as [4, 3]: moving along dim 0 steps 1, along dim 1 steps 3.
  CHECK(layout_strides({3, 4}, Layout::Transposed) == std::vector<int64_t>{1, 3});
  CHECK(layout_strides({2, 3, 4}, Layout::Transposed) == std::vector<int64_t>{12, 1, 3});
  CHECK(error_of([] { layout_strides({3, 4, 5}, Layout::NHWC); }).find("4-D") != std::string::npos);
  CHECK(error_of([] {
          layout_strides({3, 4}, Layout::Strided);
        }).find("explicit") != std::string::npos);
  CHECK(shape_to_string({64, 1024}) == "[64, 1024]");
  CHECK(shape_to_string({}) == "[]");
  CHECK(shape_numel({}) == 1);
  CHECK(shape_numel({3, 4, 5}) == 60);
  CHECK_THROWS_AS(shape_numel({int64_t(1) << 40, int64_t(1) << 40}), GraphError);
}

TEST_CASE("tensors: strides follow the layout, bad shapes and duplicate names are errors") {
  Graph g;
  Tensor t;
  t.name = "img";
  t.shape = {1, 3, 8, 8};
  t.layout = Layout::NHWC;
  const TensorId id = g.add_tensor(t);
  CHECK(g.tensor(id).strides == std::vector<int64_t>{8 * 8 * 3, 1, 8 * 3, 3});
  CHECK(error_of([&] { g.add_tensor(t); }).find("already defined") != std::string::npos);
  Tensor z;
  z.name = "z";
  z.shape = {4, 0};
  z.loc = {"m.model", 2, 1};
  const std::string msg = error_of([&] { g.add_tensor(z); });
  CHECK(msg.find("m.model:2:1: error:") == 0);
  CHECK(msg.find("dim 1 is 0") != std::string::npos);
}

TEST_CASE(
    "MatMul: shapes with transpose flags and batch broadcasting; mismatch names op and shapes") {
  Graph g;
  const TensorId x = input(g, "x", {64, 1024});
  const TensorId w = weight(g, "W", {512, 1024});
  OpAttrs tb;
  tb.trans_b = true;
  CHECK(g.tensor(op(g, OpKind::MatMul, {x, w}, tb)).shape == Shape{64, 512});
  const TensorId a3 = input(g, "a3", {2, 1, 7, 3});
  const TensorId b3 = input(g, "b3", {5, 3, 4});
  CHECK(g.tensor(op(g, OpKind::MatMul, {a3, b3})).shape == Shape{2, 5, 7, 4});
  OpAttrs ta;
  ta.trans_a = true;
  const TensorId at = input(g, "at", {3, 7});
  CHECK(g.tensor(op(g, OpKind::MatMul, {at, b3}, ta)).shape == Shape{5, 7, 4});

  const TensorId bad = weight(g, "W2", {500, 1000});
  Op o;
  o.kind = OpKind::MatMul;
  o.name = "matmul9";
  o.inputs = {x, bad};
  o.attrs = tb;
  o.loc = {"m.model", 4, 9};
  const std::string msg = error_of([&] { g.add_op(o); });
  CHECK(msg ==
        "m.model:4:9: error: matmul9 (MatMul): inner dimensions differ: x [64, 1024] @ W2.T "
        "[1000, 500] needs 1024 == 1000");
  const TensorId v = input(g, "v", {5});
  CHECK(error_of([&] { op(g, OpKind::MatMul, {v, w}); }).find("rank >= 2") != std::string::npos);
}

TEST_CASE("Conv2D: output size, channels per group, and an output smaller than 1 are checked") {
  Graph g;
  const TensorId x = input(g, "x", {2, 4, 9, 11});
  const TensorId w = weight(g, "w", {6, 2, 3, 3});
  // P = (H + 2*pad - dil*(R-1) - 1)/stride + 1 = (9 + 2 - 4 - 1)/2 + 1 = 4; Q = (11+2-4-1)/2+1 = 5.
  const TensorId y = op(g, OpKind::Conv2D, {x, w}, conv_attrs(2, 1, 2, 2), "conv0");
  CHECK(g.tensor(y).shape == Shape{2, 6, 4, 5});
  CHECK(g.op(*g.find_op("conv0")).attrs.kernel[0] == 3);  // taken from the weight

  const TensorId w3 = weight(g, "w3", {6, 3, 3, 3});
  const std::string ch = error_of([&] { op(g, OpKind::Conv2D, {x, w3}, conv_attrs(1, 0), "c1"); });
  CHECK(ch.find("c1 (Conv2D)") != std::string::npos);
  CHECK(ch.find("w3 [6, 3, 3, 3]") != std::string::npos);
  CHECK(ch.find("x [2, 4, 9, 11]") != std::string::npos);
  CHECK(error_of([&] {
          op(g, OpKind::Conv2D, {x, w}, conv_attrs(1, 0, 1, 3));
        }).find("not divisible by groups=3") != std::string::npos);
  const TensorId big = weight(g, "big", {6, 4, 12, 3});
  CHECK(error_of([&] {
          op(g, OpKind::Conv2D, {x, big}, conv_attrs(1, 0));
        }).find("output height would be < 1") != std::string::npos);
  CHECK(error_of([&] {
          op(g, OpKind::Conv2D, {x, w}, conv_attrs(0, 0, 1, 2));
        }).find("stride height must be >= 1") != std::string::npos);
  // Absurd attributes are an error, not integer overflow.
  const OpAttrs huge_pad = conv_attrs(1, int64_t(1) << 62, 1, 2);
  CHECK(error_of([&] {
          op(g, OpKind::Conv2D, {x, w}, huge_pad);
        }).find("too large") != std::string::npos);
  const OpAttrs huge_dil = conv_attrs(1, 0, int64_t(1) << 62, 2);
  CHECK(error_of([&] {
          op(g, OpKind::Conv2D, {x, w}, huge_dil);
        }).find("too large") != std::string::npos);
}

TEST_CASE("broadcasting follows numpy rules") {
  Graph g;
  const TensorId a = input(g, "a", {4, 1, 3});
  const TensorId b = input(g, "b", {5, 1});
  CHECK(g.tensor(op(g, OpKind::Add, {a, b})).shape == Shape{4, 5, 3});
  const TensorId c = input(g, "c", {2, 3});
  const TensorId d = input(g, "d", {4});
  const std::string msg = error_of([&] { op(g, OpKind::Mul, {c, d}, {}, "mul7"); });
  CHECK(msg.find("mul7 (Mul): cannot broadcast c [2, 3] with d [4]") != std::string::npos);
  CHECK(msg.find("3 vs 4") != std::string::npos);
}

TEST_CASE("Reshape resolves one -1 and checks the element count") {
  Graph g;
  const TensorId x = input(g, "x", {2, 3, 4});
  OpAttrs r;
  r.shape = {4, -1};
  const TensorId y = op(g, OpKind::Reshape, {x}, r);
  CHECK(g.tensor(y).shape == Shape{4, 6});
  CHECK(g.op(g.tensor(y).producer).attrs.shape == Shape{4, 6});
  r.shape = {-1, -1};
  CHECK(error_of([&] { op(g, OpKind::Reshape, {x}, r); }).find("more than one -1") !=
        std::string::npos);
  r.shape = {5, 5};
  CHECK(error_of([&] { op(g, OpKind::Reshape, {x}, r); }).find("24 elements") != std::string::npos);
  r.shape = {5, -1};
  CHECK(error_of([&] { op(g, OpKind::Reshape, {x}, r); }).find("not divisible by 5") !=
        std::string::npos);
}

TEST_CASE("Transpose, Concat, Sum/Mean and Softmax check perms and axes") {
  Graph g;
  const TensorId x = input(g, "x", {2, 3, 4});
  OpAttrs t;
  t.perm = {2, 0, 1};
  CHECK(g.tensor(op(g, OpKind::Transpose, {x}, t)).shape == Shape{4, 2, 3});
  t.perm = {0, 0, 1};
  CHECK(error_of([&] { op(g, OpKind::Transpose, {x}, t); }).find("exactly once") !=
        std::string::npos);
  t.perm = {0, 1};
  CHECK(error_of([&] { op(g, OpKind::Transpose, {x}, t); }).find("perm has 2 entries") !=
        std::string::npos);

  const TensorId y = input(g, "y", {2, 5, 4});
  OpAttrs c;
  c.axis = -2;
  const TensorId cat = op(g, OpKind::Concat, {x, y, x}, c);
  CHECK(g.tensor(cat).shape == Shape{2, 11, 4});
  CHECK(g.op(g.tensor(cat).producer).attrs.axis == 1);
  c.axis = 2;
  CHECK(error_of([&] {
          op(g, OpKind::Concat, {x, y}, c);
        }).find("differ in dim 1") != std::string::npos);

  OpAttrs s;
  s.axes = {0, -1};
  CHECK(g.tensor(op(g, OpKind::Sum, {x}, s)).shape == Shape{3});
  s.keepdim = true;
  CHECK(g.tensor(op(g, OpKind::Mean, {x}, s)).shape == Shape{1, 3, 1});
  s.axes = {3};
  CHECK(error_of([&] { op(g, OpKind::Sum, {x}, s); }).find("out of range for rank 3") !=
        std::string::npos);
  OpAttrs all;
  CHECK(g.tensor(op(g, OpKind::Sum, {x}, all)).shape == Shape{});

  OpAttrs sm;
  sm.axis = -3;
  CHECK(g.tensor(op(g, OpKind::Softmax, {x}, sm)).shape == Shape{2, 3, 4});
  sm.axis = 3;
  CHECK(error_of([&] { op(g, OpKind::Softmax, {x}, sm); }).find("softmax axis 3") !=
        std::string::npos);
}

TEST_CASE("pooling, normalization, losses and activations infer shapes and reject misfits") {
  Graph g;
  const TensorId x = input(g, "x", {1, 3, 8, 7});
  CHECK(g.tensor(op(g, OpKind::MaxPool2D, {x}, pool_attrs(2, 2))).shape == Shape{1, 3, 4, 3});
  CHECK(g.tensor(op(g, OpKind::AvgPool2D, {x}, pool_attrs(3, 1, 1))).shape == Shape{1, 3, 8, 7});
  CHECK(error_of([&] {
          op(g, OpKind::MaxPool2D, {x}, pool_attrs(2, 2, 2));
        }).find("at most half the kernel") != std::string::npos);
  CHECK(error_of([&] {
          op(g, OpKind::MaxPool2D, {x}, pool_attrs(0, 1));
        }).find("kernel height must be >= 1") != std::string::npos);

  const TensorId s = weight(g, "s", {3}), b = weight(g, "b", {3}), m = weight(g, "m", {3});
  const TensorId v4 = weight(g, "v4", {4});
  CHECK(g.tensor(op(g, OpKind::BatchNorm, {x, s, b, m, s})).shape == Shape{1, 3, 8, 7});
  CHECK(error_of([&] {
          op(g, OpKind::BatchNorm, {x, s, b, m, v4});
        }).find("v4 [4] must be [3]") != std::string::npos);
  CHECK(error_of([&] {
          op(g, OpKind::BatchNorm, {x, s, b});
        }).find("needs 5 inputs, got 3") != std::string::npos);
  const TensorId gm = weight(g, "gm", {7});
  CHECK(g.tensor(op(g, OpKind::LayerNorm, {x, gm, gm})).shape == Shape{1, 3, 8, 7});
  CHECK(error_of([&] { op(g, OpKind::LayerNorm, {x, s, s}); }).find("gamma") != std::string::npos);

  for (OpKind k : {OpKind::ReLU, OpKind::ReLU6, OpKind::GELU, OpKind::Sigmoid, OpKind::Tanh})
    CHECK(g.tensor(op(g, k, {x})).shape == Shape{1, 3, 8, 7});

  const TensorId logits = input(g, "logits", {5, 10});
  const TensorId labels = input(g, "labels", {5});
  const TensorId wrong = input(g, "wrong", {10});
  CHECK(g.tensor(op(g, OpKind::CrossEntropyLoss, {logits, labels})).shape == Shape{});
  CHECK(error_of([&] {
          op(g, OpKind::CrossEntropyLoss, {logits, wrong});
        }).find("target wrong [10] must be [5]") != std::string::npos);
  CHECK(g.tensor(op(g, OpKind::MSELoss, {logits, logits})).shape == Shape{});
  CHECK(error_of([&] {
          op(g, OpKind::MSELoss, {logits, labels});
        }).find("same shape") != std::string::npos);
}

TEST_CASE("backward helpers infer the shapes they are given and check them") {
  Graph g;
  const TensorId x = input(g, "x", {2, 4, 9, 11});
  const TensorId w = weight(g, "w", {6, 2, 3, 3});
  const TensorId dy = input(g, "dy", {2, 6, 4, 5});
  OpAttrs a = conv_attrs(2, 1, 2, 2);
  a.shape = {2, 4, 9, 11};
  CHECK(g.tensor(op(g, OpKind::Conv2DGradInput, {dy, w}, a)).shape == Shape{2, 4, 9, 11});
  a.shape = {6, 2, 3, 3};
  CHECK(g.tensor(op(g, OpKind::Conv2DGradWeight, {x, dy}, a)).shape == Shape{6, 2, 3, 3});
  a.shape = {2, 4, 11, 11};  // P = (11 + 2 - 4 - 1)/2 + 1 = 5, but dy has 4
  CHECK(error_of([&] {
          op(g, OpKind::Conv2DGradInput, {dy, w}, a);
        }).find("must match the conv output") != std::string::npos);

  const TensorId big = input(g, "big", {4, 5, 3});
  OpAttrs r;
  r.shape = {5, 1};
  CHECK(g.tensor(op(g, OpKind::ReduceToShape, {big}, r)).shape == Shape{5, 1});
  r.shape = {4, 1};
  CHECK(error_of([&] { op(g, OpKind::ReduceToShape, {big}, r); }).find("does not broadcast") !=
        std::string::npos);
  OpAttrs b;
  b.shape = {2, 4, 5, 3};
  CHECK(g.tensor(op(g, OpKind::BroadcastTo, {big}, b)).shape == Shape{2, 4, 5, 3});
  OpAttrs sl;
  sl.shape = {2, 2, 3};
  sl.starts = {1, 3, 0};
  CHECK(g.tensor(op(g, OpKind::Slice, {big}, sl)).shape == Shape{2, 2, 3});
  sl.starts = {1, 4, 0};
  CHECK(error_of([&] {
          op(g, OpKind::Slice, {big}, sl);
        }).find("slice of dim 1 starting at 4 with size 2 is outside big [4, 5, 3]") !=
        std::string::npos);
}

TEST_CASE("graph queries: find, consumers, inputs, outputs, unique names") {
  Graph g;
  const TensorId x = input(g, "x", {4, 8});
  const TensorId w = weight(g, "W", {3, 8});
  OpAttrs tb;
  tb.trans_b = true;
  const TensorId y = op(g, OpKind::MatMul, {x, w}, tb);
  const TensorId r = op(g, OpKind::ReLU, {y});
  const TensorId s = op(g, OpKind::Sigmoid, {y});
  CHECK(g.op(g.tensor(y).producer).name == "matmul0");  // default name: lower-case kind + index
  CHECK(g.tensor(y).name == "matmul0");
  CHECK(g.find_tensor("W") == w);
  CHECK_FALSE(g.find_tensor("nope"));
  CHECK(g.consumers(y) == std::vector<OpId>{1, 2});
  CHECK(g.graph_inputs() == std::vector<TensorId>{x, w});
  CHECK(g.graph_outputs() == std::vector<TensorId>{r, s});
  CHECK(g.unique_op_name("matmul") == "matmul1");
  CHECK(g.unique_tensor_name("relu") == "relu1");
  CHECK(error_of([&] { op(g, OpKind::ReLU, {x}, {}, "matmul0"); }).find("already exists") !=
        std::string::npos);
  CHECK(error_of([&] { op(g, OpKind::ReLU, {42}); }).find("does not exist") != std::string::npos);
}

TEST_CASE("costs of the small CNN match the hand counts") {
  // input [1,3,224,224] → Conv2d(3,16,k=3,p=1) → +bias → ReLU → MaxPool(2) → Flatten → Linear(→10)
  Graph g;
  const TensorId x = input(g, "x", {1, 3, 224, 224});
  const TensorId w0 = weight(g, "0.weight", {16, 3, 3, 3});
  const TensorId b0 = weight(g, "0.bias", {1, 16, 1, 1});
  const TensorId c = op(g, OpKind::Conv2D, {x, w0}, conv_attrs(1, 1), "conv0");
  const TensorId cb = op(g, OpKind::Add, {c, b0}, {}, "conv0_bias");
  const TensorId r = op(g, OpKind::ReLU, {cb}, {}, "relu1");
  const TensorId p = op(g, OpKind::MaxPool2D, {r}, pool_attrs(2, 2), "pool2");
  OpAttrs flat;
  flat.shape = {1, -1};
  const TensorId f = op(g, OpKind::Reshape, {p}, flat, "flatten3");
  const TensorId w4 = weight(g, "4.weight", {10, 16 * 112 * 112});
  OpAttrs tb;
  tb.trans_b = true;
  op(g, OpKind::MatMul, {f, w4}, tb, "linear4");

  const OpCost conv = g.op_cost(0);
  CHECK(conv.flops == 2LL * 16 * 224 * 224 * 3 * 3 * 3);
  CHECK(conv.flops == 43352064);
  CHECK(conv.bytes_read == 4LL * (3 * 224 * 224 + 16 * 3 * 3 * 3));
  CHECK(conv.bytes_written == 4LL * 16 * 224 * 224);
  const OpCost bias = g.op_cost(1);
  CHECK(bias.flops == 16LL * 224 * 224);
  CHECK(bias.flops == 802816);
  CHECK(bias.bytes_read == 4LL * (16 * 224 * 224 + 16));
  CHECK(g.op_cost(2).flops == 16LL * 224 * 224);          // one max per element
  CHECK(g.op_cost(3).flops == 16LL * 112 * 112 * 2 * 2);  // 4 compares per output
  CHECK(g.op_cost(4).flops == 0);
  CHECK(g.op_cost(4).bytes() == 0);  // a view of a contiguous tensor
  const OpCost lin = g.op_cost(5);
  CHECK(lin.flops == 2LL * 1 * 10 * 16 * 112 * 112);
  CHECK(lin.flops == 4014080);
  CHECK(lin.intensity() == doctest::Approx(double(lin.flops) / double(lin.bytes())));
  const OpCost total = g.total_cost();
  int64_t sum = 0;
  for (OpId i = 0; i < 6; ++i) sum += g.op_cost(i).flops;
  CHECK(total.flops == sum);
  (void)f;
}

TEST_CASE("cost table: per-element counts, reads of a repeated input counted once") {
  Graph g;
  const TensorId x = input(g, "x", {6, 10});
  const int64_t n = 60;
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Sigmoid, {x})).producer).flops == 4 * n);
  CHECK(g.op_cost(g.tensor(op(g, OpKind::GELU, {x})).producer).flops == 9 * n);
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Tanh, {x})).producer).flops == n);
  CHECK(g.op_cost(g.tensor(op(g, OpKind::ReLU6, {x})).producer).flops == 2 * n);  // max, min
  OpAttrs sm;
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Softmax, {x}, sm)).producer).flops == 5 * n);
  const TensorId gm = weight(g, "gm", {10});
  CHECK(g.op_cost(g.tensor(op(g, OpKind::LayerNorm, {x, gm, gm})).producer).flops == 8 * n + 3 * 6);
  const OpCost sq = g.op_cost(g.tensor(op(g, OpKind::Mul, {x, x})).producer);
  CHECK(sq.bytes_read == 4 * n);  // x read once even though it is both operands
  CHECK(sq.bytes_written == 4 * n);
  OpAttrs t;
  t.perm = {1, 0};
  const OpCost tr = g.op_cost(g.tensor(op(g, OpKind::Transpose, {x}, t)).producer);
  CHECK(tr.flops == 0);
  CHECK(tr.bytes() == 2 * 4 * n);
  OpAttrs s;
  s.axes = {1};
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Sum, {x}, s)).producer).flops == n - 6);
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Mean, {x}, s)).producer).flops == n);
  CHECK(g.op_cost(g.tensor(op(g, OpKind::MSELoss, {x, x})).producer).flops == 3 * n + 1);
  const TensorId lab = input(g, "lab", {6});
  CHECK(g.op_cost(g.tensor(op(g, OpKind::CrossEntropyLoss, {x, lab})).producer).flops ==
        4 * n + 4 * 6 + 1);

  // A Reshape of a non-contiguous (NHWC) tensor really copies.
  Tensor img;
  img.name = "img";
  img.shape = {1, 2, 3, 4};
  img.layout = Layout::NHWC;
  const TensorId im = g.add_tensor(img);
  OpAttrs flat;
  flat.shape = {1, -1};
  CHECK(g.op_cost(g.tensor(op(g, OpKind::Reshape, {im}, flat)).producer).bytes() == 2 * 4 * 24);
}

TEST_CASE("an op whose FLOP count overflows 64 bits is rejected when added") {
  Graph g;
  const TensorId a = input(g, "a", {int64_t(1) << 20, int64_t(1) << 20});
  const TensorId b = input(g, "b", {int64_t(1) << 20, int64_t(1) << 20});
  // 2 * 2^20 * 2^20 * 2^20 = 2^61 fits; a K of 2^24 would not. Use a taller inner dim instead.
  CHECK(g.op_cost(g.tensor(op(g, OpKind::MatMul, {a, b})).producer).flops == int64_t(1) << 61);
  const TensorId c = input(g, "c", {int64_t(1) << 20, int64_t(1) << 22});
  const TensorId d = input(g, "d", {int64_t(1) << 22, int64_t(1) << 20});
  CHECK(error_of([&] {
          op(g, OpKind::MatMul, {c, d});
        }).find("does not fit in 64 bits") != std::string::npos);
  CHECK(g.ops().size() == 1);  // the failed op left nothing behind
}

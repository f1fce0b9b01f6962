// Model-language tests for well-formed models: both forms lower to the ops, shapes, names and costs
// the language promises; expected numbers come from hand formulas written here.
#include "build_paths.h"
#include "sim/lang/parser.h"
#include "sim/pipeline.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <limits>
#include <string>

using namespace tilescope::graph;
using namespace tilescope::lang;

namespace {

// A model file through the pipeline's loader (sim/pipeline.h reads files; the graph room parses).
Graph parse_model_file(const std::string& path) {
  return *tilescope::pipeline::parse(tilescope::pipeline::read_model_file(path));
}

const Op& op_named(const Graph& g, const std::string& name) {
  auto id = g.find_op(name);
  REQUIRE_MESSAGE(id.has_value(), "no op named " << name);
  return g.op(*id);
}

const Tensor& tensor_named(const Graph& g, const std::string& name) {
  auto id = g.find_tensor(name);
  REQUIRE_MESSAGE(id.has_value(), "no tensor named " << name);
  return g.tensor(*id);
}

OpCost cost_of(const Graph& g, const std::string& op) {
  return g.op_cost(*g.find_op(op));
}

const Tensor& output_of(const Graph& g, const Op& op) {
  return g.tensor(op.outputs.at(0));
}

}  // namespace

TEST_CASE("form 1: the default model is relu(x @ W.T + b) with W.T folded into the matmul") {
  Graph g = parse_model(default_model_text());
  REQUIRE(g.ops().size() == 3);
  const Op& mm = g.ops()[0];
  CHECK(mm.kind == OpKind::MatMul);
  CHECK_FALSE(mm.attrs.trans_a);
  CHECK(mm.attrs.trans_b);  // `.T` feeding a matmul is a flag, not a Transpose op
  CHECK(g.tensor(mm.inputs[0]).name == "x");
  CHECK(g.tensor(mm.inputs[1]).name == "W");
  CHECK(g.ops()[1].kind == OpKind::Add);
  CHECK(g.ops()[2].kind == OpKind::ReLU);
  const Tensor& y = output_of(g, g.ops()[2]);
  CHECK(y.name == "y");  // the assigned name names the final op's output
  CHECK(y.shape == Shape{64, 512});
  CHECK(tensor_named(g, "W").role == Role::Weight);
  CHECK(tensor_named(g, "b").role == Role::Weight);
  CHECK(tensor_named(g, "x").role == Role::Input);  // input by default
  // 64 x 512 outputs, each a 1024-long dot product of multiply-adds (2 FLOPs each).
  CHECK(g.op_cost(0).flops == int64_t{2} * 64 * 512 * 1024);
  CHECK(g.op_cost(1).flops == int64_t{64} * 512);
}

TEST_CASE("form 2: the CNN example lowers with PyTorch names and the documented FLOP counts") {
  const char* text =
      "input [1, 3, 224, 224]\n"
      "Conv2d(3, 16, kernel_size=3, stride=1, padding=1)\n"
      "ReLU()\n"
      "MaxPool2d(kernel_size=2, stride=2)\n"
      "Flatten()\n"
      "Linear(in_features=16*112*112, out_features=10)\n";
  Graph g = parse_model(text, "cnn.model");
  // Layer i's ops are named after PyTorch's index in the Sequential.
  const Op& conv = op_named(g, "conv0");
  const Op& bias = op_named(g, "conv0_bias");
  const Op& linear = op_named(g, "linear4");
  CHECK(conv.kind == OpKind::Conv2D);
  CHECK(bias.kind == OpKind::Add);
  CHECK(op_named(g, "relu1").kind == OpKind::ReLU);
  CHECK(op_named(g, "maxpool2").kind == OpKind::MaxPool2D);
  CHECK(op_named(g, "flatten3").kind == OpKind::Reshape);
  CHECK(linear.kind == OpKind::MatMul);
  CHECK(linear.attrs.trans_b);  // Linear is x @ W.T with W stored [out, in]
  CHECK(op_named(g, "linear4_bias").kind == OpKind::Add);
  CHECK(g.ops().size() == 7);

  CHECK(tensor_named(g, "0.weight").shape == Shape{16, 3, 3, 3});
  CHECK(tensor_named(g, "0.bias").shape == Shape{1, 16, 1, 1});
  CHECK(tensor_named(g, "4.weight").shape == Shape{10, 16 * 112 * 112});
  CHECK(tensor_named(g, "4.bias").shape == Shape{10});
  CHECK(tensor_named(g, "0.weight").role == Role::Weight);
  CHECK(output_of(g, conv).shape == Shape{1, 16, 224, 224});
  CHECK(output_of(g, op_named(g, "maxpool2")).shape == Shape{1, 16, 112, 112});
  CHECK(output_of(g, op_named(g, "flatten3")).shape == Shape{1, 16 * 112 * 112});
  CHECK(output_of(g, op_named(g, "linear4_bias")).shape == Shape{1, 10});

  CHECK(conv.attrs.kernel[0] == 3);
  CHECK(conv.attrs.padding[1] == 1);
  CHECK(conv.origin == "Conv2d(3, 16, kernel_size=3, stride=1, padding=1)");
  CHECK(bias.origin == conv.origin);
  CHECK(conv.loc.line == 2);
  CHECK(conv.loc.col == 1);
  CHECK(conv.loc.file == "cnn.model");

  // Conv: N*K*P*Q outputs, each C*R*S multiply-adds.
  const int64_t conv_flops = int64_t{2} * 1 * 16 * 224 * 224 * 3 * 3 * 3;
  CHECK(conv_flops == 43352064);
  CHECK(cost_of(g, "conv0").flops == conv_flops);
  // Bias add: one add per output element.
  CHECK(cost_of(g, "conv0_bias").flops == int64_t{1} * 16 * 224 * 224);
  CHECK(cost_of(g, "conv0_bias").flops == 802816);
  // Linear: 10 outputs, each a dot product of 16*112*112 multiply-adds.
  const int64_t linear_flops = int64_t{2} * 1 * 10 * (16 * 112 * 112);
  CHECK(linear_flops == 4014080);
  CHECK(cost_of(g, "linear4").flops == linear_flops);
}

TEST_CASE("form 2: nn.Sequential with nn. prefixes, trailing commas, comments and a name") {
  const char* text =
      "# LeNet-ish\n"
      "input [8, 1, 28, 28]\n"
      "model = nn.Sequential(\n"
      "    nn.Conv2d(1, 6, kernel_size=(5, 5), padding=2),  # keeps 28 x 28\n"
      "    nn.ReLU(inplace=True),\n"
      "    torch.nn.AvgPool2d(2),\n"
      "    nn.Dropout(0.25),\n"
      "    nn.Flatten(),\n"
      "    nn.Linear(6 * 14 * 14, 10, bias=False),\n"
      ")\n";
  Graph g = parse_model(text);
  // Dropout is the identity at inference: no op, but it still takes index 3.
  // conv0 + conv0_bias, relu1, avgpool2, flatten4, linear5.
  CHECK(g.ops().size() == 6);
  CHECK(g.find_op("avgpool2"));
  CHECK(g.find_op("flatten4"));
  CHECK(g.find_op("linear5"));
  CHECK_FALSE(g.find_op("linear5_bias"));  // bias=False
  CHECK_FALSE(g.find_tensor("5.bias"));
  CHECK(output_of(g, op_named(g, "avgpool2")).shape == Shape{8, 6, 14, 14});
  CHECK(output_of(g, op_named(g, "linear5")).shape == Shape{8, 10});
  CHECK(tensor_named(g, "0.weight").shape == Shape{6, 1, 5, 5});
  CHECK(op_named(g, "conv0").origin == "nn.Conv2d(1, 6, kernel_size=(5, 5), padding=2)");
}

TEST_CASE("ReLU6: nn.ReLU6 and relu6 / F.relu6 lower to one ReLU6 op each") {
  Graph layers = parse_model("input [2, 8]\nLinear(8, 4)\nReLU6(inplace=True)\n");
  CHECK(layers.ops().back().kind == OpKind::ReLU6);
  CHECK(layers.ops().back().origin == "ReLU6(inplace=True)");
  Graph calls = parse_model("x: [2, 8]\nh = relu6(x)\ny = F.relu6(h)\n");
  REQUIRE(calls.ops().size() == 2);
  CHECK(calls.ops()[0].kind == OpKind::ReLU6);
  CHECK(calls.ops()[1].kind == OpKind::ReLU6);
}

TEST_CASE("narrow(x, dim, start, length): a slice along one dimension, checked") {
  Graph g = parse_model("x: [2, 12]\nq = narrow(x, -1, 4, 4)\n");
  const Op& s = g.ops().at(0);
  CHECK(s.kind == OpKind::Slice);
  CHECK(s.attrs.starts == std::vector<int64_t>{0, 4});
  CHECK(output_of(g, s).shape == Shape{2, 4});
  try {
    parse_model("x: [2, 12]\nq = narrow(x, 1, 10, 4)\n");
    FAIL("a slice past the end parsed");
  } catch (const GraphError& e) {
    CHECK(std::string(e.what()).find("2:22: error: length must be at most 2, got 4") !=
          std::string::npos);
  }
}

TEST_CASE("form 2: layers outside Sequential may end with commas, and every layer kind lowers") {
  const char* text =
      "input [2, 4, 16, 16] fp16\n"
      "Conv2d(4, 8, (3, 1), stride=(2, 1), padding=(1, 0), groups=2),\n"
      "BatchNorm2d(8, eps=1e-3)\n"
      "GELU(approximate='tanh')\n"
      "MaxPool2d(3, stride=1, padding=1)\n"
      "Conv2d(8, 8, 3, padding='same', dilation=2, bias=False)\n"
      "Sigmoid()\n"
      "Tanh()\n"
      "Flatten(start_dim=2)\n"
      "LayerNorm(8 * 16)\n"
      "Softmax(dim=-1)\n"
      "Identity()\n";
  Graph g = parse_model(text);
  const Op& conv = op_named(g, "conv0");
  CHECK(conv.attrs.kernel[0] == 3);
  CHECK(conv.attrs.kernel[1] == 1);
  CHECK(conv.attrs.stride[0] == 2);
  CHECK(conv.attrs.groups == 2);
  CHECK(tensor_named(g, "0.weight").shape == Shape{8, 2, 3, 1});
  CHECK(tensor_named(g, "0.weight").dtype == DType::F16);  // weights follow the input's dtype
  // H: (16 + 2*1 - 3) / 2 + 1 = 8; W: (16 - 1) / 1 + 1 = 16.
  CHECK(output_of(g, conv).shape == Shape{2, 8, 8, 16});
  const Op& bn = op_named(g, "batchnorm1");
  CHECK(bn.inputs.size() == 5);
  CHECK(bn.attrs.eps == doctest::Approx(1e-3));
  CHECK(tensor_named(g, "1.running_var").shape == Shape{8});
  CHECK(op_named(g, "maxpool3").attrs.stride[0] == 1);
  const Op& dilated = op_named(g, "conv4");
  // 'same' with kernel 3 and dilation 2: (3 - 1) * 2 / 2 = 2 on each side.
  CHECK(dilated.attrs.padding[0] == 2);
  CHECK(output_of(g, dilated).shape == Shape{2, 8, 8, 16});
  CHECK(output_of(g, op_named(g, "flatten7")).shape == Shape{2, 8, 8 * 16});
  CHECK(op_named(g, "layernorm8").kind == OpKind::LayerNorm);
  CHECK(op_named(g, "softmax9").attrs.axis == 2);  // -1 of a 3-D tensor
  CHECK(g.ops().size() == 11);                     // conv0 has a bias Add; Identity makes no op
}

TEST_CASE("attention(q, k, v) is the explicit pattern softmax(q @ k.T * scale) @ v, op for op") {
  const std::string decls = "q: [128, 64] fp16\nk: [256, 64] fp16\nv: [256, 32] fp16\n";
  Graph sugar = parse_model(decls + "o = attention(q, k, v)\n");
  Graph explicit_form = parse_model(decls + "o = softmax(q @ k.T * 0.125) @ v\n");
  REQUIRE(sugar.ops().size() == 4);
  REQUIRE(explicit_form.ops().size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    const Op &a = sugar.ops()[i], &b = explicit_form.ops()[i];
    CHECK(a.name == b.name);
    CHECK(a.kind == b.kind);
    CHECK(a.attrs.trans_b == b.attrs.trans_b);
    CHECK(a.attrs.alpha == doctest::Approx(b.attrs.alpha));
  }
  CHECK(op_named(sugar, "matmul0").attrs.trans_b);
  CHECK(op_named(sugar, "scale0").attrs.alpha == doctest::Approx(1.0 / 8.0));  // 1/√64
  CHECK(tensor_named(sugar, "o").shape == Shape{128, 32});
  // PyTorch's spelling, with its scale keyword.
  Graph torch_form =
      parse_model(decls + "o = F.scaled_dot_product_attention(q, k, v, scale=0.5)\n");
  CHECK(op_named(torch_form, "scale0").attrs.alpha == doctest::Approx(0.5));
}

TEST_CASE(
    "causal attention puts a causal mask between the scale and the softmax, as written by hand") {
  const std::string decls = "q: [128, 64] fp16\nk: [128, 64] fp16\nv: [128, 32] fp16\n";
  Graph sugar = parse_model(decls + "o = attention(q, k, v, causal=True)\n");
  Graph explicit_form = parse_model(decls + "o = softmax(causal_mask(q @ k.T * 0.125)) @ v\n");
  const std::vector<OpKind> kinds = {OpKind::MatMul, OpKind::Scale, OpKind::CausalMask,
                                     OpKind::Softmax, OpKind::MatMul};
  REQUIRE(sugar.ops().size() == 5);
  REQUIRE(explicit_form.ops().size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(sugar.ops()[i].kind == kinds[i]);
    CHECK(explicit_form.ops()[i].kind == kinds[i]);
    CHECK(sugar.ops()[i].name == explicit_form.ops()[i].name);
  }
  CHECK(op_named(sugar, "mask0").attrs.alpha == -std::numeric_limits<double>::infinity());
  CHECK(parse_model(decls + "o = F.scaled_dot_product_attention(q, k, v, is_causal=False)\n")
            .ops()
            .size() == 4);
}

TEST_CASE("form 1: intermediates become tensors, constants and arithmetic size shapes") {
  const char* text =
      "N = 4\n"
      "D = 2 * 8\n"
      "x: [N, D] fp16\n"
      "W: [D // 2, D] weight fp16\n"
      "h = torch.relu(x @ W.T) * 0.5\n"
      "z = F.softmax(h, dim=1)\n"
      "s = z.sum(dim=-1, keepdim=True)\n"
      "t = W.T\n";
  Graph g = parse_model(text);
  CHECK(tensor_named(g, "x").shape == Shape{4, 16});
  CHECK(tensor_named(g, "x").dtype == DType::F16);
  CHECK(tensor_named(g, "W").shape == Shape{8, 16});
  const Tensor& h = tensor_named(g, "h");
  CHECK(h.shape == Shape{4, 8});
  const Op& scale = g.op(h.producer);
  CHECK(scale.kind == OpKind::Scale);
  CHECK(scale.attrs.alpha == doctest::Approx(0.5));
  // The matmul and relu results are named after their ops.
  const Tensor& relu_out = g.tensor(scale.inputs[0]);
  CHECK(g.op(relu_out.producer).kind == OpKind::ReLU);
  CHECK(relu_out.name == g.op(relu_out.producer).name);
  CHECK(g.op(tensor_named(g, "z").producer).attrs.axis == 1);
  const Op& sum = g.op(tensor_named(g, "s").producer);
  CHECK(sum.kind == OpKind::Sum);
  CHECK(sum.attrs.axes == std::vector<int>{1});
  CHECK(sum.attrs.keepdim);
  CHECK(tensor_named(g, "s").shape == Shape{4, 1});
  // `.T` that does not feed a matmul is a real Transpose.
  const Op& tr = g.op(tensor_named(g, "t").producer);
  CHECK(tr.kind == OpKind::Transpose);
  CHECK(tr.attrs.perm == std::vector<int>{1, 0});
  CHECK(tensor_named(g, "t").shape == Shape{16, 8});
}

TEST_CASE("form 1: a transposed left operand and both-transposed matmul set both flags") {
  Graph g = parse_model(
      "A: [32, 8]\n"
      "B: [16, 32]\n"
      "C = A.T @ B.T\n"
      "D = matmul(A.T, B.T.T.T)\n");
  const Op& c = g.op(tensor_named(g, "C").producer);
  CHECK(c.attrs.trans_a);
  CHECK(c.attrs.trans_b);
  CHECK(tensor_named(g, "C").shape == Shape{8, 16});
  const Op& d = g.op(tensor_named(g, "D").producer);
  CHECK(d.attrs.trans_a);
  CHECK(d.attrs.trans_b);      // three .T are one
  CHECK(g.ops().size() == 2);  // no Transpose ops at all
}

TEST_CASE("form 1: conv2d with a [K] bias reshapes it to [1, K, 1, 1]; pools, concat, permute") {
  const char* text =
      "x: [2, 3, 32, 32] nchw\n"
      "w: [8, 3, 5, 5] weight\n"
      "b: [8] weight\n"
      "c = conv2d(x, w, b, stride=1, padding=2)\n"
      "p = max_pool2d(c, kernel_size=2, stride=2)\n"
      "q = F.avg_pool2d(c, 2)\n"
      "cat = concat([p, q], dim=1)\n"
      "f = torch.flatten(cat, 1)\n"
      "r = cat.permute(0, 2, 3, 1)\n"
      "v = reshape(r, [2, -1])\n"
      "m = mean(r, dim=[1, 2])\n"
      "t = transpose(r, 0, -1)\n";
  Graph g = parse_model(text);
  CHECK(tensor_named(g, "x").layout == Layout::NCHW);
  const Op& add = g.op(tensor_named(g, "c").producer);
  CHECK(add.kind == OpKind::Add);
  const Tensor& bias_view = g.tensor(add.inputs[1]);
  CHECK(bias_view.shape == Shape{1, 8, 1, 1});
  CHECK(g.op(bias_view.producer).kind == OpKind::Reshape);
  CHECK(tensor_named(g, "c").shape == Shape{2, 8, 32, 32});
  CHECK(tensor_named(g, "p").shape == Shape{2, 8, 16, 16});
  CHECK(tensor_named(g, "q").shape == Shape{2, 8, 16, 16});
  CHECK(tensor_named(g, "cat").shape == Shape{2, 16, 16, 16});
  CHECK(tensor_named(g, "f").shape == Shape{2, 16 * 16 * 16});
  CHECK(tensor_named(g, "r").shape == Shape{2, 16, 16, 16});
  CHECK(g.op(tensor_named(g, "r").producer).attrs.perm == std::vector<int>{0, 2, 3, 1});
  CHECK(tensor_named(g, "v").shape == Shape{2, 16 * 16 * 16});
  CHECK(tensor_named(g, "m").shape == Shape{2, 16});
  CHECK(tensor_named(g, "t").shape == Shape{16, 16, 16, 2});
  // Conv FLOPs: 2 * N*K*P*Q * C*R*S.
  CHECK(g.op_cost(*g.find_op("conv0")).flops == int64_t{2} * 2 * 8 * 32 * 32 * 3 * 5 * 5);
}

TEST_CASE("form 1: layer_norm and batch_norm in both spellings, subtraction and negation") {
  const char* text =
      "x: [4, 64]\n"
      "g: [64] weight\n"
      "b: [64] weight\n"
      "a = layer_norm(x, g, b, eps=1e-6)\n"
      "a2 = F.layer_norm(x, [64], weight=g, bias=b)\n"
      "d = a - a2\n"
      "n = -d\n"
      "i: [2, 3, 4, 4]\n"
      "s: [3] weight\n"
      "t: [3] weight\n"
      "mu: [3] weight\n"
      "var: [3] weight\n"
      "bn = batch_norm(i, s, t, mu, var)\n"
      "bn2 = F.batch_norm(i, mu, var, s, t, eps=0.001)\n";
  Graph g = parse_model(text);
  CHECK(g.op(tensor_named(g, "a").producer).attrs.eps == doctest::Approx(1e-6));
  CHECK(g.op(tensor_named(g, "a2").producer).kind == OpKind::LayerNorm);
  CHECK(g.op(tensor_named(g, "d").producer).kind == OpKind::Sub);
  const Op& neg = g.op(tensor_named(g, "n").producer);
  CHECK(neg.kind == OpKind::Scale);
  CHECK(neg.attrs.alpha == doctest::Approx(-1.0));
  // Both spellings feed BatchNorm as (x, scale, shift, mean, var).
  for (const char* name : {"bn", "bn2"}) {
    const Op& bn = g.op(tensor_named(g, name).producer);
    REQUIRE(bn.inputs.size() == 5);
    CHECK(g.tensor(bn.inputs[1]).name == "s");
    CHECK(g.tensor(bn.inputs[2]).name == "t");
    CHECK(g.tensor(bn.inputs[3]).name == "mu");
    CHECK(g.tensor(bn.inputs[4]).name == "var");
  }
}

TEST_CASE("generated names never take a name the model declares later") {
  // matmul0 is the user's name; the generated matmul must pick another.
  Graph g = parse_model(
      "x: [2, 2]\n"
      "y = x @ x + x\n"
      "matmul0 = relu(y)\n");
  const Tensor& user = tensor_named(g, "matmul0");
  REQUIRE(user.producer >= 0);
  CHECK(g.op(user.producer).kind == OpKind::ReLU);
  CHECK(g.ops()[0].kind == OpKind::MatMul);
  CHECK(output_of(g, g.ops()[0]).name != "matmul0");
}

TEST_CASE("form detection: line continuations, CRLF line ends and tabs") {
  Graph g = parse_model("x: [2,\r\n 3]\r\ny = \\\r\n\trelu(x)\r\n");
  CHECK(g.ops().size() == 1);
  CHECK(tensor_named(g, "y").shape == Shape{2, 3});
}

TEST_CASE("every example model in assets/models parses") {
  int count = 0;
  // TILESCOPE_SOURCE_DIR: the repo root, so the test also runs outside CTest's working directory.
  const std::string models = std::string(TILESCOPE_SOURCE_DIR) + "/assets/models";
  for (const auto& entry : std::filesystem::directory_iterator(models)) {
    if (entry.path().extension() != ".model") continue;
    CAPTURE(entry.path().string());
    Graph g = parse_model_file(entry.path().string());
    CHECK_FALSE(g.ops().empty());
    ++count;
  }
  CHECK(count >= 5);
  // The LeNet example by hand: 28 → conv5/pad2 28 → pool 14 → conv5 10 → pool 5; 16*5*5 = 400.
  Graph lenet = parse_model_file(models + "/lenet.model");
  // Indices as PyTorch numbers them: 3 = second Conv2d, 7 = first Linear, 12 = the last.
  CHECK(tensor_named(lenet, "3.weight").shape == Shape{16, 6, 5, 5});
  CHECK(tensor_named(lenet, "7.weight").shape == Shape{120, 16 * 5 * 5});
  CHECK(output_of(lenet, op_named(lenet, "avgpool5")).shape == Shape{32, 16, 5, 5});
  CHECK(output_of(lenet, op_named(lenet, "linear12_bias")).shape == Shape{32, 10});
}

TEST_CASE("a missing model file is a GraphError naming the file") {
  CHECK_THROWS_AS(parse_model_file("assets/models/no_such_file.model"), GraphError);
  try {
    parse_model_file("assets/models/no_such_file.model");
  } catch (const GraphError& e) {
    CHECK(std::string(e.what()).find("no_such_file.model") != std::string::npos);
  }
}

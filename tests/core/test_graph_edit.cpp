// The graph palette's text edits (app/core/graph_edit.h): each edit checked against the text
// written out by hand here, refusals leave the text unchanged and carry the parser's message, and
// the `palette ...` script commands drive the same edits through the AppState.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/graph_edit.h"
#include "sim/lang/parser.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace tilescope::core;

namespace {

// One fully connected layer (the default example without its comment line).
const std::string kLayer =
    "x: [64, 1024]\n"
    "W: [512, 1024] weight\n"
    "b: [512] weight\n"
    "y = relu(x @ W.T + b)\n";

// The message parse_model gives for `text` ("" when it parses).
std::string parser_message(const std::string& text) {
  try {
    tilescope::lang::parse_model(text);
  } catch (const tilescope::graph::GraphError& e) {
    return e.message();
  }
  return {};
}

}  // namespace

TEST_CASE("the outline lists named lines, their lines and what they use") {
  const ModelOutline o = outline_model("# a comment\n" + kLayer);
  REQUIRE(o.error.empty());
  CHECK(o.expressions);
  REQUIRE(o.lines.size() == 4);
  CHECK(o.lines[0].name == "x");
  CHECK(o.lines[0].declaration);
  CHECK(o.lines[0].first_line == 2);
  CHECK(o.lines[3].name == "y");
  CHECK_FALSE(o.lines[3].declaration);
  CHECK(o.lines[3].first_line == 5);
  CHECK(o.lines[3].last_line == 5);
  const auto& uses = o.lines[3].uses;
  for (const char* n : {"x", "W", "b"})
    CHECK(std::find(uses.begin(), uses.end(), std::string(n)) != uses.end());

  // A call spread over three lines is one named line 2-4.
  const ModelOutline multi = outline_model("x: [4, 8]\nh = softmax(\n  x,\n  dim=-1)\n");
  REQUIRE(multi.lines.size() == 2);
  CHECK(multi.lines[1].first_line == 2);
  CHECK(multi.lines[1].last_line == 4);

  CHECK_FALSE(outline_model("input [1, 3, 8, 8]\nReLU()\n").expressions);
  CHECK_FALSE(outline_model("x: [4\n").error.empty());
}

TEST_CASE("fresh names skip every identifier already in the text") {
  CHECK(fresh_tensor_name(kLayer) == "t1");
  CHECK(fresh_tensor_name(kLayer + "t1 = relu(y)\n") == "t2");
  // A comment word is not an identifier token, but a constant's name is.
  CHECK(fresh_tensor_name("t1 = 3\nx: [t1, 4]\nt2 = relu(x)\n") == "t3");
}

TEST_CASE("an op on named tensors appends one line with a fresh name") {
  TextEdit e = palette_add_op(kLayer, "relu", {"y"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer + "t1 = relu(y)\n");
  CHECK(e.name == "t1");
  CHECK(e.message == "added 't1 = relu(y)'");

  // A text without a final newline gets one before the new line.
  e = palette_add_op("x: [4, 8]\nh = tanh(x)", "sigmoid", {"h"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == "x: [4, 8]\nh = tanh(x)\nt1 = sigmoid(h)\n");

  // Binary ops, the transposed matmul, a chosen name, defaults and the user's keywords.
  e = palette_add_op(kLayer, "matmul_t", {"y", "W"}, {}, "back");
  CHECK_FALSE(e.ok);  // y [64, 512] @ W.T [1024, 512]: K 512 vs 1024 (checked below)
  e = palette_add_op(kLayer, "matmul", {"y", "W"}, {}, "back");
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer + "back = y @ W\n");
  e = palette_add_op(kLayer, "add", {"y", "b"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer + "t1 = y + b\n");
  e = palette_add_op(kLayer, "softmax", {"y"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer + "t1 = softmax(y, dim=-1)\n");
  e = palette_add_op(kLayer, "transpose", {"y"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer + "t1 = y.T\n");

  const std::string conv =
      "x: [1, 3, 8, 8]\n"
      "w: [4, 3, 3, 3] weight\n";
  e = palette_add_op(conv, "conv2d", {"x", "w"}, {"padding=1"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == conv + "t1 = conv2d(x, w, padding=1)\n");
  e = palette_add_op(conv, "maxpool", {"x"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == conv + "t1 = max_pool2d(x, kernel_size=2)\n");

  const std::string ln = "x: [16, 32]\ng: [32] weight\nbeta: [32] weight\n";
  e = palette_add_op(ln, "layernorm", {"x", "g", "beta"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == ln + "t1 = layer_norm(x, g, beta)\n");
}

TEST_CASE("an edit that would not parse is refused with the parser's message") {
  // y is [64, 512]; y @ W.T needs W's second dim to be 512, but it is 1024.
  const std::string bad = kLayer + "t1 = y @ W.T\n";
  const std::string expected = parser_message(bad);
  REQUIRE_FALSE(expected.empty());
  TextEdit e = palette_add_op(kLayer, "matmul_t", {"y", "W"});
  CHECK_FALSE(e.ok);
  CHECK(e.text == kLayer);
  CHECK(e.message.find(expected) != std::string::npos);
  CHECK(e.message.find("line 5") != std::string::npos);  // where the new line would have been

  // Broadcasting [64, 512] + [64, 1024] fails the same way.
  e = palette_add_op(kLayer, "add", {"y", "x"});
  CHECK_FALSE(e.ok);
  CHECK(e.text == kLayer);
  CHECK(e.message.find(parser_message(kLayer + "t1 = y + x\n")) != std::string::npos);

  // Refusals that never reach the parser say what is wrong in the palette's terms.
  e = palette_add_op(kLayer, "relu", {"nope"});
  CHECK_FALSE(e.ok);
  CHECK(e.message.find("'nope' is not a named tensor") != std::string::npos);
  CHECK(e.message.find("x, W, b, y") != std::string::npos);
  e = palette_add_op(kLayer, "matmul", {"y"});
  CHECK(e.message == "add matmul: needs 2 tensors, got 1");
  e = palette_add_op(kLayer, "relu", {"y"}, {"slope=2"});
  CHECK_FALSE(e.ok);  // relu passes keywords on: the parser judges them
  CHECK(e.message.find(parser_message(kLayer + "t1 = relu(y, slope=2)\n")) != std::string::npos);
  e = palette_add_op(kLayer, "add", {"y", "b"}, {"alpha=2"});
  CHECK(e.message == "add add: takes no key=value arguments");
  e = palette_add_op(kLayer, "relu", {"y"}, {}, "x");
  CHECK(e.message == "add: 'x' is already defined on line 1; pick another name");
  e = palette_add_op(kLayer, "frobnicate", {"y"});
  CHECK(e.message.rfind("add: unknown op 'frobnicate' (known: relu, gelu", 0) == 0);
  CHECK(palette_add_op("x: [4\n", "relu", {"x"}).message.find("fix it first") != std::string::npos);
  CHECK(
      palette_add_op("input [1, 3, 8, 8]\nReLU()\n", "relu", {"x"}).message.find("nn.Sequential") !=
      std::string::npos);
}

TEST_CASE("inputs and weights are declared after the last declaration") {
  TextEdit e = palette_add_input(kLayer, "W2", "256,512", true);
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text ==
        "x: [64, 1024]\n"
        "W: [512, 1024] weight\n"
        "b: [512] weight\n"
        "W2: [256, 512] weight\n"
        "y = relu(x @ W.T + b)\n");
  // Then y @ W2.T is [64, 256].
  e = palette_add_op(e.text, "matmul_t", {"y", "W2"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text.substr(e.text.rfind("y = ")) == "y = relu(x @ W.T + b)\nt1 = y @ W2.T\n");

  e = palette_add_input(kLayer, "z", "[64 1024]", false, "fp16");
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text.find("b: [512] weight\nz: [64, 1024] fp16\ny =") != std::string::npos);

  // From an empty text: declarations alone do not parse yet ("computes nothing"), but they are
  // how a model built with the palette starts, so the palette accepts them.
  e = palette_add_input("", "x", "8,8", false);
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == "x: [8, 8]\n");
  CHECK_FALSE(parser_message(e.text).empty());
  e = palette_add_input(e.text, "w", "4,8", true);
  REQUIRE_MESSAGE(e.ok, e.message);
  e = palette_add_op(e.text, "matmul_t", {"x", "w"});
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == "x: [8, 8]\nw: [4, 8] weight\nt1 = x @ w.T\n");
  CHECK(parser_message(e.text).empty());

  // Constants are names but not tensors.
  const ModelOutline withc = outline_model("D = 4\nN = 2 * D\nx: [N, D]\ny = relu(x)\n");
  CHECK(named_tensors(withc) == std::vector<std::string>{"x", "y"});
  CHECK(palette_add_op("D = 4\nx: [D]\ny = relu(x)\n", "relu", {"D"})
            .message.find("'D' is not a named tensor") != std::string::npos);

  CHECK(palette_add_input(kLayer, "x", "4", false).message ==
        "input: 'x' is already defined on line 1");
  CHECK(palette_add_input(kLayer, "2x", "4", false).message.find("is not a name") !=
        std::string::npos);
  e = palette_add_input(kLayer, "q", "64,oops", false);
  CHECK_FALSE(e.ok);
  CHECK(e.text == kLayer);
  CHECK(e.message.find(parser_message("x: [64, 1024]\nW: [512, 1024] weight\nb: [512] weight\n"
                                      "q: [64, oops]\ny = relu(x @ W.T + b)\n")) !=
        std::string::npos);
}

TEST_CASE("delete removes an unused line and explains what uses a used one") {
  const std::string grown = kLayer + "t1 = relu(y)\n";
  TextEdit e = palette_delete(grown, "t1");
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == kLayer);
  CHECK(e.message == "deleted line 5 ('t1')");

  e = palette_delete(grown, "y");
  CHECK_FALSE(e.ok);
  CHECK(e.text == grown);
  CHECK(e.message == "delete: 'y' is used by line 5 (t1); delete that line first");

  e = palette_delete(grown + "t2 = y + b\n", "b");
  CHECK(e.message == "delete: 'b' is used by line 4 (y), line 6 (t2); delete those lines first");

  // A declaration nobody uses goes, with its line; a call over several lines goes whole.
  e = palette_delete("x: [4, 8]\nspare: [3] weight\nh = relu(x)\n", "spare");
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == "x: [4, 8]\nh = relu(x)\n");
  e = palette_delete("x: [4, 8]\nh = relu(x)\ns = softmax(\n  h,\n  dim=-1)\n# end\n", "s");
  REQUIRE_MESSAGE(e.ok, e.message);
  CHECK(e.text == "x: [4, 8]\nh = relu(x)\n# end\n");
  CHECK(e.message == "deleted lines 3-5 ('s')");

  CHECK(palette_delete(kLayer, "nope").message ==
        "delete: no line defines 'nope' (named: x, W, b, y)");
}

TEST_CASE("palette script commands edit the model text through the app state") {
  AppState state;
  state.model.text = kLayer;
  REQUIRE(reparse_model(state));

  const Command c = parse_command("palette add relu y");
  CHECK(c.kind == CommandKind::Palette);
  CHECK(command_to_string(c) == "palette add relu y");
  CHECK(apply_command(state, c).empty());
  CHECK(state.model.text == kLayer + "t1 = relu(y)\n");
  REQUIRE(state.graph());
  CHECK(state.graph()->find_tensor("t1"));
  CHECK(state.selection.kind == Selection::Kind::Tensor);
  CHECK(state.selection.name == "t1");
  CHECK(state.palette_note_ok);

  CHECK(apply_command(state, parse_command("palette weight W2 256,512")).empty());
  CHECK(apply_command(state, parse_command("palette pick W2")).empty());
  CHECK(state.palette_picks == std::vector<std::string>{"W2"});
  CHECK(apply_command(state, parse_command("select-tensor t1")).empty());
  CHECK(apply_command(state, parse_command("palette add matmul_t t1 W2 as out")).empty());
  CHECK(state.model.text.substr(state.model.text.rfind("t1 =")) ==
        "t1 = relu(y)\nout = t1 @ W2.T\n");
  CHECK(state.palette_picks.empty());
  CHECK(state.graph()->tensor(*state.graph()->find_tensor("out")).shape ==
        tilescope::graph::Shape{64, 256});

  // A refusal is the command's error and leaves text and graph as they were.
  const std::string before = state.model.text;
  const int generation = state.model.generation;
  const std::string err = apply_command(state, parse_command("palette add matmul out x"));
  CHECK(err.rfind("palette: cannot add 't2 = out @ x'", 0) == 0);
  CHECK(state.model.text == before);
  CHECK(state.model.generation == generation);
  CHECK_FALSE(state.palette_note_ok);

  CHECK(apply_command(state, parse_command("palette delete out")).empty());
  CHECK(state.model.text.find("out =") == std::string::npos);
  CHECK(apply_command(state, parse_command("palette delete W")).find("used by line 5 (y)") !=
        std::string::npos);
  CHECK(apply_command(state, parse_command("palette pick nope")) ==
        "palette pick: no line of the model text names a tensor 'nope'");
  CHECK_THROWS_AS(parse_command("palette"), CommandError);
}

// Malformed models: each must throw GraphError at the right line:col with a message that says what
// is wrong. Columns were counted by hand from the texts below (1-based, characters).
#include "sim/lang/parser.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tilescope::graph;
using namespace tilescope::lang;

namespace {

struct BadModel {
  const char* rule;  // what the case checks
  std::string text;
  int line;
  int col;
  const char* phrase;  // must appear in the message
};

std::string deep_parens(int depth) {
  return "x: [4]\ny = " + std::string(static_cast<size_t>(depth), '(') + "x" +
         std::string(static_cast<size_t>(depth), ')') + "\n";
}

const std::vector<BadModel>& bad_models() {
  static const std::vector<BadModel> cases = {
      // lexing
      {"a character outside the language", "x: [64, 1024]\ny = relu(x $ 2)\n", 2, 12,
       "unexpected character '$'"},
      {"an unterminated string", "input [1, 3, 8, 8]\nConv2d(3, 4, 3, padding='same)\n", 2, 25,
       "string is not closed"},
      {"a number glued to a name", "x: [3x, 4]\n", 1, 5, "invalid number '3x'"},
      {"an integer literal beyond int64", "x: [99999999999999999999]\n", 1, 5, "too large"},
      {"a non-ASCII character", "x: [4]\ny = relu(x) \xC3\x97 2\n", 2, 13,
       "unexpected character '\xC3\x97'"},
      {"a NUL byte", std::string("x: [4]\n\0y", 9), 2, 1, "unexpected byte 0x00"},
      // syntax
      {"an empty model", "# nothing here\n\n", 1, 1, "empty model"},
      {"a bracket never closed", "x: [64, 1024\ny = relu(x)\n", 1, 4, "is never closed"},
      {"a declaration without ':'", "x [64, 1024]\n", 1, 1, "missing ':' after 'x'"},
      {"an assignment without a right-hand side", "x: [4]\ny =\n", 2, 4,
       "expected an expression after '='"},
      {"'.' without a name", "x: [4]\ny = relu(x.)\n", 2, 12, "expected a name after '.'"},
      {"nesting beyond the limit", deep_parens(100), 2, 69, "nested deeper than 64 levels"},
      {"a positional argument after a keyword", "input [1, 10]\nLinear(in_features=10, 5)\n", 2, 24,
       "positional argument cannot follow a keyword argument"},
      {"layers in Sequential without a comma",
       "input [1, 3, 8, 8]\nnn.Sequential(\n  nn.Conv2d(3, 4, 3)\n  nn.ReLU(),\n)\n", 4, 3,
       "missing ','"},
      {"a sequential model without its input line", "Conv2d(3, 16, 3)\nReLU()\n", 1, 1,
       "missing input line"},
      {"a second input line", "input [1, 10]\ninput [1, 10]\n", 2, 1, "exactly one input line"},
      {"an input line and no layers", "input [1, 10]\n", 1, 13, "no layers after the input line"},
      // names
      {"an unknown layer", "input [1, 3, 8, 8]\nConv2D(3, 16, 3)\n", 2, 1,
       "unknown layer 'Conv2D' \xE2\x80\x94 did you mean 'Conv2d'?"},
      {"an unknown function", "x: [4, 4]\ny = rleu(x)\n", 2, 5,
       "unknown function 'rleu' \xE2\x80\x94 did you mean 'relu'?"},
      {"a sequential layer used as a function", "x: [4, 4]\ny = Linear(x)\n", 2, 5,
       "'Linear' is a layer of the sequential form"},
      {"an unknown method", "x: [4]\ny = x.rellu()\n", 2, 7, "did you mean 'relu'?"},
      {"an unknown tensor", "x: [4, 4]\nW: [4, 4] weight\ny = x @ w\n", 3, 9,
       "unknown tensor 'w' \xE2\x80\x94 did you mean 'W'?"},
      {"a tensor used before its declaration", "x: [4, 4]\ny = x @ W\nW: [4, 4] weight\n", 2, 9,
       "used before its declaration on line 3"},
      {"a duplicate declaration", "x: [4, 4]\ny = relu(x)\ny: [4]\n", 3, 1,
       "duplicate declaration of 'y' (first defined on line 2)"},
      {"an unknown keyword argument", "input [1, 3, 8, 8]\nConv2d(3, 16, kernal_size=3)\n", 2, 15,
       "has no argument 'kernal_size' \xE2\x80\x94 did you mean 'kernel_size'?"},
      {"an unknown word after a shape", "x: [4, 4] fp64\n", 1, 11, "unknown word 'fp64'"},
      {"a variable in a layer's arguments", "input [1, 10]\nLinear(10, n)\n", 2, 12,
       "unknown name 'n'"},
      // argument counts
      {"too many arguments", "input [1, 10]\nReLU(True, 3)\n", 2, 12,
       "ReLU takes at most 1 argument but 2 were given"},
      {"a missing required argument", "input [1, 10]\nLinear(10)\n", 2, 1,
       "missing its required argument 'out_features'"},
      {"the same argument twice", "input [1, 10]\nLinear(10, 5, in_features=10)\n", 2, 15,
       "got two values for argument 'in_features'"},
      // values
      {"kernel_size=0", "input [1, 3, 8, 8]\nConv2d(3, 16, kernel_size=0)\n", 2, 27,
       "kernel_size must be at least 1, got 0"},
      {"a negative stride", "input [1, 3, 8, 8]\nMaxPool2d(2, stride=-2)\n", 2, 21,
       "stride must be at least 1, got -2"},
      {"a float where an integer is needed", "input [1, 224]\nLinear(224/2, 10)\n", 2, 8,
       "in_features must be an integer, got 112.0 (use // for integer division)"},
      {"pooling padding beyond half the kernel", "input [1, 3, 8, 8]\nMaxPool2d(2, padding=2)\n", 2,
       22, "padding should be at most half"},
      {"a dropout probability above 1", "input [1, 10]\nDropout(p=1.5)\nReLU()\n", 2, 11,
       "between 0 and 1"},
      {"a kernel too large for window arithmetic", "input [1, 3, 8, 8]\nMaxPool2d(2**40)\n", 2, 11,
       "kernel_size must be at most 2147483647"},
      {"a causal mask of a vector", "x: [8]\ny = causal_mask(x)\n", 2, 5,
       "a causal mask needs a matrix"},
      {"an attention mask", "q: [8, 4]\nk: [8, 4]\nv: [8, 4]\no = attention(q, k, v, q)\n", 4,
       24, "attn_mask is not supported"},
      {"a dim out of range", "x: [4, 4]\ny = softmax(x, dim=2)\n", 2, 20,
       "dim 2 is out of range for a 2-D tensor"},
      {"integer overflow in shape arithmetic", "x: [2**62 * 4]\n", 1, 5, "integer overflow"},
      {"integer division by zero", "x: [4 // 0]\n", 1, 7, "integer division by zero"},
      {"a shape over 2^40 elements", "x: [1048576, 1048576, 2]\n", 1, 4, "more than 2^40 elements"},
      {"a model over the work limit", "a: [1048576, 1048576]\nb: [1048576, 1048576]\nc = a @ b\n",
       3, 7, "model too large"},
      {"a 4-D layout on a 2-D tensor", "x: [4, 4] nhwc\n", 1, 11, "layout nhwc needs a 4-D shape"},
      // meaning
      {"declarations and no computation", "x: [4, 4]\nW: [4, 4] weight\n", 2, 1,
       "computes nothing"},
      {"an assignment that only renames", "x: [4]\ny = x\n", 2, 5, "only renames a tensor"},
      {".T on a 3-D tensor", "x: [2, 3, 4]\ny = x.T @ x\n", 2, 7, "'.T' needs a 2-D tensor"},
      {"tensor plus number", "x: [4]\ny = x + 1\n", 2, 7,
       "between a tensor and a number is not supported"},
      // shapes
      {"the brief's Linear mismatch after Flatten",
       "input [1, 3, 224, 224]\nConv2d(3, 16, kernel_size=3, padding=1)\nMaxPool2d(2)\n"
       "MaxPool2d(2)\nMaxPool2d(2)\nFlatten()\nLinear(16*112*112, 10)\n",
       7, 8,
       "Linear expects in_features=200704 but its input has 12544 features (shape [1, 16, 28, "
       "28] flattened)"},
      {"Conv2d in_channels against the input", "input [1, 3, 8, 8]\nConv2d(1, 4, 3)\n", 2, 8,
       "Conv2d expects in_channels=1 but its input has 3 channels"},
      {"BatchNorm2d num_features against the input", "input [1, 3, 8, 8]\nBatchNorm2d(4)\n", 2, 13,
       "BatchNorm2d expects num_features=4 but its input has 3 channels"},
      {"a conv after Flatten", "input [1, 3, 8, 8]\nFlatten()\nConv2d(3, 4, 3)\n", 3, 1,
       "expects a 4-D input"},
      {"a conv whose output would be empty", "input [1, 3, 4, 4]\nConv2d(3, 8, kernel_size=7)\n", 2,
       1, "output height would be < 1"},
      {"matmul inner dimensions (IR error re-thrown here)",
       "x: [64, 1024]\nW: [512, 1024] weight\ny = relu(x @ W)\n", 3, 12, "inner dimensions differ"},
      {"broadcasting mismatch (IR error re-thrown here)", "x: [4, 8]\nb: [4] weight\ny = x + b\n",
       3, 7, "cannot broadcast"},
      {"reshape to a different element count", "x: [4, 4]\ny = reshape(x, [3, 5])\n", 2, 5,
       "cannot reshape"},
  };
  return cases;
}

}  // namespace

TEST_CASE("malformed models throw GraphError at line:col with a message that explains") {
  const auto& cases = bad_models();
  CHECK(cases.size() >= 25);
  for (const BadModel& bad : cases) {
    CAPTURE(bad.rule);
    CAPTURE(bad.text);
    bool threw = false;
    try {
      parse_model(bad.text, "bad.model");
    } catch (const GraphError& e) {
      threw = true;
      const std::string what = e.what();
      CAPTURE(what);
      const std::string where =
          "bad.model:" + std::to_string(bad.line) + ":" + std::to_string(bad.col) + ":";
      CHECK(what.find(where) == 0);
      CHECK(e.loc().line == bad.line);
      CHECK(e.loc().col == bad.col);
      CHECK(e.message().find(bad.phrase) != std::string::npos);
      // Every located error shows the source line and a caret under the problem.
      CHECK(what.find("\n  ") != std::string::npos);
      CHECK(what.find('^') != std::string::npos);
    }
    CHECK_MESSAGE(threw, "no GraphError for: " << bad.rule);
  }
}

TEST_CASE("the caret excerpt underlines the offending token under its source line") {
  try {
    parse_model("input [1, 3, 8, 8]\nConv2D(3, 16, 3)\n", "m.model");
    FAIL("expected a GraphError");
  } catch (const GraphError& e) {
    const std::string expected =
        "m.model:2:1: error: unknown layer 'Conv2D' \xE2\x80\x94 did you mean 'Conv2d'?\n"
        "  Conv2D(3, 16, 3)\n"
        "  ^~~~~~";
    CHECK(std::string(e.what()) == expected);
  }
  try {
    parse_model("x: [4]\ny = relu(x) \xC3\x97 2\n", "m.model");
    FAIL("expected a GraphError");
  } catch (const GraphError& e) {
    // Twelve characters precede the '×' (two bytes); the caret must sit under it.
    const std::string what = e.what();
    CHECK(what.find("\n  y = relu(x) \xC3\x97 2\n  " + std::string(12, ' ') + "^") !=
          std::string::npos);
  }
}

TEST_CASE("pathological inputs are errors, not crashes or hangs") {
  // A long chain of unary minus and of attribute accesses hits the nesting limit too.
  CHECK_THROWS_AS(parse_model("x: [4]\ny = " + std::string(500, '-') + "x\n"), GraphError);
  std::string chain = "x: [4, 4]\ny = relu(x";
  for (int i = 0; i < 200; ++i) chain += ".T";
  CHECK_THROWS_AS(parse_model(chain + ")\n"), GraphError);
  // 2**63 overflows; a huge exponent must not loop for long either.
  CHECK_THROWS_AS(parse_model("x: [2**63]\n"), GraphError);
  CHECK_THROWS_AS(parse_model("x: [2**9223372036854775807]\n"), GraphError);
  CHECK_THROWS_AS(parse_model("x: [-9223372036854775807 - 1 // -1]\n"), GraphError);
  CHECK_THROWS_AS(parse_model("x: [1e400]\n"), GraphError);
  // A conv whose padding would overflow window arithmetic is refused before it reaches the IR.
  CHECK_THROWS_AS(parse_model("input [1, 3, 8, 8]\nConv2d(3, 4, 3, padding=2**62)\n"), GraphError);
}

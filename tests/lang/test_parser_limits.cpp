// Model texts far larger or deeper than anyone writes by hand: long flat operator chains build,
// genuine nesting stops at a located limit, many declarations parse in about linear time, and a
// model "file" that never ends is refused instead of read into memory.
#include "sim/graph/autodiff.h"
#include "sim/lang/parser.h"
#include "sim/lang/syntax.h"
#include "sim/pipeline.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace tilescope::graph;
using namespace tilescope::lang;

namespace {

// A model file through the pipeline's loader (sim/pipeline.h reads files; the graph room parses).
Graph parse_model_file(const std::string& path) {
  return *tilescope::pipeline::parse(tilescope::pipeline::read_model_file(path));
}

// "x" then `terms - 1` times " <op> x": a flat chain of `terms` operands.
std::string chain(const std::string& operand, const std::string& op, int terms) {
  std::string s = operand;
  for (int i = 1; i < terms; ++i) s += " " + op + " " + operand;
  return s;
}

size_t count_ops(const Graph& g, OpKind kind) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += op.kind == kind ? 1 : 0;
  return n;
}

// The GraphError a text raises, or a GraphError with an empty message when it parses.
GraphError error_of(const std::string& text) {
  try {
    parse_model(text, "deep.model");
  } catch (const GraphError& e) {
    return e;
  }
  return GraphError(SourceLoc{}, "");
}

const std::string kDeeper =
    "expression nested deeper than " + std::to_string(syntax::kMaxNesting) + " levels";

}  // namespace

TEST_CASE("limits: a flat chain of 10,000 tensor additions builds one Add per '+'") {
  // 10,001 operands joined by 10,000 '+': left-associative, so one Add per operator, and the
  // assignment names the last one.
  const Graph g = parse_model("x: [4, 4]\ny = " + chain("x", "+", 10001) + "\n");
  CHECK(g.ops().size() == 10000);
  CHECK(count_ops(g, OpKind::Add) == 10000);
  CHECK(g.tensor(g.ops().back().outputs[0]).name == "y");
  // Left-assoc: every Add but the first takes the previous Add's output as its left input.
  CHECK(g.ops()[1].inputs[0] == g.ops()[0].outputs[0]);
}

TEST_CASE("limits: a flat chain of 10,000 multiplications builds one Mul per '*'") {
  const Graph g = parse_model("x: [4, 4]\ny = " + chain("x", "*", 10001) + "\n");
  CHECK(count_ops(g, OpKind::Mul) == 10000);
}

TEST_CASE("limits: 20,000-term chains work too (no term limit, nothing recursive)") {
  const Graph g = parse_model("x: [2]\ny = " + chain("x", "-", 20000) + "\n");
  CHECK(count_ops(g, OpKind::Sub) == 19999);
}

TEST_CASE("limits: the training graph of a 20,000-term chain builds in about linear time") {
  // x feeds all 20,000 operands, so its gradient sums 20,000 contributions through "grad_add"
  // ops. Probing grad_add0, grad_add1, ... from 0 for each made that O(n^2) (minutes); each name
  // is now found in a step or two.
  const Graph g = parse_model("x: [2] weight\ny = " + chain("x", "+", 20000) + "\n");
  const auto start = std::chrono::steady_clock::now();
  const Graph t = build_training_graph(g, {});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(t.ops().size() > g.ops().size());
  CHECK(t.find_op("grad_add0"));
  CHECK(seconds < 30.0);
}

TEST_CASE("limits: long constant and shape expressions evaluate left to right") {
  // N = 1 + 1 + ... (10,000 ones) is 10,000; a shape written as a 10,000-term sum is that sum.
  Graph g = parse_model("N = " + chain("1", "+", 10000) + "\nx: [N]\ny = relu(x)\n");
  CHECK(g.tensor(*g.find_tensor("x")).shape == Shape{10000});
  // 64 - 1 - 1 - ... (60 ones): left-assoc gives 4; right-assoc would alternate to 64.
  g = parse_model("x: [" + chain("1", "*", 10000) + ", 64 - " + chain("1", "-", 60) +
                  "]\ny = relu(x)\n");
  CHECK(g.tensor(*g.find_tensor("x")).shape == Shape{1, 4});
}

TEST_CASE("limits: a layer argument may be a 10,000-term sum") {
  // out_features = 1 + 0 + 0 + ... = 1, so the weight is [1, 10].
  const Graph g = parse_model("input [2, 10]\nLinear(10, 1 + " + chain("0", "+", 9999) + ")\n");
  CHECK(g.tensor(*g.find_tensor("0.weight")).shape == Shape{1, 10});
}

TEST_CASE("limits: genuine nesting past the limit is an error at the bracket that crosses it") {
  // "y = " is 4 columns, so the first '(' is column 5 and the one that crosses the limit of 64
  // open levels is number 65, at column 5 + 64.
  const int limit = syntax::kMaxNesting;
  const std::string parens = std::string(10000, '(') + "x" + std::string(10000, ')');
  GraphError e = error_of("x: [4]\ny = " + parens + "\n");
  CHECK(e.loc().line == 2);
  CHECK(e.loc().col == 5 + limit);
  CHECK(std::string(e.what()).rfind("deep.model:2:" + std::to_string(5 + limit) + ":", 0) == 0);
  CHECK(e.message().find(kDeeper) != std::string::npos);
  // The excerpt shows a window of the 20,001-character line around the caret, not all of it.
  CHECK(std::string(e.what()).size() < 500);

  // Unary signs nest too: "- " per level, so sign number 65 is at column 5 + 2 * 64.
  std::string signs;
  for (int i = 0; i < 10000; ++i) signs += "- ";
  e = error_of("x: [4]\ny = " + signs + "x\n");
  CHECK(e.loc().col == 5 + 2 * limit);
  CHECK(e.message().find(kDeeper) != std::string::npos);

  // '**' is right-associative, so a chain of it nests: N = 1 ** 1 ** ... is refused, not crashed.
  e = error_of("N = " + chain("1", "**", 10000) + "\n");
  CHECK(e.message().find(kDeeper) != std::string::npos);

  // Nested lists in a shape and nested calls in a layer argument list stop the same way.
  e = error_of("x: " + std::string(10000, '[') + "4" + std::string(10000, ']') + "\n");
  CHECK(e.message().find(kDeeper) != std::string::npos);
  e = error_of("input [2, 10]\nLinear(10, " + std::string(10000, '(') + "1" +
               std::string(10000, ')') + ")\n");
  CHECK(e.message().find(kDeeper) != std::string::npos);

  // Exactly at the limit still parses: 63 parentheses inside relu( ... ) make 64 levels.
  const Graph g = parse_model("x: [4]\ny = relu(" + std::string(size_t(limit - 1), '(') + "x" +
                              std::string(size_t(limit - 1), ')') + ")\n");
  CHECK(g.ops().size() == 1);
}

TEST_CASE("limits: 200,000 declarations parse in about linear time") {
  // Each declaration checks its name is new; with a scan of every earlier tensor that is
  // 2 * 10^10 name comparisons (minutes), with a name index about 200,000 look-ups (well under a
  // second in a release build). The bound leaves room for sanitizer builds and a busy machine.
  std::string text;
  const int n = 200000;
  for (int i = 0; i < n; ++i) text += "x" + std::to_string(i) + ": [4]\n";
  text += "y = relu(x0)\n";
  const auto start = std::chrono::steady_clock::now();
  const Graph g = parse_model(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(g.tensors().size() == size_t(n) + 1);
  CHECK(seconds < 20.0);
  // A duplicate among them is still found, with the line of the first.
  try {
    parse_model(text + "x123456: [4]\n");
    FAIL("a duplicate declaration was accepted");
  } catch (const GraphError& e) {
    CHECK(e.message().find("duplicate declaration of 'x123456' (first defined on line 123457)") !=
          std::string::npos);
  }
}

TEST_CASE("limits: a model file that never ends is refused at the model size limit") {
  // /dev/zero would be read until memory runs out; the cap stops after 8 MiB and says why.
  const auto start = std::chrono::steady_clock::now();
  try {
    parse_model_file("/dev/zero");
    FAIL("/dev/zero parsed as a model");
  } catch (const GraphError& e) {
    CHECK(e.loc().file == "/dev/zero");
    CHECK(e.message().find("more than 8 MiB") != std::string::npos);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  // A directory and a missing file are errors that name the path, as before.
  CHECK_THROWS_WITH_AS(parse_model_file("assets"), doctest::Contains("is a directory"), GraphError);
  CHECK_THROWS_WITH_AS(parse_model_file("no/such.model"), doctest::Contains("no/such.model"),
                       GraphError);
}

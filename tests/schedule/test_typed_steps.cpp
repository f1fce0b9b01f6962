// Typed steps: a struct per step kind, read from the text form (to_spec) and printed back
// (to_step). A step built in code runs the same checks and primitives as its text: the same
// program, the same explanation, the same refusal.
#include "fixtures.h"

#include "sim/schedule/codegen.h"

#include <set>

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

// One or more steps of every kind, each in canonical spelling.
const std::vector<std::string> kCanonical = {
    "kernel(matmul0)",
    "fuse(matmul0, add0, relu0)",
    "compute_at(relu0, matmul1)",
    "compute_at(sig0, matmul0, at=i)",
    "compute_at(relu0, matmul1, at=inline)",
    "split(k, 16)",
    "tile(i, 64)",
    "tile(i, j, 32, 16)",
    "reorder(i.o, j.o, k)",
    "unroll(k.i)",
    "vectorize(j.i)",
    "parallel(i.o)",
    "bind(i.o, block.y)",
    "bind(j.i, thread.z)",
    "stage(W, shared, at=k.o)",
    "stage(W, scratchpad, double, at=k.o)",
    "stage(x, registers, at=j)",
    "block_order(row)",
    "block_order(grouped)",
    "block_order(grouped, 4)",
    "layout(x, rowmajor)",
    "layout(x, nchw)",
    "layout(x, nhwc)",
    "layout(W, transposed)",
    "pad(W_shared, 1, 1)",
    "im2col(conv0)",
    "online_softmax(softmax0)",
    "split_k(k, 8)",
};

TransformStep one(const std::string& text) {
  auto v = parse_steps(text);
  REQUIRE(v.size() == 1);
  return v[0];
}

std::string refusal_of(const Program& p, const StepSpec& s) {
  const StepResult r = apply_step(p, s);
  CHECK_FALSE(r.ok);
  return r.explanation;
}

// Applies `text` step by step and the hand-built `typed` steps alongside; every step must give
// the same explanation, and the end programs the same loop nest and CUDA source.
void same_as_text(const Program& start, const std::string& text,
                  const std::vector<StepSpec>& typed) {
  const auto steps = parse_steps(text);
  REQUIRE(steps.size() == typed.size());
  Program a = start, b = start;
  for (size_t i = 0; i < steps.size(); ++i) {
    INFO(steps[i].to_string());
    CHECK(to_string(typed[i]) == steps[i].to_string());
    StepResult ra = apply_step(a, steps[i]);
    StepResult rb = apply_step(b, typed[i]);
    INFO(ra.explanation);
    REQUIRE(ra.ok);
    REQUIRE(rb.ok);
    CHECK(rb.explanation == ra.explanation);
    a = std::move(ra.program);
    b = std::move(rb.program);
  }
  CHECK(print_program(b) == print_program(a));
  CHECK(emit_cuda(b.kernels[size_t(b.current)]) == emit_cuda(a.kernels[size_t(a.current)]));
}

}  // namespace

TEST_CASE("typed steps: canonical text reads into its struct and prints back unchanged") {
  std::set<std::string> kinds;
  for (const std::string& text : kCanonical) {
    INFO(text);
    const StepSpec spec = to_spec(one(text));
    CHECK(to_string(spec) == text);
    CHECK(step_name(spec) == one(text).name);
    kinds.insert(std::string(step_name(spec)));
  }
  // Every row of the table is covered by the list above.
  CHECK(kinds.size() == step_table().size());
}

TEST_CASE("typed steps: the fields hold the values the text names") {
  const StepSpec tile = to_spec(one("tile(i, j, 32, 16)"));
  REQUIRE(std::holds_alternative<TileStep>(tile));
  CHECK(std::get<TileStep>(tile).loops == std::vector<std::string>{"i", "j"});
  CHECK(std::get<TileStep>(tile).factors == std::vector<int64_t>{32, 16});
  // Accepted spellings read into the same value and print in canonical form.
  const StepSpec st = to_spec(one("stage(W, reg, double_buffer, at=k.o)"));
  REQUIRE(std::holds_alternative<StageStep>(st));
  CHECK(std::get<StageStep>(st).level == MemLevel::Registers);
  CHECK(std::get<StageStep>(st).double_buffer);
  CHECK(std::get<StageStep>(st).at == "k.o");
  CHECK(to_string(st) == "stage(W, registers, double, at=k.o)");
  CHECK(to_string(to_spec(one("parallelize(i)"))) == "parallel(i)");
  CHECK(to_string(to_spec(one("block_order(rowmajor)"))) == "block_order(row)");
  const StepSpec bind = to_spec(one("bind(i.o, thread.y)"));
  CHECK(std::get<BindStep>(bind).dim == LoopKind::ThreadY);
  const StepSpec bo = to_spec(one("block_order(grouped)"));
  CHECK_FALSE(std::get<BlockOrderStep>(bo).group.has_value());
  CHECK(std::get<ComputeAtStep>(to_spec(one("compute_at(a, b)"))).at == std::nullopt);
  CHECK(std::get<PadStep>(to_spec(one("pad(W_shared, 1, 2)"))).amount == 2);
  CHECK(std::get<LayoutStep>(to_spec(one("layout(x, nhwc)"))).layout == graph::Layout::NHWC);
}

TEST_CASE("typed steps: text that is not a step throws the refusal apply_step gives") {
  const Program p =
      tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 128, 64)), "fuse(matmul0, add0, relu0)");
  for (const std::string text :
       {"tile(i, four)", "tilee(i, 4)", "tile(i, 4, foo=1)", "unroll(i, j)", "bind(i, warp.x)",
        "stage(W, l3, at=k)", "stage(W, shared, triple, at=k)", "block_order(diagonal)",
        "layout(x, columnmajor)", "pad(W, one, 1)", "tile(i, j, 4)"}) {
    INFO(text);
    const StepResult r = tsfix::try_step(p, text);
    REQUIRE_FALSE(r.ok);
    try {
      to_spec(one(text));
      FAIL("to_spec accepted it");
    } catch (const ScheduleError& e) {
      CHECK(std::string(e.what()) == r.explanation);
    }
  }
  CHECK(tsfix::try_step(p, "tile(i, four)").explanation ==
        "tile: the factor must be a whole number, got 'four'");
}

TEST_CASE("typed steps: a GEMM scheduled from structs matches the same schedule as text") {
  const Program start = lower_graph(tsfix::linear_relu(40, 72, 24));
  const std::vector<StepSpec> typed = {
      FuseStep{.producer = "matmul0", .consumers = {"add0", "relu0"}},
      TileStep{.loops = {"i"}, .factors = {32}},
      TileStep{.loops = {"j"}, .factors = {64}},
      TileStep{.loops = {"k"}, .factors = {16}},
      ReorderStep{.loops = {"i.o", "j.o", "k.o", "i.i", "j.i", "k.i"}},
      StageStep{.tensor = "x", .level = MemLevel::Shared, .at = "k.o"},
      StageStep{.tensor = "W", .level = MemLevel::Shared, .at = "k.o"},
      BindStep{.loop = "i.o", .dim = LoopKind::BlockY},
      BindStep{.loop = "j.o", .dim = LoopKind::BlockX},
      TileStep{.loops = {"i.i"}, .factors = {4}},
      TileStep{.loops = {"j.i"}, .factors = {4}},
      ReorderStep{.loops = {"i.i.o", "j.i.o", "k.i", "i.i.i", "j.i.i"}},
      BindStep{.loop = "i.i.o", .dim = LoopKind::ThreadY},
      BindStep{.loop = "j.i.o", .dim = LoopKind::ThreadX},
  };
  same_as_text(start, tsfix::kMustShowSteps, typed);
  // Past the must-show schedule: grid order, bank padding of a staged tile.
  const Program shown = tsfix::apply_all(start, tsfix::kMustShowSteps);
  same_as_text(shown, "block_order(grouped, 2); pad(W_shared, 1, 1); unroll(k.i)",
               {BlockOrderStep{.order = BlockOrder::Grouped, .group = 2},
                PadStep{.target = "W_shared", .dim = 1, .amount = 1}, UnrollStep{.loop = "k.i"}});
}

TEST_CASE("typed steps: CPU steps, layouts, compute_at and im2col from structs match their text") {
  same_as_text(
      lower_graph(tsfix::linear_relu(64, 128, 64)),
      "kernel(matmul0); layout(W, transposed); split(j, 8); tile(i, 16); parallel(i.o); "
      "reorder(k, j.i); vectorize(j.i)",
      {KernelStep{.op = "matmul0"}, LayoutStep{.tensor = "W", .layout = graph::Layout::Transposed},
       SplitStep{.loop = "j", .factor = 8}, TileStep{.loops = {"i"}, .factors = {16}},
       ParallelStep{.loop = "i.o"}, ReorderStep{.loops = {"k", "j.i"}},
       VectorizeStep{.loop = "j.i"}});
  same_as_text(
      lower_graph(tsfix::linear_relu(64, 128, 64)),
      "fuse(matmul0, add0, relu0); tile(k, 16); reorder(i, k.o, j, k.i); "
      "stage(W, scratchpad, at=k.o)",
      {FuseStep{.producer = "matmul0", .consumers = {"add0", "relu0"}},
       TileStep{.loops = {"k"}, .factors = {16}}, ReorderStep{.loops = {"i", "k.o", "j", "k.i"}},
       StageStep{.tensor = "W", .level = MemLevel::Scratchpad, .at = "k.o"}});
  auto g = std::make_shared<graph::Graph>();
  auto x = tsfix::tensor(*g, "x", {6, 5});
  auto W = tsfix::tensor(*g, "W", {5, 7}, graph::Role::Weight);
  auto s = tsfix::op(*g, graph::OpKind::Sigmoid, "sig0", {x});
  tsfix::op(*g, graph::OpKind::MatMul, "matmul0", {s, W});
  same_as_text(lower_graph(g), "compute_at(sig0, matmul0, at=i)",
               {ComputeAtStep{.producer = "sig0", .consumer = "matmul0", .at = "i"}});
  same_as_text(lower_graph(g), "compute_at(sig0, matmul0)",
               {ComputeAtStep{.producer = "sig0", .consumer = "matmul0"}});
  same_as_text(
      lower_graph(tsfix::conv_relu(1, 3, 8, 8, 4, 3, 1, 1)),
      "im2col(conv0); fuse(conv0, add0, relu0)",
      {Im2colStep{.op = "conv0"}, FuseStep{.producer = "conv0", .consumers = {"add0", "relu0"}}});
}

TEST_CASE("typed steps: a struct the text form could not say is refused as its text would be") {
  const Program p =
      tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 128, 64)), "fuse(matmul0, add0, relu0)");
  CHECK(refusal_of(p, FuseStep{.producer = "matmul0", .consumers = {}}) ==
        "fuse takes a producer op and one or more elementwise consumers; got 1 argument");
  CHECK(refusal_of(p, ReorderStep{.loops = {"i"}}) ==
        "reorder takes two or more loop names; got 1 argument");
  CHECK(refusal_of(p, TileStep{.loops = {"i", "j"}, .factors = {4}}) ==
        "tile takes a loop and a factor, e.g. tile(i, 64), or tile(i, j, 64, 64); got 3 "
        "arguments");
  CHECK(refusal_of(p, BindStep{.loop = "i", .dim = LoopKind::Parallel}) ==
        "bind: 'parallel' is not a GPU dimension; use block.x, block.y, block.z, thread.x, "
        "thread.y or thread.z");
  CHECK(refusal_of(p, StageStep{.tensor = "W", .level = MemLevel::Global, .at = "k"}) ==
        "stage: 'global' is not a memory level; use shared, scratchpad or registers");
  CHECK(refusal_of(p, StageStep{.tensor = "W", .level = MemLevel::Shared}) ==
        "stage: say where the tile is loaded, e.g. at=k.o");
  CHECK(refusal_of(p, LayoutStep{.tensor = "x", .layout = graph::Layout::Strided}) ==
        "layout: 'strided' is not a layout; use rowmajor, nchw, nhwc or transposed");
  CHECK(refusal_of(p, PadStep{.target = "x", .dim = 1, .amount = 65}) ==
        "pad: the amount must be between 0 and 64 elements, got 65");
  CHECK(refusal_of(p, BlockOrderStep{.order = BlockOrder::Grouped, .group = 0}) ==
        "block_order: a group must hold at least one row of tiles");
  CHECK(refusal_of(p, SplitStep{.loop = "i", .factor = 0}) ==
        tsfix::try_step(p, "split(i, 0)").explanation);
  // Each printed form is refused by the text path with the same words.
  for (const StepSpec& s :
       {StepSpec{BindStep{.loop = "i", .dim = LoopKind::Parallel}},
        StepSpec{LayoutStep{.tensor = "x", .layout = graph::Layout::Strided}},
        StepSpec{StageStep{.tensor = "W", .level = MemLevel::Global, .at = "k"}},
        StepSpec{FuseStep{.producer = "matmul0", .consumers = {}}}})
    CHECK(apply_step(p, to_step(s)).explanation == refusal_of(p, s));
}

TEST_CASE("typed steps: a history of structs records canonical text that replays to the same") {
  const Program start = lower_graph(tsfix::linear_relu(40, 72, 24));
  History h(start);
  REQUIRE(h.apply(FuseStep{.producer = "matmul0", .consumers = {"add0", "relu0"}}).ok);
  REQUIRE(h.apply(TileStep{.loops = {"i", "j"}, .factors = {8, 8}}).ok);
  REQUIRE(h.apply(StageStep{.tensor = "W", .level = MemLevel::Shared, .at = "j.o"}).ok);
  REQUIRE_FALSE(h.apply(TileStep{.loops = {"q"}, .factors = {2}}).ok);  // refused: not recorded
  CHECK(h.to_text() == "fuse(matmul0, add0, relu0); tile(i, j, 8, 8); stage(W, shared, at=j.o)");
  const History again = History::replay(start, h.to_text());
  CHECK(print_program(again.current()) == print_program(h.current()));
  for (size_t i = 0; i < h.size(); ++i) CHECK(again.explanation(i) == h.explanation(i));
}

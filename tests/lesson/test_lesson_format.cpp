// Lesson file structure: front matter, blocks and their attributes, step ids, and malformed lessons
// rejected at file:line:col (by the format parser or, for names, by the checker at load).
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";  // lines 1-5

const std::string kModel =
    "```model id=m\n"  // line 6
    "x: [4, 8]\n"
    "W: [2, 8] weight\n"
    "y = relu(x @ W.T)\n"
    "```\n";  // line 10

// The error a lesson raises when parsed and loaded by the checker, "" when it loads.
std::string load_error(const std::string& text) {
  try {
    LessonSession s(parse_lesson(text, "bad.md"));
  } catch (const LessonError& e) {
    return e.what();
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("format: front matter, blocks, attributes and step ids") {
  const std::string text = kHead +
                           "prose\n"  // 6
                           "<!-- step: load -->\n"
                           "### Loading the model\n"
                           "```model id=m file=assets/models/mlp.model\n"  // 9
                           "```\n"
                           "```python\n"
                           "y = torch.relu(x @ W.T + b)\n"
                           "```\n"
                           "### Step 2: Count\n"  // 14
                           "```check machine=tiny\n"
                           "# a comment line\n"
                           "flops(matmul0) == 2*64*512*1024\n"  // 17
                           "\n"
                           "ops(m) == 3\n"
                           "```\n";
  const Lesson l = parse_lesson(text, "lessons/07-x.md");
  CHECK(l.title == "T");
  CHECK(l.level == "beginner");
  CHECK(l.minutes == 10);
  CHECK(l.id == "07-x");
  CHECK(l.prerequisites.empty());
  REQUIRE(l.blocks.size() == 2);  // the python block is prose
  CHECK(l.blocks[0].kind == BlockKind::Model);
  CHECK(l.blocks[0].attr_value("file") == "assets/models/mlp.model");
  CHECK(l.blocks[0].loc.line == 9);
  CHECK(l.blocks[0].step == "load");
  REQUIRE(l.blocks[1].checks.size() == 2);
  CHECK(l.blocks[1].checks[0].loc.line == 17);
  CHECK(l.blocks[1].checks[1].loc.line == 19);
  CHECK(l.blocks[1].step == "step-2");
  CHECK(l.blocks[1].attr_value("machine") == "tiny");
  REQUIRE(l.steps.size() == 2);
  CHECK(l.steps[0].id == "load");
  CHECK(l.steps[0].title == "Loading the model");
  CHECK(l.steps[1].id == "step-2");
  CHECK(l.steps[1].title == "Count");
}

TEST_CASE("format: prerequisites list and explicit id") {
  const Lesson l = parse_lesson(
      "---\ntitle: T\nlevel: advanced\nminutes: 20\nprerequisites: a-1, b_2\nid: z\n---\n", "f.md");
  CHECK(l.prerequisites == std::vector<std::string>{"a-1", "b_2"});
  CHECK(l.id == "z");
  CHECK(render_for_terminal(l).rfind("T\n=\nlevel advanced · about 20 minutes · after a-1, b_2",
                                     0) == 0);
}

TEST_CASE("format: a lesson loads without error when everything resolves") {
  CHECK(load_error(kHead + kModel + "```check\nflops(matmul0) == 2*4*2*8\n```\n") == "");
}

// [SECTION] Malformed lessons: each error names file:line:col.

TEST_CASE("malformed: no front matter") {
  CHECK(
      starts_with(load_error("# Title\n"), "bad.md:1:1: error: a lesson starts with front matter"));
}

TEST_CASE("malformed: front matter never closed, or a bad value") {
  CHECK(starts_with(load_error("---\ntitle: T\n"), "bad.md:1:1: error: the front matter opened"));
  CHECK(starts_with(load_error("---\ntitle: T\nlevel: expert\nminutes: 5\n---\n"),
                    "bad.md:3:8: error: level is beginner, intermediate or advanced"));
  CHECK(starts_with(load_error("---\ntitle: T\nlevel: beginner\nminutes: ten\n---\n"),
                    "bad.md:4:10: error: minutes is a whole number"));
  CHECK(starts_with(load_error("---\ntitle: T\nlevel: beginner\nminutes: 5\nauthor: me\n---\n"),
                    "bad.md:5:1: error: unknown front matter key 'author'"));
  CHECK(starts_with(load_error("---\nlevel: beginner\nminutes: 5\n---\n"),
                    "bad.md:1:1: error: the front matter needs a title"));
}

TEST_CASE("malformed: unknown block kind") {
  CHECK(starts_with(load_error(kHead + "text\n```chek\nflops(a) == 1\n```\n"),
                    "bad.md:7:4: error: unknown block kind 'chek'"));
  // A display language with attributes is a misspelt machine-readable block too.
  CHECK(starts_with(load_error(kHead + "```python id=m\n```\n"),
                    "bad.md:6:4: error: unknown block kind 'python'"));
}

TEST_CASE("malformed: a block that is never closed") {
  CHECK(starts_with(load_error(kHead + "\n\n```check\nflops(a) == 1\n"),
                    "bad.md:8:1: error: this ``` block is never closed"));
}

TEST_CASE("malformed: bad and unknown attributes, missing or duplicate ids") {
  CHECK(starts_with(load_error(kHead + "```model id=m colour=red\nx: [1]\n```\n"),
                    "bad.md:6:15: error: unknown attribute 'colour' on a model block"));
  CHECK(starts_with(load_error(kHead + "```model m\nx: [1]\n```\n"),
                    "bad.md:6:10: error: block attributes read key=value"));
  CHECK(starts_with(load_error(kHead + "```model\nx: [1]\n```\n"),
                    "bad.md:6:1: error: a model block needs id=NAME"));
  CHECK(starts_with(load_error(kHead + kModel + "```model id=m\nx: [1]\n```\n"),
                    "bad.md:11:10: error: id 'm' is already used by the model block at line 6"));
}

TEST_CASE("malformed: bad check syntax is reported at its column in the file") {
  CHECK(starts_with(
      load_error(kHead + kModel + "```check\nops(m) == 3\n  flops(matmul0) =< 4\n```\n"),
      "bad.md:13:18: error: '=' is not a comparison"));
}

TEST_CASE("malformed: a check refers to an unknown op") {
  CHECK(starts_with(load_error(kHead + kModel + "```check\nflops(matmul9) == 1\n```\n"),
                    "bad.md:12:7: error: model m has no op 'matmul9'; did you mean 'matmul0'?"));
  CHECK(
      starts_with(load_error(kHead + kModel + "```check\n[relu0, relu7] == [relu0, relu7]\n```\n"),
                  "bad.md:12:9: error: unknown name 'relu7'"));
}

TEST_CASE("malformed: unknown function, wrong argument count, missing machine") {
  CHECK(starts_with(load_error(kHead + kModel + "```check\nflop(matmul0) == 1\n```\n"),
                    "bad.md:12:1: error: unknown function 'flop'; did you mean 'flops'?"));
  CHECK(starts_with(load_error(kHead + kModel + "```check\nflops(matmul0, relu0) == 1\n```\n"),
                    "bad.md:12:1: error: flops() takes 1 argument, not 2"));
  CHECK(starts_with(load_error(kHead + kModel + "```check\ndram_bytes(m) > 0\n```\n"),
                    "bad.md:12:1: error: dram_bytes() simulates on a machine"));
  CHECK(starts_with(
      load_error(kHead + kModel + "```check\nmisses(m, L3, machine=tiny) > 0\n```\n"),
      "bad.md:12:11: error: machine tiny has no level 'L3' (its levels: L1, L2, DRAM)"));
  CHECK(starts_with(load_error(kHead + kModel + "```check model=zz\nops(m) == 3\n```\n"),
                    "bad.md:11:10: error: model=zz: no model block with that id (known: m)"));
  CHECK(starts_with(load_error(kHead + kModel + "```check machine=nosuch\nops(m) == 3\n```\n"),
                    "bad.md:11:10: error: machine=nosuch"));
}

TEST_CASE("malformed: a model that does not parse is reported at its line in the lesson") {
  CHECK(starts_with(load_error(kHead + "```model id=m\nx: [4, 8]\ny = relu(x @ Q)\n```\n"),
                    "bad.md:8:14: error: in model 'm': "));
}

TEST_CASE("malformed: steps for an unknown model, bad step text, an unexpected refusal") {
  CHECK(starts_with(load_error(kHead + kModel + "```steps id=s model=q\ntile(i, 2)\n```\n"),
                    "bad.md:11:15: error: model=q: no model block with that id"));
  CHECK(starts_with(load_error(kHead + kModel + "```steps id=s model=m\n\ntile(i 2)\n```\n"),
                    "bad.md:13:8: error: in steps 's': expected ',' or ')'"));
  CHECK(starts_with(load_error(kHead + kModel +
                               "```steps id=s model=m\nfuse(matmul0, relu0)\n  tile(q, 2)\n```\n"),
                    "bad.md:13:3: error: step tile(q, 2) is refused: "));
  CHECK(starts_with(load_error(kHead + kModel +
                               "```steps id=s model=m expect=refused\nfuse(matmul0, relu0)\n```\n"),
                    "bad.md:11:23: error: expect=refused, but every step of 's' applied"));
}

TEST_CASE("malformed: step markers") {
  CHECK(starts_with(load_error(kHead + "### Step two: x\n"),
                    "bad.md:6:5: error: a step heading reads '### Step N: title'"));
  CHECK(starts_with(load_error(kHead + "### Step 1: a\n### Step 1: b\n"),
                    "bad.md:7:1: error: step id 'step-1' is used twice (first at line 6)"));
  CHECK(starts_with(load_error(kHead + "<!-- step: a b -->\n"),
                    "bad.md:6:12: error: step id 'a b' must be"));
}

TEST_CASE("step markers: view= and machine= for the player, located errors") {
  const Lesson l = parse_lesson(kHead +
                                    "<!-- step: sim view=memory machine=tiny -->\n"  // 6
                                    "### Simulate\n"
                                    "<!-- step: plain -->\n"
                                    "### Plain\n"
                                    "  <!-- step: roof   view=roofline -->\n"
                                    "### Roof\n",
                                "x.md");
  REQUIRE(l.steps.size() == 3);
  CHECK(l.steps[0].id == "sim");
  CHECK(l.steps[0].title == "Simulate");
  CHECK(l.steps[0].view == "memory");
  CHECK(l.steps[0].machine == "tiny");
  // "<!-- step: sim view=" is 20 characters: the value starts in column 21.
  CHECK(l.steps[0].view_loc.line == 6);
  CHECK(l.steps[0].view_loc.col == 21);
  CHECK(l.steps[0].machine_loc.col == 21 + 7 + 8);  // after "memory " and "machine="
  CHECK(l.steps[1].view.empty());
  CHECK(l.steps[1].machine.empty());
  CHECK(l.steps[2].view == "roofline");
  CHECK(l.steps[2].machine.empty());

  CHECK(starts_with(load_error(kHead + "<!-- step: a view=memroy -->\n"),
                    "bad.md:6:19: error: unknown view 'memroy' (known: graph, schedule, tiles, "
                    "memory, roofline, timings, trace)"));
  CHECK(starts_with(load_error(kHead + "<!-- step: a machine=nosuch -->\n"),
                    "bad.md:6:22: error: unknown machine 'nosuch' (presets: "));
  CHECK(starts_with(load_error(kHead + "<!-- step: a colour=red -->\n"),
                    "bad.md:6:14: error: unknown step key 'colour' (known: view, machine, teaches, "
                    "trace)"));
  // trace=: a recorded profiler trace that exists, found as recorded() finds files.
  const Lesson traced =
      parse_lesson(kHead +
                       "<!-- step: t view=trace "
                       "trace=assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json -->\n"
                       "### Trace\n",
                   "x.md");
  REQUIRE(traced.steps.size() == 1);
  CHECK(traced.steps[0].view == "trace");
  CHECK(traced.steps[0].trace == "assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json");
  CHECK(traced.steps[0].trace_loc.col == 31);  // "<!-- step: t view=trace trace=" is 30
  CHECK(starts_with(load_error(kHead + "<!-- step: a trace=assets/recorded/traces/none.json -->\n"),
                    "bad.md:6:20: error: no trace file 'assets/recorded/traces/none.json'"));
  CHECK(starts_with(load_error(kHead + "<!-- step: a trace=/etc/passwd -->\n"),
                    "bad.md:6:20: error: "));
  CHECK(starts_with(load_error(kHead + "<!-- step: a view=tiles view=graph -->\n"),
                    "bad.md:6:25: error: view= is given twice"));
  CHECK(starts_with(load_error(kHead + "<!-- step: a view= -->\n"),
                    "bad.md:6:14: error: a step marker's keys read key=value"));
  CHECK(starts_with(load_error(kHead + "<!-- step: a view=tiles\n"),
                    "bad.md:6:1: error: a step marker must close on its line"));
}

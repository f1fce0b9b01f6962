// Rules of the app's state and commands, without a display: number formats, panel layout, command
// parsing and replay, parsing with the last good graph kept, the graph scene, and the app's flags.
#include "build_paths.h"
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/format.h"
#include "app/core/graph_scene.h"
#include "app/core/panel_layout.h"
#include "app/core/script_runner.h"
#include "app/gui/app_options.h"
#include "sim/lang/parser.h"

#include <doctest/doctest.h>

#include "tests/support/run_command.h"

#include <array>
#include <cstdio>
#include <memory>
#include <string>

using namespace tilescope::core;
using namespace tilescope::gui;

namespace {

// Every character 8 px wide: widths are then a hand count of characters.
float fixed_measure(std::string_view s, SceneFont) {
  return 8.0f * static_cast<float>(s.size());
}

AppState default_state() {
  AppState state;
  state.model.text = std::string(tilescope::lang::default_model_text());
  REQUIRE(reparse_model(state));
  return state;
}

Command cmd(const std::string& line) {
  return parse_command(line);
}

}  // namespace

// [SECTION] Formatting

TEST_CASE("numbers print exactly and in short form") {
  CHECK(format_thousands(43352064) == "43,352,064");
  CHECK(format_thousands(999) == "999");
  CHECK(format_thousands(-1234567) == "-1,234,567");
  CHECK(format_si(43352064) == "43.4 M");
  CHECK(format_si(512) == "512");
  CHECK(format_si(802816) == "803 K");
  CHECK(format_flops(10) == "10 FLOP");
  CHECK(format_flops(0) == "0 FLOP");
  CHECK(format_flops(67108864) == "67.1 MFLOP");
  CHECK(format_bytes(96) == "96 B");
  CHECK(format_bytes(2 * 1024 * 1024) == "2 MiB");
  CHECK(format_bytes(256 * 1024) == "256 KiB");
  CHECK(format_percent(0.4213) == "42.1%");
  CHECK(format_percent(0.0) == "0.0%");
  CHECK(format_percent(0.0001) == "<0.1%");
  CHECK(format_int_list({1024, 1}) == "[1024, 1]");
}

// [SECTION] Panels

TEST_CASE("the panels tile the window without gaps or overlaps") {
  for (auto [w, h, font] :
       {std::array<float, 3>{1440, 900, 16}, {1600, 1000, 22}, {800, 600, 16}, {3840, 2160, 32}}) {
    const PanelLayout p = compute_panel_layout(w, h, font);
    double area = 0;
    const auto named = p.named();
    REQUIRE(named.size() == 5);
    for (const auto& [name, r] : named) {
      CAPTURE(name);
      CHECK(r.w > 0);
      CHECK(r.h > 0);
      CHECK(r.x >= 0);
      CHECK(r.x + r.w <= w + 1e-3);
      CHECK(r.y + r.h <= h + 1e-3);
      area += double(r.w) * r.h;
    }
    CHECK(area == doctest::Approx(double(w) * h));
    CHECK(p.model_text.x + p.model_text.w == doctest::Approx(p.graph.x));
    CHECK(p.tabs.x == doctest::Approx(p.graph.x));
    CHECK(p.tabs.y + p.tabs.h == doctest::Approx(p.graph.y));  // the tabs sit on the view
    CHECK(p.graph.x + p.graph.w == doctest::Approx(p.inspector.x));
    CHECK(p.graph.w >= 0.3f * w - 1);  // the canvas keeps at least 30% of the width
  }
}

// [SECTION] Commands

TEST_CASE("commands round-trip through their script form") {
  for (const char* line : {"set-model-file assets/models/cnn.model",
                           "set-model-text x: [2, 3]\\ny = relu(x)",
                           "replace-line 5 y = relu(x @ W2.T + b)",
                           "select-op matmul0",
                           "select-tensor W",
                           "clear-selection",
                           "zoom 1.5",
                           "zoom 0.5 100 200",
                           "pan 10 -20",
                           "fit",
                           "theme projector",
                           "screenshot out.png",
                           "wait-frames 5",
                           "resize 800 600",
                           "click 10 20",
                           "click-node add0",
                           "drag 1 2 3 4",
                           "scroll 5 6 -2",
                           "key F",
                           "type z = x\\n",
                           "wait-seconds 0.5",
                           "quit"}) {
    CAPTURE(line);
    CHECK(command_to_string(parse_command(line)) == line);
  }
  CHECK(parse_command("set-model-text a\\nb").text == "a\nb");
  CHECK(parse_command("key f").text == "F");
  // Named keys and modifiers are known (F1, Alt+Right); a name that is none of them is refused.
  CHECK(parse_command("key F1").text == "F1");
  CHECK_THROWS_WITH_AS(parse_command("key F13"), doctest::Contains("a letter or digit"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("key ab"), doctest::Contains("a letter or digit"),
                       CommandError);
}

TEST_CASE("a bad command line says what is wrong") {
  CHECK_THROWS_WITH_AS(parse_command("zom 2"), doctest::Contains("unknown command 'zom'"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("zoom abc"), doctest::Contains("factor must be a number"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("zoom -1"), doctest::Contains("must be > 0"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("theme neon"), doctest::Contains("unknown theme 'neon'"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("wait-frames 0"), doctest::Contains("whole number >= 1"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("select-op"), doctest::Contains("needs a name"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("fit now"), doctest::Contains("unexpected 'now'"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_script("# comment\n\nfit\nbogus 1\n", "s.txt"),
                       doctest::Contains("s.txt:4: unknown command 'bogus'"), CommandError);
  CHECK(parse_script("# only comments\n\n", "s.txt").empty());
}

TEST_CASE("selecting needs a name the graph has") {
  AppState state = default_state();
  CHECK(apply_command(state, cmd("select-op matmul0")).empty());
  CHECK(state.selection.kind == Selection::Kind::Op);
  CHECK(state.selection.name == "matmul0");
  CHECK(apply_command(state, cmd("select-op conv9")) ==
        "select-op: the graph has no op named 'conv9'");
  CHECK(state.selection.name == "matmul0");  // unchanged by the failed command
  CHECK(apply_command(state, cmd("select-tensor W")).empty());
  CHECK(state.selection.kind == Selection::Kind::Tensor);
  CHECK(apply_command(state, cmd("clear-selection")).empty());
  CHECK(state.selection.kind == Selection::Kind::None);
}

// [SECTION] Parsing and the last good graph

TEST_CASE("a broken edit keeps the last good graph and reports line and column") {
  AppState state = default_state();
  // By hand: x @ W.T is a MatMul, + b an Add, relu a ReLU.
  REQUIRE(state.graph()->ops().size() == 3);
  const int generation = state.model.generation;
  // Line 5 of the default text is "y = relu(x @ W.T + b)"; W2 does not exist.
  CHECK(apply_command(state, cmd("replace-line 5 y = relu(x @ W2.T + b)")).empty());
  REQUIRE(state.model.error.has_value());
  CHECK(state.model.error->line == 5);
  CHECK(state.model.error->col == 14);  // "y = relu(x @ " is 13 characters, W2 starts at 14
  CHECK(state.model.text.find("W2") != std::string::npos);  // the user's text is kept
  REQUIRE(state.graph() != nullptr);
  CHECK(state.graph()->ops().size() == 3);
  CHECK(state.model.generation == generation);
  // Fixing it parses again and clears the error.
  CHECK(apply_command(state, cmd("replace-line 5 y = relu(x @ W.T + b)")).empty());
  CHECK_FALSE(state.model.error.has_value());
  CHECK(state.model.generation == generation + 1);
  CHECK(apply_command(state, cmd("replace-line 40 z")) ==
        "replace-line: the model has only 6 lines, not 40");
}

TEST_CASE("typing re-parses only after the debounce") {
  AppState state = default_state();
  state.now = 10.0;
  CHECK(apply_command(state, cmd("edit-model-text x: [4, 8]\\ny = relu(x)")).empty());
  update_state(state);  // no time has passed
  CHECK(state.model.reparse_pending);
  state.now = 10.0 + 0.5 * kReparseDebounceSeconds;  // still typing
  update_state(state);
  CHECK(state.model.reparse_pending);
  CHECK(state.graph()->ops().size() == 3);
  state.now = 10.0 + 1.5 * kReparseDebounceSeconds;
  update_state(state);
  CHECK_FALSE(state.model.reparse_pending);
  CHECK(state.graph()->ops().size() == 1);
}

TEST_CASE("a selection that vanishes with an edit is dropped") {
  AppState state = default_state();
  REQUIRE(apply_command(state, cmd("select-op add0")).empty());
  REQUIRE(apply_command(state, cmd("set-model-text x: [4, 8]\\ny = relu(x)")).empty());
  update_state(state);
  CHECK(state.selection.kind == Selection::Kind::None);
}

TEST_CASE("set-model-file reports a missing file and leaves the model alone") {
  AppState state = default_state();
  const std::string msg = apply_command(state, cmd("set-model-file /nonexistent/m.model"));
  CHECK(msg.find("cannot open a model file '/nonexistent/m.model'") != std::string::npos);
  CHECK(state.model.path.empty());
  CHECK(state.graph()->ops().size() == 3);
}

TEST_CASE("click-node clicks the node's centre on screen, as three frames of input") {
  AppState state = default_state();
  refresh_scene(state, fixed_measure);
  REQUIRE(apply_command(state, cmd("click-node add0")).empty());
  REQUIRE(state.requests.input.size() == 3);  // hover, press, release
  CHECK_FALSE(state.requests.input[0].down);
  CHECK(state.requests.input[1].down);
  CHECK_FALSE(state.requests.input[2].down);
  const SceneNode& n = state.scene->nodes[size_t(state.scene->find("add0", SceneNode::Kind::Op))];
  const Rect canvas = state.panels().graph;
  CHECK(state.requests.input[1].x ==
        doctest::Approx(canvas.x + state.view.pan_x + (n.x + n.w / 2) * state.view.zoom));
  CHECK(apply_command(state, cmd("click-node nope")) ==
        "click-node: the graph has no node named 'nope'");
  // The script waits while input plays: the next line must see the click's effect.
  ScriptRunner runner(parse_script("fit\n", "t.script"), "t.script");
  state.view.fit_pending = false;
  CHECK(runner.run_frame(state).empty());
  CHECK_FALSE(state.view.fit_pending);
  state.requests.input.clear();
  CHECK(runner.run_frame(state).empty());
  CHECK(state.view.fit_pending);
}

TEST_CASE("the script runner honours wait-frames and stops after a screenshot") {
  AppState state = default_state();
  ScriptRunner runner(
      parse_script("select-op matmul0\nwait-frames 3\nscreenshot a.png\nfit\n", "t.script"),
      "t.script");
  CHECK(runner.run_frame(state).empty());  // frame 1: select, then wait-frames 3 begins
  CHECK(state.selection.name == "matmul0");
  CHECK(runner.run_frame(state).empty());  // frame 2
  CHECK(runner.run_frame(state).empty());  // frame 3
  CHECK(state.requests.screenshot_path.empty());
  CHECK(runner.run_frame(state).empty());  // frame 4: screenshot, and stop for this frame
  CHECK(state.requests.screenshot_path == "a.png");
  CHECK_FALSE(runner.done());
  CHECK(runner.run_frame(state).empty());  // frame 5: fit
  CHECK(runner.done());
  ScriptRunner timed(parse_script("wait-seconds 0.5\nclear-selection\n", "w.script"), "w.script");
  state.now = 100.0;
  CHECK(timed.run_frame(state).empty());  // starts the wait
  state.now = 100.4;
  CHECK(timed.run_frame(state).empty());
  CHECK(state.selection.kind == Selection::Kind::Op);  // not yet
  state.now = 100.6;
  CHECK(timed.run_frame(state).empty());
  CHECK(state.selection.kind == Selection::Kind::None);
  ScriptRunner bad(parse_script("select-op nope\n", "b.script"), "b.script");
  CHECK(bad.run_frame(state) == "b.script:1: error: select-op: the graph has no op named 'nope'");
}

// [SECTION] Scene

TEST_CASE("the scene has a node per op, input, weight and output, and an edge per use") {
  AppState state = default_state();
  const GraphScene scene = build_graph_scene(*state.graph(), fixed_measure, 16.0f);
  // x, W, b (sources) + matmul0, add0, relu0 (ops) + y (output).
  CHECK(scene.nodes.size() == 7);
  // matmul0 ← x, W; add0 ← matmul0, b; relu0 ← add0; y ← relu0.
  CHECK(scene.edges.size() == 6);
  const int mm = scene.find("matmul0", SceneNode::Kind::Op);
  REQUIRE(mm >= 0);
  // FLOPs by hand (graph.h convention): MatMul 2*64*512*1024; Add and ReLU one per output element.
  const double matmul = 2.0 * 64 * 512 * 1024, elementwise = 64.0 * 512;
  CHECK(scene.nodes[size_t(mm)].flop_share == doctest::Approx(matmul / (matmul + 2 * elementwise)));
  CHECK(scene.nodes[size_t(mm)].kind_label == "MatMul");
  CHECK(scene.find("W", SceneNode::Kind::Source) >= 0);
  CHECK(scene.find("y", SceneNode::Kind::Output) >= 0);
  // Edges out of ops carry the tensor's shape; edges out of sources do not (the node shows it).
  for (const SceneEdge& e : scene.edges) {
    if (scene.nodes[size_t(e.from)].kind == SceneNode::Kind::Op &&
        scene.nodes[size_t(e.to)].kind == SceneNode::Kind::Op) {
      CHECK(e.label == "[64, 512]");
    }
    if (scene.nodes[size_t(e.from)].kind == SceneNode::Kind::Source) CHECK(e.label.empty());
  }
  // Text fits: the x node's shape "[64, 1024]" (10 chars = 80 px) plus padding on both sides.
  const NodeMetrics m(16.0f);
  const SceneNode& x = scene.nodes[size_t(scene.find("x", SceneNode::Kind::Source))];
  CHECK(x.w >= 80.0f + 2 * m.pad);
}

TEST_CASE("fit puts the whole scene inside the graph panel") {
  AppState state = default_state();
  refresh_scene(state, fixed_measure);
  REQUIRE(state.scene.has_value());
  CHECK_FALSE(state.view.fit_pending);
  const Rect canvas = state.panels().graph;
  const float z = state.view.zoom;
  CHECK(state.view.pan_x >= 0);
  CHECK(state.view.pan_y >= 0);
  CHECK(state.view.pan_x + state.scene->width * z <= canvas.w + 1);
  CHECK(state.view.pan_y + state.scene->height * z <= canvas.h + 1);
  // Zooming about a point keeps the world point under it in place.
  const float wx = (100 - state.view.pan_x) / z;
  REQUIRE(apply_command(state, cmd("zoom 2 100 50")).empty());
  CHECK((100 - state.view.pan_x) / state.view.zoom == doctest::Approx(wx));
}

TEST_CASE("a graph too tall to read whole opens readable at its top; fit shows all of it") {
  // A chain of 40 ReLUs: 40 op layers, far taller than any canvas at a readable zoom.
  std::string text = "x: [4, 8]\nh0 = relu(x)\n";
  for (int i = 1; i < 40; ++i)
    text += "h" + std::to_string(i) + " = relu(h" + std::to_string(i - 1) + ")\n";
  AppState state;
  state.model.text = text;
  REQUIRE(reparse_model(state));
  refresh_scene(state, fixed_measure);
  CHECK(state.view.zoom == doctest::Approx(kReadableZoom));
  const float top = state.view.pan_y;
  CHECK(top > 0);
  CHECK(top < state.font_px() * 3);  // the first layer sits just under the title line
  REQUIRE(apply_command(state, cmd("fit")).empty());
  refresh_scene(state, fixed_measure);
  CHECK(state.view.zoom < kReadableZoom);
  CHECK(state.view.pan_y + state.scene->height * state.view.zoom <= state.panels().graph.h);
}

// [SECTION] Flags

TEST_CASE("app flags parse, and bad ones say which and why") {
  const AppOptions o = parse_app_options(
      {"--frames", "30", "--size=1600x1000", "--theme", "dark", "--screenshot", "a.png"});
  CHECK(o.frames == 30);
  CHECK(o.width == 1600);
  CHECK(o.height == 1000);
  CHECK(o.theme == Theme::Dark);
  CHECK(o.screenshot == "a.png");
  CHECK_THROWS_WITH_AS(parse_app_options({"--frames", "x"}), doctest::Contains("--frames"),
                       OptionsError);
  CHECK_THROWS_WITH_AS(parse_app_options({"--size", "100"}), doctest::Contains("WxH"),
                       OptionsError);
  CHECK_THROWS_WITH_AS(parse_app_options({"--model"}), doctest::Contains("needs a value"),
                       OptionsError);
  CHECK_THROWS_WITH_AS(parse_app_options({"--bogus"}),
                       doctest::Contains("unknown option '--bogus'"), OptionsError);
  CHECK_THROWS_WITH_AS(parse_app_options({"--theme", "neon"}), doctest::Contains("neon"),
                       OptionsError);
}

namespace {

// Runs the real app binary and returns its exit status and stderr. These paths fail before a
// window is opened, so they need no display.
std::pair<int, std::string> run_app_binary(const std::string& args) {
  tilescope::test::CommandResult r =
      tilescope::test::run_command(std::string(TILESCOPE_GUI_PATH) + " " + args);
  return {r.code, std::move(r.out)};
}

}  // namespace

TEST_CASE("the app rejects bad flags and unreadable files with a message and non-zero status") {
  auto [code, out] = run_app_binary("--frames banana");
  CHECK(code == 2);
  CHECK(out.find("--frames: expected a whole number") != std::string::npos);
  std::tie(code, out) = run_app_binary("--model /nonexistent/x.model");
  CHECK(code == 1);
  CHECK(out.find("cannot open a model file '/nonexistent/x.model'") != std::string::npos);
  std::tie(code, out) = run_app_binary("--script /nonexistent/s.script");
  CHECK(code == 1);
  CHECK(out.find("cannot open a script file '/nonexistent/s.script'") != std::string::npos);
  std::tie(code, out) = run_app_binary("--help");
  CHECK(code == 0);
  CHECK(out.find("--layout-json") != std::string::npos);
}

TEST_CASE("type scale: a UI scale the window cannot hold is held, enlargement only") {
  using tilescope::core::Theme;
  using tilescope::core::type_scale_for;
  // Projector (22 px at 100 %) at 200 % on 1280x720: 44 px would be 29 characters across; the
  // window holds floor(min(1280 / 58, 720 / 30)) = floor(min(22.07, 24)) = 22 px: scale 1.
  CHECK(type_scale_for(Theme::Projector, 1.0f, 2.0f, 1280, 720) == doctest::Approx(1.0));
  // The same at 1920x1080: floor(min(33.1, 36)) = 33 px, scale 1.5.
  CHECK(type_scale_for(Theme::Projector, 1.0f, 2.0f, 1920, 1080) == doctest::Approx(1.5));
  // Light (16 px) at 200 % on 1920x1080: 32 px fits under 33, so it is kept.
  CHECK(type_scale_for(Theme::Light, 1.0f, 2.0f, 1920, 1080) == doctest::Approx(2.0));
  // A small window never shrinks the type under the learner's 100 %.
  CHECK(type_scale_for(Theme::Light, 1.0f, 1.0f, 640, 400) == doctest::Approx(1.0));
  CHECK(type_scale_for(Theme::Light, 1.0f, 0.75f, 640, 400) == doctest::Approx(0.75));
  // font_px follows: 22 px for the projector at 200 % on 1280x720.
  tilescope::core::AppState s;
  s.theme = Theme::Projector;
  s.ui_scale = 2.0f;
  s.window_w = 1280;
  s.window_h = 720;
  CHECK(s.font_px() == doctest::Approx(22.0));
}

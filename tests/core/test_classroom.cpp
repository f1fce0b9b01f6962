// A workbench for a classroom (issue #17), without a display: files opened and saved (model files,
// session hand-outs, recent files, drops, the browser's listing and verbs), redo and UI scale kept
// by the session, render on demand's wait, presentation's indicator and its readable fit.
#include "app/core/app_state.h"
#include "app/core/autotune.h"
#include "app/core/commands.h"
#include "app/core/files.h"
#include "app/core/fuse_options.h"
#include "app/core/session.h"
#include "sim/schedule/steps.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::core;
namespace fs = std::filesystem;

namespace {

const char* kModel = "x: [8, 16]\nW: [4, 16] weight\nb: [4] weight\ny = relu(x @ W.T + b)\n";
const char* kSteps = "fuse(matmul0, add0, relu0); tile(i, 4); tile(j, 2)";

using test::run;
using test::state_for;

// A fresh folder per test, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tilescope-classroom-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every glyph 0.6 em wide: the scene's sizes follow the font size alone.
float fixed_measure(std::string_view s, SceneFont) {
  return static_cast<float>(s.size()) * 16.0f * 0.6f;
}

}  // namespace

TEST_CASE("the browser lists folders first, then the files of its kind, hidden ones left out") {
  TempDir d;
  fs::create_directories(d.path / "zeta");
  fs::create_directories(d.path / "alpha");
  fs::create_directories(d.path / ".hidden");
  write(d.file("b.model"), kModel);
  write(d.file("a.model"), kModel);
  write(d.file("notes.json"), "{}");
  write(d.file(".secret.model"), kModel);
  std::string error;
  const auto models = list_folder(d.path.string(), {".model", ".txt"}, error);
  CHECK(error.empty());
  REQUIRE(models.size() == 4);
  CHECK(models[0].name == "alpha");
  CHECK(models[0].folder);
  CHECK(models[1].name == "zeta");
  CHECK(models[2].name == "a.model");
  CHECK_FALSE(models[2].folder);
  CHECK(models[3].name == "b.model");
  const auto sessions = list_folder(d.path.string(), {".json"}, error);
  REQUIRE(sessions.size() == 3);
  CHECK(sessions[2].name == "notes.json");
  const auto missing = list_folder(d.file("nope"), {}, error);
  CHECK(missing.empty());
  CHECK(error.find("cannot list") != std::string::npos);
}

TEST_CASE("recent files: newest first, each once, at most kMaxRecentFiles") {
  AppState state;
  for (int i = 0; i < 10; ++i) note_recent_file(state, "/tmp/m" + std::to_string(i) + ".model");
  note_recent_file(state, "/tmp/m5.model");
  REQUIRE(state.recent_files.size() == kMaxRecentFiles);
  CHECK(state.recent_files[0] == "/tmp/m5.model");
  CHECK(state.recent_files[1] == "/tmp/m9.model");
  CHECK(std::count(state.recent_files.begin(), state.recent_files.end(), "/tmp/m5.model") == 1);
}

TEST_CASE("save-model writes the editor's text; the built-in example needs a path first") {
  TempDir d;
  AppState state = state_for(kModel);
  CHECK(run(state, "save-model").find("built-in example") != std::string::npos);
  const std::string path = d.file("mine.model");
  CHECK(run(state, "save-model " + path).empty());
  CHECK(read(path) == kModel);
  CHECK(state.model.path == path);
  CHECK(state.recent_files.front() == path);
  // Bare save-model now writes back to that file.
  CHECK(run(state, "set-model-text x: [2, 3]\\ny = relu(x)").empty());
  state.model.path = path;
  CHECK(run(state, "save-model").empty());
  CHECK(read(path) == "x: [2, 3]\ny = relu(x)\n");
}

TEST_CASE("a session hand-out round-trips model, steps, redo, machine and view, not recent files") {
  TempDir d;
  AppState teacher = state_for(kModel);
  REQUIRE(run(teacher, std::string("apply \"") + kSteps + "\"").empty());
  REQUIRE(run(teacher, "undo").empty());
  REQUIRE(run(teacher, "machine tiny").empty());
  REQUIRE(run(teacher, "view tiles").empty());
  note_recent_file(teacher, "/home/teacher/secret.model");
  const std::string handout = d.file("class.json");
  CHECK(run(teacher, "save-session " + handout).empty());
  CHECK(read(handout).find("secret.model") == std::string::npos);

  AppState learner = state_for("x: [2, 2]\ny = relu(x)\n");
  learner.theme = Theme::Dark;
  learner.ui_scale = 1.5f;
  note_recent_file(learner, "/home/learner/own.model");
  CHECK(run(learner, "open-session " + handout).empty());
  CHECK(learner.model.text == kModel);
  REQUIRE(learner.workbench.history);
  CHECK(learner.workbench.history->size() == 2);  // 3 steps, one undone
  CHECK(learner.workbench.step_texts.size() == 3);
  CHECK(workbench_redo(learner.workbench));
  CHECK(learner.workbench.history->size() == 3);
  CHECK(learner.workbench.machine_name == "tiny");
  CHECK(learner.workbench.tab == ViewTab::Tiles);
  // The learner's own settings stay; the hand-out is added to the recent files.
  CHECK(learner.theme == Theme::Dark);
  CHECK(learner.ui_scale == 1.5f);
  REQUIRE(learner.recent_files.size() == 2);
  CHECK(learner.recent_files[0] == handout);
  CHECK(learner.recent_files[1] == "/home/learner/own.model");
}

TEST_CASE("opening what is not a session changes nothing and says why") {
  TempDir d;
  AppState state = state_for(kModel);
  write(d.file("other.json"), "{\"schema\": \"something-else/1\"}");
  write(d.file("broken.json"), "{ not json");
  const std::string e1 = run(state, "open-session " + d.file("other.json"));
  CHECK(e1.find("something-else/1") != std::string::npos);
  const std::string e2 = run(state, "open-session " + d.file("broken.json"));
  CHECK(e2.find("not JSON") != std::string::npos);
  CHECK(run(state, "open-session " + d.file("missing.json")) != "");
  CHECK(state.model.text == kModel);
}

TEST_CASE("a dropped .json opens as a session, anything else as a model") {
  TempDir d;
  AppState state = state_for(kModel);
  write(d.file("two.model"), "x: [2, 3]\ny = relu(x)\n");
  CHECK(run(state, "drop " + d.file("two.model")).empty());
  // The editor held text typed in (not opened from a file): the drop asks first.
  REQUIRE(state.pending_open);
  CHECK(state.pending_open->text_edited);
  CHECK(state.model.text == kModel);
  CHECK(run(state, "files open-choice drop").empty());
  CHECK(state.model.path == d.file("two.model"));
  CHECK(state.graph()->ops().size() == 1);
  AppState other = state_for(kModel);
  REQUIRE(run(other, "machine tiny").empty());
  REQUIRE(run(other, "save-session " + d.file("s.json")).empty());
  CHECK(run(state, "drop " + d.file("s.json")).empty());
  CHECK(state.model.text == kModel);
  CHECK(state.workbench.machine_name == "tiny");
}

TEST_CASE("the file browser: shown in the model's folder, cd, name, ok; a failed open stays open") {
  TempDir d;
  fs::create_directories(d.path / "sub");
  write(d.file("sub/m.model"), "x: [2, 3]\ny = relu(x)\n");
  AppState state = state_for(kModel);
  CHECK(run(state, "files open-model " + d.path.string()).empty());
  CHECK(state.files.mode == FileBrowser::Mode::OpenModel);
  CHECK(run(state, "files cd sub").empty());
  CHECK(fs::equivalent(state.files.dir, d.path / "sub"));
  CHECK(run(state, "files cd nowhere").find("not a folder") != std::string::npos);
  CHECK(run(state, "files name missing.model").empty());
  CHECK_FALSE(run(state, "files ok").empty());
  CHECK(state.files.mode == FileBrowser::Mode::OpenModel);  // still open: pick again
  CHECK(run(state, "files name m.model").empty());
  CHECK(run(state, "files ok").empty());
  CHECK(state.files.mode == FileBrowser::Mode::Closed);
  CHECK(run(state, "files open-choice drop").empty());  // the typed-in text is kept aside
  CHECK(state.graph()->ops().size() == 1);
  // Save as: the field starts with the model's own name, in its folder.
  CHECK(run(state, "files save-model").empty());
  CHECK(state.files.name == "m.model");
  CHECK(fs::equivalent(state.files.dir, d.path / "sub"));
  CHECK(run(state, "files cd ..").empty());
  CHECK(fs::equivalent(state.files.dir, d.path));
  CHECK(run(state, "files name copy.model").empty());
  CHECK(run(state, "files ok").empty());
  CHECK(read(d.file("copy.model")) == "x: [2, 3]\ny = relu(x)\n");
  CHECK(run(state, "files close").empty());
  CHECK_THROWS_AS(parse_command("files"), CommandError);
  CHECK(run(state, "files fly").find("unknown verb") != std::string::npos);
}

TEST_CASE("Open model over a schedule asks: replay, drop or cancel, and says which steps would not apply") {
  TempDir d;
  AppState state = state_for(kModel);
  state.model.loaded_text = kModel;  // as if opened from a file: only the steps are at stake
  REQUIRE(run(state, "apply " + std::string(kSteps)).empty());
  REQUIRE(state.workbench.history->size() == 3);
  // The same layer with a batch of 16: all three steps apply (i = 16 tiles by 4).
  write(d.file("batch16.model"), "x: [16, 16]\nW: [4, 16] weight\nb: [4] weight\ny = relu(x @ W.T + b)\n");
  // A model with no matmul0: the first step, fuse(matmul0, add0, relu0), cannot apply, so none.
  write(d.file("relu.model"), "x: [2, 3]\ny = relu(x)\n");
  CHECK(run(state, "drop " + d.file("relu.model")).empty());
  REQUIRE(state.pending_open);
  CHECK_FALSE(state.pending_open->text_edited);
  CHECK(state.pending_open->trial.steps == 3);
  CHECK(state.pending_open->trial.apply == 0);
  CHECK(state.pending_open->trial.refused.rfind("step 1 'fuse(matmul0, add0, relu0)'", 0) == 0);
  // Cancel: nothing changed.
  CHECK(run(state, "files open-choice cancel").empty());
  CHECK_FALSE(state.pending_open);
  CHECK(state.model.text == kModel);
  CHECK(state.workbench.history->size() == 3);
  CHECK_FALSE(state.replaced_model);
  // The batch-16 model: the trial says all three apply, and replaying keeps all three.
  CHECK(run(state, "drop " + d.file("batch16.model")).empty());
  REQUIRE(state.pending_open);
  CHECK(state.pending_open->trial.apply == 3);
  CHECK(state.pending_open->trial.refused.empty());
  CHECK(run(state, "files open-choice keep").find("not 'keep'") != std::string::npos);
  CHECK(state.pending_open);  // a wrong word answers nothing
  CHECK(run(state, "files open-choice replay").empty());
  CHECK(state.model.path == d.file("batch16.model"));
  CHECK(state.workbench.history->size() == 3);
  REQUIRE(state.replaced_model);
  CHECK(state.replaced_model->text == kModel);
  CHECK(state.replaced_model->steps.size() == 3);
  // Drop: the relu model opens with no steps; the batch-16 model and its steps are kept aside.
  CHECK(run(state, "drop " + d.file("relu.model")).empty());
  CHECK(run(state, "files open-choice drop").empty());
  CHECK(state.graph()->ops().size() == 1);
  CHECK(state.workbench.history->size() == 0);
  // Restore brings back the batch-16 model with its three steps, and keeps the relu model.
  CHECK(run(state, "files restore-model").empty());
  CHECK(state.model.path == d.file("batch16.model"));
  CHECK(state.workbench.history->size() == 3);
  REQUIRE(state.replaced_model);
  CHECK(state.replaced_model->path == d.file("relu.model"));
  // An open with neither steps nor edited text asks nothing.
  CHECK(run(state, "goto-step 0").empty());
  state.workbench.step_texts.clear();
  state.model.loaded_text = state.model.text;
  CHECK(run(state, "drop " + d.file("relu.model")).empty());
  CHECK_FALSE(state.pending_open);
  CHECK(state.model.path == d.file("relu.model"));
  CHECK(run(state, "files open-choice replay").find("no opened model waits") != std::string::npos);
}

TEST_CASE("the session keeps redo steps and the UI scale across a restart") {
  TempDir d;
  AppState before = state_for(kModel);
  REQUIRE(run(before, std::string("apply \"") + kSteps + "\"").empty());
  REQUIRE(run(before, "undo").empty());
  REQUIRE(run(before, "undo").empty());
  REQUIRE(run(before, "ui-scale 1.25").empty());
  const std::string path = d.file("session.json");
  REQUIRE(save_session(before, path).empty());
  AppState after;
  after.model.text = "x: [1, 1]\ny = relu(x)\n";
  reparse_model(after);
  update_state(after);
  const SessionRestore r = restore_session(after, path);
  CHECK(r.message.empty());
  REQUIRE(after.workbench.history);
  CHECK(after.workbench.history->size() == 1);
  CHECK(after.workbench.step_texts == before.workbench.step_texts);
  CHECK(workbench_redo(after.workbench));
  CHECK(workbench_redo(after.workbench));
  CHECK(after.workbench.steps_text() == "fuse(matmul0, add0, relu0); tile(i, 4); tile(j, 2)");
  CHECK(after.ui_scale == 1.25f);
  // A scale out of range in the file is skipped with a word, not applied.
  nlohmann::json j = session_to_json(before);
  j["ui_scale"] = 40;
  AppState third = state_for(kModel);
  CHECK(session_from_json(third, j).find("ui_scale") != std::string::npos);
  CHECK(third.ui_scale == 1.0f);
  CHECK_THROWS_AS(parse_command("ui-scale 9"), CommandError);
}

TEST_CASE("render on demand: the loop may sleep only when nothing is queued or moving") {
  AppState state = state_for(kModel);
  state.scene_stale = false;
  state.view.fit_pending = false;
  CHECK(frame_wait_seconds(state) == kIdleWaitSeconds);
  state.requests.keys.push({262, 0, 0, true});
  CHECK(frame_wait_seconds(state) == 0.0);
  state.requests.keys.take_frame();
  state.requests.input.push_back({});
  CHECK(frame_wait_seconds(state) == 0.0);
  state.requests.input.clear();
  // A parse waiting for the typing debounce: wake when it is due (0.35 s after the edit).
  state.now = 10.0;
  REQUIRE(run(state, "edit-model-text x: [2, 2]\\ny = relu(x)").empty());
  state.now = 10.1;
  CHECK(frame_wait_seconds(state) == doctest::Approx(kReparseDebounceSeconds - 0.1));
  state.model.reparse_pending = false;
  state.workbench.tiles_playing = true;
  CHECK(frame_wait_seconds(state) == kBusyFrameSeconds);
}

TEST_CASE("presentation: the indicator says the step and the keys; the fit keeps text >= 20 px") {
  AppState state = state_for(kModel);
  CHECK(presentation_indicator(state).empty());
  REQUIRE(run(state, std::string("apply \"") + kSteps + "\"").empty());
  REQUIRE(run(state, "undo").empty());
  REQUIRE(run(state, "present on").empty());
  const std::string ind = presentation_indicator(state);
  CHECK(ind.rfind("step 2 of 3", 0) == 0);
  CHECK(ind.find("Esc or F5 leaves") != std::string::npos);
  // A tall graph (a chain of 12 ReLUs) in a 1920x1080 window with the projector's type: the fit
  // stops at the zoom where node text is kPresentTextPx high, not smaller.
  std::string chain = "x: [4, 4]\nt0 = relu(x)\n";
  for (int i = 1; i < 12; ++i)
    chain += "t" + std::to_string(i) + " = relu(t" + std::to_string(i - 1) + ")\n";
  REQUIRE(run(state, "set-model-text " + chain).empty());
  update_state(state);
  state.theme = Theme::Projector;
  state.window_w = 1920;
  state.window_h = 1080;
  state.view.fit_pending = true;
  refresh_scene(state, fixed_measure);
  REQUIRE(state.scene);
  CHECK(state.scene->compact);
  CHECK(state.font_px() * state.view.zoom >= doctest::Approx(kPresentTextPx));
  // Outside presentation the same graph may shrink to the desk floor (kReadableZoom).
  REQUIRE(run(state, "present off").empty());
  refresh_scene(state, fixed_measure);
  CHECK_FALSE(state.scene->compact);
  CHECK(state.view.zoom == doctest::Approx(kReadableZoom));
}

TEST_CASE("palette: the first pick with nothing selected is A; clear starts A, B and C over") {
  AppState state = state_for(kModel);
  REQUIRE(state.selection.kind == Selection::Kind::None);
  CHECK(run(state, "palette pick y").empty());
  // y is relu0's output: A is relu0 (as a click on its node), and B is still empty.
  CHECK(state.selection.kind == Selection::Kind::Op);
  CHECK(state.selection.name == "relu0");
  CHECK(state.palette_picks.empty());
  CHECK(run(state, "palette pick x").empty());
  CHECK(state.palette_picks == std::vector<std::string>{"x"});
  CHECK(run(state, "palette unpick").empty());
  CHECK(state.selection.kind == Selection::Kind::None);
  CHECK(state.palette_picks.empty());
  // A graph input picked first is selected as a tensor.
  CHECK(run(state, "palette pick W").empty());
  CHECK(state.selection.kind == Selection::Kind::Tensor);
  CHECK(state.selection.name == "W");
}

TEST_CASE("a stage the machine cannot hold: the machines every step fits are offered") {
  AppState state = state_for(kModel);
  REQUIRE(run(state, "machine h200").empty());
  REQUIRE(run(state, "apply \"tile(k, 4); stage(x, shared, at=k.o)\"").empty());
  CHECK(state.workbench.machine_refusal.empty());
  CHECK(state.workbench.machines_fitting.empty());  // nothing to fix
  REQUIRE(run(state, "machine tiny").empty());  // a CPU: no shared memory
  CHECK_FALSE(state.workbench.machine_refusal.empty());
  const auto& fit = state.workbench.machines_fitting;
  // The GPU presets hold the stage; the CPU presets refuse it.
  CHECK(std::find(fit.begin(), fit.end(), "h200") != fit.end());
  CHECK(std::find(fit.begin(), fit.end(), "minigpu") != fit.end());
  CHECK(std::find(fit.begin(), fit.end(), "tiny") == fit.end());
  CHECK(std::find(fit.begin(), fit.end(), "host") == fit.end());
  // Choosing one of them clears the refusal.
  REQUIRE(run(state, "machine " + fit.front()).empty());
  CHECK(state.workbench.machine_refusal.empty());
  CHECK(state.workbench.machines_fitting.empty());
}

TEST_CASE("fuse options: legal fusions as steps, and the transform's reason for the others") {
  AppState state = state_for(kModel);
  // The default lowering's first kernel is matmul0: its consumer add0, and the chain add0, relu0.
  std::vector<FuseOption> o = fuse_options(state.workbench);
  REQUIRE(o.size() == 2);
  CHECK(o[0].step == "fuse(matmul0, add0, relu0)");
  CHECK(o[0].label == "add0, relu0");
  CHECK(o[0].legal);
  CHECK(o[1].step == "fuse(matmul0, add0)");
  CHECK(o[1].legal);
  // Every legal option applies; none is offered that the workbench then refuses.
  for (const FuseOption& f : o) {
    AppState copy = state_for(kModel);
    CHECK(run(copy, "apply \"" + f.step + "\"").empty());
    CHECK(copy.workbench.last->ok);
  }
  // The add0 kernel: relu0 downstream, matmul0 upstream.
  REQUIRE(run(state, "apply \"kernel(add0)\"").empty());
  o = fuse_options(state.workbench);
  REQUIRE(o.size() == 2);
  CHECK(o[0].step == "fuse(add0, relu0)");
  CHECK(o[1].step == "fuse(matmul0, add0)");
  // A pooling window after a ReLU on the CNN: tried, and refused with the transform's words.
  const char* kCnn =
      "input [1, 3, 16, 16]\nConv2d(3, 4, kernel_size=3, padding=1)\nReLU()\n"
      "MaxPool2d(kernel_size=2, stride=2)\n";
  AppState cnn = state_for(kCnn);
  std::vector<std::string> firsts;
  for (const auto& k : cnn.workbench.program()->kernels) firsts.push_back(k.op_names.front());
  bool any_refused = false;
  for (const std::string& first : firsts) {
    REQUIRE(run(cnn, "apply \"kernel(" + first + ")\"").empty());
    for (const FuseOption& f : fuse_options(cnn.workbench)) {
      AppState copy = state_for(kCnn);
      REQUIRE(run(copy, "apply \"kernel(" + first + ")\"").empty());
      const bool applied = run(copy, "apply \"" + f.step + "\"").empty() && copy.workbench.last->ok;
      CHECK(applied == f.legal);  // the list agrees with what applying does
      if (!f.legal) {
        any_refused = true;
        CHECK_FALSE(f.reason.empty());
        CHECK(copy.workbench.last->explanation == f.reason);
      }
    }
  }
  CHECK(any_refused);
}

TEST_CASE("autotune: the run-to-run spread is the median of each point's (median - min) / median") {
  AutotuneGrid g;
  g.mode = AutotuneMode::Cpu;
  CHECK(g.run_spread() == 0);
  const auto point = [](double median, double min, bool refused = false) {
    AutotunePoint p;
    p.seconds = median;
    p.min_seconds = min;
    p.refused = refused;
    return p;
  };
  // Hand count: spreads 0.1, 0.25, 0 (the refused point is left out) → sorted 0, 0.1, 0.25.
  g.points = {point(10, 9), point(20, 15), point(4, 4), point(1, 0.1, true)};
  CHECK(g.run_spread() == doctest::Approx(0.1));
}

TEST_CASE("F with the palette open fits the graph beside it, not under it") {
  AppState state = state_for(kModel);
  state.window_w = 1280;
  state.window_h = 800;
  REQUIRE(run(state, "control palette.open on").empty());
  REQUIRE(run(state, "fit").empty());
  refresh_scene(state, fixed_measure);
  REQUIRE(state.scene);
  const Rect canvas = state.panels().graph;
  const float palette_right = canvas.x + std::min(state.font_px() * kPaletteEm, canvas.w * 0.42f);
  for (const SceneNode& n : state.scene->nodes)
    CHECK(canvas.x + state.view.pan_x + n.x * state.view.zoom >= palette_right);
  // Folded, the same fit uses the whole width: the graph sits further left.
  const float pan_open = state.view.pan_x;
  REQUIRE(run(state, "control palette.open off").empty());
  REQUIRE(run(state, "fit").empty());
  refresh_scene(state, fixed_measure);
  CHECK(state.view.pan_x < pan_open);
}

TEST_CASE("save-session with no file keeps the current work as the autosaved session") {
  AppState state = state_for(kModel);
  state.autosave_paused = true;  // as after --model
  CHECK(run(state, "save-session").find("--no-session") != std::string::npos);
  CHECK(state.autosave_paused);
  state.session_path = "/tmp/anything/session.json";
  CHECK(run(state, "save-session").empty());
  CHECK_FALSE(state.autosave_paused);
}

TEST_CASE(
    "tiles: each frame boxes the current tile, one step's bins, not all since the last frame") {
  // A 128³ GEMM tiled by 8 with k.o outside the point loops: i.o·j.o·k.o = 16·16·16 = 4096 steps
  // of loop k.o (the deepest loop under 4096 iterations), so 1024 frames hold 4 steps each. One
  // step touches an 8×8 tile of x; x (128×128) is binned 48×48, so 8 columns are 3 or 4 bins
  // (8·48/128 = 3), while the 4 steps since the previous frame walk 32 columns (12 bins).
  AppState state = state_for("x: [128, 128]\nW: [128, 128] weight\ny = x @ W.T\n");
  REQUIRE(run(state,
              "apply \"tile(i, 8); tile(j, 8); tile(k, 8); "
              "reorder(i.o, j.o, k.o, i.i, j.i, k.i)\"")
              .empty());
  JobProgress progress;
  const TilesResult t = record_tiles(*state.workbench.kernel(), progress);
  CHECK(t.step_loop == "k.o");
  CHECK(t.steps == 4096);
  REQUIRE(t.frame_tiles.size() == t.frames.size());
  size_t x = 0;
  while (x < t.grids.size() && t.grids[x].name != "x") ++x;
  REQUIRE(x < t.grids.size());
  const TileGrid& g = t.grids[x];
  CHECK(t.frame_tiles[0][x].empty());
  const size_t f = 2;  // after steps 4..7 (all inside one i.o, j.o: k.o = 4..7)
  const TileBox& b = t.frame_tiles[f][x];
  REQUIRE_FALSE(b.empty());
  CHECK(b.c1 - b.c0 + 1 >= 3);
  CHECK(b.c1 - b.c0 + 1 <= 4);
  CHECK(b.r1 - b.r0 + 1 <= 4);
  int changed_c0 = g.bin_cols, changed_c1 = -1;
  for (int r = 0; r < g.bin_rows; ++r)
    for (int c = 0; c < g.bin_cols; ++c) {
      const size_t i = g.offset + size_t(r) * size_t(g.bin_cols) + size_t(c);
      if (t.frames[f][i] != t.frames[f - 1][i])
        changed_c0 = std::min(changed_c0, c), changed_c1 = std::max(changed_c1, c);
    }
  CHECK(changed_c1 - changed_c0 + 1 >= 11);  // the 4 steps' 32 columns
  // The current tile is the last of them: its columns end where the changed ones end.
  CHECK(b.c1 == changed_c1);
}

TEST_CASE("fuse options on a 20,000-op chain: bounded work, the chain cut at the kernel limit") {
  // Issue #25: trying every prefix of the chain took ~8 minutes on the UI thread at 20,000 ops.
  std::string model = "x: [4]\ny1 = relu(x)\n";
  for (int i = 2; i <= 20000; ++i)
    model += "y" + std::to_string(i) + " = relu(y" + std::to_string(i - 1) + ")\n";
  AppState state = state_for(model.c_str());
  REQUIRE(run(state, "apply \"kernel(relu0)\"").empty());
  const std::vector<FuseOption> o = fuse_options(state.workbench);
  REQUIRE_FALSE(o.empty());
  // The chain option: relu0 and the next kMaxFusedOps - 1 ops, which applies.
  CHECK(o[0].legal);
  const size_t names = std::count(o[0].step.begin(), o[0].step.end(), ',') + 1;
  CHECK(names == tilescope::schedule::kMaxFusedOps);
  CHECK(run(state, "apply \"" + o[0].step + "\"").empty());
  CHECK(state.workbench.last->ok);
  // One more op is past the limit and refused, saying so.
  REQUIRE(run(state, "apply \"fuse(relu0, relu64)\"").empty());
  CHECK_FALSE(state.workbench.last->ok);
  CHECK(state.workbench.last->explanation.find("limit of 64") != std::string::npos);
}

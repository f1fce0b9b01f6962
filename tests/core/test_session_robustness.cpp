// Rules of issue 11 (robustness) for the app without a display: a session file is untrusted
// input (type-checked field by field, moved aside when unreadable, never overwritten by the
// autosave), its write is atomic and private to one writer, and script commands with numbers
// far outside their range or files that never end give errors instead of crashes.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/session.h"
#include "sim/lang/parser.h"
#include "sim/io/input.h"
#include "tests/core/workbench_fixtures.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace tilescope::core;
namespace fs = std::filesystem;
namespace io = tilescope::io;

namespace {

const char* kSmallModel =
    "x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n";

std::string default_model() {
  return std::string(tilescope::lang::default_model_text());
}

// As the app has it before the session is restored: the built-in model, parsed and lowered.
AppState start_state() {
  AppState state;
  state.model.text = default_model();
  REQUIRE(reparse_model(state));
  update_state(state);
  return state;
}

// A fresh folder per test case, so one case's leftovers cannot satisfy another's checks.
fs::path case_dir(const std::string& name) {
  const fs::path d = tilescope::test::scratch_dir() / ("session-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// Names in `dir` starting with `prefix`.
std::vector<std::string> entries_starting(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0) out.push_back(name);
  }
  return out;
}

float fixed_measure(std::string_view s, SceneFont) {
  return 8.0f * static_cast<float>(s.size());
}

}  // namespace

// [SECTION] Session fields: type-checked one by one

TEST_CASE("a session field of the wrong type is skipped and named; the other fields come back") {
  // Each of these aborted the app on every start (nlohmann type_error out of json::value()).
  struct Case {
    const char* json;
    const char* field;
  };
  for (const Case& c :
       {Case{R"({"schema":"tilescope-session/1","model_text":5})", "model_text"},
        Case{R"J({"schema":"tilescope-session/1","steps":["tile(i, 16)"]})J", "steps"},
        Case{R"({"schema":"tilescope-session/1","machine":null})", "machine"},
        Case{R"({"schema":"tilescope-session/1","view":{"tab":"graph"}})", "view"},
        Case{R"({"schema":"tilescope-session/1","theme":true})", "theme"},
        Case{R"({"schema":"tilescope-session/1","model_path":[]})", "model_path"}}) {
    CAPTURE(c.json);
    AppState state = start_state();
    std::string problems;
    CHECK_NOTHROW(problems = session_from_json(state, nlohmann::json::parse(c.json)));
    CHECK(problems.find(std::string("skipped ") + c.field) != std::string::npos);
    CHECK(state.model.text == default_model());  // no model_text (or a wrong one): unchanged
    CHECK(state.graph() != nullptr);
  }

  // Everything but the two wrong fields is restored.
  AppState state = start_state();
  const nlohmann::json j = {{"schema", "tilescope-session/1"},
                            {"model_text", kSmallModel},
                            {"steps", nlohmann::json::array({"tile(i, 16)"})},
                            {"machine", "tiny"},
                            {"view", {{"tab", "memory"}}},
                            {"theme", "dark"}};
  const std::string problems = session_from_json(state, j);
  CHECK(problems.find("skipped steps is an array, not a string") != std::string::npos);
  CHECK(problems.find("skipped view is an object, not a string") != std::string::npos);
  CHECK(state.model.text == kSmallModel);
  CHECK(state.workbench.machine_name == "tiny");
  CHECK(state.theme == Theme::Dark);
  CHECK(state.workbench.steps_text() == "");
  CHECK(state.workbench.tab == ViewTab::Graph);
}

TEST_CASE("a document that is not a tilescope-session/1 object restores nothing and says why") {
  for (const char* text : {R"([1, 2])", R"("session")", R"({"model_text":"x: [2]"})",
                           R"({"schema":5,"model_text":"x: [2]"})",
                           R"({"schema":"tilescope-session/2","model_text":"x: [2]"})"}) {
    CAPTURE(text);
    const nlohmann::json j = nlohmann::json::parse(text);
    CHECK_FALSE(check_session_fields(j).unreadable.empty());
    AppState state = start_state();
    std::string problems;
    CHECK_NOTHROW(problems = session_from_json(state, j));
    CHECK(problems.find("not a tilescope-session/1 file") != std::string::npos);
    CHECK(state.model.text == default_model());
  }
  CHECK(check_session_fields(nlohmann::json::parse(R"({"schema":"tilescope-session/2"})"))
            .unreadable.find("'tilescope-session/2'") != std::string::npos);
}

// [SECTION] Start-up restore: unreadable sessions are moved aside

TEST_CASE(
    "a session that cannot be read is moved aside, the user told, and the autosave spares it") {
  struct Case {
    const char* name;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"wrong type", "[1, 2, 3]\n"},
      {"future schema", R"({"schema":"tilescope-session/2","model_text":"x: [2]"})"},
      {"corrupt JSON", R"J({"schema":"tilescope-session/1","model_text":"x: [2)J"},
      {"empty", ""},
      // One byte over the cap: io::kMaxSessionBytes is 16 MiB.
      {"too large", std::string(io::kMaxSessionBytes + 1, ' ')},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path dir = case_dir("unreadable");
    const std::string path = (dir / "session.json").string();
    spit(path, c.text);
    AppState state = start_state();
    const SessionRestore r = restore_session(state, path);
    CHECK(r.is_error);
    CHECK(r.autosave_ok);
    REQUIRE(r.moved_to.rfind(path + ".bad-", 0) == 0);
    CHECK(r.message.find("moved it to") != std::string::npos);
    CHECK(r.message.find(r.moved_to) != std::string::npos);
    CHECK_FALSE(fs::exists(path));
    CHECK(slurp(r.moved_to) == c.text);
    CHECK(state.model.text == default_model());
    // The first autosave writes a new session.json and leaves the moved file as it was.
    CHECK(save_session(state, path) == "");
    CHECK(slurp(r.moved_to) == c.text);
    CHECK(nlohmann::json::parse(slurp(path))["schema"] == "tilescope-session/1");
  }
}

TEST_CASE("the moved-aside name is session.json.bad-<UTC time>, numbered when taken") {
  const fs::path dir = case_dir("badname");
  const std::string path = (dir / "session.json").string();
  const std::string first = bad_session_path(path);
  // ".bad-" then YYYYMMDDTHHMMSSZ: 8 digits, T, 6 digits, Z.
  const std::string stamp = first.substr(path.size() + 5);
  REQUIRE(stamp.size() == 16);
  CHECK(stamp[8] == 'T');
  CHECK(stamp[15] == 'Z');
  for (size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14})
    CHECK(std::isdigit(static_cast<unsigned char>(stamp[i])));
  spit(first, "taken");
  const std::string second = bad_session_path(path);
  // Within the same second the name is taken, so "-2" follows; in the next second it is new.
  CHECK(second != first);
  CHECK_FALSE(fs::exists(second));
}

TEST_CASE("a session with a wrong-typed field is restored in part and a copy of it kept") {
  const fs::path dir = case_dir("partial");
  const std::string path = (dir / "session.json").string();
  const std::string text = nlohmann::json{
      {"schema", "tilescope-session/1"},
      {"model_text", kSmallModel},
      {"machine", 5}}.dump();
  spit(path, text);
  AppState state = start_state();
  const SessionRestore r = restore_session(state, path);
  CHECK(r.is_error);
  CHECK(r.moved_to.empty());
  CHECK(r.message.find("skipped machine is a number") != std::string::npos);
  CHECK(state.model.text == kSmallModel);
  // The next autosave drops the skipped field, so its value survives in a copy.
  const std::vector<std::string> copies = entries_starting(dir, "session.json.bad-");
  REQUIRE(copies.size() == 1);
  CHECK(slurp(dir / copies[0]) == text);
  CHECK(slurp(path) == text);
}

TEST_CASE("a step that no longer applies: it and every step after it named, the file kept") {
  // Issue #25: the steps after the first refused one vanished without a word, and the autosave
  // then rewrote the file with no copy kept.
  const fs::path dir = case_dir("dropped-steps");
  const std::string path = (dir / "session.json").string();
  const std::string text = nlohmann::json{{"schema", "tilescope-session/1"},
                                          {"model_text", "A: [64, 64]\nB: [64, 64]\nC = A @ B\n"},
                                          {"steps", "tile(i, 16); tile(q, 4); reorder(i.o, j)"}}
                               .dump();
  spit(path, text);
  AppState state = start_state();
  const SessionRestore r = restore_session(state, path);
  CHECK(r.is_error);
  CHECK(r.message.find("step 2, tile(q, 4), no longer applies (") != std::string::npos);
  CHECK(r.message.find("not restored after it: reorder(i.o, j)") != std::string::npos);
  CHECK(state.workbench.step_texts == std::vector<std::string>{"tile(i, 16)"});
  const std::vector<std::string> copies = entries_starting(dir, "session.json.bad-");
  REQUIRE(copies.size() == 1);
  CHECK(slurp(dir / copies[0]) == text);
}

TEST_CASE("recent entries that are not strings are counted in the message, not dropped silently") {
  const SessionFields f = check_session_fields(
      nlohmann::json::parse(R"({"schema": "tilescope-session/1", "recent": [1, "/a.model", 3]})"));
  REQUIRE(f.skipped.size() == 1);
  CHECK(f.skipped[0] == "recent files: 2 of 3 entries are not file names (strings)");
  CHECK(f.recent == std::vector<std::string>{"/a.model"});
}

TEST_CASE("300,000 unknown controls: the first 256 tried, one line for the rest, a short message") {
  nlohmann::json controls = nlohmann::json::object();
  for (int i = 0; i < 300000; ++i) controls["no.such-" + std::to_string(i)] = "1";
  const nlohmann::json j{{"schema", "tilescope-session/1"}, {"controls", controls}};
  const SessionFields f = check_session_fields(j);
  CHECK(f.controls.size() == kMaxSessionControls);
  REQUIRE(f.skipped.size() == 1);
  CHECK(f.skipped[0] == "299744 controls past the first 256 (more than the app has)");
  AppState state = start_state();
  const std::string message = session_from_json(state, j);
  // 8 problems shown in full (each "skipped ... unknown control ..." under 200 bytes), then a count.
  CHECK(message.size() < 8 * 200 + 100);
  CHECK(message.find("; and 249 more") != std::string::npos);  // 1 + 256 problems, 8 shown
}

TEST_CASE("a view name with a right-to-left override is echoed escaped") {
  AppState state = start_state();
  const std::string message = session_from_json(
      state, nlohmann::json{{"schema", "tilescope-session/1"}, {"view", "gra\u202ehp"}});
  CHECK(message == "skipped view 'gra\\u202Ehp' (not a view)");
}

TEST_CASE("the open profiler trace comes back with the session; one that is gone is named") {
  // Tests run in the source tree: the recorded quiz CNN trace, mapped onto the quiz model.
  const std::string trace = "assets/recorded/traces/quiz_cnn-h200-fp32-2026-12-06.trace.json";
  AppState state = start_state();
  state.model.text = io::read_text_input("assets/models/cnn.model", 1 << 20, "a model file").text;
  REQUIRE(reparse_model(state));
  update_state(state);
  REQUIRE(apply_command(state, parse_command("open-trace " + trace)) == "");
  const nlohmann::json saved = session_to_json(state);
  CHECK(saved["trace_path"] == trace);
  AppState back = start_state();
  CHECK(session_from_json(back, saved) == "");
  CHECK(back.trace.path == trace);
  REQUIRE(back.trace.mapping);
  CHECK(back.trace.mapping->nodes.size() == 5);
  nlohmann::json gone = saved;
  gone["trace_path"] = "no/such/trace.json";
  AppState lost = start_state();
  const std::string message = session_from_json(lost, gone);
  CHECK(message.find("the trace was not reopened") != std::string::npos);
  CHECK(message.find("no/such/trace.json") != std::string::npos);
  CHECK(lost.model.text == state.model.text);  // the rest came back
}

TEST_CASE("a start that died while restoring a session does not try that session again") {
  // The marker names a process that is gone (pids never reach INT_MAX): the last start crashed
  // there (a stack overflow cannot be caught), and would crash again on every start.
  const fs::path dir = case_dir("marker");
  const std::string path = (dir / "session.json").string();
  AppState saved = tilescope::core::test::state_for(kSmallModel);
  REQUIRE(save_session(saved, path) == "");
  const std::string text = slurp(path);
  spit(path + ".restoring", std::to_string(INT_MAX) + "\n");
  AppState state = start_state();
  const SessionRestore r = restore_session(state, path);
  CHECK(r.message.find("the last start stopped while restoring it") != std::string::npos);
  REQUIRE_FALSE(r.moved_to.empty());
  CHECK(slurp(r.moved_to) == text);
  CHECK(state.model.text == default_model());
  CHECK_FALSE(fs::exists(path + ".restoring"));

  // A good restore leaves no marker behind, and a marker of a live process (this one's parent,
  // another instance restoring right now) is not taken for a crash.
  REQUIRE(save_session(saved, path) == "");
  spit(path + ".restoring", std::to_string(getppid()) + "\n");
  AppState again = start_state();
  const SessionRestore ok = restore_session(again, path);
  CHECK(ok.message == "");
  CHECK(again.model.text == kSmallModel);
  CHECK_FALSE(fs::exists(path + ".restoring"));
}

TEST_CASE("a missing session is not an error and leaves the state alone") {
  const fs::path dir = case_dir("missing");
  AppState state = start_state();
  const SessionRestore r = restore_session(state, (dir / "session.json").string());
  CHECK(r.message == "");
  CHECK(r.moved_to == "");
  CHECK(state.model.text == default_model());
}

// [SECTION] Writing the session

TEST_CASE("saves racing from several threads leave one whole session and no temp files") {
  // Four instances autosaving at once, each its own model: the file must always be exactly one
  // of the four sessions (the old shared "session.json.tmp" let one writer truncate another's
  // file or rename it away, so a save failed or the file was cut).
  const fs::path dir = case_dir("race");
  const std::string path = (dir / "session.json").string();
  constexpr int kWriters = 4, kSaves = 40;
  std::vector<AppState> states(kWriters);
  std::vector<std::string> texts;
  for (int w = 0; w < kWriters; ++w) {
    states[size_t(w)].model.text = "x: [" + std::to_string(w + 2) + "]\ny = relu(x)\n";
    texts.push_back(session_to_json(states[size_t(w)]).dump());
  }
  std::vector<int> failures(kWriters, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int s = 0; s < kSaves; ++s)
        if (!save_session(states[size_t(w)], path).empty()) ++failures[size_t(w)];
    });
  }
  for (std::thread& t : threads) t.join();
  for (int w = 0; w < kWriters; ++w) CHECK(failures[size_t(w)] == 0);
  const nlohmann::json j = nlohmann::json::parse(slurp(path), nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(std::find(texts.begin(), texts.end(), j.dump()) != texts.end());
  CHECK(entries_starting(dir, "session.json.tmp").empty());
}

TEST_CASE("a symlink planted at the old temp name is not followed by the save") {
  const fs::path dir = case_dir("symlink");
  const std::string path = (dir / "session.json").string();
  const fs::path victim = dir / "victim.txt";
  spit(victim, "precious\n");
  fs::create_symlink(victim, path + ".tmp");
  AppState state = tilescope::core::test::state_for(kSmallModel);
  CHECK(save_session(state, path) == "");
  CHECK(slurp(victim) == "precious\n");
  CHECK(fs::is_symlink(path + ".tmp"));  // left alone, not replaced or followed
  CHECK_FALSE(fs::is_symlink(path));
  CHECK(nlohmann::json::parse(slurp(path))["model_text"] == kSmallModel);
}

TEST_CASE("the save writes through the user's own symlink at the session path; the link stays") {
  // Issue #25: a session kept elsewhere (a dotfiles folder) and linked into place was replaced
  // by a regular file, and the next save went nowhere the user looks.
  const fs::path dir = case_dir("symlink-path");
  const std::string path = (dir / "session.json").string();
  const fs::path target = dir / "kept" / "session.json";
  fs::create_directories(target.parent_path());
  spit(target, "old\n");
  fs::create_symlink(target, path);
  AppState state = tilescope::core::test::state_for(kSmallModel);
  CHECK(save_session(state, path) == "");
  CHECK(fs::is_symlink(path));
  CHECK(fs::read_symlink(path) == target);
  CHECK(nlohmann::json::parse(slurp(target))["model_text"] == kSmallModel);
}

TEST_CASE("a symlink someone else owns at the session path is replaced, not written through") {
  if (::geteuid() != 0) return;  // only root can make a link owned by another user
  const fs::path dir = case_dir("symlink-other");
  const std::string path = (dir / "session.json").string();
  const fs::path victim = dir / "victim.txt";
  spit(victim, "precious\n");
  fs::create_symlink(victim, path);
  REQUIRE(::lchown(path.c_str(), 65534, 65534) == 0);  // nobody's link
  AppState state = tilescope::core::test::state_for(kSmallModel);
  CHECK(save_session(state, path) == "");
  CHECK(slurp(victim) == "precious\n");
  CHECK_FALSE(fs::is_symlink(path));
}

TEST_CASE("a save never replaces a device, a FIFO or a folder") {
  const fs::path dir = case_dir("not-regular");
  const std::string fifo = (dir / "pipe.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  AppState state = tilescope::core::test::state_for(kSmallModel);
  const std::string e = save_session(state, fifo);
  CHECK(e.find("not a regular file") != std::string::npos);
  CHECK(fs::is_fifo(fifo));
  const std::string folder = (dir / "folder.json").string();
  fs::create_directories(folder);
  CHECK(save_session(state, folder).find("a folder") != std::string::npos);
  CHECK(fs::is_directory(folder));
}

TEST_CASE("a model text that is not UTF-8 is saved (replaced), not thrown on") {
  // A Latin-1 model file: "é" is the single byte 0xE9. dump() threw type_error 316 on it, and
  // the autosave runs every frame.
  AppState state;
  state.model.text = "# caf\xE9\nx: [2]\ny = relu(x)\n";
  std::string text;
  CHECK_NOTHROW(text = session_text(state));
  CHECK(nlohmann::json::parse(text)["model_text"].get<std::string>().find("caf") == 2);
  const fs::path dir = case_dir("latin1");
  CHECK(save_session(state, (dir / "session.json").string()) == "");
}

// [SECTION] Script commands: numbers out of range, files that never end

TEST_CASE("pan by offsets past float's range leaves a finite view within one canvas of the graph") {
  // `pan 1e308 -1e308` made pan_x inf (1e308 does not fit a float) and the canvas crashed.
  AppState state = tilescope::core::test::state_for(kSmallModel);
  refresh_scene(state, fixed_measure);
  REQUIRE(state.scene);
  const Rect canvas = state.panels().graph;
  CHECK(tilescope::core::test::run(state, "pan 1e308 -1e308") == "");
  REQUIRE(std::isfinite(state.view.pan_x));
  REQUIRE(std::isfinite(state.view.pan_y));
  // The bounds: the graph's left edge at most one canvas width right of the canvas's right edge,
  // its bottom edge at most one canvas height above the canvas's top.
  CHECK(state.view.pan_x == doctest::Approx(2 * canvas.w));
  CHECK(state.view.pan_y == doctest::Approx(-state.scene->height * state.view.zoom - canvas.h));
  // Back from the edge by dragging: pans are exact again.
  CHECK(tilescope::core::test::run(state, "pan -10 10") == "");
  CHECK(state.view.pan_x == doctest::Approx(2 * canvas.w - 10));
  // A pan pushed by a view with a non-finite delta is refused, not applied.
  Command bad;
  bad.kind = CommandKind::Pan;
  bad.a = std::nan("");
  CHECK(apply_command(state, bad) != "");
  CHECK(std::isfinite(state.view.pan_x));
}

TEST_CASE("zoom factors past float's range stop at the zoom limits with a finite pan") {
  AppState state = tilescope::core::test::state_for(kSmallModel);
  refresh_scene(state, fixed_measure);
  CHECK(tilescope::core::test::run(state, "zoom 1e308") == "");
  CHECK(state.view.zoom == kMaxZoom);
  CHECK(std::isfinite(state.view.pan_x));
  CHECK(tilescope::core::test::run(state, "zoom 1e-300 100000 -100000") == "");
  CHECK(state.view.zoom == kMinZoom);
  CHECK(std::isfinite(state.view.pan_x));
  CHECK(std::isfinite(state.view.pan_y));
}

TEST_CASE("resize takes 16 to 8192 pixels a side; outside that the script line is named") {
  // `resize 20000 20000` ended the app in bad_alloc (framebuffer and screenshot buffers).
  CHECK_THROWS_WITH_AS(parse_command("resize 20000 20000"),
                       doctest::Contains("each side must be 16 to 8192 pixels, got 20000"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_script("view graph\nresize 800 15\n", "r.script"),
                       doctest::Contains("r.script:2: resize: each side must be 16 to 8192"),
                       CommandError);
  CHECK(parse_command("resize 8192 16").a == 8192);
  // Commands built in code are checked when applied, too.
  AppState state;
  Command big;
  big.kind = CommandKind::Resize;
  big.a = 20000;
  big.b = 100;
  CHECK(apply_command(state, big).find("16 to 8192") != std::string::npos);
  CHECK(state.requests.resize_w == 0);
}

TEST_CASE("NaN, inf or a number past a window's size in any numeric argument names the line") {
  for (const char* line :
       {"pan nan 0",        "pan 0 inf",        "pan 1e400 0",      "zoom inf",
        "zoom nan",         "zoom 2 nan 3",     "zoom 2 1e308 0",   "click inf 0",
        "click 1e308 1",    "drag 0 0 -inf 0",  "drag 0 0 0 1e300", "scroll 0 0 nan",
        "scroll 0 0 1e308", "scroll 1e308 0 1", "wait-seconds inf", "wait-frames nan",
        "tiles seek nan",   "tiles speed inf",  "goto-step inf",    "replace-line inf y = x",
        "resize nan 100",   "resize 100 inf"}) {
    CAPTURE(line);
    CHECK_THROWS_WITH_AS(parse_script(std::string("quit\n\n") + line + "\n", "n.script"),
                         doctest::Contains("n.script:3: "), CommandError);
  }
}

TEST_CASE("set-model-file reads at most the model cap: /dev/zero, a folder, an oversize file") {
  AppState state = tilescope::core::test::state_for(kSmallModel);
  const fs::path dir = case_dir("model-file");
  const fs::path big = dir / "big.model";
  spit(big, std::string(io::kMaxModelBytes + 1, '#'));
  struct Case {
    std::string path;
    const char* says;
  };
  for (const Case& c :
       {Case{"/dev/zero", "has more than 8 MiB"}, Case{dir.string(), "is a directory"},
        Case{big.string(), "larger than 8 MiB"}}) {
    CAPTURE(c.path);
    const std::string e = tilescope::core::test::run(state, "set-model-file " + c.path);
    CHECK(e.find(c.says) != std::string::npos);
    CHECK(state.model.text == kSmallModel);  // unchanged
  }
}

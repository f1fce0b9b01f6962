// Rules of the lesson player without a display: the Markdown model and its word wrap, the lesson
// as a document, the catalogue (a malformed lesson listed with file:line:col), entering a step
// drives the workbench without losing the learner's text, predictions revealed only after input,
// teacher mode, progress in the session (old sessions and bad fields), and the commands' text.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/lesson_commands.h"
#include "app/core/lesson_handout.h"
#include "app/core/lesson_player.h"
#include "app/core/markdown.h"
#include "app/core/session.h"
#include "sim/lang/parser.h"

#include <doctest/doctest.h>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

using namespace tilescope::core;
namespace fs = std::filesystem;

namespace {

std::string run(AppState& s, const std::string& line) {
  return apply_command(s, parse_command(line));
}

// [SECTION] A lessons folder of the test's own

// Three steps: the first loads model m on tiny in the Schedule view, the second asks for the
// matmul's FLOPs (2 · 8 · 4 · 16 = 1024: one multiply-add is 2 FLOPs), the third wants m fused
// into one kernel by the learner (a checkpoint).
const char* kLesson =
    "---\n"
    "title: Test lesson\n"
    "level: beginner\n"
    "minutes: 5\n"
    "---\n"
    "Intro with **bold** text.\n"  // 6
    "\n"
    "<!-- step: load view=schedule machine=tiny -->\n"  // 8
    "### Load\n"
    "\n"
    "```model id=m\n"  // 11
    "x: [8, 16]\n"
    "W: [4, 16] weight\n"
    "y = relu(x @ W.T)\n"
    "```\n"  // 15
    "\n"
    "```steps id=fused model=m\n"  // 17
    "fuse(matmul0, relu0)\n"
    "```\n"
    "\n"
    "<!-- step: guess -->\n"  // 21
    "### Guess\n"
    "\n"
    "```predict id=flops model=m\n"
    "question: How many FLOPs does `matmul0` do?\n"
    "answer: flops(matmul0)\n"
    "within 10%\n"
    "unit: FLOP\n"
    "explain: Two per multiply-add: 2 x 8 x 4 x 16.\n"
    "```\n"
    "\n"
    "```check model=m\n"
    "flops(matmul0) == 2 * 8 * 4 * 16\n"
    "```\n"
    "\n"
    "<!-- step: end machine=tiny -->\n"
    "### End\n"
    "Done.\n"
    "\n"
    "```checkpoint id=fuse-it model=m solution=fused\n"
    "goal: Make `m` one kernel.\n"
    "hint: Fuse matmul0 with relu0.\n"
    "kernels(learner) == 1\n"
    "```\n";

struct LessonDir {
  fs::path path;
  LessonDir() {
    path = fs::temp_directory_path() / ("tilescope-player-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
    std::ofstream(path / "01-test.md") << kLesson;
    // Line 6 names a block kind the format does not have.
    std::ofstream(path / "02-broken.md")
        << "---\ntitle: Broken\nlevel: beginner\nminutes: 5\n---\n```chek\nx\n```\n";
    std::ofstream(path / "README.md") << "# not a lesson\n";
  }
  ~LessonDir() { fs::remove_all(path); }
};

AppState player_state(const LessonDir& dir) {
  AppState s;
  s.model.text = std::string(tilescope::lang::default_model_text());
  REQUIRE(reparse_model(s));
  update_state(s);
  s.lessons.dir = dir.path.string();
  return s;
}

// Lets the lesson's background job finish, as frames would.
void wait_lesson(AppState& s) {
  for (int i = 0; i < 6000 && s.lessons.loading(); ++i) {
    update_state(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  update_state(s);
  REQUIRE_FALSE(s.lessons.loading());
  REQUIRE(s.lessons.computed);
}

}  // namespace

// [SECTION] Markdown

TEST_CASE("markdown: headings, emphasis, code, lists, tables, code blocks, links, images") {
  const std::vector<md::Block> b = md::parse_markdown(
      "# Title\n"
      "\n"
      "Some **bold**, *emph* and `code` with a [link](02-x.md).\n"
      "\n"
      "- one\n"
      "- two\n"
      "  - nested\n"
      "\n"
      "3. three\n"
      "4. four\n"
      "\n"
      "| a | b |\n"
      "|---|---|\n"
      "| 1 | `2` |\n"
      "\n"
      "```text\n"
      "line 1\n"
      "line 2\n"
      "```\n"
      "\n"
      "<!-- step: hidden -->\n"
      "![a chart](assets/x.png)\n"
      "\n"
      "---\n");
  REQUIRE(b.size() == 11);
  CHECK(b[0].kind == md::BlockKind::Heading);
  CHECK(b[0].level == 1);
  CHECK(md::plain_text(b[0].spans) == "Title");
  CHECK(b[1].kind == md::BlockKind::Paragraph);
  // Spans: "Some ", bold, ", ", emph, " and ", code, " with a ", link, "."
  REQUIRE(b[1].spans.size() == 9);
  CHECK(b[1].spans[1].text == "bold");
  CHECK(b[1].spans[1].style == md::kStrong);
  CHECK(b[1].spans[3].style == md::kEmph);
  CHECK(b[1].spans[5].text == "code");
  CHECK(b[1].spans[5].style == md::kCode);
  CHECK(b[1].spans[7].style == md::kLink);
  CHECK(b[1].spans[7].href == "02-x.md");
  CHECK(b[2].kind == md::BlockKind::ListItem);
  CHECK(b[2].bullet == "\u2022");
  CHECK(b[2].level == 1);
  CHECK(b[4].level == 2);  // nested
  CHECK(md::plain_text(b[4].spans) == "nested");
  CHECK(b[5].bullet == "3.");  // an ordered list keeps its start
  CHECK(b[6].bullet == "4.");
  CHECK(b[7].kind == md::BlockKind::Table);
  REQUIRE(b[7].rows.size() == 2);
  CHECK(md::plain_text(b[7].rows[0][1]) == "b");
  CHECK(b[7].rows[1][1][0].style == md::kCode);
  CHECK(b[8].kind == md::BlockKind::Code);
  CHECK(b[8].lang == "text");
  CHECK(b[8].code == "line 1\nline 2\n");
  // The HTML comment is dropped; the image is a span of its own.
  CHECK(b[9].spans.size() == 1);
  CHECK(b[9].spans[0].style == md::kImage);
  CHECK(b[9].spans[0].href == "assets/x.png");
  CHECK(b[9].spans[0].text == "a chart");
  CHECK(b[10].kind == md::BlockKind::Rule);
}

TEST_CASE("markdown: $maths$ reads as plain text with Unicode") {
  CHECK(md::latex_to_text("4 \\times 4096^2") == "4 \u00D7 4096\u00B2");
  CHECK(md::latex_to_text("2^{10}") == "2\u00B9\u2070");
  CHECK(md::latex_to_text("\\frac{a+b}{2}") == "(a+b)/2");
  CHECK(md::latex_to_text("\\frac{M}{N}") == "M/N");
  CHECK(md::latex_to_text("x_0 \\le \\alpha") == "x\u2080 \u2264 \u03B1");
  // No subscript letter exists for 'j' in the super/subscript block: it stays readable as _j.
  CHECK(md::latex_to_text("a_j") == "a_j");
  CHECK(md::latex_to_text("\\text{bytes}/\\sqrt{n}") == "bytes/\u221An");
  CHECK(md::latex_to_text("\\log n") == "log n");
  const std::vector<md::Block> b = md::parse_markdown("it moves $2 \\times 64$ MiB\n");
  REQUIRE(b.size() == 1);
  REQUIRE(b[0].spans.size() == 3);
  CHECK(b[0].spans[1].style == md::kMath);
  CHECK(b[0].spans[1].text == "2 \u00D7 64");
}

TEST_CASE("word wrap: lines no wider than the width, breaks at blanks, long words split") {
  // Every byte 8 px wide: widths are hand counts of characters.
  const md::SpanMeasure eight = [](std::string_view s, uint8_t) {
    return 8.0f * static_cast<float>(s.size());
  };
  const std::vector<md::Span> spans = {{"aaa bbb ccc", md::kPlain, {}}};
  // 56 px hold 7 characters: "aaa bbb" is exactly 7 (its trailing blank may hang over).
  auto lines = md::wrap_spans(spans, 56, eight);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].runs[0].text == "aaa bbb ");
  CHECK(lines[1].runs[0].text == "ccc");
  CHECK(lines[1].runs[0].x == 0);
  // Two spans on one line keep their own runs, the second starting where the first ended.
  lines = md::wrap_spans({{"ab ", md::kPlain, {}}, {"cd", md::kCode, {}}}, 100, eight);
  REQUIRE(lines.size() == 1);
  REQUIRE(lines[0].runs.size() == 2);
  CHECK(lines[0].runs[1].x == 24);
  CHECK(lines[0].width == 40);
  // A word of 10 characters in 32 px (4 characters) is cut into 4 + 4 + 2.
  lines = md::wrap_spans({{"abcdefghij", md::kCode, {}}}, 32, eight);
  REQUIRE(lines.size() == 3);
  CHECK(lines[2].runs[0].text == "ij");
  // A hard break starts a new line.
  lines = md::wrap_spans({{"a", 0, {}}, {"\n", 0, {}}, {"b", 0, {}}}, 100, eight);
  CHECK(lines.size() == 2);
}

// [SECTION] The lesson as a document

TEST_CASE("a lesson's document: prose, step strips and blocks in reading order") {
  const tilescope::lesson::Lesson l = tilescope::lesson::parse_lesson(kLesson, "01-test.md");
  REQUIRE(l.steps.size() == 3);
  CHECK(l.steps[0].view == "schedule");
  CHECK(l.steps[0].machine == "tiny");
  const std::vector<LessonDocItem> doc = lesson_document(l);
  using K = LessonDocItem::Kind;
  // Intro, step load, "### Load", model, steps, step guess, "### Guess", predict, check, step end,
  // "### End Done."
  std::vector<K> kinds;
  for (const LessonDocItem& i : doc) kinds.push_back(i.kind);
  CHECK(kinds == std::vector<K>{K::Markdown, K::Step, K::Markdown, K::Block, K::Block, K::Step,
                                K::Markdown, K::Block, K::Block, K::Step, K::Markdown, K::Block});
  CHECK(md::plain_text(doc[0].markdown[0].spans) == "Intro with bold text.");  // no front matter
  CHECK(doc[3].block == 0);
  CHECK(doc[7].block == 2);
  CHECK(doc[9].step == 2);
  CHECK(md::plain_text(doc[10].markdown[0].spans) == "End");
  CHECK(doc[11].block == 4);  // the checkpoint
}

TEST_CASE("the catalogue lists every lesson, a malformed one with its file:line:col") {
  LessonDir dir;
  const std::vector<LessonEntry> c = load_lesson_catalogue(dir.path.string());
  REQUIRE(c.size() == 2);  // README.md is not a lesson
  CHECK(c[0].id == "01-test");
  CHECK(c[0].lesson);
  CHECK(c[1].id == "02-broken");
  CHECK_FALSE(c[1].lesson);
  CHECK(c[1].error.find("02-broken.md:6:") != std::string::npos);
  CHECK(c[1].error.find("unknown block kind 'chek'") != std::string::npos);
  // The shipped lessons all parse.
  for (const LessonEntry& e : load_lesson_catalogue("lessons")) {
    CAPTURE(e.file);
    CHECK(e.error == "");
  }
}

// [SECTION] Playing a lesson

TEST_CASE("opening a lesson drives the workbench: model, machine and view of the step") {
  LessonDir dir;
  AppState s = player_state(dir);
  CHECK(run(s, "lesson open 2").find("02-broken.md:6:") != std::string::npos);
  CHECK_FALSE(s.lessons.is_open());
  CHECK(run(s, "lesson open 9").find("no lesson '9'") != std::string::npos);
  REQUIRE(run(s, "lesson open 1") == "");
  REQUIRE(s.lessons.is_open());
  CHECK(s.lessons.step == 0);
  // The built-in example was not the learner's own work: the step's model replaced it.
  CHECK(s.model.text == "x: [8, 16]\nW: [4, 16] weight\ny = relu(x @ W.T)\n");
  CHECK(s.workbench.machine_name == "tiny");
  CHECK(s.workbench.tab == ViewTab::Schedule);
  wait_lesson(s);
  CHECK(s.lessons.computed->error == "");
  // "Apply these steps": the block's model with its steps, from a fresh history.
  REQUIRE(run(s, "lesson apply fused") == "");
  REQUIRE(s.workbench.history);
  CHECK(s.workbench.history->size() == 1);
  CHECK(s.workbench.kernel()->op_names == std::vector<std::string>{"matmul0", "relu0"});
  CHECK(run(s, "lesson apply nosuch").find("no steps block 'nosuch'") != std::string::npos);
}

TEST_CASE("the learner's edited model text is never replaced without saying so") {
  LessonDir dir;
  AppState s = player_state(dir);
  const std::string mine = "a: [4, 4]\nb = relu(a)\n";
  REQUIRE(run(s, "set-model-text " + std::string("a: [4, 4]\\nb = relu(a)\\n")) == "");
  REQUIRE(run(s, "lesson open 01-test") == "");
  CHECK(s.model.text == mine);  // kept: it was the learner's
  CHECK(s.lessons.model_offer == "m");
  // Loading on request keeps a copy to restore.
  REQUIRE(run(s, "lesson load-model m") == "");
  CHECK(s.model.text.rfind("x: [8, 16]", 0) == 0);
  CHECK(s.lessons.stash == mine);
  CHECK(s.lessons.model_offer == "");
  REQUIRE(run(s, "lesson restore-model") == "");
  CHECK(s.model.text == mine);
  CHECK(run(s, "lesson restore-model").find("no text of yours") != std::string::npos);
}

TEST_CASE("a prediction is revealed only after input; a wrong one shows its error") {
  LessonDir dir;
  AppState s = player_state(dir);
  REQUIRE(run(s, "lesson open 1") == "");
  wait_lesson(s);
  REQUIRE(run(s, "lesson next") == "");
  CHECK(s.lessons.step == 1);
  // The first step asked nothing: moving past it did it.
  CHECK(s.lessons.progress->is_done("load"));
  CHECK_FALSE(answer_visible(s.lessons, false, "flops"));
  nlohmann::json j = lesson_state_json(s);
  CHECK(j["predictions"][0]["revealed"] == false);
  CHECK_FALSE(j["predictions"][0].contains("answer"));
  // Input that is not a quantity is no attempt: nothing revealed, the note says what is wanted.
  REQUIRE(run(s, "lesson predict flops lots") == "");
  CHECK(s.lessons.notes.count("flops"));
  CHECK_FALSE(answer_visible(s.lessons, false, "flops"));
  // 2000 against 1024 is off by (2000 − 1024) / 1024 = 95.3%, outside 10%.
  REQUIRE(run(s, "lesson predict flops 2000") == "");
  const tilescope::lesson::PredictionRecord* r = s.lessons.progress->prediction("flops");
  REQUIRE(r);
  CHECK_FALSE(r->pass);
  CHECK(r->answer == 1024);
  CHECK(r->relative_error == doctest::Approx((2000.0 - 1024.0) / 1024.0));
  // A wrong try with a try left (2 by default): the answer stays hidden, the note says which way
  // and roughly how far (2000 / 1024 = 1.95: "less than 2.5×"), and how many tries remain.
  CHECK_FALSE(answer_visible(s.lessons, false, "flops"));
  CHECK(s.lessons.notes.at("flops") == "Not yet — off by less than 2.5×: too high. 1 try left.");
  CHECK_FALSE(s.lessons.progress->is_done("guess"));
  // The second try is wrong too (3000): settled, the answer revealed with its explanation.
  REQUIRE(run(s, "lesson predict flops 3000") == "");
  CHECK(answer_visible(s.lessons, false, "flops"));
  j = lesson_state_json(s);
  CHECK(j["predictions"][0]["revealed"] == true);
  CHECK(j["predictions"][0]["pass"] == false);
  CHECK(j["predictions"][0]["explanation"] == "Two per multiply-add: 2 x 8 x 4 x 16.");
  CHECK(j["predictions"][0]["answer"].get<std::string>().find("1.024") != std::string::npos);
  // Its step is done now (its one prediction is settled), and another answer is refused.
  CHECK(s.lessons.progress->is_done("guess"));
  CHECK(run(s, "lesson predict flops 1024").find("is settled") != std::string::npos);
  CHECK(run(s, "lesson next") == "");
  CHECK(run(s, "lesson next").find("last step") != std::string::npos);
  CHECK(run(s, "lesson goto load") == "");
  CHECK(s.lessons.step == 0);
  CHECK(run(s, "lesson goto 9").find("no step '9'") != std::string::npos);
}

TEST_CASE("teacher mode shows answers at a desk; presenting hides them until revealed") {
  LessonDir dir;
  AppState s = player_state(dir);
  REQUIRE(run(s, "lesson open 1") == "");
  wait_lesson(s);
  REQUIRE(run(s, "teacher on") == "");
  CHECK(answer_visible(s.lessons, false, "flops"));
  CHECK_FALSE(answer_visible(s.lessons, true, "flops"));
  CHECK(run(s, "lesson reveal").find("no prediction to reveal") != std::string::npos);  // step 1
  REQUIRE(run(s, "lesson goto guess") == "");
  REQUIRE(run(s, "lesson reveal") == "");
  CHECK(answer_visible(s.lessons, true, "flops"));
  REQUIRE(run(s, "teacher off") == "");
  REQUIRE(run(s, "lesson close") == "");
  REQUIRE(run(s, "lesson open 1") == "");
  CHECK_FALSE(answer_visible(s.lessons, false, "flops"));  // revealing was for that class only
}

namespace {

// Lets the checkpoint evaluations of the learner's current state finish, as frames would.
void settle(AppState& s) {
  for (int i = 0; i < 6000; ++i) {
    update_state(s);
    bool current = !s.lessons.busy();
    for (const auto& [id, st] : s.lessons.checkpoints)
      current = current && st.key == learner_key(s.workbench);
    if (current && !s.lessons.checkpoints.empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FAIL("the checkpoint evaluation did not finish");
}

}  // namespace

TEST_CASE(
    "a checkpoint turns green on the learner's own schedule; a failed attempt shows the hint") {
  LessonDir dir;
  AppState s = player_state(dir);
  REQUIRE(run(s, "lesson open 1") == "");
  wait_lesson(s);
  // Entering the step loads its model and then chooses its machine: the half-made state between
  // (m on host) is not an attempt of the learner's (it once showed the hint on arrival).
  REQUIRE(run(s, "machine host") == "");
  s.model.text = std::string(tilescope::lang::default_model_text());
  REQUIRE(reparse_model(s));
  update_state(s);
  REQUIRE(run(s, "lesson goto end") == "");
  CHECK(s.workbench.machine_name == "tiny");
  CHECK(s.model.text.rfind("x: [8, 16]", 0) == 0);
  settle(s);
  const CheckpointStatus& st = s.lessons.checkpoints.at("fuse-it");
  // m lowers to two kernels (matmul0, relu0): not reached, but nothing tried yet: no hint.
  CHECK(st.evaluated);
  CHECK_FALSE(st.pass);
  CHECK_FALSE(st.attempted);
  // A step that leaves two kernels is an attempt that fails: the hint shows.
  REQUIRE(run(s, "apply tile(i, 2)") == "");
  settle(s);
  CHECK_FALSE(s.lessons.checkpoints.at("fuse-it").pass);
  CHECK(s.lessons.checkpoints.at("fuse-it").attempted);
  CHECK(lesson_state_json(s)["checkpoints"][0]["hint_shown"] == true);
  REQUIRE(run(s, "undo") == "");
  REQUIRE(run(s, "apply fuse(matmul0, relu0)") == "");
  settle(s);
  CHECK(s.lessons.checkpoints.at("fuse-it").pass);
  CHECK(s.lessons.progress->checkpoint_reached("fuse-it"));
  CHECK(s.lessons.progress->is_done("end"));  // its one checkpoint reached
  // Undoing does not take a reached checkpoint back.
  REQUIRE(run(s, "undo") == "");
  settle(s);
  CHECK_FALSE(s.lessons.checkpoints.at("fuse-it").pass);
  CHECK(s.lessons.progress->checkpoint_reached("fuse-it"));

  // "Show me" applies the solution; passing on it is not counted as the learner's.
  REQUIRE(run(s, "lesson reset") == "");
  REQUIRE(run(s, "lesson goto end") == "");
  REQUIRE(run(s, "lesson show-me fuse-it") == "");
  CHECK(s.workbench.kernel()->op_names == std::vector<std::string>{"matmul0", "relu0"});
  settle(s);
  CHECK(s.lessons.checkpoints.at("fuse-it").pass);
  CHECK(s.lessons.checkpoints.at("fuse-it").shown);
  CHECK_FALSE(s.lessons.progress->checkpoint_reached("fuse-it"));
  CHECK(run(s, "lesson show-me nope").find("no checkpoint 'nope'") != std::string::npos);
}

TEST_CASE("a check that fails on this machine says which and why; the player goes on") {
  const fs::path dir =
      fs::temp_directory_path() / ("tilescope-player-missing-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "01-missing.md")
      << "---\ntitle: Missing\nlevel: beginner\nminutes: 5\n---\n"
         "<!-- step: one -->\n### One\n"
         "```check\n"
         "recorded(\"assets/recorded/no-such-file.json\", \"suites/0/gflops\") == 1\n"
         "```\n";
  AppState s;
  s.lessons.dir = dir.string();
  REQUIRE(run(s, "lesson open 1") == "");
  wait_lesson(s);
  CHECK(s.lessons.computed->error == "");
  const auto& results = s.lessons.computed->checks.at(0);
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].pass);
  CHECK(results[0].error.find("no-such-file.json") != std::string::npos);
  const nlohmann::json j = lesson_state_json(s);
  CHECK(j["checks"][0]["pass"] == 0);
  CHECK(j["checks"][0]["first_failure"].get<std::string>().find("no-such-file.json") !=
        std::string::npos);
  // The lesson still plays: its one step is passed by moving on (there is nothing after it).
  CHECK(run(s, "lesson next").find("last step") != std::string::npos);
  fs::remove_all(dir);
}

// [SECTION] Progress in the session

TEST_CASE("progress survives a session round trip; reset forgets it") {
  LessonDir dir;
  AppState s = player_state(dir);
  REQUIRE(run(s, "lesson open 1") == "");
  wait_lesson(s);
  REQUIRE(run(s, "lesson goto guess") == "");
  REQUIRE(run(s, "lesson predict flops 1000") == "");  // 2.3% off: right
  const nlohmann::json saved = session_to_json(s);
  CHECK(saved["lesson"]["open"] == "01-test");
  CHECK(saved["lesson"]["step"] == "guess");

  AppState t = player_state(dir);
  REQUIRE(session_from_json(t, saved) == "");
  REQUIRE(t.lessons.is_open());
  CHECK(t.lessons.step == 1);
  CHECK(t.lessons.progress->is_done("load"));
  CHECK(t.lessons.progress->is_done("guess"));
  REQUIRE(t.lessons.progress->prediction("flops"));
  CHECK(t.lessons.progress->prediction("flops")->pass);
  // Restoring does not load the step's model over the model text the session brought back.
  CHECK(t.model.text == s.model.text);
  CHECK(lesson_steps_done(t.lessons, 0) == std::pair<size_t, size_t>{2, 3});
  wait_lesson(t);
  REQUIRE(run(t, "lesson reset") == "");
  CHECK(t.lessons.progress->done_count() == 0);
  CHECK_FALSE(t.lessons.progress->prediction("flops"));
  CHECK(session_to_json(t)["lesson_progress"]["01-test"]["predictions"].empty());
}

TEST_CASE("sessions without lesson fields restore; bad lesson fields are skipped by name") {
  LessonDir dir;
  AppState s = player_state(dir);
  nlohmann::json old = session_to_json(s);
  old.erase("lesson");
  old.erase("lesson_progress");
  CHECK(session_from_json(s, old) == "");
  CHECK_FALSE(s.lessons.is_open());

  nlohmann::json bad = session_to_json(s);
  bad["lesson"] = {{"open", 7}, {"teacher", "yes"}, {"panel", "sideways"}};
  bad["lesson_progress"] = {{"01-test", {{"lesson", "01-test"}, {"steps", 3}}},
                            {"99-gone", {{"lesson", "99-gone"}}}};
  AppState t = player_state(dir);
  const std::string message = session_from_json(t, bad);
  CHECK(message.find("skipped lesson/open (a number, not a string)") != std::string::npos);
  CHECK(message.find("skipped lesson/teacher (a string, not a boolean)") != std::string::npos);
  CHECK(message.find("skipped lesson/panel 'sideways'") != std::string::npos);
  CHECK(message.find("skipped lesson_progress/01-test (") != std::string::npos);
  // A lesson not in the folder now keeps its progress as it was, for when it comes back.
  CHECK(t.lessons.saved.count("99-gone"));
  CHECK(session_to_json(t)["lesson_progress"].contains("99-gone"));
  // The other fields came back.
  CHECK(t.model.text == s.model.text);
}

// [SECTION] Handout

TEST_CASE("handout HTML: Markdown written out, questions in the text, answers after the break") {
  CHECK(html_escape("<a & \"b\">") == "&lt;a &amp; &quot;b&quot;&gt;");
  CHECK(markdown_html(md::parse_markdown("# T\n\nSome **b** `c<d>`\n\n- x\n")) ==
        "<h1>T</h1>\n<p>Some <strong>b</strong> <code>c&lt;d&gt;</code></p>\n"
        "<p class=\"li\" style=\"margin-left:1.4em\"><span class=\"bullet\">\u2022</span> "
        "x</p>\n");
  const tilescope::lesson::Lesson l = tilescope::lesson::parse_lesson(kLesson, "01-test.md");
  tilescope::core::JobProgress progress;
  const LessonComputed computed = compute_lesson(l, progress);
  REQUIRE(computed.error == "");
  HandoutOptions options;
  options.pictures[1] = "step-2.png";
  const std::string html = lesson_handout_html(l, computed, options);
  const size_t answers = html.find("<section class=\"answers\">");
  REQUIRE(answers != std::string::npos);
  CHECK(html.find("How many FLOPs does <code>matmul0</code> do?") < answers);
  CHECK(html.find("Two per multiply-add") > answers);
  CHECK(html.find(computed.answers.at("flops").shown) > answers);
  // The picture of step 2 follows its heading; step 1 has none.
  const size_t picture = html.find("<img src=\"step-2.png\"");
  CHECK(picture > html.find("<h3>Guess</h3>"));
  CHECK(picture < html.find("<strong>Question 1.</strong>"));
  CHECK(html.find("step-1.png") == std::string::npos);
  // The checkpoint: its goal in the text, its hint and solution on the last page.
  CHECK(html.find("<strong>Your turn.</strong> Make <code>m</code> one kernel.") < answers);
  CHECK(html.find("Hint: Fuse matmul0 with relu0.") > answers);
  CHECK(html.find("A solution: <code>fuse(matmul0, relu0)</code>") > answers);
}

// [SECTION] Commands

TEST_CASE("lesson and teacher commands round-trip through their script text") {
  for (const char* line : {"lesson open 2",
                           "lesson next",
                           "lesson prev",
                           "lesson goto simulate",
                           "lesson predict dram-ratio 2.5 MiB",
                           "lesson draft dram-ratio 2.",
                           "lesson reveal",
                           "lesson reveal dram-ratio",
                           "lesson apply small_fused",
                           "lesson show-me fuse-small",
                           "lesson load-model small",
                           "lesson restore-model",
                           "lesson reset",
                           "lesson reset 02",
                           "lesson panel model",
                           "lesson close",
                           "lesson reload",
                           "teacher on",
                           "teacher off",
                           "teacher",
                           "view lessons",
                           "key Alt+Right",
                           "key R",
                           "key F5",
                           "key Ctrl+Shift+Z",
                           "key Enter"}) {
    CAPTURE(line);
    const Command c = parse_command(line);
    CHECK(command_to_string(c) == line);
    CHECK(command_to_string(parse_command(command_to_string(c))) == line);
  }
  CHECK_THROWS_WITH_AS(parse_command("lesson fly"), doctest::Contains("unknown sub-command 'fly'"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("lesson predict x"), doctest::Contains("needs a predict id"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("lesson next 2"), doctest::Contains("unexpected '2'"),
                       CommandError);
  CHECK_THROWS_WITH_AS(parse_command("teacher maybe"), doctest::Contains("on, off"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("key Hyper+X"), doctest::Contains("Alt+"), CommandError);
  const KeyChord k = *parse_key_chord("Alt+Right");
  CHECK(k.code == 262);  // GLFW_KEY_RIGHT
  CHECK(k.alt);
  CHECK_FALSE(k.ctrl);
  CHECK(parse_key_chord("n")->code == 'N');
}

TEST_CASE("a lesson open gives the left panel a third of the window; the centre keeps the rest") {
  const PanelLayout normal = compute_panel_layout(1280, 800, 16);
  const PanelLayout reading = compute_panel_layout(1280, 800, 16, true);
  CHECK(reading.model_text.w == std::round(1280 * 0.33f));  // 422 px: ~55 characters of 16 px
  CHECK(reading.inspector.w == normal.inspector.w);
  CHECK(reading.graph.x == reading.model_text.w);
  CHECK(reading.graph.w == 1280 - reading.model_text.w - reading.inspector.w);
  const PanelLayout present = compute_presentation_layout(1920, 1080, 22, true);
  CHECK(present.model_text.w == 768);  // 40% of 1920
  CHECK(present.graph.x == 768);
  CHECK(present.graph.w == 1920 - 768);
  CHECK(present.inspector.w == 0);
}

TEST_CASE("a hand-out carries the task, never the answers: no progress, reveal, grade or teacher") {
  // Issue #26: a teacher's hand-out carried the teacher's answered predictions and progress.
  LessonDir dir;
  AppState teacher = player_state(dir);
  REQUIRE(run(teacher, "teacher on") == "");
  REQUIRE(run(teacher, "lesson open 1") == "");
  wait_lesson(teacher);
  REQUIRE(run(teacher, "lesson tries 3") == "");
  REQUIRE(run(teacher, "lesson next") == "");
  REQUIRE(run(teacher, "lesson predict flops 1024") == "");  // right: 2 · 8 · 4 · 16
  REQUIRE(teacher.lessons.progress->prediction_settled("flops"));
  const fs::path handout = dir.path / "handout.json";
  REQUIRE(run(teacher, "save-session " + handout.string()) == "");
  std::ifstream in(handout);
  const nlohmann::json j = nlohmann::json::parse(in);
  CHECK_FALSE(j.contains("lesson_progress"));
  CHECK_FALSE(j["lesson"].contains("teacher"));
  CHECK(j["lesson"]["open"] == "01-test");
  CHECK(j["lesson"]["step"] == "guess");
  CHECK(j["lesson"]["tries"] == 3);

  // A learner with no progress of their own opens it: at the teacher's step, as a learner, the
  // question unanswered and its answer hidden, the teacher's tries in force.
  AppState learner = player_state(dir);
  REQUIRE(run(learner, "open-session " + handout.string()) == "");
  wait_lesson(learner);
  REQUIRE(learner.lessons.is_open());
  CHECK(learner.lessons.current_step()->id == "guess");
  CHECK_FALSE(learner.lessons.teacher);
  CHECK(learner.lessons.progress->prediction("flops") == nullptr);
  CHECK_FALSE(answer_visible(learner.lessons, false, "flops"));
  CHECK(learner.lessons.progress->tries_for("flops") == 3);
  const tilescope::lesson::LessonGrade g = learner.lessons.progress->grade();
  CHECK(g.first_try + g.after_retries + g.revealed == 0);

  // A hand-out from before the strip (progress and teacher mode inside) opens the same way.
  nlohmann::json old = j;
  old["lesson"]["teacher"] = true;
  old["lesson_progress"] = {{"01-test", teacher.lessons.progress->to_json()}};
  const fs::path old_handout = dir.path / "old-handout.json";
  std::ofstream(old_handout) << old.dump();
  AppState other = player_state(dir);
  REQUIRE(run(other, "open-session " + old_handout.string()) == "");
  wait_lesson(other);
  CHECK_FALSE(other.lessons.teacher);
  CHECK(other.lessons.progress->prediction("flops") == nullptr);
}

TEST_CASE(
    "lesson 16: a step's trace= opens in the Trace view; the kernel count is masked until "
    "predicted") {
  AppState s;
  s.model.text = std::string(tilescope::lang::default_model_text());
  REQUIRE(reparse_model(s));
  update_state(s);
  s.lessons.dir = "lessons";  // the shipped lessons (tests run in the source tree)
  REQUIRE(run(s, "lesson open 16") == "");
  wait_lesson(s);
  CHECK(s.trace.path.empty());  // step 1 asks first: no trace yet
  REQUIRE(run(s, "lesson next") == "");
  CHECK(s.workbench.tab == ViewTab::Trace);
  CHECK(s.trace.path.find("quiz_cnn-h200-fp32-2026-12-06.trace.json") != std::string::npos);
  REQUIRE(s.trace.mapping);
  CHECK(s.trace.mapping->mapped_time_share == doctest::Approx(1.0));
  CHECK(s.trace.mapping->nodes.size() == 5);  // the quiz model's five lines
  // The Trace view's header counts the kernels: "6 GPU kernels" gives away the open prediction
  // (its choices are 4, 5, 6 and 8), so it is masked; the operator count and the time are not.
  AnswerMask mask;
  mask.set(hidden_answers(s.lessons, false));
  CHECK(mask.apply("5 framework operators, 6 GPU kernels; GPU kernel time 25.0 µs") ==
        "5 framework operators, ? GPU kernels; GPU kernel time 25.0 µs");
  REQUIRE(run(s, "lesson predict launches C") == "");
  CHECK(answer_visible(s.lessons, false, "launches"));
  mask.set(hidden_answers(s.lessons, false));
  CHECK(mask.apply("6 GPU kernels") == "6 GPU kernels");
}

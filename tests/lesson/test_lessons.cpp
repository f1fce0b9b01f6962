// Every lesson in lessons/ loads and all its checks pass, through the library and through
// `tilescope-cli lesson check`; a lesson with a false claim makes the CLI fail.
#include "build_paths.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/predict.h"

#include <doctest/doctest.h>

#include "tests/support/run_command.h"

#include <sys/wait.h>
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

using namespace tilescope::lesson;

namespace {

std::filesystem::path lessons_dir() {
  return std::filesystem::path(TILESCOPE_SOURCE_DIR) / "lessons";
}

std::vector<std::string> lesson_files() {
  std::vector<std::string> files;
  // The source tree's lessons, wherever the test runs from (CTest runs it at the repo root).
  for (const auto& e : std::filesystem::directory_iterator(lessons_dir()))
    if (e.path().extension() == ".md" && e.path().filename() != "README.md")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// Runs a command; returns its exit status and fills `out` with stdout and stderr.
int run_command(const std::string& command, std::string& out) {
  const tilescope::test::CommandResult r = tilescope::test::run_command(command);
  out += r.out;
  return r.code;
}

// Playing the whole curriculum is the slow part of this file (seconds, minutes under ASan): each
// play below happens once and the cases share it.
struct CurriculumCli {  // `lesson check --dir lessons`
  int code = -1;
  std::string out;
};
const CurriculumCli& lesson_check_all() {
  static CurriculumCli c;
  if (c.code < 0)
    c.code = run_command(
        std::string(TILESCOPE_CLI_PATH) + " lesson check --dir " + lessons_dir().string(), c.out);
  return c;
}

struct PlayedLesson {
  std::string file;
  std::vector<CheckResult> checks;
  std::vector<PredictResult> predicts;
};
const std::vector<PlayedLesson>& curriculum_played() {
  static std::vector<PlayedLesson> played;
  static std::vector<std::unique_ptr<LessonSession>> sessions;  // predicts point into them
  if (played.empty())
    for (const std::string& f : lesson_files()) {
      sessions.push_back(std::make_unique<LessonSession>(load_lesson_file(f)));
      played.push_back({f, sessions.back()->run_checks(), run_predicts(*sessions.back())});
    }
  return played;
}

}  // namespace

TEST_CASE("lessons: there are at least twelve, each 10-20 minutes with steps and checks") {
  const auto files = lesson_files();
  CHECK(files.size() >= 12);  // issue #14: at least 12 lessons
  for (const std::string& f : files) {
    CAPTURE(f);
    const Lesson l = load_lesson_file(f);
    CHECK(l.minutes >= 10);
    CHECK(l.minutes <= 20);
    CHECK(l.steps.size() >= 3);
    size_t checks = 0;
    for (const Block& b : l.blocks) checks += b.checks.size();
    CHECK(checks >= 8);
    // Prerequisites name lessons that exist.
    for (const std::string& p : l.prerequisites)
      CHECK(std::filesystem::exists(lessons_dir() / (p + ".md")));
  }
}

// The kind of error no single check can see (issue #29): prose that draws a conclusion from a
// recording ("1.6× faster") while its checks guard only the bytes. A step that reads a measured
// result of a recording (a path through a suite's `results` or `ratios`) must also check the
// direction of the measured time: one check comparing two measured times, or a recorded speed-up
// or time ratio. Reading the device's properties (`device/l2_bytes`) or a suite's problem
// description concludes nothing about time and needs no such check.
TEST_CASE("lessons: a step concluding from a recording checks the measured time's direction") {
  const std::regex read(R"re(recorded\("[^"]*", "([^"]*)"\))re");
  const std::vector<std::string> times = {"gflops", "median_ms",        "min_ms",
                                          "time_ns", "pct_of_reference", "gbps"};
  const std::vector<std::string> ratios = {"speedup", "time_ratio", "min_time_ratio"};
  auto last = [](const std::string& path) { return path.substr(path.rfind('/') + 1); };
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  int guarded = 0;
  for (const std::string& f : lesson_files()) {
    const Lesson l = load_lesson_file(f);
    for (const LessonStep& step : l.steps) {
      bool measured = false, direction = false;
      for (const Block& b : l.blocks) {
        if (b.step != step.id) continue;
        for (const Check& c : b.checks) {
          int time_reads = 0;
          for (std::sregex_iterator it(c.text.begin(), c.text.end(), read), end; it != end; ++it) {
            const std::string path = (*it)[1];
            measured = measured || path.find("results") != std::string::npos ||
                       path.find("ratios") != std::string::npos;
            time_reads += has(times, last(path)) ? 1 : 0;
            direction = direction || has(ratios, last(path));
          }
          direction = direction || time_reads >= 2;
        }
      }
      if (!measured) continue;
      INFO(f << " step " << step.id
             << " reads a measured recording but no check compares two measured times");
      CHECK(direction);
      ++guarded;
    }
  }
  CHECK(guarded >= 8);  // the steps that read the recorded GPU and CPU runs
}

TEST_CASE("lessons: every check of every lesson passes (library)") {
  for (const PlayedLesson& played : curriculum_played()) {
    const std::string& f = played.file;
    CAPTURE(f);
    for (const CheckResult& r : played.checks) {
      INFO(f << ":" << r.check.loc.line << ": " << r.check.text << " → " << r.lhs.to_string()
             << " vs " << r.rhs.to_string() << " " << r.error);
      CHECK(r.pass);
    }
  }
}

TEST_CASE("lessons: `tilescope-cli lesson check` passes them all and lists them") {
  const CurriculumCli& check = lesson_check_all();
  CHECK(check.code == 0);
  const std::string& out = check.out;
  CHECK(out.find("FAIL") == std::string::npos);
  CHECK(out.find("lessons pass") != std::string::npos);
  std::string list;
  CHECK(
      run_command(std::string(TILESCOPE_CLI_PATH) + " lesson list --dir " + lessons_dir().string(),
                  list) == 0);
  CHECK(list.find("From model to graph") != std::string::npos);
  std::string show;
  CHECK(run_command(std::string(TILESCOPE_CLI_PATH) + " lesson show " +
                        (lessons_dir() / "01-model-to-graph.md").string(),
                    show) == 0);
  CHECK(show.rfind("From model to graph\n", 0) == 0);
}

TEST_CASE("lessons: a false claim fails the CLI with the computed values; a malformed file too") {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string wrong = (dir / "tilescope_wrong_lesson.md").string();
  {
    std::ofstream o(wrong);
    o << "---\ntitle: Wrong\nlevel: beginner\nminutes: 10\n---\n```model id=m\nx: [2, 3]\n"
         "W: [4, 3] weight\ny = x @ W.T\n```\n```check\nflops(matmul0) == 2*2*4*3\n"
         "flops(matmul0) == 2*4*3\n```\n";
  }
  std::string out;
  CHECK(run_command(std::string(TILESCOPE_CLI_PATH) + " lesson check " + wrong, out) == 1);
  CHECK(out.find("PASS  12: flops(matmul0) == 2*2*4*3") != std::string::npos);
  CHECK(out.find("FAIL  13: flops(matmul0) == 2*4*3") != std::string::npos);
  CHECK(out.find("48 == 24") != std::string::npos);
  CHECK(out.find("1 of 2 checks pass") != std::string::npos);

  const std::string bad = (dir / "tilescope_bad_lesson.md").string();
  {
    std::ofstream o(bad);
    o << "---\ntitle: Bad\nlevel: beginner\nminutes: 10\n---\n```chek\n```\n";
  }
  out.clear();
  CHECK(run_command(std::string(TILESCOPE_CLI_PATH) + " lesson check " + bad, out) == 1);
  CHECK(out.find(bad + ":6:4: error: unknown block kind 'chek'") != std::string::npos);
  std::filesystem::remove(wrong);
  std::filesystem::remove(bad);
}

TEST_CASE("lessons: each has a predict block whose computed answer `lesson check` keeps hidden") {
  CHECK(lesson_check_all().code == 0);
  const std::string& out = lesson_check_all().out;
  for (const PlayedLesson& played : curriculum_played()) {
    const std::string& f = played.file;
    CAPTURE(f);
    // `lesson show --answers` computes the predict answers alone (the checks' simulations are
    // not needed), with the same formatting as `lesson check --answers`.
    std::string revealed;
    CHECK(run_command(std::string(TILESCOPE_CLI_PATH) + " lesson show --answers " + f, revealed) ==
          0);
    const std::vector<PredictResult>& predicts = played.predicts;
    CHECK(predicts.size() >= 1);
    for (const PredictResult& r : predicts) {
      const PredictBlock& p = r.block->predict;
      INFO(p.id << ": " << r.error);
      CHECK(r.pass);
      CHECK(p.answer_choice < 0);  // computed by an expression, never typed
      CHECK_FALSE(p.explain.empty());
      // "67.17 MFLOP within 1%" appears only when asked for.
      const std::string shown =
          r.answer.shown + (p.is_choice() ? "" : " within " + p.tolerance_text);
      CHECK(out.find(shown) == std::string::npos);
      CHECK(revealed.find(shown) != std::string::npos);
      // A learner who types the answer as revealed is right.
      const std::string typed =
          p.is_choice() ? std::string(1, char('A' + r.answer.choice)) : r.answer.shown;
      CHECK(grade(p, r.answer, typed).pass);
    }
  }
}

// `lesson grade`: reads each session (capped, depth-bounded, as the app does), takes its lessons'
// progress and prints one row per learner and lesson — a table, CSV or JSON.
#include "lesson_grade_cmd.h"

#include "app/core/lesson_grade.h"
#include "build_paths.h"
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

namespace tilescope::cli {
namespace {

namespace fs = std::filesystem;

struct GradeFlags {
  std::vector<std::string> sessions;
  std::string dir;
  std::string lesson;
  bool csv = false;
  bool json = false;
};

std::string lessons_folder(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  if (fs::is_directory("lessons", ec)) return "lessons";
  return (fs::path(TILESCOPE_SOURCE_DIR) / "lessons").string();
}

int run_grade(const GradeFlags& f) {
  if (f.csv && f.json) {
    std::cerr << "lesson grade: choose --csv or --json, not both\n";
    return 2;
  }
  std::vector<core::LessonEntry> catalogue = core::load_lesson_catalogue(lessons_folder(f.dir));
  if (!f.lesson.empty()) {
    std::vector<core::LessonEntry> only;
    for (const core::LessonEntry& e : catalogue)
      if (e.id == f.lesson || (e.lesson && e.lesson->id == f.lesson)) only.push_back(e);
    if (only.empty()) {
      std::cerr << "lesson grade: no lesson '" << io::printable(f.lesson, 80) << "' in "
                << lessons_folder(f.dir) << "/\n";
      return 1;
    }
    catalogue = std::move(only);
  }
  std::vector<core::GradeRow> rows;
  std::vector<std::string> problems;
  int status = 0;
  for (const std::string& path : f.sessions) {
    const io::TextInput in = io::read_text_input(path, io::kMaxSessionBytes, "a session file");
    const io::JsonInput j = in.ok ? io::parse_json(in.text) : io::JsonInput{};
    if (!in.ok || !j.ok || !j.value.is_object()) {
      std::cerr << "lesson grade: " << (in.ok ? "'" + io::printable(path) + "' is not a session: " +
                                                    (j.ok ? "not an object" : j.error)
                                              : in.error)
                << "\n";
      status = 1;
      continue;
    }
    std::map<std::string, nlohmann::json> progress;
    if (const auto it = j.value.find("lesson_progress"); it != j.value.end() && it->is_object())
      for (const auto& [id, value] : it->items()) progress[id] = value;
    const std::string learner = fs::path(path).stem().string();
    for (core::GradeRow& r : core::grade_rows(learner, progress, catalogue, problems))
      rows.push_back(std::move(r));
  }
  for (const std::string& p : problems) std::cerr << "lesson grade: skipped " << p << "\n";
  if (f.json) {
    std::cout << core::grade_json(rows).dump(2) << "\n";
  } else if (f.csv) {
    std::cout << core::grade_csv(rows);
  } else {
    std::printf("%-12s %-28s %6s %18s %22s\n", "learner", "lesson", "steps",
                "predictions", "checkpoints");
    std::printf("%-12s %-28s %6s %18s %22s\n", "", "", "done", "1st/retry/shown/open",
                "you/shown/not yet");
    for (const core::GradeRow& r : rows) {
      const lesson::LessonGrade& g = r.grade;
      const std::string steps = std::to_string(g.steps_done) + "/" + std::to_string(g.steps);
      const std::string pred = std::to_string(g.first_try) + "/" + std::to_string(g.after_retries) +
                               "/" + std::to_string(g.revealed) + "/" + std::to_string(g.open);
      const std::string cps = std::to_string(g.reached) + "/" + std::to_string(g.shown) + "/" +
                              std::to_string(g.not_yet);
      std::printf("%-12s %-28s %6s %18s %22s\n", io::printable(r.learner, 12).c_str(),
                  g.lesson.c_str(), steps.c_str(), pred.c_str(), cps.c_str());
    }
  }
  return status;
}

}  // namespace

void add_lesson_grade(CLI::App& lesson, int& exit_code) {
  auto flags = std::make_shared<GradeFlags>();
  CLI::App* grade = lesson.add_subcommand(
      "grade",
      "Grade learners' sessions per lesson: steps done; predictions right first time, after "
      "retries, revealed, open; checkpoints reached by the learner, shown, not yet. One row per "
      "learner (the session file's name) and lesson");
  grade->add_option("sessions", flags->sessions, "Session files (alice.json bob.json ...)")
      ->required();
  grade->add_option("--dir", flags->dir, "Lessons folder");
  grade->add_option("--lesson", flags->lesson, "Only this lesson (its id): one row per learner");
  grade->add_flag("--csv", flags->csv, "Print CSV (a header, then a line per row)");
  grade->add_flag("--json", flags->json, "Print a JSON array of rows");
  grade->callback([flags, &exit_code] { exit_code = run_grade(*flags); });
}

}  // namespace tilescope::cli

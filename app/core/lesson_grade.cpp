// Grades from sessions (lesson_grade.h).
#include "app/core/lesson_grade.h"

#include "sim/io/input.h"

namespace tilescope::core {

std::vector<GradeRow> grade_rows(const std::string& learner,
                                 const std::map<std::string, nlohmann::json>& progress,
                                 const std::vector<LessonEntry>& catalogue,
                                 std::vector<std::string>& problems) {
  std::vector<GradeRow> rows;
  for (const LessonEntry& e : catalogue) {
    if (!e.lesson) continue;
    lesson::LessonProgress p(*e.lesson);
    if (const auto it = progress.find(e.lesson->id); it != progress.end()) {
      try {
        p.restore_json(it->second);
      } catch (const std::exception& ex) {
        problems.push_back(learner + ": " + e.lesson->id + ": " + io::printable(ex.what(), 200));
        continue;
      }
    }
    rows.push_back({learner, e.lesson->title, p.grade()});
  }
  return rows;
}

namespace {

const char* const kColumns[] = {"learner",        "lesson",        "title",
                                "steps_done",     "steps",         "predictions",
                                "first_try",      "after_retries", "revealed",
                                "open",           "checkpoints",   "reached",
                                "shown",          "not_yet"};

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> fields(const GradeRow& r) {
  const lesson::LessonGrade& g = r.grade;
  const auto n = [](size_t v) { return std::to_string(v); };
  return {r.learner,         g.lesson,          r.title,        n(g.steps_done),
          n(g.steps),        n(g.predictions),  n(g.first_try), n(g.after_retries),
          n(g.revealed),     n(g.open),         n(g.checkpoints), n(g.reached),
          n(g.shown),        n(g.not_yet)};
}

}  // namespace

std::string grade_csv(const std::vector<GradeRow>& rows) {
  std::string out;
  for (const char* c : kColumns) out += (out.empty() ? "" : ",") + std::string(c);
  out += "\n";
  for (const GradeRow& r : rows) {
    std::string line;
    for (const std::string& f : fields(r)) line += (line.empty() ? "" : ",") + csv_field(f);
    out += line + "\n";
  }
  return out;
}

nlohmann::json grade_json(const std::vector<GradeRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const GradeRow& r : rows) {
    const lesson::LessonGrade& g = r.grade;
    out.push_back({{"learner", r.learner},         {"lesson", g.lesson},
                   {"title", r.title},             {"steps_done", g.steps_done},
                   {"steps", g.steps},             {"predictions", g.predictions},
                   {"first_try", g.first_try},     {"after_retries", g.after_retries},
                   {"revealed", g.revealed},       {"open", g.open},
                   {"checkpoints", g.checkpoints}, {"reached", g.reached},
                   {"shown", g.shown},             {"not_yet", g.not_yet}});
  }
  return out;
}

}  // namespace tilescope::core

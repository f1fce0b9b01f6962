// A teacher's view of what learners did: each session's lesson progress graded per lesson
// (predictions right first time, after retries, revealed; checkpoints reached by the learner,
// shown; steps done), as rows for a CSV or JSON export (`tilescope-cli lesson grade`, and the
// Lessons view's export).
#pragma once

#include "app/core/lesson_player.h"
#include "sim/lesson/progress.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilescope::core {

struct GradeRow {
  std::string learner;  // who (a session file's stem: alice.json → alice)
  std::string title;    // the lesson's title
  lesson::LessonGrade grade;
};

// The rows of one learner: one per lesson of `catalogue` (a lesson never opened grades as all
// open / not yet), from the {lesson id → progress JSON} a session keeps. A lesson's progress that
// does not read is skipped with a message in `problems`.
std::vector<GradeRow> grade_rows(const std::string& learner,
                                 const std::map<std::string, nlohmann::json>& progress,
                                 const std::vector<LessonEntry>& catalogue,
                                 std::vector<std::string>& problems);

// The rows as CSV (a header line, then one line per row; fields quoted where they need it) and
// as a JSON array of objects with the same keys.
std::string grade_csv(const std::vector<GradeRow>& rows);
nlohmann::json grade_json(const std::vector<GradeRow>& rows);

}  // namespace tilescope::core

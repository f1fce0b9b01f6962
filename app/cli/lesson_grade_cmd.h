// `tilescope-cli lesson grade SESSION... [--csv|--json] [--lesson ID]`: each learner's session
// graded per lesson, for a teacher.
#pragma once

#include <CLI/CLI.hpp>

namespace tilescope::cli {

// Adds the `grade` subcommand to `lesson`; its callback sets `exit_code`.
void add_lesson_grade(CLI::App& lesson, int& exit_code);

}  // namespace tilescope::cli

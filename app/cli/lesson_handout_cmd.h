// `tilescope-cli lesson handout LESSON --out DIR`: the lesson as a printable HTML handout, with
// pictures of the workbench at each step made by the app's own renderer under Xvfb.
#pragma once

#include <CLI/CLI.hpp>

namespace tilescope::cli {

// Adds the `handout` subcommand to `lesson`; its callback sets `exit_code`.
void add_lesson_handout(CLI::App& lesson, int& exit_code);

}  // namespace tilescope::cli

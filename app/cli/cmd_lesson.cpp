// `tilescope-cli lesson check|list|show`: verifies lesson files' claims against computed numbers,
// lists the lessons in lessons/, and prints a lesson for a terminal.
#include "commands.h"

#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/mutate.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

using namespace tilescope::lesson;

struct LessonFlags {
  std::vector<std::string> files;
  std::string dir;
  bool quiet = false;
  bool mutate = false;
};

// Counts of a mutation run over one or more lessons.
struct MutationTotals {
  size_t checks = 0, mutants = 0, killed = 0, surviving_checks = 0;
};

// Checks one file; returns the number of failed checks, or -1 when the lesson is malformed.
int check_file(const std::string& file, bool quiet, std::ostream& out) {
  std::unique_ptr<LessonSession> session;
  try {
    session = std::make_unique<LessonSession>(load_lesson_file(file));
  } catch (const LessonError& e) {
    std::cerr << e.what() << "\n";
    return -1;
  } catch (const std::exception& e) {
    // Anything the lesson layer did not anticipate still names the file, and stops only it.
    std::cerr << file << ": error: " << e.what() << "\n";
    return -1;
  }
  const std::vector<CheckResult> results = session->run_checks();
  int failed = 0;
  out << file << ": " << session->lesson().title << "\n";
  for (const CheckResult& r : results) {
    failed += r.pass ? 0 : 1;
    if (quiet && r.pass) continue;
    out << "  " << (r.pass ? "PASS" : "FAIL") << "  " << r.check.loc.line << ": " << r.check.text
        << "\n";
    if (!r.error.empty())
      out << "        error: " << r.error << "\n";
    else
      out << "        " << r.lhs.to_string() << " " << compare_text(r.check.op) << " "
          << r.rhs.to_string()
          << (r.check.tolerance > 0
                  ? " within " + Value::of(r.check.tolerance * 100).to_string() + "%"
                  : std::string())
          << "\n";
  }
  out << "  " << results.size() - size_t(failed) << " of " << results.size() << " checks pass\n";
  return failed;
}

std::string lessons_dir(const std::string& given) {
  namespace fs = std::filesystem;
  if (!given.empty()) return given;
  std::error_code ec;
  if (fs::is_directory("lessons", ec)) return "lessons";
  return (fs::path(TILESCOPE_SOURCE_DIR) / "lessons").string();
}

std::vector<std::string> lesson_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".md" &&
        entry.path().filename() != "README.md")
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// `lesson check --mutate`: every passing check re-judged with its expected side perturbed (see
// sim/lesson/mutate.h). Prints each surviving mutant with file:line; returns the number of
// checks with a survivor, or -1 when the lesson is malformed or a check fails outright.
int mutate_file(const std::string& file, MutationTotals& totals) {
  std::unique_ptr<LessonSession> session;
  try {
    session = std::make_unique<LessonSession>(load_lesson_file(file));
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return -1;
  }
  int surviving = 0;
  bool failing = false;
  for (const CheckResult& r : session->run_checks()) {
    ++totals.checks;
    if (!r.pass) {
      std::cout << file << ":" << r.check.loc.line << ": FAIL (fix it before mutating): "
                << r.check.text << "\n";
      failing = true;
      continue;
    }
    bool survived = false;
    for (const Mutant& m : mutate_check(r)) {
      ++totals.mutants;
      if (m.killed) {
        ++totals.killed;
        continue;
      }
      if (!survived)
        std::cout << file << ":" << r.check.loc.line << ": survives: " << r.check.text << "\n";
      survived = true;
      std::cout << "    still passes with " << m.what << " (computed " << r.lhs.to_string()
                << ")\n";
    }
    surviving += survived ? 1 : 0;
  }
  totals.surviving_checks += size_t(surviving);
  return failing ? -1 : surviving;
}

int run_check(const LessonFlags& f) {
  std::vector<std::string> files = f.files;
  if (files.empty()) files = lesson_files(lessons_dir(f.dir));
  if (files.empty()) {
    std::cerr << "lesson check: no lesson files given or found\n";
    return 1;
  }
  int bad = 0;
  if (f.mutate) {
    MutationTotals totals;
    for (const std::string& file : files)
      if (mutate_file(file, totals) != 0) ++bad;
    std::cout << totals.mutants << " mutants of " << totals.checks << " checks: " << totals.killed
              << " killed, " << totals.mutants - totals.killed << " survived ("
              << totals.surviving_checks << " checks guard less than they claim)\n";
    return bad ? 1 : 0;
  }
  for (const std::string& file : files) {
    const int failed = check_file(file, f.quiet, std::cout);
    if (failed != 0) ++bad;
  }
  if (files.size() > 1)
    std::cout << files.size() - size_t(bad) << " of " << files.size() << " lessons pass\n";
  return bad ? 1 : 0;
}

// Pads to `width` columns counting code points, not bytes, so titles with "—" line up.
std::string padded(const std::string& s, size_t width) {
  size_t columns = 0;
  for (unsigned char c : s) columns += (c & 0xC0) != 0x80 ? 1 : 0;
  return columns >= width ? s : s + std::string(width - columns, ' ');
}

int run_list(const LessonFlags& f) {
  const std::string dir = lessons_dir(f.dir);
  const auto files = lesson_files(dir);
  if (files.empty()) {
    std::cerr << "lesson list: no lessons in '" << dir << "'\n";
    return 1;
  }
  int status = 0;
  for (const std::string& file : files) {
    try {
      const Lesson l = load_lesson_file(file);
      size_t checks = 0;
      for (const Block& b : l.blocks) checks += b.checks.size();
      std::cout << padded(l.id, 28) << " " << padded(l.title, 52) << " " << padded(l.level, 12)
                << " " << l.minutes << " min  " << l.steps.size() << " steps, " << checks
                << " checks\n";
    } catch (const LessonError& e) {
      std::cerr << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}

int run_show(const LessonFlags& f) {
  if (f.files.size() != 1) {
    std::cerr << "lesson show: give one lesson file\n";
    return 1;
  }
  try {
    std::cout << render_for_terminal(load_lesson_file(f.files[0]));
  } catch (const LessonError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

const CommandRegistrar registrar{
    "lesson", "Guided lessons: check a lesson's claims, list the lessons, show one",
    [](CLI::App& sub, int& exit_code) {
      sub.require_subcommand(1);
      auto flags = std::make_shared<LessonFlags>();
      CLI::App* check = sub.add_subcommand(
          "check",
          "Build each lesson's models and schedules, evaluate every check, print PASS/FAIL with "
          "the computed values; non-zero exit on any failure (no FILE: every lesson in lessons/)");
      check->add_option("files", flags->files, "Lesson files (.md)");
      check->add_option("--dir", flags->dir, "Lessons folder when no file is given");
      check->add_flag("--quiet", flags->quiet, "Print only failing checks");
      check->add_flag("--mutate", flags->mutate,
                      "Re-judge every passing check with its expected side perturbed (x1.1, -1, "
                      "flipped comparison, altered string, dropped list item); list the checks "
                      "that still pass; non-zero exit if any does");
      check->callback([flags, &exit_code] { exit_code = run_check(*flags); });
      CLI::App* list = sub.add_subcommand("list", "List the lessons in lessons/ with titles");
      list->add_option("--dir", flags->dir, "Lessons folder");
      list->callback([flags, &exit_code] { exit_code = run_list(*flags); });
      CLI::App* show = sub.add_subcommand("show", "Print a lesson's text for a terminal");
      show->add_option("file", flags->files, "Lesson file")->required();
      show->callback([flags, &exit_code] { exit_code = run_show(*flags); });
    }};

}  // namespace
}  // namespace tilescope::cli

// `tilescope-cli lesson check|list|show|run|handout`: verifies lesson files' claims against
// computed numbers, lists the lessons in lessons/, prints a lesson for a terminal, plays one
// headless, and writes a printable handout (lesson_handout_cmd.cpp).
//
// Predict answers are the lesson's reveal: every subcommand computes or prints them only with
// --answers (or, in `lesson run`, after the learner's --predict for that block).
#include "build_paths.h"
#include "commands.h"
#include "lesson_grade_cmd.h"
#include "lesson_handout_cmd.h"

#include "sim/io/format.h"
#include "sim/lesson/check_functions.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/concepts.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/mutate.h"
#include "sim/lesson/predict.h"
#include "sim/lesson/progress.h"
#include "sim/lesson/quantity.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
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
  bool answers = false;
  std::vector<std::string> predictions;  // `lesson run --predict ID=INPUT`
  std::vector<std::string> tries;        // `lesson run --try CHECKPOINT=STEPS`
};

// Counts of a mutation run over one or more lessons.
struct MutationTotals {
  size_t checks = 0, predicts = 0, checkpoints = 0, mutants = 0, killed = 0, surviving = 0;
};

// [SECTION] Finding lessons

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

// A lesson named by its number ("2" or "02": lessons/02-*.md) or by its path. Empty, with a
// message on stderr, when a number matches no lesson or several.
std::string lesson_by_name(const std::string& name, const std::string& dir, const char* command) {
  const bool number = !name.empty() && name.size() <= 3 &&
                      name.find_first_not_of("0123456789") == std::string::npos;
  if (!number) return name;
  const int n = std::stoi(name);
  const std::string prefix = (n < 10 ? "0" : "") + std::to_string(n) + "-";
  const std::string folder = lessons_dir(dir);
  std::vector<std::string> found;
  for (const std::string& f : lesson_files(folder))
    if (std::filesystem::path(f).filename().string().rfind(prefix, 0) == 0) found.push_back(f);
  if (found.size() == 1) return found[0];
  std::cerr << "lesson " << command << ": "
            << (found.empty() ? "no lesson " + name + " in '" + folder + "' (no " + prefix + "*.md)"
                              : "lesson " + name + " is ambiguous in '" + folder +
                                    "': " + found[0] + ", " + found[1])
            << "\n";
  return "";
}

std::unique_ptr<LessonSession> open_session(const std::string& file) {
  try {
    return std::make_unique<LessonSession>(load_lesson_file(file));
  } catch (const LessonError& e) {
    std::cerr << e.what() << "\n";
  } catch (const std::exception& e) {
    // Anything the lesson layer did not anticipate still names the file, and stops only it.
    std::cerr << file << ": error: " << e.what() << "\n";
  }
  return nullptr;
}

// [SECTION] Printing results

void print_check(const CheckResult& r, const std::string& indent, std::ostream& out) {
  out << indent << (r.pass ? "PASS" : "FAIL") << "  " << r.check.loc.line << ": " << r.check.text
      << "\n";
  if (!r.error.empty())
    out << indent << "      error: " << r.error << "\n";
  else
    out << indent << "      " << r.lhs.to_string() << " " << compare_text(r.check.op) << " "
        << r.rhs.to_string()
        << (r.check.tolerance > 0
                ? " within " + Value::of(r.check.tolerance * 100).to_string() + "%"
                : std::string())
        << "\n";
}

// The answer and its tolerance as revealed: "2.003x within 10%", "B) tiled".
std::string revealed(const PredictBlock& p, const Answer& a) {
  if (p.is_choice()) return a.shown;
  return a.shown + " within " + p.tolerance_text;
}

// `lesson check` prints that a predict block's answer was computed, and its value only with
// --answers: the value is what the learner is asked to predict.
void print_predict(const PredictResult& r, bool answers, const std::string& indent,
                   std::ostream& out) {
  const PredictBlock& p = r.block->predict;
  out << indent << (r.pass ? "PASS" : "FAIL") << "  " << r.block->loc.line << ": predict " << p.id;
  if (r.pass)
    out << (answers ? ": answer computed" : ": answer computed (hidden; --answers shows it)");
  out << "\n";
  if (!r.pass)
    out << indent << "      error: " << r.error << "\n";
  else if (answers)
    out << indent << "      " << p.answer_text << " = " << revealed(p, r.answer) << "\n";
}

// `lesson check` of a checkpoint: the solution reaches the goal and the starting model does not.
// The hint is the player's to show; the checks' values are the solution's.
void print_checkpoint(const CheckpointCheck& c, bool quiet, const std::string& indent,
                      std::ostream& out) {
  const CheckpointBlock& cp = c.block->checkpoint;
  out << indent << (c.pass ? "PASS" : "FAIL") << "  " << c.block->loc.line << ": checkpoint "
      << cp.id << ": " << cp.goal << "\n";
  if (!c.pass) {
    out << indent << "      " << c.block->loc.file << ":" << c.block->loc.line
        << ": error: " << c.error << "\n";
    return;
  }
  if (quiet) return;
  out << indent << "      the solution " << cp.solution << " reaches it; the start (" << cp.model
      << ") does not\n";
  for (const CheckResult& r : c.solution.checks) print_check(r, indent + "    ", out);
}

// [SECTION] lesson check

// Checks one file; returns the number of failed checks and predict blocks, or -1 when the lesson
// is malformed.
int check_file(const std::string& file, const LessonFlags& f, std::ostream& out) {
  const auto session = open_session(file);
  if (!session) return -1;
  size_t checks = 0, checks_failed = 0, predicts = 0, predicts_failed = 0, checkpoints = 0,
         checkpoints_failed = 0;
  out << file << ": " << session->lesson().title << "\n";
  for (const Block& b : session->lesson().blocks) {
    if (b.kind == BlockKind::Check) {
      for (const Check& c : b.checks) {
        const CheckResult r = session->run_check(b, c);
        ++checks;
        checks_failed += r.pass ? 0 : 1;
        if (!f.quiet || !r.pass) print_check(r, "  ", out);
      }
    } else if (b.kind == BlockKind::Predict) {
      const PredictResult r = check_predict(*session, b);
      ++predicts;
      predicts_failed += r.pass ? 0 : 1;
      if (!f.quiet || !r.pass) print_predict(r, f.answers, "  ", out);
    } else if (b.kind == BlockKind::Checkpoint) {
      const CheckpointCheck c = session->check_checkpoint(b);
      ++checkpoints;
      checkpoints_failed += c.pass ? 0 : 1;
      if (!f.quiet || !c.pass) print_checkpoint(c, f.quiet, "  ", out);
    }
  }
  out << "  " << checks - checks_failed << " of " << checks << " checks pass";
  if (predicts)
    out << ", " << predicts - predicts_failed << " of " << predicts << " predict answers computed";
  if (checkpoints)
    out << ", " << checkpoints - checkpoints_failed << " of " << checkpoints
        << " checkpoints reached by their solutions and not by the start";
  out << "\n";
  return int(checks_failed + predicts_failed + checkpoints_failed);
}

// `lesson check --mutate`: every passing check re-judged with its expected side perturbed, every
// numeric predict block graded with a slipped prediction (see sim/lesson/mutate.h). Prints each
// surviving mutant with file:line; returns the number of checks and predict blocks with a
// survivor, or -1 when the lesson is malformed or a check or predict block fails outright.
int mutate_file(const std::string& file, MutationTotals& totals) {
  const auto session = open_session(file);
  if (!session) return -1;
  int surviving = 0;
  bool failing = false;
  auto report = [&](const std::string& line, const std::string& what,
                    const std::vector<Mutant>& mutants, const std::string& computed) {
    bool survived = false;
    for (const Mutant& m : mutants) {
      ++totals.mutants;
      if (m.killed) {
        ++totals.killed;
        continue;
      }
      if (!survived) std::cout << file << ":" << line << ": survives: " << what << "\n";
      survived = true;
      std::cout << "    still passes with " << m.what << computed << "\n";
    }
    surviving += survived ? 1 : 0;
  };
  for (const CheckResult& r : session->run_checks()) {
    ++totals.checks;
    if (!r.pass) {
      std::cout << file << ":" << r.check.loc.line
                << ": FAIL (fix it before mutating): " << r.check.text << "\n";
      failing = true;
      continue;
    }
    report(std::to_string(r.check.loc.line), r.check.text, mutate_check(r),
           " (computed " + r.lhs.to_string() + ")");
  }
  // A checkpoint's checks are mutated as the solution evaluates them; that the start fails the
  // goal is check_checkpoint's part.
  for (const CheckpointCheck& c : session->run_checkpoints()) {
    ++totals.checkpoints;
    const CheckpointBlock& cp = c.block->checkpoint;
    if (!c.pass) {
      std::cout << file << ":" << c.block->loc.line
                << ": FAIL (fix it before mutating): checkpoint " << cp.id << ": " << c.error
                << "\n";
      failing = true;
      continue;
    }
    for (const CheckResult& r : c.solution.checks) {
      ++totals.checks;
      report(std::to_string(r.check.loc.line), "checkpoint " + cp.id + ": " + r.check.text,
             mutate_check(r), " (computed " + r.lhs.to_string() + " on the solution)");
    }
  }
  for (const PredictResult& r : run_predicts(*session)) {
    ++totals.predicts;
    const PredictBlock& p = r.block->predict;
    const std::string line = std::to_string(r.block->loc.line);
    if (!r.pass) {
      std::cout << file << ":" << line << ": FAIL (fix it before mutating): predict " << p.id
                << ": " << r.error << "\n";
      failing = true;
      continue;
    }
    if (p.is_choice()) {
      std::cout << file << ":" << line << ": predict " << p.id
                << " is multiple choice: graded by the exact choice, so it has no tolerance to "
                   "mutate\n";
      continue;
    }
    // The answer stays hidden here too: mutants name the slip, not the value.
    report(line, "predict " + p.id + " (within " + p.tolerance_text + ")",
           mutate_predict(p, r.answer), "");
  }
  totals.surviving += size_t(surviving);
  return failing ? -1 : surviving;
}

// Lesson files named on the command line (a folder stands for its lessons), else lessons/.
std::vector<std::string> files_to_check(const LessonFlags& f) {
  std::vector<std::string> files;
  for (const std::string& given : f.files) {
    std::error_code ec;
    if (std::filesystem::is_directory(given, ec)) {
      for (const std::string& file : lesson_files(given)) files.push_back(file);
    } else {
      files.push_back(given);
    }
  }
  if (f.files.empty()) files = lesson_files(lessons_dir(f.dir));
  return files;
}

int run_check(const LessonFlags& f) {
  const std::vector<std::string> files = files_to_check(f);
  if (files.empty()) {
    std::cerr << "lesson check: no lesson files given or found\n";
    return 1;
  }
  int bad = 0;
  if (f.mutate) {
    MutationTotals totals;
    for (const std::string& file : files)
      if (mutate_file(file, totals) != 0) ++bad;
    std::cout << totals.mutants << " mutants of " << totals.checks << " checks"
              << (totals.checkpoints ? " (" + std::to_string(totals.checkpoints) + " checkpoints)"
                                     : std::string())
              << " and " << totals.predicts << " predict blocks: " << totals.killed << " killed, "
              << totals.mutants - totals.killed << " survived (" << totals.surviving
              << " guard less than they claim)\n";
    return bad ? 1 : 0;
  }
  for (const std::string& file : files) {
    const int failed = check_file(file, f, std::cout);
    if (failed != 0) ++bad;
  }
  if (files.size() > 1)
    std::cout << files.size() - size_t(bad) << " of " << files.size() << " lessons pass\n";
  return bad ? 1 : 0;
}

// [SECTION] lesson list, lesson show

// The concept table of lessons/README.md from lessons/concepts.txt and the steps' teaches=.
int run_concepts(const LessonFlags& f) {
  const std::string dir = lessons_dir(f.dir);
  try {
    const std::vector<Concept> concepts =
        load_concepts_file((std::filesystem::path(dir) / "concepts.txt").string());
    std::vector<Lesson> lessons;
    for (const std::string& file : lesson_files(dir)) lessons.push_back(load_lesson_file(file));
    std::cout << concept_table(concepts, lessons);
    return 0;
  } catch (const LessonError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
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
      size_t checks = 0, predicts = 0, checkpoints = 0;
      for (const Block& b : l.blocks) {
        checks += b.kind == BlockKind::Check ? b.checks.size() : 0;
        predicts += b.kind == BlockKind::Predict ? 1 : 0;
        checkpoints += b.kind == BlockKind::Checkpoint ? 1 : 0;
      }
      std::cout << io::pad_right(l.id, 28) << " " << io::pad_right(l.title, 52) << " " << io::pad_right(l.level, 12)
                << " " << l.minutes << " min  " << l.steps.size() << " steps, " << checks
                << " checks, " << predicts << (predicts == 1 ? " prediction, " : " predictions, ")
                << checkpoints << (checkpoints == 1 ? " checkpoint" : " checkpoints") << "\n";
    } catch (const LessonError& e) {
      std::cerr << e.what() << "\n";
      status = 1;
    }
  }
  return status;
}

int run_show(const LessonFlags& f) {
  const std::string file = lesson_by_name(f.files.at(0), f.dir, "show");
  if (file.empty()) return 1;
  try {
    Lesson lesson = load_lesson_file(file);
    RenderOptions options;
    options.answers = f.answers;
    if (f.answers) {
      // Computing the answers builds the lesson's models and runs its simulations.
      LessonSession session(lesson);
      for (const PredictResult& r : run_predicts(session))
        options.computed[r.block->predict.id] =
            r.pass ? revealed(r.block->predict, r.answer) : "not computed: " + r.error;
    }
    std::cout << render_for_terminal(lesson, options);
  } catch (const LessonError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}

// [SECTION] lesson run

// What a model or steps block gives the learner to look at.
void print_block_numbers(LessonSession& session, const Block& b, std::ostream& out) {
  const std::string id = b.attr_value("id");
  if (b.kind == BlockKind::Model) {
    const auto g = session.model(id);
    const graph::OpCost cost = g->total_cost();
    out << "  model " << id << ": " << g->ops().size()
        << (g->ops().size() == 1 ? " op, " : " ops, ")
        << format_quantity(double(cost.flops), "FLOP") << ", at least "
        << format_quantity(double(cost.bytes()), "bytes") << " moved ("
        << Value::of(double(cost.bytes())).to_string() << " bytes)\n";
    return;
  }
  const LessonProgram* p = session.program(id);
  out << "  steps " << id << " (model " << p->model << "): ";
  for (size_t i = 0; i < p->applied.size(); ++i) out << (i ? ", " : "") << p->applied[i];
  out << " → " << p->program.kernels.size()
      << (p->program.kernels.size() == 1 ? " kernel" : " kernels") << "\n";
  if (p->refused) out << "    the last step is refused: " << p->refusal << "\n";
}

// Asks a predict block's question; grades and records the learner's --predict input for it (run_run
// has checked that it parses), then reveals the answer; with --answers alone, reveals it. False
// when the answer could not be computed.
bool play_predict(LessonSession& session, const Block& b, const LessonFlags& f,
                  const std::map<std::string, std::string>& inputs, LessonProgress& progress,
                  std::ostream& out) {
  const PredictBlock& p = b.predict;
  out << "  predict " << p.id << ": " << p.question << "\n";
  for (size_t k = 0; k < p.choices.size(); ++k)
    out << "    " << char('A' + k) << ") " << p.choices[k] << "\n";
  const auto input = inputs.find(p.id);
  if (input == inputs.end() && !f.answers) {
    out << "    answer hidden: predict it with --predict " << p.id << "=VALUE"
        << (p.unit.empty() ? "" : " (unit: " + p.unit + ")") << ", or reveal it with --answers\n";
    return true;
  }
  const Answer a = evaluate_predict(session, b);
  if (input != inputs.end()) {
    const Grade g = grade(p, a, input->second);
    if (!g.graded) {
      out << "    your prediction " << g.learner_shown << " cannot be graded: " << g.message
          << "\n";
      return false;
    }
    // A headless run prints the answer at once: its one prediction is the last try.
    progress.record_prediction(p.id, input->second, g, now_timestamp(), /*tries=*/1);
    out << "    your prediction " << g.learner_shown << ": " << (g.pass ? "RIGHT" : "WRONG");
    if (!p.is_choice()) {
      out << " — ";
      if (std::isfinite(g.relative_error))
        out << format_quantity(g.relative_error, "%") << " off";
      else
        out << "the answer is 0";
      out << (g.pass ? ", within " : ", not within ") << p.tolerance_text;
    }
    out << "\n";
  }
  if (!a.ok) {
    out << "    the answer could not be computed: " << a.error << "\n";
    return false;
  }
  out << "    answer: " << revealed(p, a) << "   (" << p.answer_text << ")\n";
  out << "    why: ";
  for (char c : p.explain) out << c << (c == '\n' ? "         " : "");
  out << "\n";
  return true;
}

// Shows a checkpoint's goal, then judges the learner's --try steps for it, or the lesson's
// solution when none were given ("show me"). Records it in `progress` when the learner's steps
// reach it; false when they cannot be applied.
bool play_checkpoint(LessonSession& session, const Block& b,
                     const std::map<std::string, std::string>& tries, bool answers,
                     LessonProgress& progress, std::ostream& out) {
  const CheckpointBlock& cp = b.checkpoint;
  out << "  checkpoint " << cp.id << ": " << cp.goal << "\n";
  LearnerState state;
  const auto given = tries.find(cp.id);
  if (given != tries.end()) {
    out << "    your steps on " << cp.model << ": "
        << (given->second.empty() ? std::string("(none)") : given->second) << "\n";
    try {
      state = session.state_with_steps(b, given->second);
    } catch (const LessonError& e) {
      out << "    " << e.message() << "\n";
      return false;
    }
  } else {
    const auto [model_text, steps] = session.solution_of(b);
    out << "    the lesson's solution (" << cp.solution
        << "): " << (steps.empty() ? "the model of " + cp.solution : steps)
        << "   (try your own: --try " << cp.id << "=\"STEPS\")\n";
    state = session.solution_state(b);
  }
  const CheckpointResult r = session.run_checkpoint(b, state);
  for (const CheckResult& c : r.checks) print_check(c, "    ", out);
  if (!r.error.empty()) out << "    " << r.error << "\n";
  out << "    " << (r.pass ? "REACHED" : "NOT YET") << "\n";
  if (!r.pass && (given != tries.end() || answers)) out << "    hint: " << cp.hint << "\n";
  // Reached by the learner's own steps only: the lesson's solution shown is not the learner's.
  if (r.pass && given != tries.end()) progress.record_checkpoint(cp.id);
  return true;
}

int run_run(const LessonFlags& f) {
  const std::string file = lesson_by_name(f.files.at(0), f.dir, "run");
  if (file.empty()) return 1;
  const auto session = open_session(file);
  if (!session) return 1;
  const Lesson& lesson = session->lesson();
  std::map<std::string, std::string> inputs;
  for (const std::string& given : f.predictions) {
    const size_t eq = given.find('=');
    const std::string id = given.substr(0, eq);
    const bool known = std::any_of(lesson.blocks.begin(), lesson.blocks.end(), [&](const Block& b) {
      return b.kind == BlockKind::Predict && b.predict.id == id;
    });
    if (eq == std::string::npos || !known) {
      std::string ids;
      for (const Block& b : lesson.blocks)
        if (b.kind == BlockKind::Predict) ids += (ids.empty() ? "" : ", ") + b.predict.id;
      std::cerr << "lesson run: --predict " << given << ": expected ID=VALUE with ID a predict "
                << "block of " << file << " (" << (ids.empty() ? "it has none" : ids) << ")\n";
      return 1;
    }
    inputs[id] = given.substr(eq + 1);
    // An input that is no prediction is refused before anything is played (or revealed).
    for (const Block& b : lesson.blocks)
      if (b.kind == BlockKind::Predict && b.predict.id == id) {
        const Grade g = grade(b.predict, Answer{}, inputs[id]);
        if (!g.understood) {
          std::cerr << "lesson run: --predict " << given << ": " << g.message << "\n";
          return 1;
        }
      }
  }
  std::map<std::string, std::string> tries;
  for (const std::string& given : f.tries) {
    const size_t eq = given.find('=');
    const std::string id = given.substr(0, eq);
    const bool known = std::any_of(lesson.blocks.begin(), lesson.blocks.end(), [&](const Block& b) {
      return b.kind == BlockKind::Checkpoint && b.checkpoint.id == id;
    });
    if (eq == std::string::npos || !known) {
      std::string ids;
      for (const Block& b : lesson.blocks)
        if (b.kind == BlockKind::Checkpoint) ids += (ids.empty() ? "" : ", ") + b.checkpoint.id;
      std::cerr << "lesson run: --try " << given << ": expected ID=STEPS with ID a checkpoint of "
                << file << " (" << (ids.empty() ? "it has none" : ids) << ")\n";
      return 1;
    }
    tries[id] = given.substr(eq + 1);
  }
  LessonProgress progress(lesson);
  std::vector<CheckResult> results;
  bool ok = true;
  std::cout << file << ": " << lesson.title << "\n";
  // Blocks before the first step first, then each step's blocks in file order.
  std::vector<std::string> order{""};
  for (const LessonStep& s : lesson.steps) order.push_back(s.id);
  auto step_heading = [&](size_t s) {
    const LessonStep& step = lesson.steps[s - 1];
    return "[" + std::to_string(s) + "/" + std::to_string(lesson.steps.size()) + "] " + step.title +
           "  (" + step.id + ")\n";
  };
  for (size_t s = 0; s < order.size(); ++s) {
    bool any = false;
    for (const Block& b : lesson.blocks) {
      if (b.step != order[s]) continue;
      if (!any)
        std::cout << "\n" << (s == 0 ? std::string("Before the first step\n") : step_heading(s));
      any = true;
      if (b.kind == BlockKind::Model || b.kind == BlockKind::Steps) {
        print_block_numbers(*session, b, std::cout);
      } else if (b.kind == BlockKind::Check) {
        for (const Check& c : b.checks) {
          results.push_back(session->run_check(b, c));
          ok = ok && results.back().pass;
          print_check(results.back(), "  ", std::cout);
        }
      } else if (b.kind == BlockKind::Checkpoint) {
        ok = play_checkpoint(*session, b, tries, f.answers, progress, std::cout) && ok;
      } else {
        ok = play_predict(*session, b, f, inputs, progress, std::cout) && ok;
      }
    }
    if (!any && s > 0) std::cout << "\n" << step_heading(s) << "  (reading only)\n";
  }
  progress.apply_results(results);
  const size_t passed = size_t(
      std::count_if(results.begin(), results.end(), [](const CheckResult& r) { return r.pass; }));
  std::cout << "\n"
            << passed << " of " << results.size() << " checks pass; "
            << progress.predictions().size() << " predictions made, "
            << progress.passed_predictions() << " right; " << progress.done_count() << " of "
            << progress.step_count()
            << " steps done by their checks, predictions and checkpoints\n";
  for (const LessonStep& s : lesson.steps) {
    const auto missing = progress.predictions_missing(s.id);
    if (!missing.empty()) {
      std::cout << "  step " << s.id << " waits for a prediction:";
      for (const std::string& id : missing) std::cout << " " << id;
      std::cout << "\n";
    }
    const auto unreached = progress.checkpoints_missing(s.id);
    if (!unreached.empty()) {
      std::cout << "  step " << s.id << " waits for a checkpoint:";
      for (const std::string& id : unreached) std::cout << " " << id;
      std::cout << "\n";
    }
  }
  return ok ? 0 : 1;
}

const CommandRegistrar registrar{
    "lesson",
    "Guided lessons: check a lesson's claims, list the lessons, show one, play one headless",
    [](CLI::App& sub, int& exit_code) {
      sub.require_subcommand(1);
      auto flags = std::make_shared<LessonFlags>();
      CLI::App* check = sub.add_subcommand(
          "check",
          "Build each lesson's models and schedules, evaluate every check and predict answer, "
          "print PASS/FAIL with the computed values (predict answers only with --answers); "
          "non-zero exit on any failure (no FILE: every lesson in lessons/)");
      check->add_option("files", flags->files, "Lesson files (.md) or folders of them");
      check->add_option("--dir", flags->dir, "Lessons folder when no file is given");
      check->add_flag("--quiet", flags->quiet, "Print only failing checks");
      check->add_flag("--answers", flags->answers, "Print predict blocks' computed answers");
      check->add_flag("--mutate", flags->mutate,
                      "Re-judge every passing check with its expected side perturbed (x1.1, -1, "
                      "flipped comparison, altered string, dropped list item) and grade each "
                      "numeric predict block with a slipped prediction (2x, half, 0); list what "
                      "still passes; non-zero exit if anything does");
      check->callback([flags, &exit_code] { exit_code = run_check(*flags); });
      CLI::App* list = sub.add_subcommand("list", "List the lessons in lessons/ with titles");
      list->add_option("--dir", flags->dir, "Lessons folder");
      list->callback([flags, &exit_code] { exit_code = run_list(*flags); });
      CLI::App* concepts = sub.add_subcommand(
          "concepts",
          "Print the concept table of lessons/README.md: each concept of lessons/concepts.txt "
          "and the steps whose marker says teaches= it; non-zero exit for a key no file lists "
          "or a concept no step teaches");
      concepts->add_option("--dir", flags->dir, "Lessons folder");
      concepts->callback([flags, &exit_code] { exit_code = run_concepts(*flags); });
      CLI::App* functions = sub.add_subcommand(
          "functions",
          "Print the check language's functions (generated from the checker's table): each with "
          "an example, what it returns and the keywords it takes");
      functions->callback([&exit_code] {
        std::cout << lesson::check_function_reference();
        exit_code = 0;
      });
      CLI::App* show = sub.add_subcommand(
          "show",
          "Print a lesson for a terminal: its steps, then its text with blocks and checks "
          "(predict answers hidden unless --answers)");
      show->add_option("lesson", flags->files, "Lesson number (2 = lessons/02-*.md) or file")
          ->required()
          ->expected(1);
      show->add_option("--dir", flags->dir, "Lessons folder for a lesson number");
      show->add_flag("--answers", flags->answers,
                     "Show predict answers and explanations, with the computed values");
      show->callback([flags, &exit_code] { exit_code = run_show(*flags); });
      CLI::App* run = sub.add_subcommand(
          "run",
          "Play a lesson headless, step by step: each model's and schedule's numbers, "
          "each check with its values, each prediction graded (--predict) or revealed "
          "(--answers); non-zero exit when a check fails or a prediction cannot be graded");
      run->add_option("lesson", flags->files, "Lesson number (2 = lessons/02-*.md) or file")
          ->required()
          ->expected(1);
      run->add_option("--dir", flags->dir, "Lessons folder for a lesson number");
      run->add_flag("--answers", flags->answers, "Reveal every predict block's answer");
      run->add_option("--predict", flags->predictions,
                      "A prediction, ID=VALUE (e.g. fused-ratio=2x, 2.5MiB, 37%, B); repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      run->add_option("--try", flags->tries,
                      "Your own steps for a checkpoint, ID=STEPS (e.g. fuse-small=\"fuse(add0, "
                      "relu0)\"); without it a checkpoint shows the lesson's solution; repeatable")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      run->callback([flags, &exit_code] { exit_code = run_run(*flags); });
      add_lesson_handout(sub, exit_code);
      add_lesson_grade(sub, exit_code);
    }};

}  // namespace
}  // namespace tilescope::cli

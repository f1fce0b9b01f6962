// Predict-then-reveal: a predict block's answer computed by the checker, a learner's answer graded
// against it, and the check `lesson check` makes of every predict block.
//
// The player asks the block's question, takes the learner's input, and only then shows the grade:
// the learner's value beside the answer, the error, and the explanation. An input that does not
// parse is no attempt: its grade says what was expected and reveals nothing.
#pragma once

#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

struct Answer {
  bool ok = false;
  std::string error;  // why the answer could not be computed
  double value = 0;   // numeric: in the unit's base (bytes, s, FLOP; a fraction for %)
  std::string unit;   // the block's unit, "" for a plain number
  int choice = -1;    // multiple choice: 0-based index of the right choice
  std::string shown;  // as revealed: "2.003x", "64 MiB", "B) tiled"
};

// Computes the answer of a predict block of the session's lesson.
Answer evaluate_predict(LessonSession& session, const Block& block);

// The numbers a learner could read a numeric answer from, to hide until it is settled: the
// answer and the value of every call in its expression (`dram_bytes(small) / dram_bytes(fused)`
// is given away by the two byte counts as much as by their ratio). Calls that do not evaluate
// to a number are left out. A multiple-choice block's computed answer counts (its number); one
// named by a letter gives nothing.
struct AnswerOperand {
  double value = 0;
  std::string function;  // the call it is the value of ("conflicts"); "" for a computed answer
};
std::vector<AnswerOperand> answer_operands(LessonSession& session, const Block& block,
                                           const Answer& answer);

struct Grade {
  bool understood = false;  // the learner's input parsed; when not, nothing else is set
  std::string message;      // !understood: what was expected; understood but !graded: why
  bool graded = false;      // understood and the answer was computed
  bool pass = false;
  // Numeric questions
  double learner = 0;         // the learner's value, in the unit's base
  double answer = 0;          // the computed answer, in the unit's base
  double relative_error = 0;  // |learner − answer| / |answer|; 0 when both are 0, +inf when only
                              // the answer is
  // Multiple choice
  int learner_choice = -1, answer_choice = -1;  // 0-based
  // Both
  std::string learner_shown, answer_shown;  // "2.5 MiB" beside "2.25 MiB"; "A) x" beside "B) y"
  std::string explanation;
};

// Grades `learner_input` — "2.5 MiB", "4e6", "37%", "3x", "1.2 ms"; for multiple choice a letter,
// a 1-based number or a choice's text — against `answer` (from evaluate_predict for `block`).
Grade grade(const PredictBlock& block, const Answer& answer, std::string_view learner_input);

// What a learner reads after a wrong try with `tries_left` tries left: which way and roughly how
// far off (in bands — "by 2.5× to 10×" — so the answer cannot be worked back from it), the block's
// hint, and how many tries remain. Multiple choice: only that it is not this one.
std::string retry_hint(const PredictBlock& block, const Grade& grade, int tries_left);

// Whether a numeric prediction `learner` is within the block's tolerance of `answer` (both in the
// unit's base). The bound itself passes: 2.2 is within 10% of 2.
bool within_tolerance(const PredictBlock& block, double learner, double answer);

// What `lesson check` verifies of a predict block: its answer is computed (a finite number, or a
// value that picks one of the choices), and the answer as the learner sees it (rounded to 4
// digits) passes its own grading, so a learner who predicts exactly right is told so.
struct PredictResult {
  const Block* block = nullptr;
  Answer answer;
  bool pass = false;
  std::string error;  // when !pass; never quotes the answer's value
};
PredictResult check_predict(LessonSession& session, const Block& block);
std::vector<PredictResult> run_predicts(LessonSession& session);  // every predict block, in order

}  // namespace tilescope::lesson

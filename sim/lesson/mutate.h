// Mutation testing of lesson checks: a check protects a learner only if it fails when the number
// it guards is wrong. Each passing check is re-judged with its expected (right-hand) side
// perturbed; a mutant that still passes "survives", and a surviving check is a defect — a bound
// so loose, or a comparison so one-sided, that it would pass whatever tilescope computed.
//
// Mutants of the expected value v (t = the check's tolerance):
//   ==  number, exact:     v × 1.1 (v + 1 when v is 0), v − 1, −v
//   ==  number, within t:  v × (1.1 + 2t), v × (0.9 − 2t), −v  (outside the band by construction
//                          only when the check is an equality: one-sided checks are what this
//                          catches)
//   < <= > >=  number:     the bound moved 10% towards the computed side (a bound with more
//                          slack than that guards nothing the words claim), and the comparison
//                          flipped at the boundary (> becomes <=)
//   !=                      the expected side replaced by the computed one
//   ==  string:            a character appended; the empty string (or "x" for an empty one)
//   ==  list:              each item dropped in turn (up to 5); the order reversed
//
// A predict block is protected if a wrong prediction is graded wrong. Its mutants are predictions
// a learner makes by a typical slip, graded with the block's tolerance (a survivor is a tolerance
// so wide that the slip counts as right):
//   numeric answer v ≠ 0:  2v (a transfer counted twice), v / 2 (one forgotten), 0 (no idea)
//   numeric answer 0:      1 (in the unit's base)
//   multiple choice:       none — grading is by the exact choice, there is no tolerance to
//                          loosen; `lesson check --mutate` says so
#pragma once

#include "sim/lesson/checker.h"
#include "sim/lesson/predict.h"

#include <string>
#include <vector>

namespace tilescope::lesson {

struct Mutant {
  std::string what;  // "expected 4 → 4.4", "> became <="
  bool killed = false;
};

// The mutants of one passing check and whether each was killed. Empty for a failing check.
std::vector<Mutant> mutate_check(const CheckResult& result);

// The mutants of a numeric predict block whose answer was computed; empty for multiple choice or
// an answer that failed. `what` names the slip, never the answer's value ("half the answer").
std::vector<Mutant> mutate_predict(const PredictBlock& block, const Answer& answer);

}  // namespace tilescope::lesson

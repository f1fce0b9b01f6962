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
#pragma once

#include "sim/lesson/checker.h"

#include <string>
#include <vector>

namespace tilescope::lesson {

// The comparison a check makes, on evaluated values. Throws std::invalid_argument when an
// ordered comparison meets something other than two numbers.
bool check_holds(const Value& lhs, Compare op, const Value& rhs, double tolerance);

struct Mutant {
  std::string what;  // "expected 4 → 4.4", "> became <="
  bool killed = false;
};

// The mutants of one passing check and whether each was killed. Empty for a failing check.
std::vector<Mutant> mutate_check(const CheckResult& result);

}  // namespace tilescope::lesson

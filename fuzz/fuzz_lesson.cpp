// libFuzzer harness for lesson files and the check language: any bytes in; a LessonError is a
// correct answer, anything else (a crash, another exception, a sanitizer report, a hang) is a bug.
//
// An input that starts with "---" is a whole lesson: parsed, loaded by the checker (models and
// steps built, names resolved) and, when its models are small, every check run and every predict
// block's answer computed, graded against inputs taken from the block itself, mutated, and
// recorded in a progress that goes through JSON and back; every checkpoint checked (its solution
// and its start bound to `learner`), with its solution's checks mutated and reached ones recorded.
// Anything else is check lines: each line parsed as a check and as a learner's quantity in every
// unit, the whole text as one expression.
//
// Build and run from the repository root (new inputs go to the first folder, which .gitignore
// keeps out of the tree; make_seeds.py writes the deep and long seeds and the deep recordings
// their recorded() checks read; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_lesson
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_lesson -dict=fuzz/lesson.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/lesson fuzz/corpus-lesson \
//       fuzz/corpus-run/seeds/lesson
#include "sim/lesson/check_language.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/mutate.h"
#include "sim/lesson/predict.h"
#include "sim/lesson/progress.h"
#include "sim/lesson/quantity.h"

#include <nlohmann/json.hpp>

#include <cmath>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using tilescope::lesson::LessonError;

namespace {

// Checks simulate every memory access of a program, so their cost grows with the model; a fuzzed
// `x: [4096, 4096]` would be a slow input, not a bug. Run checks only on models this small.
constexpr int64_t kMaxCheckedFlops = int64_t{1} << 22;

// The message must be usable: non-empty, and what() carries it (this reads every byte of both).
void require_message(const LessonError& e) {
  const std::string what = e.what();
  if (e.message().empty() || what.find(e.message()) == std::string::npos) __builtin_trap();
}

void fuzz_lesson(const std::string& text) {
  using namespace tilescope::lesson;
  Lesson lesson = parse_lesson(text, "fuzz.md");
  (void)render_for_terminal(lesson);
  RenderOptions shown;
  shown.answers = true;
  (void)render_for_terminal(lesson, shown);
  LessonSession session(std::move(lesson));
  for (const Block& b : session.lesson().blocks) {
    if (b.kind != BlockKind::Model) continue;
    auto g = session.model(b.attr_value("id"));
    if (!g || g->total_cost().flops > kMaxCheckedFlops) return;
  }
  const std::vector<CheckResult> results = session.run_checks();
  for (const CheckResult& r : results) {
    // What `lesson check` prints of a result.
    (void)r.lhs.to_string();
    (void)r.rhs.to_string();
  }
  LessonProgress progress(session.lesson());
  for (const PredictResult& r : run_predicts(session)) {
    const PredictBlock& p = r.block->predict;
    (void)mutate_predict(p, r.answer);
    for (const std::string& input : {r.answer.shown, p.question, p.answer_text, p.explain,
                                     p.tolerance_text, std::string("B"), std::string("2")}) {
      const Grade g = grade(p, r.answer, input);
      // An input that parsed is graded exactly when the answer was computed.
      if (g.understood && g.graded != r.answer.ok) __builtin_trap();
      (void)progress.record_prediction(p.id, input, g);
    }
  }
  for (const CheckpointCheck& c : session.run_checkpoints()) {
    for (const CheckResult& r : c.solution.checks) (void)mutate_check(r);
    // A checkpoint's own solution fails it only with a reason.
    if (!c.pass && c.error.empty()) __builtin_trap();
    if (c.solution.pass) (void)progress.record_checkpoint(c.block->checkpoint.id);
    (void)session.solution_of(*c.block);
  }
  progress.apply_results(results);
  LessonProgress back(session.lesson());
  back.restore_json(nlohmann::json::parse(progress.to_json().dump()));
  if (back.to_json() != progress.to_json()) __builtin_trap();
}

void fuzz_checks(const std::string& text) {
  using namespace tilescope::lesson;
  const tilescope::graph::SourceLoc at{"fuzz.md", 1, 1};
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string_view line = std::string_view(text).substr(begin, end - begin);
    for (const std::string& unit : predict_units()) {
      const Quantity q = parse_quantity(line, unit);
      // What a quantity is shown as reads back, short of the doubles' edge.
      if (q.ok && std::fabs(q.value) < 1e300 &&
          !parse_quantity(format_quantity(q.value, unit), unit).ok)
        __builtin_trap();
    }
    try {
      const Check c = parse_check(line, at);
      (void)c.lhs.to_string();
      (void)c.rhs.to_string();
    } catch (const LessonError& e) {
      require_message(e);
    }
    begin = end + 1;
  }
  const Expr e = parse_expr(text, at);
  (void)e.to_string();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (text.rfind("---", 0) == 0) {
      fuzz_lesson(text);
    } else {
      fuzz_checks(text);
    }
  } catch (const LessonError& e) {
    require_message(e);
  }
  return 0;
}

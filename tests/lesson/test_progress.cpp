// The player's step state: marking, the current step, checks marking whole steps, save/restore.
#include "sim/lesson/progress.h"

#include <doctest/doctest.h>

using namespace tilescope::lesson;

namespace {

// Three steps; step-1 has two checks (one false), step-2 one true check, "last" none.
const char* kLesson =
    "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n"
    "```model id=m\nx: [2, 3]\nW: [4, 3] weight\ny = x @ W.T\n```\n"
    "```check\nops(m) == 1\n```\n"  // before any step: belongs to none
    "### Step 1: One\n```check\nops(m) == 1\nflops(matmul0) == 1\n```\n"
    "### Step 2: Two\n```check\nflops(matmul0) == 2*2*4*3\n```\n"
    "<!-- step: last -->\n## Wrap up\n";

}  // namespace

TEST_CASE("progress: steps are marked in any order; current is the first not done") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonProgress p(l);
  CHECK(p.step_count() == 3);
  CHECK(p.current() == 0);
  CHECK_FALSE(p.mark_done("nope"));
  CHECK(p.mark_done("step-2"));
  CHECK(p.current() == 0);
  CHECK(p.mark_done("step-1"));
  CHECK(p.current() == 2);
  CHECK_FALSE(p.finished());
  CHECK(p.mark_done("last"));
  CHECK(p.finished());
  CHECK(p.current() == -1);
  CHECK(p.done_count() == 3);
}

TEST_CASE("progress: a step is done by checks only when all of its checks pass") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonSession s(l);
  LessonProgress p(l);
  CHECK(p.apply_results(s.run_checks()) == 1);
  CHECK_FALSE(p.is_done("step-1"));  // flops(matmul0) == 1 is false
  CHECK(p.is_done("step-2"));
  CHECK_FALSE(p.is_done("last"));  // no checks: only the UI marks it
  CHECK(p.apply_results(s.run_checks()) == 0);
}

TEST_CASE("progress: save and restore ignore ids a lesson no longer has") {
  const Lesson l = parse_lesson(kLesson, "p.md");
  LessonProgress p(l);
  p.mark_done("last");
  p.mark_done("step-1");
  CHECK(p.done_ids() == std::vector<std::string>{"step-1", "last"});
  LessonProgress q(l);
  q.restore({"last", "removed-step"});
  CHECK(q.done_ids() == std::vector<std::string>{"last"});
}

// The check language's trace functions (sim/lesson/check_trace.cpp) on a GPU trace of the quiz CNN
// written event by event (tests/support/quiz_trace.h), whose kernel times are counted by hand
// here: conv 40 µs, ReLU 10, pooling 20, the Linear's GEMV 5 and bias 2, and a 3 µs memset no
// operator launched: 80 µs in all, 77 mapped. A function of an op reads the op's line: matmul0 and
// add0 share `y = f @ W.T + b`, and so its two kernels.
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "tests/lesson/lesson_folder.h"
#include "tests/support/quiz_trace.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>

using namespace tilescope::lesson;
using tilescope::lesson::test::g_lesson_file;
using tilescope::lesson::test::LessonFolder;

namespace {

// A lesson whose model is the trace's quiz CNN (ops conv0, relu0, maxpool0, flatten0, matmul0,
// add0) and whose one check block holds `checks`, run with quiz.json beside it.
std::vector<CheckResult> run_trace_checks(const LessonFolder& folder, const std::string& checks) {
  std::ofstream(folder.file("quiz.json")) << tilescope::test::quiz_gpu_trace();
  const std::string text = std::string("---\ntitle: t\nlevel: beginner\nminutes: 1\n---\n# t\n\n") +
                           "```model id=quiz\n" + tilescope::test::kQuizModel + "```\n\n" +
                           "```check model=quiz machine=h200\n" + checks + "```\n";
  LessonSession session(parse_lesson(text, g_lesson_file));
  return session.run_checks();
}

}  // namespace

TEST_CASE("trace functions: times, shares and launches counted by hand") {
  const LessonFolder folder("tilescope_check_trace");
  const std::vector<CheckResult> r =
      run_trace_checks(folder,
                       "trace_time(\"quiz.json\") == 80e-6 within 0.1%\n"
                       "trace_time(\"quiz.json\", conv0) == 40e-6 within 0.1%\n"
                       "trace_share(\"quiz.json\", conv0) == 40 / 80 within 0.1%\n"
                       "trace_share(\"quiz.json\", matmul0) == 7 / 80 within 0.1%\n"
                       "trace_mapped(\"quiz.json\") == 77 / 80 within 0.1%\n"
                       "trace_launches(\"quiz.json\") == 6\n"
                       "trace_launches(\"quiz.json\", matmul0) == 2\n"
                       "trace_launches(\"quiz.json\", add0) == 2\n"
                       "trace_launches(\"quiz.json\", flatten0) == 0\n"
                       "trace_heaviest(\"quiz.json\") == \"conv0\"\n"
                       "trace_gpu(\"quiz.json\") == 1\n"
                       "trace_fusions(\"quiz.json\") == 2\n"
                       "trace_extra_launches(\"quiz.json\") == 2\n"
                       "trace_library(\"quiz.json\", conv0) == \"cuDNN\"\n"
                       "trace_library(\"quiz.json\", matmul0) == \"cuBLAS\"\n"
                       "contains(trace_kernel(\"quiz.json\", relu0), \"clamp\") == 1\n"
                       "trace_predicted_share(\"quiz.json\", conv0) > 0.5\n");
  REQUIRE(r.size() == 17);
  for (const CheckResult& c : r) {
    CAPTURE(c.check.text);
    INFO(c.error);
    CHECK(c.error.empty());
    CHECK(c.pass);
  }
}

TEST_CASE("trace functions: a wrong claim fails, a missing trace says which file") {
  const LessonFolder folder("tilescope_check_trace_fail");
  const std::vector<CheckResult> r =
      run_trace_checks(folder,
                       "trace_share(\"quiz.json\", conv0) == 0.9 within 1%\n"
                       "trace_heaviest(\"quiz.json\") == \"maxpool0\"\n"
                       "trace_time(\"absent.json\") > 0\n"
                       "trace_kernel(\"quiz.json\", flatten0) == \"\"\n");
  REQUIRE(r.size() == 4);
  CHECK_FALSE(r[0].pass);
  CHECK(r[0].error.empty());
  CHECK_FALSE(r[1].pass);
  CHECK_FALSE(r[2].pass);
  CHECK(r[2].error.find("absent.json") != std::string::npos);
  // The flatten ran as an operator that launched no kernel: none to name.
  CHECK_FALSE(r[3].pass);
  CHECK(r[3].error.find("no kernel") != std::string::npos);
}

TEST_CASE("trace functions: an op the model does not have is a load error at its line") {
  const LessonFolder folder("tilescope_check_trace_op");
  try {
    run_trace_checks(folder, "trace_share(\"quiz.json\", conv7) > 0\n");
    FAIL("the lesson loaded");
  } catch (const LessonError& e) {
    CHECK(std::string(e.what()).find("conv7") != std::string::npos);
  }
}

// The fuzz_lesson seed corpus keeps its predict and checkpoint blocks meaningful: each
// predict_bad_*.md and checkpoint_bad_*.md is refused with the message its last line promises
// (`<!-- expect: FILE:LINE:COL: error: ... -->`); each predict_ok_*.md loads, with every predict
// answer computed and passing its own grading, and each checkpoint_ok_*.md passes `lesson check`'s
// checkpoint check.
#include "build_paths.h"
#include "sim/lesson/predict.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope::lesson;

namespace {

std::vector<std::filesystem::path> corpus(const std::string& prefix) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(TILESCOPE_SOURCE_DIR) / "fuzz" / "corpus-lesson"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

namespace {

void check_refused_where_promised(const std::vector<std::filesystem::path>& files) {
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    const std::string text = read(f);
    const size_t at = text.rfind("<!-- expect: ");
    REQUIRE(at != std::string::npos);
    const size_t end = text.find(" -->", at);
    const std::string expect = text.substr(at + 13, end - at - 13);
    std::string what;
    try {
      LessonSession s(parse_lesson(text, "bad.md"));
    } catch (const LessonError& e) {
      what = e.what();
    }
    CHECK(what.rfind(expect, 0) == 0);
  }
}

}  // namespace

TEST_CASE("predict corpus: every malformed seed is refused where its comment says") {
  const auto files = corpus("predict_bad_");
  CHECK(files.size() >= 20);
  check_refused_where_promised(files);
}

TEST_CASE("checkpoint corpus: every malformed seed is refused where its comment says") {
  const auto files = corpus("checkpoint_bad_");
  CHECK(files.size() >= 15);
  check_refused_where_promised(files);
}

TEST_CASE("checkpoint corpus: every well-formed seed's solution reaches it and its start not") {
  const auto files = corpus("checkpoint_ok_");
  CHECK(files.size() >= 1);
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    LessonSession s(parse_lesson(read(f), f.string()));
    const auto results = s.run_checkpoints();
    CHECK(results.size() == 1);
    for (const CheckpointCheck& c : results) {
      INFO(c.error);
      CHECK(c.pass);
    }
  }
}

TEST_CASE("predict corpus: every well-formed seed loads and its answers are computed") {
  const auto files = corpus("predict_ok_");
  CHECK(files.size() >= 3);
  for (const auto& f : files) {
    CAPTURE(f.filename().string());
    LessonSession s(parse_lesson(read(f), f.string()));
    const auto results = run_predicts(s);
    CHECK(results.size() == 1);
    for (const PredictResult& r : results) {
      INFO(r.error);
      CHECK(r.pass);
    }
  }
}

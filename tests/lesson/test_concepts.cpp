// The curriculum as a whole: the concept table of lessons/README.md (every concept of the source
// documents names a lesson step that exists), both lesson tables list every lesson, and every
// lesson has a prediction and a checkpoint, with prerequisites that come first.
#include "build_paths.h"
#include "sim/lesson/lesson.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope::lesson;

namespace {

std::filesystem::path source_dir() {
  return std::filesystem::path(TILESCOPE_SOURCE_DIR);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lesson_stems() {
  std::vector<std::string> stems;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() / "lessons"))
    if (e.path().extension() == ".md" && e.path().filename() != "README.md")
      stems.push_back(e.path().stem().string());
  std::sort(stems.begin(), stems.end());
  return stems;
}

// The table rows after the heading that starts with `heading`, up to the next heading.
std::vector<std::string> table_rows(const std::string& text, const std::string& heading) {
  std::vector<std::string> rows;
  const size_t at = text.find("\n" + heading);
  if (at == std::string::npos) return rows;
  std::istringstream in(text.substr(at + 1));
  std::string line;
  std::getline(in, line);  // the heading itself
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) break;
    if (line.rfind("| ", 0) == 0 && line.find("---") == std::string::npos &&
        line.rfind("| concept |", 0) != 0)
      rows.push_back(line);
  }
  return rows;
}

}  // namespace

TEST_CASE("concepts: every concept names a lesson step, and every step it names exists") {
  const std::string readme = read(source_dir() / "lessons" / "README.md");
  const std::vector<std::string> rows = table_rows(readme, "## Concepts");
  // The two source documents hold some fifty concepts; the table lists each on a row.
  CHECK(rows.size() >= 40);
  const std::regex link(R"(\[(\d\d) · ([a-z0-9-]+)\]\(((\d\d)-[a-z0-9-]+\.md)\))");
  std::vector<std::string> taught;
  for (const std::string& row : rows) {
    CAPTURE(row);
    size_t links = 0;
    for (std::sregex_iterator it(row.begin(), row.end(), link), end; it != end; ++it) {
      ++links;
      const std::string number = (*it)[1], step = (*it)[2], file = (*it)[3], file_number = (*it)[4];
      CAPTURE(file);
      CHECK(number == file_number);  // the text says the lesson the link opens
      const std::filesystem::path path = source_dir() / "lessons" / file;
      REQUIRE(std::filesystem::exists(path));
      const Lesson l = load_lesson_file(path.string());
      const bool found = std::any_of(l.steps.begin(), l.steps.end(),
                                     [&](const LessonStep& s) { return s.id == step; });
      INFO("step '" << step << "' is not a step of " << file);
      CHECK(found);
      taught.push_back(std::filesystem::path(file).stem().string());
    }
    CHECK(links >= 1);  // no concept without a step
  }
  // Every lesson teaches at least one of the concepts.
  for (const std::string& stem : lesson_stems()) {
    CAPTURE(stem);
    CHECK(std::find(taught.begin(), taught.end(), stem) != taught.end());
  }
}

TEST_CASE("concepts: every lesson is in the lesson table of lessons/README.md and of README.md") {
  const std::string lessons_readme = read(source_dir() / "lessons" / "README.md");
  const std::string readme = read(source_dir() / "README.md");
  for (const std::string& stem : lesson_stems()) {
    CAPTURE(stem);
    CHECK(lessons_readme.find("](" + stem + ".md)") != std::string::npos);
    CHECK(readme.find("lessons/" + stem + ".md") != std::string::npos);
  }
}

TEST_CASE("curriculum: every lesson has a prediction and a checkpoint, prerequisites come first") {
  // Whether each checkpoint's solution reaches it and its start does not is `lesson check`'s
  // verdict, which test_lessons.cpp asks for; here, that every lesson has the blocks at all.
  for (const std::string& stem : lesson_stems()) {
    CAPTURE(stem);
    const Lesson l = load_lesson_file((source_dir() / "lessons" / (stem + ".md")).string());
    auto has = [&](BlockKind k) {
      return std::any_of(l.blocks.begin(), l.blocks.end(),
                         [&](const Block& b) { return b.kind == k; });
    };
    CHECK(has(BlockKind::Predict));
    CHECK(has(BlockKind::Checkpoint));
    // A prerequisite is an earlier lesson: the numbered order is a reading order.
    for (const std::string& p : l.prerequisites) CHECK(p < stem);
  }
}

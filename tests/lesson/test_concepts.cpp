// The curriculum as a whole: the concept table of lessons/README.md (every concept of the source
// documents names a lesson step that exists), both lesson tables list every lesson, and every
// lesson has a prediction and a checkpoint, with prerequisites that come first.
#include "build_paths.h"
#include "sim/lesson/check_language.h"
#include "sim/lesson/concepts.h"
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

TEST_CASE("concepts: the README's table is the one lessons/concepts.txt and teaches= make") {
  const std::string readme = read(source_dir() / "lessons" / "README.md");
  std::vector<Lesson> lessons;
  for (const std::string& stem : lesson_stems())
    lessons.push_back(load_lesson_file((source_dir() / "lessons" / (stem + ".md")).string()));
  const std::string table = concept_table(
      load_concepts_file((source_dir() / "lessons" / "concepts.txt").string()), lessons);
  INFO("lessons/README.md's concept table differs from `tilescope-cli lesson concepts`; run "
       "scripts/lesson-counts.sh");
  CHECK(readme.find(table) != std::string::npos);
}

TEST_CASE("concepts: a key no file lists, a concept no step teaches, a bad line: each located") {
  const std::string file = "concepts.txt";
  auto error = [](auto&& f) {
    try {
      f();
    } catch (const LessonError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error([&] { parse_concepts("a | 000 | A\nb | 003 | B\n", file); })
            .find("concepts.txt:2:") != std::string::npos);
  CHECK(error([&] { parse_concepts("a | 000 | A\na | 001 | B\n", file); })
            .find("listed twice (first at line 1)") != std::string::npos);
  CHECK(error([&] { parse_concepts("# comment\n\nno bars here\n", file); })
            .find("concepts.txt:3:1: ") != std::string::npos);
  const std::vector<Concept> concepts = parse_concepts("# c\nfuse | 000 | Fusion\n", file);
  REQUIRE(concepts.size() == 1);
  CHECK(concepts[0].text == "Fusion");
  const std::string head = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";
  const Lesson taught = parse_lesson(head + "<!-- step: one teaches=fuse -->\n# One\n",
                                     "lessons/05-x.md");
  CHECK(concept_table(concepts, {taught}) ==
        "| concept | source | where (lesson · step) |\n|---|---|---|\n"
        "| Fusion | 000 | [05 · one](05-x.md) |\n");
  const Lesson unknown = parse_lesson(head + "<!-- step: one teaches=fuse,tile -->\n# One\n",
                                      "lessons/05-x.md");
  CHECK(error([&] { concept_table(concepts, {unknown}); })
            .find("05-x.md:6:") != std::string::npos);
  const Lesson none = parse_lesson(head + "<!-- step: one -->\n# One\n", "lessons/05-x.md");
  CHECK(error([&] { concept_table(concepts, {none}); }).find("no step teaches concept 'fuse'") !=
        std::string::npos);
  CHECK(error([&] { parse_lesson(head + "<!-- step: one teaches=a,,b -->\n", "l.md"); })
            .find("teaches= lists concept keys") != std::string::npos);
}

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

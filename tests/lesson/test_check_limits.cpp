// Lessons and check lines far larger or deeper than anyone writes: flat chains of any length
// evaluate, nesting stops at a located limit, files that never end are refused at their size
// limit, and a lesson that checks nothing does not pass.
#include "sim/lesson/check_language.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <doctest/doctest.h>

#include "tests/support/run_command.h"

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::lesson;

namespace {

const tilescope::graph::SourceLoc kAt{"l.md", 7, 1};

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";  // lines 1-5
const std::string kModel = "```model id=m\nx: [4, 8]\nW: [2, 8] weight\ny = relu(x @ W.T)\n```\n";

const std::string kDeeper =
    "error: expression nested deeper than " + std::to_string(kMaxCheckNesting) + " levels";

// "1 op 1 op ... 1": `terms` operands.
std::string chain(const std::string& operand, const std::string& op, int terms) {
  std::string s = operand;
  for (int i = 1; i < terms; ++i) s += " " + op + " " + operand;
  return s;
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string error_of(const std::string& text) {
  try {
    parse_check(text, kAt);
  } catch (const LessonError& e) {
    return e.what();
  }
  return "no error";
}

// The one check of a lesson holding kModel, run; the check is on line 12. The lesson is
// `lesson_file` (its folder is where it may read files).
CheckResult run(const std::string& check, const std::string& blocks = kModel,
                const std::string& lesson_file = "t.md") {
  LessonSession s(parse_lesson(kHead + blocks + "```check\n" + check + "\n```\n", lesson_file));
  const auto results = s.run_checks();
  REQUIRE(results.size() == 1);
  return results[0];
}

}  // namespace

TEST_CASE("check limits: 30,000-term sums and products parse and evaluate left to right") {
  // 30,000 ones summed is 30,000; the chain is one node, so nothing recurses per term.
  const CheckResult sum = run(chain("1", "+", 30000) + " == 30000");
  INFO(sum.error);
  CHECK(sum.pass);
  CHECK(sum.lhs.number == 30000);
  CHECK(run(chain("1", "*", 30000) + " - " + chain("1", "/", 30000) + " == 0").pass);
  // Left-assoc: 100 - 1 - 1 - ... (99 ones) is 1; 2^10 / 2 / 2 ... (ten 2s) is 1.
  CHECK(run("100 - " + chain("1", "-", 99) + " == 1").pass);
  CHECK(run("1024 / " + chain("2", "/", 10) + " == 1").pass);
  // Precedence inside chains: 2 + 3 * 4 - 6 / 2 = 2 + 12 - 3 = 11.
  CHECK(run("2 + 3 * 4 - 6 / 2 == 11").pass);
  // The canonical text still brackets every operator, as it did for two-operand nodes.
  CHECK(parse_expr("10 - 2 - 3 * 4 * 5", kAt).to_string() == "((10 - 2) - ((3 * 4) * 5))");
}

TEST_CASE("check limits: nesting past the limit is an error at the token that crosses it") {
  // Every '(' opens a level, so the 65th, at offset 64 of the line (column 65), is refused.
  const int limit = kMaxCheckNesting;
  const std::string at = "l.md:7:" + std::to_string(1 + limit) + ": ";
  CHECK(error_of(repeat("(", 10000) + "1" + repeat(")", 10000) + " == 1").rfind(at + kDeeper, 0) ==
        0);
  CHECK(error_of(repeat("[", 10000) + repeat("]", 10000) + " == []").rfind(at + kDeeper, 0) == 0);
  // "- " and "f(" are two columns a level: the 65th is at offset 128 (column 129).
  const std::string at2 = "l.md:7:" + std::to_string(1 + 2 * limit) + ": ";
  CHECK(error_of(repeat("- ", 10000) + "1 == 1").rfind(at2 + kDeeper, 0) == 0);
  CHECK(
      error_of(repeat("f(", 10000) + "1" + repeat(")", 10000) + " == 1").rfind(at2 + kDeeper, 0) ==
      0);
  // The right-hand side counts from zero again, at its own columns.
  CHECK(error_of("1 == " + repeat("(", 100) + "1" + repeat(")", 100))
            .rfind("l.md:7:" + std::to_string(6 + limit) + ": " + kDeeper, 0) == 0);
  // At the limit it parses: 64 levels of brackets, and 64 unary minuses (even: +1).
  CHECK(error_of(repeat("(", limit) + "1" + repeat(")", limit) + " == 1") == "no error");
  CHECK(run(repeat("- ", limit) + "1 == 1").pass);
}

TEST_CASE("check limits: a lesson check line deeper than the limit names the lesson file:line") {
  try {
    LessonSession s(parse_lesson(
        kHead + kModel + "```check\n" + repeat("[", 10000) + repeat("]", 10000) + " == []\n```\n",
        "t.md"));
    FAIL("a 10,000-deep list was accepted");
  } catch (const LessonError& e) {
    CHECK(std::string(e.what()).rfind(
              "t.md:12:" + std::to_string(1 + kMaxCheckNesting) + ": " + kDeeper, 0) == 0);
  }
}

TEST_CASE("check limits: lesson files and the files a lesson reads are capped") {
  // /dev/zero never ends: refused at the lesson limit (8 MiB), naming the path.
  try {
    load_lesson_file("/dev/zero");
    FAIL("/dev/zero loaded as a lesson");
  } catch (const LessonError& e) {
    CHECK(e.loc().file == "/dev/zero");
    CHECK(e.message().find("more than 8 MiB") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(load_lesson_file("lessons"), doctest::Contains("is a directory"),
                       LessonError);

  // In the lesson's own folder, a link to /dev/zero is followed to where it leads, outside; a
  // 65 MiB file there is refused at the recording limit (64 MiB), a 9 MiB model at 8 MiB. Each
  // result keeps its place in the lesson: the check on line 12, the model block's file= on 6.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tilescope_check_limits";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string lesson = (dir / "t.md").string();
  fs::create_symlink("/dev/zero", dir / "zero.json");
  fs::resize_file((std::ofstream((dir / "big.json").string()), dir / "big.json"), 65ull << 20);
  fs::resize_file((std::ofstream((dir / "big.model").string()), dir / "big.model"), 9ull << 20);
  const CheckResult r = run("recorded(\"zero.json\", \"a/b\") == 1", kModel, lesson);
  CHECK_FALSE(r.pass);
  CHECK(r.error.find("is outside the folders a lesson may read files from") != std::string::npos);
  CHECK(r.check.loc.to_string() == lesson + ":12:1");
  const CheckResult big = run("recorded(\"big.json\", \"a/b\") == 1", kModel, lesson);
  CHECK(big.error.find("larger than 64 MiB") != std::string::npos);
  try {
    LessonSession s(parse_lesson(
        kHead + "```model id=z file=big.model\n```\n```check\nops(z) == 1\n```\n", lesson));
    FAIL("a 9 MiB model loaded");
  } catch (const LessonError& e) {
    CHECK(std::string(e.what()).rfind(lesson + ":6:1: error: in model 'z': ", 0) == 0);
    CHECK(e.message().find("larger than 8 MiB") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("check limits: a lesson reads files only in its own folder and tilescope's assets") {
  // Issue #25: recorded("/path/secret.json", "…/password") printed the value, and file= errors
  // quoted lines of any file (/etc/shadow as root). Refused, naming the path, quoting nothing.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tilescope_lesson_confined";
  fs::remove_all(dir);
  fs::create_directories(dir / "lesson");
  { std::ofstream(dir / "secret.json") << R"({"db": {"password": "hunter2"}})"; }
  { std::ofstream(dir / "secret.model") << "root:x:0:0:root:/root:/bin/bash\n"; }
  const std::string lesson = (dir / "lesson" / "t.md").string();
  for (const std::string& path :
       {(dir / "secret.json").string(), std::string("../secret.json"), std::string("/etc/passwd")}) {
    const CheckResult r = run("recorded(\"" + path + "\", \"db/password\") == \"x\"", kModel, lesson);
    CHECK_FALSE(r.pass);
    CHECK(r.error.find("is outside the folders a lesson may read files from") != std::string::npos);
    CHECK(r.error.find("hunter2") == std::string::npos);
  }
  try {
    LessonSession s(parse_lesson(
        kHead + "```model id=z file=../secret.model\n```\n```check\nops(z) == 1\n```\n", lesson));
    FAIL("a model outside the lesson's folder loaded");
  } catch (const LessonError& e) {
    CHECK(std::string(e.what()).find("is outside the folders") != std::string::npos);
    CHECK(std::string(e.what()).find("root:x") == std::string::npos);
    CHECK(e.loc().line == 6);
  }
  // machine= names presets only: a path is refused before any file is read.
  { std::ofstream(dir / "secret.machine") << "name = \x1b]0;x\x07 root:x:0:0\n"; }
  try {
    LessonSession s(parse_lesson(kHead + kModel + "```check machine=../secret\ncores(m) == 1\n```\n",
                                 lesson));
    FAIL("machine=../secret was loaded");
  } catch (const LessonError& e) {
    CHECK(std::string(e.what()).find("not a preset name") != std::string::npos);
    CHECK(std::string(e.what()).find("root:x") == std::string::npos);
  }
  // The curriculum's own files still resolve: a lesson in lessons/ names assets/… .
  const CheckResult ok =
      run("recorded(\"assets/recorded/gpu-h200-2026-11-29.json\", \"schema\") != \"\"", kModel,
          "lessons/t.md");
  CHECK(ok.error == "");
  fs::remove_all(dir);
}

TEST_CASE("check limits: a FIFO nobody writes to reads as empty, at once") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tilescope_lesson_fifo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  REQUIRE(::mkfifo((dir / "pipe.json").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  const CheckResult r = run("recorded(\"pipe.json\", \"a\") == 1", kModel, (dir / "t.md").string());
  CHECK_FALSE(r.pass);
  CHECK(r.error.find("is not JSON") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  fs::remove_all(dir);
}

TEST_CASE("check limits: infinities and tolerances of 100% or more are errors where written") {
  // Issue #25: `1e999 == 1e999` and `within 1e300%` passed.
  CHECK(error_of("1e999 == 1e999") ==
        "l.md:7:1: error: '1e999' is too large for a number (about 1e-308 to 1e308)");
  CHECK(error_of("1e-999 == 0") ==
        "l.md:7:1: error: '1e-999' is too small to tell from 0 for a number (about 1e-308 to "
        "1e308)");
  CHECK(error_of("1 == 2 within 1e300%").find("l.md:7:15: error: a tolerance of 1e300% passes any "
                                             "two numbers of the same sign") == 0);
  CHECK(error_of("1 == 2 within 1.5").find("l.md:7:15: error: a tolerance of 1.5 passes") == 0);
  CHECK(error_of("1 == 1.5 within 50%") == "no error");
  // A value that is infinite at run time (a product past 1e308) is an error, not a pass.
  const CheckResult inf = run("1e300 * 1e300 == 1e300 * 1e300");
  CHECK_FALSE(inf.pass);
  CHECK(inf.error.find("not a finite number") != std::string::npos);
}

TEST_CASE("check limits: contains() is linear in its text") {
  // "aaa…a" (4 MB) searched for "aaa…ab" (4,000 bytes): std::string::find's naive scan compares
  // about 4e6 x 4e3 = 1.6e10 characters; KMP about 2 x 4e6.
  const std::string hay(4'000'000, 'a'), needle = std::string(4000, 'a') + "b";
  const auto start = std::chrono::steady_clock::now();
  const CheckResult r = run("contains(\"" + hay + "\", \"" + needle + "\") == 0");
  CHECK(r.pass);
  CHECK(run("contains(\"xxabcab\", \"abcab\") == 1").pass);
  CHECK(run("contains(\"abcab\", \"abd\") == 0").pass);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("check limits: a lesson without checks is an error, not a pass") {
  // Nothing checked is nothing verified: the checker refuses it and names the file.
  CHECK_THROWS_WITH_AS(LessonSession(parse_lesson(kHead + kModel, "none.md")),
                       doctest::Contains("none.md: error: the lesson has no checks"), LessonError);
  // Prose and a model only, through the CLI: it fails and says why.
  const auto path =
      tilescope::test::write_scratch_file("none.md", kHead + "Just prose.\n" + kModel);
  const auto cli = tilescope::test::run_cli("lesson check '" + path.string() + "'");
  CHECK(cli.code != 0);
  CHECK(cli.out.find(path.string() + ": error: the lesson has no checks") != std::string::npos);
}

TEST_CASE("check limits: control bytes a message quotes are escaped, so what() keeps all of it") {
  // Found by fuzz_lesson: a NUL in a check line was quoted raw, and what() (a C string) ended at
  // it. The NUL is at offset 9 (column 10) of the line.
  const std::string line = std::string("flops(a) ") + '\0' + " == 1";
  const std::string what = error_of(line);
  CHECK(what == "l.md:7:10: error: unexpected character '\\x00' in a check");
  // ESC would drive the terminal; in a string token it is quoted as \x1b too.
  CHECK(error_of("a == b \"\x1b[31m\"") ==
        "l.md:7:8: error: unexpected string \"\\x1b[31m\" after a complete check");
}

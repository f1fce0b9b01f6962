// `lesson check --mutate`: a check that would pass with a wrong expected value survives its
// mutants; a check that pins the value kills every one. Expected values are hand counts.
#include "build_paths.h"
#include "sim/lesson/mutate.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <string>

using namespace tilescope::lesson;

namespace {

const std::string kHead = "---\ntitle: T\nlevel: beginner\nminutes: 10\n---\n";
// x [64, 1024] @ W.T, W [512, 1024]: flops(matmul0) = 2·64·512·1024 = 67108864.
const std::string kModel =
    "```model id=m\nx: [64, 1024]\nW: [512, 1024] weight\ny = x @ W.T\n```\n";

std::vector<Mutant> mutants_of(const std::string& check) {
  LessonSession s(parse_lesson(kHead + kModel + "```check model=m\n" + check + "\n```\n", "t.md"));
  const auto results = s.run_checks();
  REQUIRE(results.size() == 1);
  INFO(results[0].error);
  REQUIRE(results[0].pass);
  return mutate_check(results[0]);
}

size_t survivors(const std::vector<Mutant>& ms) {
  size_t n = 0;
  for (const Mutant& m : ms) n += m.killed ? 0 : 1;
  return n;
}

}  // namespace

TEST_CASE("an exact equality kills all three of its mutants (×1.1, −1, negated)") {
  const auto ms = mutants_of("flops(matmul0) == 2 * 64 * 512 * 1024");
  CHECK(ms.size() == 3);
  CHECK(survivors(ms) == 0);
}

TEST_CASE("a loose lower bound survives: 67108864 > 1e6 still passes with the bound at 1.1e6") {
  const auto ms = mutants_of("flops(matmul0) > 1e6");
  REQUIRE(ms.size() == 2);  // tightened by 10%, and flipped to <=
  CHECK(!ms[0].killed);
  CHECK(ms[0].what == "expected 1000000 → 1100000");
  CHECK(ms[1].killed);  // flipping the comparison makes it fail
}

TEST_CASE("a tight bound is killed: 67108864 > 6.5e7 fails once the bound moves to 7.15e7") {
  CHECK(survivors(mutants_of("flops(matmul0) > 6.5e7")) == 0);
  // and the same from below: intensity 26.95 < 28 fails at 25.2
  CHECK(survivors(mutants_of("intensity(matmul0) < 28")) == 0);
  CHECK(survivors(mutants_of("intensity(matmul0) < 100")) == 1);
}

TEST_CASE("a toleranced equality's mutants fall outside its band") {
  // 26.95 within 5% of 27; the mutants are 27 × 1.2 and 27 × 0.8, and −27.
  const auto ms = mutants_of("intensity(matmul0) == 27 within 5%");
  CHECK(ms.size() == 3);
  CHECK(survivors(ms) == 0);
}

TEST_CASE("strings, lists and != have mutants of their own") {
  CHECK(survivors(mutants_of("kind(matmul0) == \"MatMul\"")) == 0);
  CHECK(mutants_of("kind(matmul0) == \"MatMul\"").size() == 2);
  const auto list = mutants_of("kinds(m) == [\"MatMul\"]");
  CHECK(list.size() == 1);  // the only item dropped; one item has no order to reverse
  CHECK(survivors(list) == 0);
  // != with the computed value as the expected one must fail.
  CHECK(survivors(mutants_of("kind(matmul0) != \"Add\"")) == 0);
}

TEST_CASE("a failing check has no mutants: it is a failure first") {
  LessonSession s(
      parse_lesson(kHead + kModel + "```check model=m\nflops(matmul0) == 1\n```\n", "t.md"));
  const auto results = s.run_checks();
  REQUIRE(results.size() == 1);
  CHECK(!results[0].pass);
  CHECK(mutate_check(results[0]).empty());
}

TEST_CASE("every shipped lesson's checks kill all their mutants, and lessons/README.md says so") {
  // The curriculum's own guard (CI runs `lesson check --mutate` too): a surviving check is a
  // claim a wrong number would not disturb.
  const tilescope::test::CommandResult r = tilescope::test::run_cli("lesson check --mutate");
  CHECK(r.code == 0);
  // The README's counts are the command's, not typed: scripts/lesson-counts.sh rewrites them.
  const std::regex summary(
      R"((\d+) mutants of (\d+) checks \((\d+) checkpoints\) and (\d+) predict blocks: \d+ killed, 0 survived)");
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, summary));
  std::ifstream in("lessons/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), {});
  const std::string said = "(0 of " + m[1].str() + "\nmutants — of " + m[2].str() + " checks, " +
                           m[3].str() + " checkpoints among them, and " + m[4].str() +
                           " predictions — survive today)";
  INFO("lessons/README.md should say: " << said << " (run scripts/lesson-counts.sh)");
  CHECK(readme.find(said) != std::string::npos);
}

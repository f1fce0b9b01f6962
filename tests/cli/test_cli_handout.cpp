// `tilescope-cli lesson handout`: a printable page with each prediction as a question and its
// answer only on the last page (after the page break); a malformed lesson is refused at its
// file:line:col; without the app the handout is still written and says why it has no pictures.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using tilescope::test::run_cli;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("lesson handout: questions in the text, answers after the page break") {
  const auto out = tilescope::test::scratch_dir() / "handout-02";
  std::filesystem::remove_all(out);
  const auto r = run_cli("lesson handout 2 --no-pictures --out " + out.string());
  CAPTURE(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("4 steps, 1 questions (answers on the last page), 0 pictures") !=
        std::string::npos);
  const std::string html = read(out / "index.html");
  const size_t answers = html.find("<section class=\"answers\">");
  REQUIRE(answers != std::string::npos);
  CHECK(html.find("page-break-before: always") != std::string::npos);
  // The question (its words as the lesson writes them) stands in the text, before the answers.
  const size_t question = html.find("how many times fewer bytes reach DRAM");
  REQUIRE(question != std::string::npos);
  CHECK(question < answers);
  CHECK(html.find("<strong>Question 1.</strong>") < answers);
  // The explanation and the tolerance appear only on the answers page.
  const size_t explain = html.find("About 2×, as the byte count of step 1 said");
  REQUIRE(explain != std::string::npos);
  CHECK(explain > answers);
  CHECK(html.find("right within 10%") > answers);
  // Each of lesson 2's three checkpoints is a goal in the text and a hint on the last page.
  size_t goals = 0;
  // (The lesson's prose says "**Your turn.**" too: the goals are the div's.)
  const std::string goal = "<div class=\"goal\"><strong>Your turn.</strong>";
  for (size_t at = html.find(goal); at != std::string::npos; at = html.find(goal, at + 1)) {
    CHECK(at < answers);
    ++goals;
  }
  CHECK(goals == 3);
  CHECK(html.find("Hint: ", answers) != std::string::npos);
  // What follows a goal in its step shows the lesson's solution: a page turn comes first. Two of
  // lesson 2's goals have more after them (steps 2 and 3: the fused schedule and its checks); the
  // first ends its step. Each turn follows its goal's div directly.
  const std::string turn = "<p class=\"after-goal\">Turn the page when you have tried";
  size_t turns = 0;
  for (size_t at = html.find(turn); at != std::string::npos; at = html.find(turn, at + 1)) {
    CHECK(html.rfind("</div>\n", at) == at - 7);
    CHECK(html.rfind(goal, at) > html.rfind("</pre>", at));  // no solution between goal and turn
    ++turns;
  }
  CHECK(turns == 2);
  // Models keep their text; the lesson's own checks are summarised, not printed.
  CHECK(html.find("bias: [4096] weight") != std::string::npos);
  CHECK(html.find("kernels(epi) == 2") == std::string::npos);
}

TEST_CASE("lesson handout: a malformed lesson is refused at its line; no app, no pictures") {
  const auto bad = tilescope::test::write_scratch_file(
      "handout-bad.md", "---\ntitle: T\nlevel: beginner\nminutes: 5\n---\n```chek\nx\n```\n");
  const auto r = run_cli("lesson handout " + bad.string() + " --out " +
                         (tilescope::test::scratch_dir() / "handout-bad").string());
  CHECK(r.code == 1);
  CHECK(r.out.find("handout-bad.md:6:") != std::string::npos);
  CHECK(r.out.find("unknown block kind 'chek'") != std::string::npos);

  const auto out = tilescope::test::scratch_dir() / "handout-noapp";
  const auto r2 = run_cli("lesson handout 2 --app /nonexistent/tilescope --out " + out.string());
  CAPTURE(r2.out);
  CHECK(r2.code == 0);
  CHECK(r2.out.find("No pictures: the tilescope app was not found") != std::string::npos);
  CHECK(read(out / "index.html").find("No pictures: the tilescope app was not found") !=
        std::string::npos);
}

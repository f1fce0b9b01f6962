// The check language: precedence, calls with keywords, lists, tolerances, and errors at line:col.
#include "sim/lesson/check_language.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope::lesson;

namespace {

const tilescope::graph::SourceLoc kAt{"l.md", 7, 1};

std::string error_of(const std::string& text) {
  try {
    parse_check(text, kAt);
  } catch (const LessonError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("check language: * and / bind tighter than + and -, left to right") {
  const Check c = parse_check("1 + 2 * 3 - 8 / 4 / 2 == 6", kAt);
  CHECK(c.lhs.to_string() == "((1 + (2 * 3)) - ((8 / 4) / 2))");
  CHECK(c.op == Compare::Eq);
  CHECK(c.rhs.number == 6);
  CHECK(c.text == "1 + 2 * 3 - 8 / 4 / 2 == 6");
}

TEST_CASE("check language: calls take positional then keyword arguments") {
  const Check c = parse_check("  dram_bytes(fused, machine=tiny) <= 0.5 * dram_bytes(naive)", kAt);
  REQUIRE(c.lhs.kind == Expr::Kind::Call);
  CHECK(c.lhs.text == "dram_bytes");
  CHECK(c.lhs.positional() == 1);
  REQUIRE(c.lhs.keyword("machine") != nullptr);
  CHECK(c.lhs.keyword("machine")->text == "tiny");
  CHECK(c.lhs.keyword("model") == nullptr);
  CHECK(c.op == Compare::Le);
  CHECK(c.loc.col == 3);  // the check starts at its first non-blank column
}

TEST_CASE("check language: lists, strings, negation, tolerance and comments") {
  Check c = parse_check("heaviest(2) == [conv0, linear4]  # the quiz", kAt);
  CHECK(c.rhs.kind == Expr::Kind::List);
  CHECK(c.rhs.args.size() == 2);
  CHECK(c.text == "heaviest(2) == [conv0, linear4]");
  c = parse_check("kind(add0) != \"Has \\\"quotes\\\" # not a comment\"", kAt);
  CHECK(c.rhs.text == "Has \"quotes\" # not a comment");
  CHECK(c.op == Compare::Ne);
  c = parse_check("-x > -2.5e3", kAt);
  CHECK(c.lhs.kind == Expr::Kind::Negate);
  CHECK(c.rhs.to_string() == "-2500");
  c = parse_check("a == b within 5%", kAt);
  CHECK(c.tolerance == doctest::Approx(0.05));
  c = parse_check("a == b within 0.001", kAt);
  CHECK(c.tolerance == doctest::Approx(0.001));
  CHECK(parse_check("f() == []", kAt).lhs.args.empty());
}

TEST_CASE("check language: malformed checks name the column") {
  CHECK(error_of("flops(a) = 3").rfind("l.md:7:10: error: '=' is not a comparison", 0) == 0);
  CHECK(error_of("flops(a)").rfind("l.md:7:9: error: expected a comparison", 0) == 0);
  CHECK(error_of("flops(a == 3").rfind("l.md:7:9: error: expected ')' to close flops(", 0) == 0);
  CHECK(error_of("a == b within").rfind("l.md:7:14: error: expected a tolerance", 0) == 0);
  CHECK(error_of("a < b within 5%").rfind("l.md:7:14: error: 'within' only makes sense", 0) == 0);
  CHECK(error_of("a == \"open").rfind("l.md:7:6: error: unterminated string", 0) == 0);
  CHECK(error_of("a == 3x").rfind("l.md:7:7: error: a number runs into a name", 0) == 0);
  CHECK(error_of("a == b $").rfind("l.md:7:8: error: unexpected character '$'", 0) == 0);
  CHECK(error_of("a == b c").rfind("l.md:7:8: error: unexpected 'c' after a complete check", 0) ==
        0);
  CHECK(
      error_of("f(m=1, 2) == 0").rfind("l.md:7:8: error: a positional argument cannot follow", 0) ==
      0);
  CHECK(error_of("f(m=1, m=2) == 0")
            .rfind("l.md:7:8: error: keyword argument 'm' is given twice", 0) == 0);
  CHECK(error_of("== 3").rfind("l.md:7:1: error: expected a value", 0) == 0);
  // A non-ASCII character is quoted whole, so the message stays valid UTF-8.
  CHECK(error_of("a == 2 × 3").rfind("l.md:7:8: error: unexpected character '×' in a check", 0) ==
        0);
}

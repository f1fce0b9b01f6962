// Step language and affine expressions: parsing, printing back (round trip), errors with line:col.
#include "fixtures.h"

#include "sim/schedule/affine.h"
#include "sim/schedule/transform.h"

using namespace tilescope::schedule;

TEST_CASE("affine: splitting i into i.o*64 + i.i is a substitution") {
  Affine e = Affine::var("i", 1024) + Affine::var("k") + Affine::lit(-1);
  Affine s = e.substitute("i", Affine::var("i.o", 64) + Affine::var("i.i"));
  CHECK(s.coef("i") == 0);
  CHECK(s.coef("i.o") == 64 * 1024);
  CHECK(s.coef("i.i") == 1024);
  CHECK(s.constant == -1);
  CHECK(s.to_string() == "k + i.o*65536 + i.i*1024 - 1");
  CHECK((Affine::var("a") - Affine::var("a")).to_string() == "0");
}

TEST_CASE("steps: canonical text round-trips through the parser") {
  const std::string text =
      "fuse(matmul0, add0, relu0); tile(i, 64); reorder(i.o, j.o, k.o, i.i, j.i, k.i); "
      "stage(W, shared, at=k.o, double); bind(i.o, block.y); block_order(grouped, 8); "
      "pad(W_shared, 1, 1); layout(x, nhwc); compute_at(relu0, matmul1, at=inline)";
  const auto steps = parse_steps(text);
  REQUIRE(steps.size() == 9);
  CHECK(steps[3].name == "stage");
  CHECK(steps[3].args == std::vector<std::string>{"W", "shared", "double"});
  CHECK(steps[3].option("at") == "k.o");
  // Printing puts options last; the re-parse of the printed text prints identically.
  const std::string printed = steps_to_string(steps);
  CHECK(steps_to_string(parse_steps(printed)) == printed);
  CHECK(printed.find("stage(W, shared, double, at=k.o)") != std::string::npos);
}

TEST_CASE("steps: newlines, comments and blank separators are accepted") {
  const auto steps =
      parse_steps("# a schedule\n tile(i, 8)\n\n  tile(j,4) ;; # trailing\nunroll(j.i)");
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].line == 4);
  CHECK(steps[1].col == 3);
  CHECK(steps[2].to_string() == "unroll(j.i)");
}

TEST_CASE("steps: malformed text is an error at line:col") {
  auto message = [](const std::string& t) {
    try {
      parse_steps(t);
    } catch (const ScheduleError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("tile(i 64)").rfind("1:8: expected ',' or ')'", 0) == 0);
  CHECK(message("tile(i, 64);\nreorder(").rfind("2:9: expected an argument", 0) == 0);
  CHECK(message("tile i").rfind("1:6: expected '('", 0) == 0);
  CHECK(message("tile(i, )").rfind("1:9: expected an argument, found ')'", 0) == 0);
  CHECK(message("tile(i, 4").rfind("1:10: expected ')' to close tile(", 0) == 0);
  CHECK(message("stage(x, at=)").rfind("1:13: expected a value after 'at='", 0) == 0);
}

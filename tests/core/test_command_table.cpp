// The command language as tables (issue #27): every verb parse_command accepts has a line in the
// reference (command_reference) and every line of the reference names a verb it accepts, so the
// help cannot drift from the parser; an unknown verb's message lists every verb.
#include "app/core/commands.h"

#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>

using namespace tilescope::core;

TEST_CASE("the command reference and the parser's verbs are the same set") {
  const std::vector<std::string> verbs = command_verbs();
  REQUIRE(verbs.size() >= 50);
  const std::set<std::string> verb_set(verbs.begin(), verbs.end());
  CHECK(verb_set.size() == verbs.size());  // one row per verb
  // The reference's lines: "  USAGE   help"; a usage's first word is its verb.
  std::set<std::string> documented;
  std::istringstream in(command_reference());
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;  // continuation
    const std::string verb = line.substr(2, line.find(' ', 2) - 2);
    CAPTURE(line);
    CHECK(verb_set.count(verb) == 1);
    documented.insert(verb);
  }
  for (const std::string& v : verbs) {
    CAPTURE(v);
    CHECK(documented.count(v) == 1);
  }
}

TEST_CASE("an unknown verb is refused with every verb the parser knows") {
  try {
    parse_command("zom 2");
    FAIL("an unknown verb parsed");
  } catch (const CommandError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("unknown command 'zom'") == 0);
    for (const std::string& v : command_verbs()) {
      CAPTURE(v);
      CHECK(msg.find(v) != std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(parse_command("   "), "empty command", CommandError);
}

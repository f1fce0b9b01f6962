// What tilescope-cli writes to the terminal about a user's file: escape sequences from the file
// are shown, not executed; a huge token is cut; endless or binary traces end with an error.
#include <doctest/doctest.h>

#include "tests/support/run_command.h"

#include <chrono>
#include <string>

using tilescope::test::run_cli;
using tilescope::test::write_scratch_file;

TEST_CASE("an ESC sequence in a file reaches the terminal as text") {
  // OSC 0 retitles the terminal; CSI 31m turns the text red.
  const auto din = write_scratch_file("esc.din", "0 \x1b[31mzz\n");
  const auto r = run_cli("simulate --trace " + din.string() + " --machine tiny");
  CHECK(r.code == 1);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find("\\x1b[31mzz") != std::string::npos);
  const auto machine = write_scratch_file("esc.machine", "name = \x1b]0;pwned\x07\n");
  const auto m = run_cli("simulate default --machine " + machine.string());
  CHECK(m.code == 1);
  CHECK(m.out.find('\x1b') == std::string::npos);
  CHECK(m.out.find('\x07') == std::string::npos);
}

TEST_CASE("a 10 MB din token is quoted in 40 characters, and the line limit is named") {
  const auto din = write_scratch_file("long.din", "0 " + std::string(10'000'000, 'a') + "\n");
  const auto r = run_cli("simulate --trace " + din.string() + " --machine tiny");
  CHECK(r.code == 1);
  CHECK(r.out.size() < 1000);
  CHECK(r.out.find(":1: error: the line is longer than 4096 bytes") != std::string::npos);
}

TEST_CASE("/dev/zero and a directory as a trace are errors, quickly") {
  const auto start = std::chrono::steady_clock::now();
  const auto zero = run_cli("simulate --trace /dev/zero --machine tiny");
  CHECK(zero.code == 1);
  CHECK(zero.out.find("/dev/zero:1: error: the line is longer") != std::string::npos);
  CHECK(zero.out.find("\\x00") != std::string::npos);
  const auto dir = run_cli("simulate --trace / --machine tiny");
  CHECK(dir.code == 1);
  CHECK(dir.out.find("is a directory") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

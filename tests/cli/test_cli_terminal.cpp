// What tilescope-cli writes to the terminal about a user's file: escape sequences from the file
// are shown, not executed; a huge token is cut; endless or binary traces end with an error.
#include <doctest/doctest.h>

#include "tests/support/run_command.h"

#include <chrono>
#include <filesystem>
#include <fstream>
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

TEST_CASE("lesson titles, prose and check strings reach stdout escaped (ESC, C1, U+202E)") {
  // Issue #25: `lesson list/show/check` printed a lesson's own text raw to the terminal. The
  // title holds an OSC retitle, a C1 CSI (U+009B, C2 9B) and a right-to-left override (E2 80 AE).
  namespace fs = std::filesystem;
  const fs::path dir = tilescope::test::scratch_dir() / "hostile-lessons";
  fs::create_directories(dir);
  const std::string hostile = "Evil \x1b]0;pwned\x07 \xc2\x9b" "31m txt\xe2\x80\xae" "exe";
  std::ofstream(dir / "01-evil.md")
      << "---\ntitle: " << hostile << "\nlevel: beginner\nminutes: 5\n---\n# " << hostile
      << "\n\nProse " << hostile << "\n```model id=m\nx: [4]\ny = relu(x)\n```\n```check\n"
      << "contains(\"" << hostile << "\", \"Evil\") == 1\n```\n";
  for (const std::string& args :
       {"lesson list --dir " + dir.string(), "lesson show " + (dir / "01-evil.md").string(),
        "lesson check " + (dir / "01-evil.md").string()}) {
    const auto r = tilescope::test::run_command_split(TILESCOPE_CLI_PATH + std::string(" ") + args);
    INFO(args, r.out, r.err);
    const std::string all = r.out + r.err;
    CHECK(all.find("Evil") != std::string::npos);  // the text is there, escaped
    CHECK(all.find('\x1b') == std::string::npos);
    CHECK(all.find('\x07') == std::string::npos);
    CHECK(all.find("\xc2\x9b") == std::string::npos);
    CHECK(all.find("\xe2\x80\xae") == std::string::npos);
    CHECK(all.find("\\u202E") != std::string::npos);
  }
}

TEST_CASE("a --tensor name with escape sequences is printed escaped by simulate") {
  const auto trace = write_scratch_file("named.din", "0 10 4\n0 20 4\n");
  const auto r = tilescope::test::run_command_split(
      TILESCOPE_CLI_PATH + std::string(" simulate --machine tiny --trace '") + trace.string() +
      "' --tensor \"$(printf '\\033[2J\\342\\200\\256A=0x10+16')\"");
  INFO(r.out, r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("\\x1b[2J\\u202EA") != std::string::npos);
  CHECK(r.out.find('\x1b') == std::string::npos);
}

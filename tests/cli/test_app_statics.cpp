// No function-local static holds UI state in app/ (issue #27): what the GUI keeps between frames
// lives in the AppState, the views' ViewCaches or the context's GuiStore, where a reader (and a
// second window) can see it. A mutable static in a function body fails this test unless it is
// one of the process-wide services listed below with its reason; constants (const, constexpr)
// are not state.
#include "tests/support/source_tree.h"
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

// Mutable statics that are process-wide services, not UI state: "file:text of the line".
const std::map<std::string, std::string> kServices = {
    {"app/cli/main.cpp:static std::vector<CommandInfo> registry;",
     "the CLI's subcommands, registered before main by static initialisers"},
    {"app/cli/terminal_guard.cpp:static StdioForward* const forward = new StdioForward();",
     "the process's stdio forwarding, alive until exit (signal handlers reach it)"},
    {"app/core/jobs.h:static std::atomic<int> count{0};",
     "the process's count of running job threads, read at exit"},
};

// Indented `static` declarations that are not constants, casts, assertions or functions.
std::vector<std::string> mutable_statics(const std::map<std::string, std::string>& tree) {
  const std::regex decl(R"(^\s+static\s+(.*)$)");
  const std::regex not_state(R"(^(const|constexpr|inline)\b|^[^=;{]*\()");
  std::vector<std::string> out;
  for (const auto& [path, text] : tree) {
    std::istringstream in(text);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::smatch m;
      if (!std::regex_match(line, m, decl)) continue;
      const std::string rest = m[1];
      if (std::regex_search(rest, not_state)) continue;
      out.push_back(path + ":" + std::to_string(n) + ":static " + rest);
    }
  }
  return out;
}

bool listed(const std::string& found) {
  const size_t first = found.find(':'), second = found.find(':', first + 1);
  return kServices.count(found.substr(0, first) + found.substr(second)) > 0;
}

}  // namespace

TEST_CASE("app/: no function-local static holds UI state") {
  std::map<std::string, std::string> tree;
  for (auto& [path, text] : tilescope::test::read_source_tree(tilescope::test::is_code_file))
    if (path.rfind("app/", 0) == 0) tree.emplace(path, std::move(text));
  std::vector<std::string> found = mutable_statics(tree), unlisted;
  for (const std::string& f : found)
    if (!listed(f)) unlisted.push_back(f);
  std::string text;
  for (const std::string& f : unlisted) text += f + "\n";
  INFO("mutable statics in app/ (move them into the AppState, ViewCaches or GuiStore):\n" << text);
  CHECK(unlisted.empty());
  CHECK(found.size() == kServices.size());  // a listed service that is gone: delete its row
}

TEST_CASE("app statics: a cache, a flag and a map in function bodies are found; constants are not") {
  const std::vector<std::string> v = mutable_statics({
      {"app/gui/x.cpp",
       "void f() {\n  static std::map<std::string, int> cache;\n  static bool warned = false;\n"
       "  static const int kLimit = 3;\n  static constexpr float kPad = 2;\n"
       "  auto p = static_cast<int>(kPad);\n}\nstruct S {\n  static int helper(int x);\n"
       "  static std::vector<int> rows;\n};\n"},
  });
  REQUIRE(v.size() == 3);
  CHECK(v[0] == "app/gui/x.cpp:2:static std::map<std::string, int> cache;");
  CHECK(v[1] == "app/gui/x.cpp:3:static bool warned = false;");
  CHECK(v[2] == "app/gui/x.cpp:10:static std::vector<int> rows;");
}

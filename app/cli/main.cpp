// tilescope-cli entry point: builds the CLI11 app from the registered subcommands and runs one.
#include "commands.h"
#include "terminal_guard.h"

#include <algorithm>
#include <exception>
#include <iostream>

namespace tilescope::cli {
std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}
}  // namespace tilescope::cli

int main(int argc, char** argv) {
  using namespace tilescope::cli;
  // Everything written to std::cout, printf's stdout and std::cerr passes the guard: errors quote
  // user files, lessons and machine files print their own text.
  guard_standard_output();
  TerminalGuard guard(std::cerr.rdbuf());
  std::streambuf* const plain_cerr = std::cerr.rdbuf(&guard);
  struct Restore {
    std::streambuf* buf;
    ~Restore() { std::cerr.rdbuf(buf); }
  } restore{plain_cerr};
  CLI::App app{"tilescope-cli — how model code becomes fast kernels, without a display"};
  app.require_subcommand(1);
  int exit_code = 0;
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  for (auto& info : registry) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    info.setup(*sub, exit_code);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "tilescope-cli: internal error: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}

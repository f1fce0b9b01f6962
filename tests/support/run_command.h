// Runs a shell command for end-to-end tests and returns its exit status with stdout and stderr
// together — the one helper every suite that drives tilescope-cli or the app binary uses.
#pragma once

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace tilescope::test {

struct CommandResult {
  int code = -1;     // exit status; -1 when the command did not exit normally
  std::string out;   // stdout and stderr, interleaved as written
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

#ifdef TILESCOPE_CLI_PATH
// `tilescope-cli ARGS`, optionally with environment assignments in front ("CXX=/nonexistent").
inline CommandResult run_cli(const std::string& args, const std::string& env = "") {
  return run_command((env.empty() ? "" : env + " ") + TILESCOPE_CLI_PATH + " " + args);
}
#endif

}  // namespace tilescope::test

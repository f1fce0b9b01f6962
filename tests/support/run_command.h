// Runs a shell command for end-to-end tests and returns its exit status with stdout and stderr
// together — the one helper every suite that drives tilescope-cli or the app binary uses.
#pragma once

#include "build_paths.h"

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tilescope::test {

struct CommandResult {
  int code = -1;    // exit status; -1 when the command did not exit normally
  std::string out;  // stdout and stderr, interleaved as written
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

struct SplitResult {
  int code = -1;
  std::string out, err;  // stdout and stderr apart
};

// A folder of this process's own for the files a test writes, so parallel test processes do not
// collide.
inline std::filesystem::path scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d =
        std::filesystem::temp_directory_path() / ("tilescope-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes `text` to scratch_dir()/name (bytes as given) and returns the path.
inline std::filesystem::path write_scratch_file(const std::string& name, const std::string& text) {
  const std::filesystem::path p = scratch_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

// Runs `command` with stdout and stderr captured apart (through two files in scratch_dir()),
// optionally feeding `stdin_file`.
inline SplitResult run_command_split(const std::string& command,
                                     const std::string& stdin_file = {}) {
  namespace fs = std::filesystem;
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string cmd = command + " >'" + out.string() + "' 2>'" + err.string() + "'";
  if (!stdin_file.empty()) cmd += " <'" + stdin_file + "'";
  const int status = std::system(cmd.c_str());
  const auto read_all = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
}

#ifdef TILESCOPE_CLI_PATH
// `tilescope-cli ARGS`, optionally with environment assignments in front ("CXX=/nonexistent").
inline CommandResult run_cli(const std::string& args, const std::string& env = "") {
  return run_command((env.empty() ? "" : env + " ") + TILESCOPE_CLI_PATH + " " + args);
}
#endif

}  // namespace tilescope::test

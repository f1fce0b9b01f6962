// Registry of tilescope-cli subcommands: each cmd_*.cpp adds itself with a static CommandRegistrar.
#pragma once

#include "app/core/gpu_run.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tilescope::cli {

// A subcommand's setup: add options to `sub` and set its callback. The callback returns the
// process exit code through `exit_code` (0 ok, 1 user error, 2 internal error).
using CommandSetup = std::function<void(CLI::App& sub, int& exit_code)>;

struct CommandInfo {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

// The GPU bench program that `bench --gpu` and `run --gpu` start: $TILESCOPE_GPU_BENCH when set
// (a build copied to another machine), else the one this build made (app/core/gpu_run.h).
using core::gpu_bench_program;

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace tilescope::cli

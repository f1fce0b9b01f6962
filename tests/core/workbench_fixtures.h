// Shared by the workbench test files: an AppState for a model text, running a script command,
// letting the background jobs finish, and a machine whose one big cache keeps everything.
#pragma once

#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/workbench.h"
#include "sim/predict/machine.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

namespace tilescope::core::test {

// Parsed and lowered, as the app has it after the first frames.
inline AppState state_for(const char* text) {
  AppState state;
  state.model.text = text;
  REQUIRE(reparse_model(state));
  update_state(state);
  REQUIRE(state.workbench.history);
  return state;
}

inline std::string run(AppState& state, const std::string& line) {
  return apply_command(state, parse_command(line));
}

// Lets the background jobs finish, as frames would (bounded, so a hang fails instead of waiting).
inline void wait_jobs(AppState& state, int max_seconds = 60) {
  for (int i = 0; i < max_seconds * 100 && state.workbench.busy(); ++i) {
    workbench_poll(state.workbench);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  workbench_poll(state.workbench);
  REQUIRE_FALSE(state.workbench.busy());
}

// One 1 MiB 16-way level (1024 sets of 64 B lines): the small kernels of these tests touch under
// 360 KiB, at most a few lines per set, so everything stays resident: main memory sees each line
// once (compulsory) and each dirty line written back once. Only main memory has a bandwidth.
inline predict::Machine big_cache_machine(const std::string& peak = "100 GFLOP/s") {
  return predict::parse_machine(
      "name = bigcache\nkind = cpu\npeak fp32 simd = " + peak +
          "\n[level L1]\nsize = 1 MiB\nline = 64 B\nways = 16\nreplacement = lru\nwrite = back\n"
          "write_allocate = yes\n[memory DRAM]\nsize = 1 GiB\nbandwidth = 10 GB/s\n",
      "<test>");
}

// state_for(text) on big_cache_machine(): traffic that is a closed form (every line read once).
inline AppState state_on_big_cache(const char* text) {
  AppState state = state_for(text);
  state.workbench.machine = big_cache_machine();
  state.workbench.machine_name = "bigcache";
  return state;
}

}  // namespace tilescope::core::test

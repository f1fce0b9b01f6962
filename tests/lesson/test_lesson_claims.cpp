// Claims in lesson prose about what a tool prints that a lesson check cannot call: lesson 12 says
// `tilescope-cli autotune` sweeps 25 points for lesson 3's 64 × 64 GEMM.
#include "build_paths.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

TEST_CASE("lesson 12: the autotune sweep of a 64 × 64 GEMM has 25 points") {
  const std::string model =
      (std::filesystem::temp_directory_path() / "tilescope_lesson12_gemm.model").string();
  {
    std::ofstream o(model);
    o << "A: [64, 64]\nB: [64, 64]\nC = A @ B\n";
  }
  const tilescope::test::CommandResult r = tilescope::test::run_command(
      std::string(TILESCOPE_CLI_PATH) + " autotune " + model + " --tile i,j --machine tiny --json");
  std::remove(model.c_str());
  REQUIRE(r.code == 0);
  // The JSON follows the sweep's stderr notes, if any: parse from the first brace.
  const nlohmann::json j = nlohmann::json::parse(r.out.substr(r.out.find('{')));
  // Powers of two from 4 to the loop's 64: 4, 8, 16, 32, 64 — five sizes per loop, 5 × 5 points.
  CHECK(j.at("points").size() == 5 * 5);
}

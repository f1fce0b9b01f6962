// Claims in lesson prose about what a tool prints that a lesson check cannot call: lesson 12 says
// `tilescope-cli autotune` sweeps 25 points for its 64 × 64 × 64 GEMM, that over i and j every
// point predicts the same time on `tiny`, and that over j and k the best point takes about half
// as long.
#include "build_paths.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace {

nlohmann::json autotune(const std::string& model, const std::string& loops) {
  const tilescope::test::CommandResult r = tilescope::test::run_command(
      std::string(TILESCOPE_CLI_PATH) + " autotune " + model + " --tile " + loops +
      " --machine tiny --json");
  REQUIRE(r.code == 0);
  // The JSON follows the sweep's stderr notes, if any: parse from the first brace.
  return nlohmann::json::parse(r.out.substr(r.out.find('{')));
}

// The fastest and the slowest predicted time of the points that have one.
std::pair<double, double> spread(const nlohmann::json& sweep) {
  double lo = 1e300, hi = 0;
  for (const auto& p : sweep.at("points"))
    if (p.at("predicted").at("ok").get<bool>()) {
      const double t = p.at("predicted").at("seconds").get<double>();
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
  return {lo, hi};
}

}  // namespace

TEST_CASE("lesson 12: the autotune sweeps of a 64 × 64 × 64 GEMM on tiny") {
  const std::string model =
      (std::filesystem::temp_directory_path() / "tilescope_lesson12_gemm.model").string();
  {
    std::ofstream o(model);
    o << "A: [64, 64]\nB: [64, 64]\nC = A @ B\n";
  }
  const nlohmann::json ij = autotune(model, "i,j");
  const nlohmann::json jk = autotune(model, "j,k");
  std::remove(model.c_str());
  // Powers of two from 4 to the loop's 64: 4, 8, 16, 32, 64 — five sizes per loop, 5 × 5 points.
  CHECK(jk.at("points").size() == 5 * 5);
  CHECK(ij.at("points").size() == 5 * 5);
  // "every point predicts the same time": within 2 % (the app's nearly-flat threshold).
  const auto [ij_lo, ij_hi] = spread(ij);
  CHECK(ij_hi <= ij_lo * 1.02);
  // "the best point takes about half as long": within 10 %.
  const auto [jk_lo, jk_hi] = spread(jk);
  CHECK(jk_lo / ij_lo == doctest::Approx(0.5).epsilon(0.1));
  CHECK(jk_hi > jk_lo * 1.8);  // and this grid ranks its points
}

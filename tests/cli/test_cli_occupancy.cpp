// End-to-end test of `tilescope-cli occupancy --loads`: the bound Little's law allows and the
// prediction under it, against the H200's recorded latency-hiding experiment.
#include "build_paths.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

namespace {

// The number after `prefix` in `text` (GB/s or ns), or -1.
double number_after(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + prefix.size());
}

}  // namespace

TEST_CASE("occupancy --loads: one warp of float4 loads per SM, the bound and the prediction") {
  // One 32-thread block on each of the H200's 132 SMs, one 512-byte load a warp in flight: the
  // experiment's first point (assets/recorded/experiments/gpu-h200-latency-hiding-2026-12-05-
  // run1.json measured 172.3 GB/s).
  const tilescope::test::SplitResult r = tilescope::test::run_command_split(
      std::string("'") + TILESCOPE_CLI_PATH +
      "' occupancy --machine h200 --threads 32 --registers 32 --grid 132 --loads 1 "
      "--load-bytes 512");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  // Little's law: 132 × 512 B / 322 ns = 209.9 GB/s.
  CHECK(r.out.find("latency-bound: 1 warp × 1 load × 512 B") != std::string::npos);
  CHECK(number_after(r.out, "at most ") == doctest::Approx(209.9).epsilon(0.003));
  // The prediction: a round of 322 + 60 ns and a little queueing: about 176 GB/s, within 25 % of
  // the 172.3 measured, and under the bound.
  const double predicted = number_after(r.out, "memory: predicted ");
  CHECK(predicted > 0.75 * 172.3);
  CHECK(predicted < 1.25 * 172.3);
  CHECK(predicted < 209.9);
  CHECK(number_after(r.out, "a warp's round takes ") > 382);
}

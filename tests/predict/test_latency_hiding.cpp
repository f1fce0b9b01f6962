// The latency-hiding experiment's recordings (assets/recorded/experiments, made by
// scripts/experiments/latency_hiding.cu on an H100) against what tilescope says of them: the
// machine file's memory latency is the measured chase, the memory's bandwidth binds only with
// many warps in flight, and Little's law over the loads a warp has in flight is the bound the
// docs say it is (docs/occupancy.md).
#include "build_paths.h"
#include "sim/predict/machine.h"
#include "sim/predict/parallelism.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

using namespace tilescope::predict;

namespace {

nlohmann::json recording(const std::string& name) {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/assets/recorded/experiments/" + name);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("latency hiding on the H100: the chase is the machine's latency; many warps reach HBM") {
  const Machine h100 = load_machine("h100");
  for (const char* run : {"gpu-h100-latency-hiding-2026-12-05-unrolled-run1.json",
                          "gpu-h100-latency-hiding-2026-12-05-unrolled-run2.json"}) {
    CAPTURE(run);
    const nlohmann::json r = recording(run);
    CHECK(r.at("device").at("name").get<std::string>().find("H100") != std::string::npos);
    CHECK(r.at("device").at("sms").get<int>() == h100.cores);
    // The machine file's latency is the in-order chase, rounded to 340 ns.
    CHECK(r.at("chase").at("strided_ns").get<double>() ==
          doctest::Approx(h100.memory.latency_ns).epsilon(0.01));
    double at_one_warp = 0, at_64_warps = 0;
    for (const auto& p : r.at("points")) {
      const double bw = p.at("gb_per_s").get<double>() * 1e9;
      const int warps = p.at("warps_per_sm").get<int>();
      // Never above the memory's bandwidth.
      CHECK(bw < h100.memory.bandwidth_bytes_per_s);
      if (warps == 1) at_one_warp = std::max(at_one_warp, bw);
      if (warps == 64) at_64_warps = std::min(at_64_warps == 0 ? bw : at_64_warps, bw);
    }
    // One warp per SM stays under 16 % of HBM's 3.35 TB/s whatever its loads; 64 warps reach 90 %.
    CHECK(at_one_warp < 0.16 * h100.memory.bandwidth_bytes_per_s);
    CHECK(at_64_warps > 0.90 * h100.memory.bandwidth_bytes_per_s);
    // A warp's bytes in flight, by Little's law from the measured bandwidth and latency: about
    // 1 KiB whatever the loads per thread in this first version (docs/occupancy.md) — from
    // 0.8 to 1.3 KiB at one warp per SM.
    for (const auto& p : r.at("points")) {
      if (p.at("warps_per_sm").get<int>() != 1) continue;
      const double in_flight =
          p.at("gb_per_s").get<double>() * 1e9 * (h100.memory.latency_ns * 1e-9) / h100.cores;
      CAPTURE(p.at("loads_per_thread").get<int>());
      CHECK(in_flight > 0.8 * 1024);
      CHECK(in_flight < 1.3 * 1024);
    }
  }
}

TEST_CASE("latency hiding on the H200: Little's law bounds every point; where it is within 25 %") {
  const Machine h200 = load_machine("h200");
  for (const char* run : {"gpu-h200-latency-hiding-2026-12-05-run1.json",
                          "gpu-h200-latency-hiding-2026-12-05-run2.json"}) {
    CAPTURE(run);
    const nlohmann::json r = recording(run);
    CHECK(r.at("device").at("name").get<std::string>().find("H200") != std::string::npos);
    CHECK(r.at("chase").at("strided_ns").get<double>() ==
          doctest::Approx(h200.memory.latency_ns).epsilon(0.01));
    int points = 0, within = 0;
    double plateau = 0, closest = 1e9;
    for (const auto& p : r.at("points")) {
      const int warps = p.at("warps_per_sm").get<int>(),
                loads = p.at("loads_per_thread").get<int>();
      const int bytes = p.at("load_bytes").get<int>() * 32;  // a warp's load: 32 lanes
      const double measured = p.at("gb_per_s").get<double>() * 1e9;
      const ParallelismBound b = memory_parallelism(h200, h200.cores, {warps, loads, bytes});
      CAPTURE(p.dump());
      // The bound holds at every point: nothing beats bytes in flight over the lone-load latency,
      // nor the datasheet's bandwidth.
      CHECK(measured <= b.bandwidth);
      closest = std::min(closest, b.bandwidth / measured);
      within += measured >= 0.75 * b.bandwidth ? 1 : 0;
      plateau = std::max(plateau, measured);
      ++points;
    }
    CHECK(points == 84);  // 3 variants × 7 warp counts × 4 load counts
    // The closest it comes: 90 % of the bound (the memory's plateau, 4.3 of 4.8 TB/s).
    CHECK(closest == doctest::Approx(1 / 0.90).epsilon(0.02));
    CHECK(plateau > 0.88 * h200.memory.bandwidth_bytes_per_s);
    // Within 25 % of the bound at 46 of the 84 points today (docs/occupancy.md: the misses are
    // 16-byte loads eight deep, a third of the bound, and the middle of the curve, where a loaded
    // memory answers later than a lone load). The issue asks for every point: this only ratchets.
    CHECK(within >= 46);
  }
}

namespace {

// Round trips a round of each experiment kernel takes, read from its SASS by
// scripts/experiments/sass_round_trips.py ("16B x8 cs": 16-byte loads, 8 deep, streaming).
int64_t round_trips(const nlohmann::json& trips, const nlohmann::json& point) {
  const std::string variant = point.at("variant").get<std::string>();
  const std::string key = std::to_string(point.at("load_bytes").get<int>()) + "B x" +
                          std::to_string(point.at("loads_per_thread").get<int>()) +
                          (variant.find(".cs") != std::string::npos ? " cs" : "");
  return trips.at(key).at("round_trips").get<int64_t>();
}

struct Fit {
  int points = 0, within = 0;
  double worst = 0;  // the largest |predicted / measured − 1|
};

Fit predict_recording(const Machine& m, const nlohmann::json& r, const nlohmann::json& trips) {
  Fit fit;
  for (const auto& p : r.at("points")) {
    const int64_t warps = p.at("warps_per_sm").get<int>(),
                  loads = p.at("loads_per_thread").get<int>();
    const int64_t bytes = p.at("load_bytes").get<int64_t>() * 32;
    const ParallelismBound b =
        memory_parallelism(m, m.cores, {warps, loads, bytes, round_trips(trips, p)});
    const double measured = p.at("gb_per_s").get<double>() * 1e9;
    const double error = b.predicted_bandwidth / measured - 1;
    CAPTURE(p.dump());
    CAPTURE(error);
    CHECK(b.predicted_bandwidth <= b.bandwidth);  // never above the bound
    fit.within += std::abs(error) <= 0.25 ? 1 : 0;
    fit.worst = std::max(fit.worst, std::abs(error));
    ++fit.points;
  }
  return fit;
}

}  // namespace

TEST_CASE(
    "the predicted bandwidth: within 25 % at every point, H200 (fitted) and H100 (held out)") {
  // The SASS of the experiment: which kernels the compiler made wait for some loads before it
  // issues the rest. By hand from the listing: 16-byte loads 8 deep go out 3 at a time (the third
  // trip's loads wait for the registers the first's fill), 8-byte loads 4 deep 2 at a time.
  const nlohmann::json trips = recording("h100-latency-hiding-2026-12-07-round-trips.json");
  CHECK(trips.at("16B x8").at("round_trips") == 3);
  CHECK(trips.at("16B x8").at("most_in_flight") == 3);
  CHECK(trips.at("8B x4").at("round_trips") == 2);
  CHECK(trips.at("16B x4").at("round_trips") == 1);
  CHECK(trips.at("4B x8").at("round_trips") == 1);

  // The constants were fitted to the H200's first run; its second run is a repeat.
  const Machine h200 = load_machine("h200");
  for (const char* run : {"gpu-h200-latency-hiding-2026-12-05-run1.json",
                          "gpu-h200-latency-hiding-2026-12-05-run2.json"}) {
    CAPTURE(run);
    const Fit f = predict_recording(h200, recording(run), trips);
    CHECK(f.points == 84);
    CHECK(f.within == 84);
    CHECK(f.worst < 0.10);  // 8.4 % and 9.3 % today
  }
  // Another GPU, never fitted: the first grid again, and the held-out grid (8-byte loads, 3 to 48
  // warps per SM, 3, 5, 6 and 7 loads deep), twice.
  const Machine h100 = load_machine("h100");
  for (const char* run : {"gpu-h100-latency-hiding-2026-12-07-run1.json",
                          "gpu-h100-latency-hiding-2026-12-07-held-out-run1.json",
                          "gpu-h100-latency-hiding-2026-12-07-held-out-run2.json"}) {
    CAPTURE(run);
    const nlohmann::json r = recording(run);
    CHECK(r.at("device").at("name").get<std::string>().find("H100") != std::string::npos);
    const Fit f = predict_recording(h100, r, trips);
    CHECK(f.points == (r.contains("grid") ? 58 : 84));
    CHECK(f.within == f.points);
    CHECK(f.worst < 0.13);  // 12.9 %, 9.6 %, 9.5 % today
  }
}

TEST_CASE("the held-out prediction committed before the run is what the model computes") {
  // Written by the prototype of this model before the held-out run (every load in flight as the
  // source says: one trip), for the H200 — the run came on an H100, so this only pins the model.
  const nlohmann::json pred = recording("h200-latency-hiding-held-out-prediction-2026-12-07.json");
  const Machine h200 = load_machine("h200");
  int points = 0;
  for (const auto& p : pred.at("points")) {
    const ParallelismBound b = memory_parallelism(
        h200, h200.cores,
        {p.at("warps_per_sm").get<int64_t>(), p.at("loads_per_thread").get<int64_t>(),
         p.at("load_bytes").get<int64_t>() * 32});
    CAPTURE(p.dump());
    CHECK(b.predicted_bandwidth / 1e9 ==
          doctest::Approx(p.at("predicted_gb_per_s").get<double>()).epsilon(0.002));
    ++points;
  }
  CHECK(points == 58);
}

// Memory-level parallelism (predict/parallelism.h): Little's law by hand.
#include "sim/predict/machine.h"
#include "sim/predict/parallelism.h"

#include <doctest/doctest.h>

using namespace tilescope::predict;

namespace {

// The H200's file with a round latency, so the hand counts below stay round.
Machine h200_at(double latency_ns) {
  Machine m = load_machine("h200");
  m.memory.latency_ns = latency_ns;
  return m;
}

}  // namespace

TEST_CASE("Little's law: one warp per SM with one float4 load is latency-bound") {
  const Machine m = h200_at(500);
  // 132 SMs × 1 warp × 1 load × 512 B = 67584 B in flight; / 500 ns = 135.2 GB/s.
  const ParallelismBound b = memory_parallelism(m, 132, {1, 1, 512});
  CHECK(b.bytes_in_flight_per_sm == 512);
  CHECK(b.bytes_in_flight == 67584);
  CHECK(b.latency_bandwidth == doctest::Approx(67584 / 500e-9));
  CHECK(b.bandwidth == doctest::Approx(135.168e9));
  CHECK(b.latency_bound);
  // 4.8 TB/s × 500 ns = 2.4 MB in flight over 132 SMs: 18182 B each.
  CHECK(b.needed_bytes_in_flight_per_sm == doctest::Approx(4.8e12 * 500e-9 / 132));
  CHECK(b.summary.find("latency-bound: 1 warp × 1 load × 512 B in flight per SM") == 0);
}

TEST_CASE("Little's law: enough warps and loads reach the memory's bandwidth, not beyond") {
  const Machine m = h200_at(500);
  // 64 warps × 8 loads × 512 B = 256 KiB per SM, far over the 18 KB needed.
  const ParallelismBound full = memory_parallelism(m, 132, {64, 8, 512});
  CHECK_FALSE(full.latency_bound);
  CHECK(full.bandwidth == doctest::Approx(4.8e12));
  CHECK(full.summary.find("bandwidth-bound: 64 warps × 8 loads") == 0);
  // Doubling the warps doubles a latency-bound bandwidth; halving the busy SMs halves it.
  const double one = memory_parallelism(m, 132, {4, 2, 512}).bandwidth;
  CHECK(memory_parallelism(m, 132, {8, 2, 512}).bandwidth == doctest::Approx(2 * one));
  CHECK(memory_parallelism(m, 66, {4, 2, 512}).bandwidth == doctest::Approx(one / 2));
}

TEST_CASE("Little's law needs the memory's latency") {
  Machine m = load_machine("h200");
  m.memory.latency_ns = 0;
  CHECK_THROWS_AS(memory_parallelism(m, 132, {1, 1, 512}), std::invalid_argument);
}

TEST_CASE("the prediction: a warp's round, its trips to memory and the memory's queue") {
  const Machine m = h200_at(500);
  // One warp, one float4 load per SM: 67584 B in flight. A round is the trip (500 ns), the
  // round's own 60 ns, and the queue: 80 ns × ρ / (1 − ρ) at ρ = bandwidth / 4.8 TB/s. Near
  // 67584 B / 560 ns = 120.7 GB/s, ρ ≈ 0.025 and the queue adds 2.1 ns: 120.24 GB/s.
  const ParallelismBound b = memory_parallelism(m, 132, {1, 1, 512});
  CHECK(b.predicted_bandwidth == doctest::Approx(120.24e9).epsilon(0.001));
  const double rho = b.predicted_bandwidth / 4.8e12;
  const double round_ns = 500 + 60 + 80 * rho / (1 - rho);
  CHECK(b.round_s * 1e9 == doctest::Approx(round_ns));
  CHECK(b.loaded_latency_s * 1e9 == doctest::Approx(500 + 80 * rho / (1 - rho)));
  CHECK(b.bytes_in_flight / b.round_s == doctest::Approx(b.predicted_bandwidth).epsilon(1e-6));
  // The same load split over two trips (the compiler made the warp wait between them): the
  // round is two trips and the 60 ns, 1060 ns: 63.63 GB/s.
  CHECK(memory_parallelism(m, 132, {1, 1, 512, 2}).predicted_bandwidth ==
        doctest::Approx(63.63e9).epsilon(0.001));
  // Eight loads a warp: 20 ns more for each after the first. 64 warps of them ask for far more
  // than the memory gives: the queue holds the prediction just under 4.8 TB/s (4.742).
  const ParallelismBound full = memory_parallelism(m, 132, {64, 8, 512});
  CHECK(full.predicted_bandwidth == doctest::Approx(4.7425e12).epsilon(0.001));
  CHECK(full.predicted_bandwidth < full.bandwidth);
}

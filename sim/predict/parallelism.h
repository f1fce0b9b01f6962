// Memory-level parallelism: the bandwidth a GPU kernel can draw from memory is not only the
// memory's. A load is answered after the memory's latency, so by Little's law the bytes delivered
// per second are at most the bytes in flight divided by that latency. What an SM has in flight is
// what its resident warps have asked for and not yet used: warps per SM × independent loads per
// warp × bytes per load. Too few warps (low occupancy) or loads that each wait for the one before
// leave HBM idle however fast it is; enough of them and the memory's own bandwidth binds.
//
//   bandwidth = min(memory bandwidth, busy SMs × warps × loads × bytes per load / latency)
//
// The latency is the machine's `[memory] latency` (for the H100 and H200 files, measured by
// scripts/experiments/latency_hiding.cu's pointer chase).
//
// That bound is what a lone load's latency allows; the prediction is lower, for three reasons
// the latency-hiding experiment measured (docs/occupancy.md):
//   - a warp's round — issue its loads, wait for them, use them, go round — takes longer than
//     one load's trip: kRoundNs more, and kPerLoadNs for every load after the first;
//   - the compiler may make a round several trips: it reuses a load's registers before the next
//     load can go out (16-byte loads more than 4 deep, 8-byte loads 4, 6, 7 or 8 deep in the
//     experiment's SASS), so the loads in flight are those of the code as compiled;
//   - a loaded memory answers later: each trip waits kQueueNs × ρ / (1 − ρ) more, ρ the fraction
//     of the memory's bandwidth in use (a single queue's waiting time).
//
//   round = trips × (latency + kQueueNs × ρ / (1 − ρ)) + kRoundNs + kPerLoadNs × (loads − 1)
//   bandwidth = busy SMs × warps × loads × bytes per load / round,  ρ = bandwidth / memory's
//
// solved for the bandwidth where the two agree. The three constants were fitted to the H200's
// first recording (84 points) and then predicted an H100's, and a held-out grid of 58 points on
// it, within 13 % everywhere (tests/predict/test_latency_hiding.cpp).
#pragma once

#include "sim/predict/machine.h"

#include <cstdint>
#include <string>

namespace tilescope::predict {

// What one SM keeps in flight.
struct LoadsInFlight {
  int64_t warps_per_sm = 0;    // resident warps that load (occupancy.h)
  int64_t loads_per_warp = 0;  // independent loads a warp issues before it uses the first
  int64_t bytes_per_load = 0;  // bytes one warp load moves (32 lanes × 16 B = 512 for float4)
  // Trips to memory one round of those loads takes: 1 when all go out before the first is used;
  // more when the compiled code waits for some before it issues the rest.
  int64_t round_trips = 1;
};

// The prediction's constants (see above), in ns.
inline constexpr double kRoundNs = 60;
inline constexpr double kPerLoadNs = 20;
inline constexpr double kQueueNs = 80;

struct ParallelismBound {
  double bytes_in_flight_per_sm = 0;
  double bytes_in_flight = 0;    // over the busy SMs
  double latency_s = 0;          // the memory's
  double latency_bandwidth = 0;  // bytes_in_flight / latency_s
  double memory_bandwidth = 0;   // the machine's
  double bandwidth = 0;          // the lesser of the two
  bool latency_bound = false;    // latency_bandwidth < memory_bandwidth
  // Bytes an SM must keep in flight for the memory's bandwidth (its Little's-law depth).
  double needed_bytes_in_flight_per_sm = 0;
  // The prediction: what the loads draw when a warp's round and the memory's queue are counted.
  double predicted_bandwidth = 0;
  double round_s = 0;           // one warp's round at that bandwidth
  double loaded_latency_s = 0;  // one trip at that bandwidth (the latency plus the queue)
  // "latency-bound: 1 warp × 1 load × 512 B in flight per SM (512 B; 12.1 KiB needed for
  // 4.8 TB/s)" or "bandwidth-bound: …".
  std::string summary;
};

// The bound on `busy_sms` SMs of `m`. Throws std::invalid_argument when the machine gives no
// memory latency or bandwidth.
ParallelismBound memory_parallelism(const Machine& m, int64_t busy_sms, const LoadsInFlight& f);

}  // namespace tilescope::predict

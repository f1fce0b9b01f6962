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
};

struct ParallelismBound {
  double bytes_in_flight_per_sm = 0;
  double bytes_in_flight = 0;     // over the busy SMs
  double latency_s = 0;           // the memory's
  double latency_bandwidth = 0;   // bytes_in_flight / latency_s
  double memory_bandwidth = 0;    // the machine's
  double bandwidth = 0;           // the lesser of the two
  bool latency_bound = false;     // latency_bandwidth < memory_bandwidth
  // Bytes an SM must keep in flight for the memory's bandwidth (its Little's-law depth).
  double needed_bytes_in_flight_per_sm = 0;
  // "latency-bound: 1 warp × 1 load × 512 B in flight per SM (512 B; 12.1 KiB needed for
  // 4.8 TB/s)" or "bandwidth-bound: …".
  std::string summary;
};

// The bound on `busy_sms` SMs of `m`. Throws std::invalid_argument when the machine gives no
// memory latency or bandwidth.
ParallelismBound memory_parallelism(const Machine& m, int64_t busy_sms, const LoadsInFlight& f);

}  // namespace tilescope::predict

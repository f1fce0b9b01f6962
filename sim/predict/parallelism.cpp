// Little's law over the loads an SM keeps in flight (parallelism.h).
#include "sim/predict/parallelism.h"

#include "sim/io/format.h"

#include <algorithm>
#include <stdexcept>

namespace tilescope::predict {

ParallelismBound memory_parallelism(const Machine& m, int64_t busy_sms, const LoadsInFlight& f) {
  if (m.memory.latency_ns <= 0)
    throw std::invalid_argument("machine " + m.name +
                                " gives no memory latency ([memory] latency = … ns)");
  if (m.memory.bandwidth_bytes_per_s <= 0)
    throw std::invalid_argument("machine " + m.name + " gives no memory bandwidth");
  ParallelismBound b;
  b.latency_s = m.memory.latency_ns * 1e-9;
  b.memory_bandwidth = m.memory.bandwidth_bytes_per_s;
  b.bytes_in_flight_per_sm =
      double(f.warps_per_sm) * double(f.loads_per_warp) * double(f.bytes_per_load);
  b.bytes_in_flight = b.bytes_in_flight_per_sm * double(std::max<int64_t>(busy_sms, 0));
  b.latency_bandwidth = b.bytes_in_flight / b.latency_s;
  b.bandwidth = std::min(b.latency_bandwidth, b.memory_bandwidth);
  b.latency_bound = b.latency_bandwidth < b.memory_bandwidth;
  b.needed_bytes_in_flight_per_sm =
      busy_sms > 0 ? b.memory_bandwidth * b.latency_s / double(busy_sms) : 0;
  auto plural = [](int64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
  };
  b.summary = std::string(b.latency_bound ? "latency-bound: " : "bandwidth-bound: ") +
              plural(f.warps_per_sm, "warp") + " × " + plural(f.loads_per_warp, "load") + " × " +
              std::to_string(f.bytes_per_load) + " B in flight per SM (" +
              io::format_bytes(uint64_t(b.bytes_in_flight_per_sm)) + "; " +
              io::format_bytes(uint64_t(b.needed_bytes_in_flight_per_sm)) + " needed for " +
              io::format_rate(b.memory_bandwidth) + ")";
  return b;
}

}  // namespace tilescope::predict

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
  // The prediction: bisect on the bandwidth. What the loads draw at a trial bandwidth falls as
  // it rises (the queue lengthens the round), so the two cross once, below the memory's.
  const double trips = double(std::max<int64_t>(f.round_trips, 1));
  const double fixed_s =
      (kRoundNs + kPerLoadNs * double(std::max<int64_t>(f.loads_per_warp - 1, 0))) * 1e-9;
  auto queue_s = [&](double bw) {
    const double rho = bw / b.memory_bandwidth;
    return kQueueNs * 1e-9 * rho / (1 - rho);
  };
  double lo = 0, hi = b.memory_bandwidth;
  for (int i = 0; i < 100 && b.bytes_in_flight > 0; ++i) {
    const double mid = (lo + hi) / 2;
    const double round = trips * (b.latency_s + queue_s(mid)) + fixed_s;
    (b.bytes_in_flight / round > mid ? lo : hi) = mid;
  }
  b.predicted_bandwidth = lo;
  b.loaded_latency_s = b.latency_s + queue_s(lo);
  b.round_s = trips * b.loaded_latency_s + fixed_s;
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

// Sizing long work before it starts: the memory budget, buffer and simulation sizes, typical rates.
#include "sim/predict/work_size.h"

#include "sim/predict/machine.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tilescope::predict {

namespace {

constexpr uint64_t kFallbackBudget = 4ull << 30;

// "4G", "512 MiB", "1000": the machine files' byte units (parse_quantity); 0 when the text is not
// such a size.
uint64_t parse_size(const std::string& text) {
  try {
    const double v = parse_quantity(text, Quantity::Bytes);
    return v < 9.2e18 ? static_cast<uint64_t>(v) : 0;  // beyond uint64_t: not a usable budget
  } catch (const std::invalid_argument&) {
    return 0;
  }
}

}  // namespace

MemoryBudget memory_budget() {
  if (const char* env = std::getenv("TILESCOPE_MEMORY_LIMIT"); env && *env) {
    if (const uint64_t v = parse_size(env))
      return {v, "TILESCOPE_MEMORY_LIMIT=" + std::string(env)};
  }
  // The same /proc the host machine reads (TILESCOPE_SYSFS_ROOT moves it for tests).
  std::ifstream meminfo(host_path("/proc/meminfo"));
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream in(line.substr(13));
    uint64_t kib = 0;
    if (in >> kib && kib > 0) return {kib << 10, "MemAvailable in /proc/meminfo"};
  }
  return {kFallbackBudget, "a fixed cap (no MemAvailable in /proc/meminfo)"};
}

double typical_simulation_rate(bool classify_misses, bool reuse_distance) {
  if (classify_misses && reuse_distance) return kSimulationRateFull;
  if (classify_misses || reuse_distance) return kSimulationRateOneAnalysis;
  return kSimulationRatePlain;
}

uint64_t kernel_buffer_bytes(const schedule::Kernel& k) {
  uint64_t bytes = 0;
  for (const schedule::KernelTensor& t : k.tensors)
    bytes += uint64_t(std::max<int64_t>(t.alloc_elems(), 1)) * sizeof(float);
  return bytes;
}

uint64_t simulation_bytes(const schedule::Kernel& k, const memory::HierarchyConfig& h,
                          bool classify_misses, bool reuse_distance) {
  uint64_t footprint = 0;  // what the trace touches: each buffer at its dtype
  for (const schedule::KernelTensor& t : k.tensors) footprint += t.buffer_bytes();
  double bytes = 64ull << 20;
  // The analyses (memory::AnalysisPipeline): up to 16 chunks of 16384 recorded units in flight,
  // and per level a reuse-distance table of ~64 B per distinct unit (hash slot, time, time owner).
  if (classify_misses || reuse_distance) bytes += 4ull << 20;
  for (const memory::CacheConfig& c : h.levels) {
    bytes += double(c.lines()) * 32;
    if (classify_misses || reuse_distance) bytes += double(footprint / c.sector_size() + 1) * 64;
  }
  return uint64_t(bytes);
}

}  // namespace tilescope::predict

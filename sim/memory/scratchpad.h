// A banked scratchpad (CUDA shared memory): the cost of a warp's access is its bank-conflict
// degree, the number of serialized wavefronts the banks need to serve it.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tilescope::memory {

struct ScratchpadConfig {
  std::string name = "shared";
  uint64_t size_bytes = 48 * 1024;
  uint32_t banks = 32;
  uint32_t bank_width = 4;  // bytes per bank per cycle
  uint32_t warp_size = 32;
  double bandwidth_bytes_per_s = 0;  // 0 = not known
  double latency_cycles = 0;
  std::string check() const;  // "" when usable
};

// One lane's request within a warp access.
struct LaneAccess {
  uint64_t addr = 0;
  uint32_t size = 4;
};

// Degree of a warp access: the largest number of distinct bank-width words that fall into one
// bank (lanes reading the same word share it — a broadcast — so they cost nothing extra).
// 1 = conflict-free. An empty request has degree 0.
uint32_t bank_conflict_degree(std::span<const LaneAccess> lanes, uint32_t banks = 32,
                              uint32_t bank_width = 4);
// The fewest wavefronts that many distinct words could take: ceil(distinct words / banks). A
// warp of float4 loads needs 4 even without conflicts; degree minus this is the avoidable part.
uint32_t ideal_wavefronts(std::span<const LaneAccess> lanes, uint32_t banks = 32,
                          uint32_t bank_width = 4);

struct ScratchpadStats {
  uint64_t requests = 0;  // warp accesses
  uint64_t lane_accesses = 0;
  uint64_t reads = 0, writes = 0;  // warp accesses by kind
  uint64_t wavefronts = 0;         // sum of degrees
  uint64_t ideal_wavefronts = 0;
  uint64_t bytes = 0;
  uint32_t max_degree = 0;
  std::array<uint64_t, 33> degree_histogram{};  // [d] = requests of degree d (d ≥ 32 in [32])
};

class Scratchpad {
 public:
  explicit Scratchpad(const ScratchpadConfig& config);  // throws std::invalid_argument
  const ScratchpadConfig& config() const { return m_config; }
  // One warp-wide access; returns its degree.
  uint32_t warp_access(std::span<const LaneAccess> lanes, bool write);
  const ScratchpadStats& stats() const { return m_stats; }
  // A sampled run's estimate in place of the counts (Hierarchy::set_estimate).
  void set_stats(const ScratchpadStats& stats) { m_stats = stats; }

 private:
  ScratchpadConfig m_config;
  ScratchpadStats m_stats;
};

}  // namespace tilescope::memory

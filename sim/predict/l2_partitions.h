// A GPU's L2 as partitions, each SM attached to its near one (Hopper: two). A line has a home
// partition (by its address); an SM's read looks in its near partition first, then in the line's
// home, and only a miss in both goes to DRAM. What a far read brings is kept in the near partition
// too (a copy), so data every SM reads is held twice, while data only one side reads, or whose
// copy was dropped, is still found once in its home. Writes go to the home partition.
//
// Each partition is a memory::Cache with the machine's L2 geometry and replacement (sectored,
// write-back, write-allocate); addresses come in already hashed (gpu_kernels.cpp's hashed_addr),
// so the set index and the home are bit fields of the line number.
#pragma once

#include "sim/memory/cache.h"

#include <cstdint>
#include <vector>

namespace tilescope::predict {

struct PartitionedL2Config {
  memory::CacheConfig partition;  // one partition: its size, line, sectors, ways, replacement
  int partitions = 2;
  // Whether a read served from the far partition (a far hit) or from DRAM for an SM of another
  // partition than the line's home leaves a copy in the reader's near partition.
  bool copy_far_hits = true;
  bool copy_dram_fills = true;
};

// The partition the j-th block of a launch's wave runs near, of `cores` SMs. Measured on an H100
// SXM (scripts/experiments/l2_partitions.cu, 2026-12-07): the block scheduler hands a wave's
// blocks to the SMs one GPC's pairs at a time, so consecutive blocks share a half in runs of 16,
// 48, 38, 18 and 12 of the 132 (the same runs for the second block of every SM). A machine with
// another SM count gets the same runs scaled; one partition gives 0.
int near_partition_of_block(int j, int cores, int partitions);

class PartitionedL2 {
 public:
  // Throws std::invalid_argument when the partition's configuration is not a usable cache.
  explicit PartitionedL2(const PartitionedL2Config& config);
  void read(uint64_t addr, int near, int16_t tensor);
  void write(uint64_t addr, int near);

  uint64_t reads = 0, read_hits = 0, far_hits = 0;
  uint64_t read_hits_by_tensor[8] = {};
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0;

 private:
  // Where `addr` goes: its line, its sector's bit, its home partition.
  struct Where {
    uint64_t line;
    uint32_t bit;
    int home;
  };
  Where where(uint64_t addr) const;
  // The way of `part` holding `line`, filled (the victim's dirty sectors written to DRAM) when
  // absent; either way the most recently used of its set.
  uint64_t fill(memory::Cache& part, uint64_t line, int16_t tensor);

  PartitionedL2Config m_config;
  std::vector<memory::Cache> m_parts;
};

}  // namespace tilescope::predict

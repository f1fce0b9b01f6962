// A GPU's L2 as partitions, each SM attached to its near one (Hopper: two). A line has a home
// partition (by its address); an SM's read looks in its near partition first, then in the line's
// home, and only a miss in both goes to DRAM. What a far read brings is kept in the near partition
// too (a replica), so data every SM reads is held twice, while data only one side reads, or whose
// replica was dropped, is still found once in its home. Writes go to the home partition.
//
// Sectored (32-byte sectors of 128-byte lines), write-back, write-allocate, LRU, like the
// simulator's L2 level; addresses come in already hashed (gpu_kernels.cpp's hashed_addr), so the
// set index and the home are bit fields of the line number.
#pragma once

#include <cstdint>
#include <vector>

namespace tilescope::predict {

struct PartitionedL2Config {
  uint64_t partition_bytes = 0;  // one partition's capacity
  int ways = 16;
  int partitions = 2;
  // Whether a read served from the far partition (a far hit) or from DRAM for an SM of another
  // partition than the line's home leaves a copy in the reader's near partition.
  bool copy_far_hits = true;
  bool copy_dram_fills = true;
  // Where a copy enters its near partition's recency order: true at the most recent end (a read
  // it serves counts like any other line), false at the least recent (it stays only if read again
  // before the next miss of its set).
  bool copy_mru = true;
};

// The partition the j-th block of a launch's wave runs near, of `cores` SMs. Measured on an H100
// SXM (scripts/experiments/l2_partitions.cu, 2026-12-07): the block scheduler hands a wave's
// blocks to the SMs one GPC's pairs at a time, so consecutive blocks share a half in runs of 16,
// 48, 38, 18 and 12 of the 132 (the same runs for the second block of every SM). A machine with
// another SM count gets the same runs scaled; one partition gives 0.
int near_partition_of_block(int j, int cores, int partitions);

class PartitionedL2 {
 public:
  explicit PartitionedL2(const PartitionedL2Config& config);
  void read(uint64_t addr, int near, int16_t tensor);
  void write(uint64_t addr, int near);

  uint64_t reads = 0, read_hits = 0, far_hits = 0;
  uint64_t read_hits_by_tensor[8] = {};
  uint64_t dram_read_bytes = 0, dram_write_bytes = 0;

 private:
  struct Way {
    uint64_t tag = ~uint64_t{0};
    uint64_t stamp = 0;
    uint8_t valid = 0, dirty = 0;
  };
  Way* set_of(int partition, uint64_t line);
  Way* find(Way* set, uint64_t line);
  Way* allocate(Way* set, uint64_t line, bool mru);

  PartitionedL2Config m_config;
  uint64_t m_sets = 0;
  uint64_t m_clock = 0;
  std::vector<Way> m_ways;  // partitions × sets × ways
};

}  // namespace tilescope::predict

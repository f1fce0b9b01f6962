#include "sim/predict/l2_partitions.h"

#include <algorithm>
#include <bit>

namespace tilescope::predict {

int near_partition_of_block(int j, int cores, int partitions) {
  if (partitions <= 1 || cores <= 0) return 0;
  constexpr int kMeasuredSms = 132;
  constexpr int kRuns[] = {16, 48, 38, 18, 12};  // of kMeasuredSms, alternating halves from 0
  const int64_t at = int64_t(j % cores) * kMeasuredSms / cores;
  int64_t start = 0;
  int half = 0;
  for (int run : kRuns) {
    if (at < start + run) break;
    start += run;
    half ^= 1;
  }
  return half % partitions;
}

PartitionedL2::PartitionedL2(const PartitionedL2Config& config) : m_config(config) {
  m_parts.reserve(size_t(std::max(1, config.partitions)));
  for (int p = 0; p < std::max(1, config.partitions); ++p) m_parts.emplace_back(config.partition);
}

PartitionedL2::Where PartitionedL2::where(uint64_t addr) const {
  const memory::CacheConfig& c = m_config.partition;
  const uint64_t line = addr / c.line_bytes;
  const uint32_t bit = 1u << ((addr % c.line_bytes) / c.sector_size());
  const int home = int((line / m_parts[0].sets()) % m_parts.size());
  return {line, bit, home};
}

uint64_t PartitionedL2::fill(memory::Cache& part, uint64_t line, int16_t tensor) {
  const int64_t found = part.find(line);
  if (found >= 0) {
    part.touch(line, uint64_t(found));
    return uint64_t(found);
  }
  const uint64_t way = part.victim(part.set_of(line));
  if (part.valid(way))
    dram_write_bytes +=
        uint64_t(std::popcount(part.dirty_mask(way))) * m_config.partition.sector_size();
  part.install(way, line, 0, tensor);
  return way;
}

void PartitionedL2::read(uint64_t addr, int near, int16_t tensor) {
  const Where w = where(addr);
  near %= int(m_parts.size());
  ++reads;
  memory::Cache& mine = m_parts[size_t(near)];
  memory::Cache& home = m_parts[size_t(w.home)];
  if (const int64_t way = mine.find(w.line); way >= 0 && (mine.valid_mask(uint64_t(way)) & w.bit)) {
    mine.touch(w.line, uint64_t(way));
  } else if (const int64_t hw = w.home == near ? -1 : home.find(w.line);
             hw >= 0 && (home.valid_mask(uint64_t(hw)) & w.bit)) {
    home.touch(w.line, uint64_t(hw));
    ++far_hits;
    if (m_config.copy_far_hits) mine.valid_mask(fill(mine, w.line, tensor)) |= w.bit;
  } else {
    // A miss in the near partition and the home: DRAM fills the home, and a copy near the reader.
    dram_read_bytes += m_config.partition.sector_size();
    home.valid_mask(fill(home, w.line, tensor)) |= w.bit;
    if (w.home != near && m_config.copy_dram_fills)
      mine.valid_mask(fill(mine, w.line, tensor)) |= w.bit;
    return;
  }
  ++read_hits;
  if (tensor >= 0 && tensor < 8) ++read_hits_by_tensor[tensor];
}

void PartitionedL2::write(uint64_t addr, int near) {
  const Where w = where(addr);
  near %= int(m_parts.size());
  if (w.home != near) {
    memory::Cache& mine = m_parts[size_t(near)];
    if (const int64_t way = mine.find(w.line); way >= 0)
      mine.valid_mask(uint64_t(way)) &= ~w.bit;  // a stale copy
  }
  memory::Cache& home = m_parts[size_t(w.home)];
  const uint64_t way = fill(home, w.line, -1);
  home.valid_mask(way) |= w.bit;
  home.dirty_mask(way) |= w.bit;
}

}  // namespace tilescope::predict

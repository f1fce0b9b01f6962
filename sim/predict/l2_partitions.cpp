#include "sim/predict/l2_partitions.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace tilescope::predict {

namespace {
constexpr uint64_t kLine = 128, kSector = 32;
}  // namespace

int near_partition_of_block(int j, int cores, int partitions) {
  if (partitions <= 1 || cores <= 0) return 0;
  constexpr int kRuns[] = {16, 48, 38, 18, 12};  // of 132 SMs, alternating halves from 0
  const int64_t at = int64_t(j % cores) * 132 / cores;
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
  if (config.partitions < 1 || config.ways < 1 ||
      config.partition_bytes < kLine * uint64_t(config.ways))
    throw std::invalid_argument("partitioned L2: a partition must hold at least one set");
  m_sets = config.partition_bytes / (kLine * uint64_t(config.ways));
  m_ways.resize(size_t(m_sets) * size_t(config.ways) * size_t(config.partitions));
}

PartitionedL2::Way* PartitionedL2::set_of(int partition, uint64_t line) {
  const uint64_t set = line % m_sets;
  return &m_ways[(size_t(partition) * size_t(m_sets) + size_t(set)) * size_t(m_config.ways)];
}

PartitionedL2::Way* PartitionedL2::find(Way* set, uint64_t line) {
  for (int w = 0; w < m_config.ways; ++w)
    if (set[w].tag == line) return &set[w];
  return nullptr;
}

PartitionedL2::Way* PartitionedL2::allocate(Way* set, uint64_t line, bool mru) {
  Way* victim = set;
  for (int w = 1; w < m_config.ways; ++w)
    if (set[w].stamp < victim->stamp) victim = &set[w];
  dram_write_bytes += uint64_t(std::popcount(unsigned(victim->dirty))) * kSector;
  victim->tag = line;
  victim->valid = victim->dirty = 0;
  // At the least recent end: older than every line of the set (stamp 0 loses every tie too,
  // since the clock starts at 1).
  victim->stamp = mru ? ++m_clock : 0;
  return victim;
}

void PartitionedL2::read(uint64_t addr, int near, int16_t tensor) {
  const uint64_t line = addr / kLine;
  const uint8_t bit = uint8_t(1u << ((addr % kLine) / kSector));
  const int parts = m_config.partitions;
  const int home = int((line / m_sets) % uint64_t(parts));
  near %= parts;
  ++reads;
  Way* ns = set_of(near, line);
  Way* nw = find(ns, line);
  auto hit = [&] {
    ++read_hits;
    if (tensor >= 0 && tensor < 8) ++read_hits_by_tensor[tensor];
  };
  if (nw && (nw->valid & bit)) {
    nw->stamp = ++m_clock;
    hit();
    return;
  }
  if (home != near) {
    Way* hs = set_of(home, line);
    Way* hw = find(hs, line);
    bool copy = m_config.copy_dram_fills;
    if (hw && (hw->valid & bit)) {
      hw->stamp = ++m_clock;
      hit();
      ++far_hits;
      copy = m_config.copy_far_hits;
    } else {
      dram_read_bytes += kSector;
      if (!hw) hw = allocate(hs, line, true);
      hw->valid |= bit;
      hw->stamp = ++m_clock;
    }
    if (!copy) return;
    if (!nw)
      nw = allocate(ns, line, m_config.copy_mru);
    else if (m_config.copy_mru)
      nw->stamp = ++m_clock;
    nw->valid |= bit;
    return;
  }
  dram_read_bytes += kSector;
  if (!nw) nw = allocate(ns, line, true);
  nw->valid |= bit;
  nw->stamp = ++m_clock;
}

void PartitionedL2::write(uint64_t addr, int near) {
  const uint64_t line = addr / kLine;
  const uint8_t bit = uint8_t(1u << ((addr % kLine) / kSector));
  const int parts = m_config.partitions;
  const int home = int((line / m_sets) % uint64_t(parts));
  near %= parts;
  if (home != near) {
    if (Way* r = find(set_of(near, line), line)) r->valid &= uint8_t(~bit);  // a stale replica
  }
  Way* hs = set_of(home, line);
  Way* hw = find(hs, line);
  if (!hw) hw = allocate(hs, line, true);
  hw->valid |= bit;
  hw->dirty |= bit;
  hw->stamp = ++m_clock;
}

}  // namespace tilescope::predict

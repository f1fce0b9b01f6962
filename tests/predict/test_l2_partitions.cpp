// The partitioned L2 (sim/predict/l2_partitions.h) on hand-counted sequences: one set of two ways
// per partition, so a line's home is the parity of its number and every line of a partition
// competes for the same two ways.
#include "sim/predict/l2_partitions.h"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace tilescope::predict;

namespace {
constexpr uint64_t kLine = 128, kSector = 32;
PartitionedL2Config two_ways() {
  PartitionedL2Config c;
  c.partition.size_bytes = 2 * kLine;  // 2 ways × 1 set
  c.partition.line_bytes = kLine;
  c.partition.sector_bytes = kSector;
  c.partition.ways = 2;
  c.partitions = 2;
  return c;
}
uint64_t line(uint64_t n) {
  return n * kLine;
}
}  // namespace

TEST_CASE("partitioned L2: a line in its home half is one DRAM read, then near hits") {
  PartitionedL2 l2(two_ways());
  l2.read(line(0), 0, 0);  // home 0, read from half 0: DRAM
  l2.read(line(0), 0, 0);
  l2.read(line(0) + kSector, 0, 0);  // another sector of the line: DRAM again
  CHECK(l2.reads == 3);
  CHECK(l2.read_hits == 1);
  CHECK(l2.far_hits == 0);
  CHECK(l2.dram_read_bytes == 2 * kSector);
  CHECK(l2.read_hits_by_tensor[0] == 1);
}

TEST_CASE("partitioned L2: a far read leaves a near copy, so the next read of that half is near") {
  PartitionedL2Config c = two_ways();
  c.copy_dram_fills = false;  // the DRAM fill stays in the home half only
  PartitionedL2 l2(c);
  l2.read(line(1), 0, 1);  // home 1, read from half 0: DRAM, filled in half 1 only
  l2.read(line(1), 0, 1);  // far hit; copied into half 0
  l2.read(line(1), 0, 1);  // near hit
  l2.read(line(1), 1, 1);  // half 1 is its home: near hit
  CHECK(l2.dram_read_bytes == kSector);
  CHECK(l2.read_hits == 3);
  CHECK(l2.far_hits == 1);

  c.copy_far_hits = false;  // no copies at all: every read from half 0 goes to half 1
  PartitionedL2 none(c);
  for (int i = 0; i < 4; ++i) none.read(line(1), 0, 1);
  CHECK(none.dram_read_bytes == kSector);
  CHECK(none.far_hits == 3);
}

TEST_CASE("partitioned L2: copies take room in the near half, homes stay findable in the far one") {
  // Half 0 reads lines 1 and 3 (home 1): with copies they fill both ways of half 0, and its own
  // line 0 is evicted by them; line 0's next read is DRAM again.
  PartitionedL2 copies(two_ways());
  copies.read(line(0), 0, 0);
  copies.read(line(1), 0, 0);
  copies.read(line(3), 0, 0);
  copies.read(line(0), 0, 0);
  CHECK(copies.dram_read_bytes == 4 * kSector);
  // Without copies half 0 keeps line 0, and lines 1 and 3 live in half 1's two ways: the second
  // round is all hits, two of them far.
  PartitionedL2Config c = two_ways();
  c.copy_far_hits = c.copy_dram_fills = false;
  PartitionedL2 homes(c);
  for (int round = 0; round < 2; ++round)
    for (uint64_t n : {0, 1, 3}) homes.read(line(n), 0, 0);
  CHECK(homes.dram_read_bytes == 3 * kSector);
  CHECK(homes.read_hits == 3);
  CHECK(homes.far_hits == 2);
}

TEST_CASE("partitioned L2: writes go to the home half and reach DRAM when evicted dirty") {
  PartitionedL2 l2(two_ways());
  l2.write(line(1), 0);            // home 1, dirty there
  l2.write(line(1) + kSector, 0);  // a second dirty sector of the same line
  l2.read(line(3), 1, 0);          // half 1's second way
  CHECK(l2.dram_write_bytes == 0);
  l2.read(line(5), 1, 0);  // evicts line 1 (least recent): two dirty sectors
  CHECK(l2.dram_write_bytes == 2 * kSector);
  CHECK(l2.dram_read_bytes == 2 * kSector);
}

TEST_CASE("partitioned L2: a partition smaller than one set is refused") {
  PartitionedL2Config c = two_ways();
  c.partition.size_bytes = kLine;  // one line, two ways
  CHECK_THROWS_AS(PartitionedL2{c}, std::invalid_argument);
}

TEST_CASE("the block scheduler's halves: the measured runs of 16, 48, 38, 18 and 12 of 132") {
  int in_half[2] = {0, 0};
  for (int j = 0; j < 132; ++j) ++in_half[near_partition_of_block(j, 132, 2)];
  CHECK(in_half[0] == 16 + 38 + 12);
  CHECK(in_half[1] == 48 + 18);
  // The edges of the runs (block 16 is the first of the second run, 64 of the third …).
  for (auto [j, half] : {std::pair{15, 0},
                         {16, 1},
                         {63, 1},
                         {64, 0},
                         {101, 0},
                         {102, 1},
                         {119, 1},
                         {120, 0},
                         {131, 0}})
    CHECK(near_partition_of_block(j, 132, 2) == half);
  // The second block of every SM (j ≥ 132) follows the same runs; one partition is always 0.
  CHECK(near_partition_of_block(132 + 20, 132, 2) == 1);
  CHECK(near_partition_of_block(20, 132, 1) == 0);
}

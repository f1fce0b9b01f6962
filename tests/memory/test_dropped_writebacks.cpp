// `writebacks_to_next = false` (machine key `writebacks = dropped`): a dirty victim is counted
// but reaches nothing below — cachegrind's model of caches. Hand-counted on a one-line L1.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"

using namespace tilescope::memory;

namespace {

HierarchyConfig two_levels(bool drop) {
  CacheConfig l1;
  l1.name = "L1";
  l1.size_bytes = 64;  // one line
  l1.ways = 1;
  l1.writebacks_to_next = !drop;
  CacheConfig l2;
  l2.name = "L2";
  l2.size_bytes = 256;
  l2.ways = 4;
  return {{l1, l2}, {}, std::nullopt};
}

void run(Hierarchy& h) {
  // write line 0 (miss, fetch, dirty), read line 1 (miss: line 0's dirty victim), read line 0
  // (miss: line 1 is clean, no write-back).
  const Access trace[] = {{0, 4, AccessKind::Write, 0},
                          {64, 4, AccessKind::Read, 0},
                          {0, 4, AccessKind::Read, 0}};
  h.access_batch(trace, 3);
  h.finish();
}

}  // namespace

TEST_CASE("dropped write-backs are counted at their level and never reach the next") {
  for (bool drop : {false, true}) {
    CAPTURE(drop);
    Hierarchy h(two_levels(drop));
    run(h);
    CHECK(h.counters(0).misses == 3);
    CHECK(h.counters(0).writebacks == 1);
    // L2 sees the three fills as reads, plus line 0's write-back unless it is dropped.
    CHECK(h.counters(1).accesses == (drop ? 3u : 4u));
    CHECK(h.counters(1).writes == (drop ? 0u : 1u));
    // Line 0's second fetch hits L2 either way (L2 holds 4 lines).
    CHECK(h.counters(1).misses == 2);
  }
}

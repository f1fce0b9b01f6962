// A cache level's tables cost memory only where lines were filled (cache.h, ZeroedArray): a
// fully-associative level of 8 M lines — the size CPUID reports for some VMs' L3 — with a few
// thousand lines filled, written back and listed stays within a few MB of resident memory, and the
// scans over it see exactly the lines that were filled, in way order.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"

#include <fstream>
#include <string>

using namespace tilescope::memory;

namespace {

// VmRSS of this process in KiB (Linux), or -1 where /proc does not say.
long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long kib = -1;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> kib;
      return kib;
    }
    in.ignore(1 << 12, '\n');
  }
  return -1;
}

}  // namespace

TEST_CASE("a huge fully-associative level costs the memory of the lines filled, not of its size") {
  CacheConfig l3;
  l3.name = "L3";
  l3.line_bytes = 64;
  l3.size_bytes = kMaxCacheLines * 64;  // the simulator's limit: 8 388 608 lines
  l3.ways = 0;                          // fully associative: one set, a hash index
  const long before = resident_kib();
  Hierarchy h(HierarchyConfig{{l3}, {}, std::nullopt});
  // ~30 B of tables per way: all of them touched would be ~250 MB.
  CHECK(h.cache_memory_bytes() > size_t{200} << 20);
  constexpr int kLines = 3000;
  for (int i = 0; i < kLines; ++i) {
    Access a;
    a.addr = uint64_t(i) * 64 * 7;  // lines 0, 7, 14, …
    a.kind = i % 3 == 0 ? AccessKind::Write : AccessKind::Read;
    a.tensor = 0;
    h.access(a);
  }
  const std::vector<ResidentLine> lines = h.resident_lines(0);
  REQUIRE(lines.size() == size_t(kLines));
  // A cold fully-associative set fills ways 0, 1, 2, … in order: the lines come back in fill order.
  for (int i = 0; i < kLines; ++i) {
    CHECK(lines[size_t(i)].addr == uint64_t(i) * 64 * 7);
    CHECK(lines[size_t(i)].dirty_sectors == (i % 3 == 0 ? 1u : 0u));
  }
  h.write_back_all();
  // Every third access wrote its line: those are the write-backs, one line each to memory.
  CHECK(h.counters(0).writebacks == uint64_t((kLines + 2) / 3));
  CHECK(h.counters(1).writes == uint64_t((kLines + 2) / 3));
  const long after = resident_kib();
  if (before >= 0 && after >= 0) {
    // 3000 ways of tables (~100 KB) plus the hash index and page granularity: far below 32 MB.
    CHECK(after - before < 32 * 1024);
  }
}

// Hand-counted rules of one cache level and of level interplay: mapping conflicts, LRU / FIFO /
// tree-PLRU order, 3C split, write-back, write-through, inclusion, sectors, snapshots.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"

#include <set>

using namespace tilescope::memory;

namespace {

CacheConfig level(uint64_t size, uint32_t line, uint32_t ways, Replacement r = Replacement::LRU) {
  CacheConfig c;
  c.name = "L1";
  c.size_bytes = size;
  c.line_bytes = line;
  c.ways = ways;
  c.replacement = r;
  return c;
}

Hierarchy one_level(const CacheConfig& c, bool classify = false) {
  HierarchyOptions o;
  o.classify_misses = classify;
  o.reuse_distance = classify;
  return Hierarchy(HierarchyConfig{{c}, {}, std::nullopt}, o);
}

void read(Hierarchy& h, uint64_t addr, int16_t tensor = -1) {
  h.access(Access{addr, 4, AccessKind::Read, tensor});
}
void write(Hierarchy& h, uint64_t addr) {
  h.access(Access{addr, 4, AccessKind::Write});
}

}  // namespace

TEST_CASE("a stride equal to the cache size thrashes a direct-mapped cache") {
  // 1 KiB direct-mapped, 64 B lines: 16 sets; addresses 0 and 1024 both map to set 0.
  Hierarchy h = one_level(level(1024, 64, 1), true);
  for (int i = 0; i < 10; ++i) {
    read(h, 0);
    read(h, 1024);
  }
  Counters c = h.counters(0);
  CHECK(c.accesses == 20);
  CHECK(c.misses == 20);  // every access evicts the other line
  CHECK(c.compulsory == 2);
  CHECK(c.capacity == 0);  // a 16-line fully-associative cache holds both lines
  CHECK(c.conflict == 18);
  CHECK(c.evictions == 19);
}

TEST_CASE("LRU and FIFO differ on A B C D A E A in a 4-line fully-associative cache") {
  // Lines A..E are 64 B apart. LRU: A's hit makes B the victim for E, so the last A hits
  // (5 misses). FIFO: A is still the oldest fill, E evicts it, the last A misses (6 misses).
  const uint64_t A = 0, B = 64, C = 128, D = 192, E = 256;
  for (auto [policy, misses] : {std::pair{Replacement::LRU, 5}, std::pair{Replacement::FIFO, 6}}) {
    Hierarchy h = one_level(level(256, 64, 0, policy));
    for (uint64_t a : {A, B, C, D, A, E, A}) read(h, a);
    CAPTURE(replacement_name(policy));
    CHECK(h.counters(0).misses == static_cast<uint64_t>(misses));
    CHECK(h.counters(0).hits == static_cast<uint64_t>(7 - misses));
  }
}

TEST_CASE("LRU evicts in recency order on a longer hand sequence") {
  // Order oldest→newest after A B C D: A B C D. A hit → B C D A. E evicts B → C D A E.
  // A hit → C D E A. C hit → D E A C. B evicts D → E A C B. D evicts E → A C B D.
  Hierarchy h = one_level(level(256, 64, 4));  // one set of 4 ways
  for (uint64_t a : {0, 64, 128, 192, 0, 256, 0, 128, 64, 192}) read(h, a);
  CHECK(h.counters(0).misses == 7);
  CHECK(h.counters(0).hits == 3);
  CHECK(h.counters(0).evictions == 3);
  std::set<uint64_t> resident;
  for (const ResidentLine& r : h.resident_lines(0)) resident.insert(r.addr);
  CHECK(resident == std::set<uint64_t>{0, 128, 64, 192});
}

TEST_CASE("tree-PLRU with 4 ways evicts the line its tree bits point at, not the LRU line") {
  // Fills A B C D go to ways 0..3. Bits after D: root→left, left node→way 0, right node→way 2.
  // A hits (way 0): root→right, left node→way 1. E misses: root→right, right node→way 2 = C,
  // although true LRU would evict B. Then C misses again.
  Hierarchy h = one_level(level(256, 64, 4, Replacement::TreePLRU));
  for (uint64_t a : {0, 64, 128, 192, 0, 256}) read(h, a);
  std::set<uint64_t> resident;
  for (const ResidentLine& r : h.resident_lines(0)) resident.insert(r.addr);
  CHECK(resident == std::set<uint64_t>{0, 64, 192, 256});
  read(h, 128);
  CHECK(h.counters(0).misses == 6);
  CHECK(h.counters(0).hits == 1);
}

TEST_CASE("compulsory misses equal the number of distinct lines touched") {
  Hierarchy h = one_level(level(2048, 64, 2), true);
  std::set<uint64_t> lines;
  uint64_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t addr = (x >> 20) % 65536 & ~uint64_t{3};
    lines.insert(addr / 64);
    read(h, addr);
  }
  Counters c = h.counters(0);
  CHECK(c.compulsory == lines.size());
  CHECK(c.compulsory + c.capacity + c.conflict == c.misses);
}

TEST_CASE("write-back: dirty evictions are written back once, clean ones are not") {
  // Direct-mapped 1 KiB, 64 B lines; 0 and 1024 share set 0.
  Hierarchy h = one_level(level(1024, 64, 1));
  write(h, 0);    // miss: fetch line 0 (64 B), dirty
  write(h, 4);    // hit, same line
  read(h, 1024);  // miss: evict dirty line 0 → write-back 64 B; fetch 64 B
  read(h, 0);     // miss: evict clean 1024; fetch
  read(h, 1024);  // miss: evict clean 0; fetch
  Counters c = h.counters(0), mem = h.counters(1);
  CHECK(c.misses == 4);
  CHECK(c.hits == 1);
  CHECK(c.evictions == 3);
  CHECK(c.writebacks == 1);
  CHECK(mem.write_bytes == 64);
  CHECK(mem.read_bytes == 4 * 64);
  h.write_back_all();  // nothing dirty is left
  CHECK(h.counters(0).writebacks == 1);
}

TEST_CASE("write-through without write-allocate sends every write down and never installs") {
  CacheConfig c = level(1024, 64, 2);
  c.write_policy = WritePolicy::WriteThrough;
  c.write_allocate = false;
  Hierarchy h = one_level(c);
  write(h, 0);  // miss, not allocated: 4 B to memory
  read(h, 0);   // miss (nothing was installed): fetch 64 B
  write(h, 8);  // hit, written through: 4 B to memory
  Counters l1 = h.counters(0), mem = h.counters(1);
  CHECK(l1.misses == 2);
  CHECK(l1.hits == 1);
  CHECK(l1.writebacks == 0);
  CHECK(mem.write_bytes == 8);
  CHECK(mem.read_bytes == 64);
  h.write_back_all();
  CHECK(h.counters(1).write_bytes == 8);  // write-through lines are never dirty
}

TEST_CASE("a write covering a whole line is allocated without fetching it") {
  Hierarchy h = one_level(level(1024, 64, 2));
  h.access(Access{128, 64, AccessKind::Write});
  CHECK(h.counters(0).misses == 1);
  CHECK(h.counters(1).read_bytes == 0);
  h.write_back_all();
  CHECK(h.counters(1).write_bytes == 64);
}

TEST_CASE("an inclusive level back-invalidates the levels above it") {
  // L1: 2 lines, fully associative. L2: 2 lines direct-mapped (2 sets of 64 B), inclusive.
  // Lines 0 and 2 (addresses 0 and 128) share L2 set 0: bringing in 128 evicts 0 from L2, which
  // must remove it from L1 too, although L1 has room for both; bringing 0 back evicts 128 from
  // L2 and so from L1: two back-invalidations.
  CacheConfig l1 = level(128, 64, 0);
  CacheConfig l2 = level(128, 64, 1);
  l2.name = "L2";
  auto run = [&](Inclusion inclusion) {
    l2.inclusion = inclusion;
    Hierarchy h(HierarchyConfig{{l1, l2}, {}, std::nullopt});
    read(h, 0);
    read(h, 128);
    read(h, 0);
    return std::pair{h.counters(0), h.counters(1)};
  };
  auto [nine1, nine2] = run(Inclusion::NonInclusive);
  CHECK(nine1.hits == 1);  // the last access hits in L1
  CHECK(nine1.back_invalidations == 0);
  auto [inc1, inc2] = run(Inclusion::Inclusive);
  CHECK(inc1.hits == 0);  // 0 was back-invalidated when L2 evicted it
  CHECK(inc1.back_invalidations == 2);
  CHECK(inc2.misses == 3);
}

TEST_CASE("a dirty line back-invalidated above is written back from the inclusive level") {
  CacheConfig l1 = level(128, 64, 0);
  CacheConfig l2 = level(128, 64, 1);
  l2.name = "L2";
  l2.inclusion = Inclusion::Inclusive;
  Hierarchy h(HierarchyConfig{{l1, l2}, {}, std::nullopt});
  write(h, 0);   // dirty in L1, clean in L2
  read(h, 128);  // L2 evicts 0 → L1's dirty copy is merged and written back to memory
  CHECK(h.counters(2).write_bytes == 64);
  CHECK(h.counters(1).writebacks == 1);
}

TEST_CASE("sectored lines fill one sector at a time") {
  // 128 B lines of four 32 B sectors: reading bytes 0 and 32 is one line miss and one sector miss,
  // and moves 64 B from memory, not 256.
  CacheConfig c = level(1024, 128, 2);
  c.sector_bytes = 32;
  Hierarchy h = one_level(c);
  read(h, 0);
  read(h, 32);
  read(h, 36);
  Counters l1 = h.counters(0);
  CHECK(l1.misses == 2);
  CHECK(l1.sector_misses == 1);
  CHECK(l1.hits == 1);
  CHECK(l1.evictions == 0);
  CHECK(h.counters(1).read_bytes == 64);
}

TEST_CASE("per-tensor counters and resident-line snapshots at step boundaries") {
  Hierarchy h = one_level(level(1024, 64, 2));
  std::vector<size_t> resident_at_step;
  h.on_step([&](uint64_t, const Hierarchy& hh) {
    resident_at_step.push_back(hh.resident_lines(0).size());
  });
  read(h, 0, 0);
  read(h, 4, 0);
  read(h, 4096 + 64, 1);  // set 1 (8 sets of 2 ways)
  h.step_boundary(0);
  read(h, 8192 + 128, 1);  // set 2
  h.step_boundary(1);
  CHECK(resident_at_step == std::vector<size_t>{2, 3});
  CHECK(h.counters(0, 0).accesses == 2);
  CHECK(h.counters(0, 0).hits == 1);
  CHECK(h.counters(0, 1).misses == 2);
  int tensor1_lines = 0;
  for (const ResidentLine& r : h.resident_lines(0)) tensor1_lines += r.tensor == 1;
  CHECK(tensor1_lines == 2);
}

TEST_CASE("bad configurations are refused with a reason") {
  CacheConfig c = level(1000, 64, 2);
  CHECK(c.check().find("not a whole number") != std::string::npos);
  c = level(1024, 48, 2);
  CHECK(c.check().find("power of two") != std::string::npos);
  c = level(1024, 64, 3);
  CHECK(c.check().find("do not divide") != std::string::npos);
  CHECK_THROWS_AS(Cache(level(1024, 64, 3)), std::invalid_argument);
}

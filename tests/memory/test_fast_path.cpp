// The hierarchy's specialised fast path (Hierarchy::fast_path()) against its general path, forced
// with HierarchyOptions::force_general_path: random multi-level configurations and random traces
// must give identical counters for every level and tensor, identical resident lines (tags, valid
// and dirty sectors, owning tensor) and identical write-backs at the end.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace tilescope::memory;

namespace {

void check_same_counters(const Counters& fast, const Counters& general) {
  CHECK(fast.accesses == general.accesses);
  CHECK(fast.reads == general.reads);
  CHECK(fast.writes == general.writes);
  CHECK(fast.hits == general.hits);
  CHECK(fast.misses == general.misses);
  CHECK(fast.compulsory == general.compulsory);
  CHECK(fast.capacity == general.capacity);
  CHECK(fast.conflict == general.conflict);
  CHECK(fast.sector_misses == general.sector_misses);
  CHECK(fast.evictions == general.evictions);
  CHECK(fast.writebacks == general.writebacks);
  CHECK(fast.back_invalidations == general.back_invalidations);
  CHECK(fast.read_bytes == general.read_bytes);
  CHECK(fast.write_bytes == general.write_bytes);
}

void check_same_state(const Hierarchy& fast, const Hierarchy& general) {
  REQUIRE(fast.level_count() == general.level_count());
  REQUIRE(fast.max_tensor() == general.max_tensor());
  for (int k = 0; k <= fast.level_count(); ++k) {
    CAPTURE(k);
    for (int t = -1; t <= fast.max_tensor(); ++t) {
      CAPTURE(t);
      check_same_counters(fast.counters(k, t), general.counters(k, t));
    }
  }
  // The side analyses see each level's accesses in the same order on both paths.
  for (int k = 0; k < fast.level_count(); ++k) {
    CAPTURE(k);
    REQUIRE((fast.reuse(k) == nullptr) == (general.reuse(k) == nullptr));
    if (!fast.reuse(k)) continue;
    CHECK(fast.reuse(k)->histogram() == general.reuse(k)->histogram());
    CHECK(fast.reuse(k)->cold() == general.reuse(k)->cold());
  }
  for (int k = 0; k < fast.level_count(); ++k) {
    CAPTURE(k);
    const std::vector<ResidentLine> a = fast.resident_lines(k), b = general.resident_lines(k);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CHECK(a[i].addr == b[i].addr);
      CHECK(a[i].tensor == b[i].tensor);
      CHECK(a[i].valid_sectors == b[i].valid_sectors);
      CHECK(a[i].dirty_sectors == b[i].dirty_sectors);
    }
  }
}

// A level of the shape the fast path accepts: whole-line, non-inclusive, write-back,
// write-allocate; any policy, associativity (≤ 16 ways: nibble order; 17-32: stamps; fully
// associative above 32 lines: hash index) and set count (powers of two and not).
CacheConfig fast_level(std::mt19937_64& rng, const char* name, uint32_t line_bytes) {
  const Replacement policies[] = {Replacement::LRU, Replacement::FIFO, Replacement::Random,
                                  Replacement::TreePLRU};
  const uint32_t way_choices[] = {1, 2, 3, 4, 8, 12, 16, 20, 0};
  CacheConfig c;
  c.name = name;
  c.line_bytes = line_bytes;
  c.ways = way_choices[rng() % 9];
  const uint64_t lines = c.ways == 0 ? 4 + rng() % 60 : c.ways * (1 + rng() % 12);
  c.size_bytes = lines * line_bytes;
  c.replacement = policies[rng() % 4];
  c.seed = 1 + rng() % 1000;
  return c;
}

}  // namespace

TEST_CASE("the fast path and the general path give identical counters and cache contents") {
  std::mt19937_64 rng(20261129);
  int fast_runs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    HierarchyConfig config;
    const int levels = 1 + static_cast<int>(rng() % 3);
    // Lines no shorter than the level above's (the fast path's condition); sizes grow downwards.
    uint32_t line = 16u << (rng() % 3);
    const char* names[] = {"L1", "L2", "L3"};
    for (int k = 0; k < levels; ++k) {
      config.levels.push_back(fast_level(rng, names[k], line));
      if (rng() % 3 == 0) line *= 2;
    }
    CAPTURE(trial);
    CAPTURE(levels);
    // Every other trial with the 3C split and reuse distances (on a second thread in one of the
    // two hierarchies): the fast path records each level's accesses for them too.
    HierarchyOptions fast_options;
    fast_options.classify_misses = fast_options.reuse_distance = trial % 2 == 1;
    fast_options.analysis_thread = trial % 4 == 1;
    Hierarchy fast(config, fast_options);
    HierarchyOptions general_options = fast_options;
    general_options.analysis_thread = false;
    general_options.force_general_path = true;
    Hierarchy general(config, general_options);
    REQUIRE(fast.fast_path());
    REQUIRE_FALSE(general.fast_path());
    ++fast_runs;

    // Interleaved streams over a span a few times the largest level, with every kind of access:
    // element reads and writes, whole-line writes (no fetch), accesses straddling lines (the fast
    // configuration hands those to the general path) and a few tensors, in batches.
    uint64_t span = 0;
    for (const CacheConfig& c : config.levels) span = std::max(span, c.size_bytes);
    span *= 1 + rng() % 4;
    const uint32_t l1_line = config.levels[0].line_bytes;
    const uint32_t sizes[] = {4, 4, 4, 8, l1_line, 2 * l1_line, 12};
    std::vector<Access> batch;
    for (int i = 0; i < 6000; ++i) {
      Access a;
      a.size = sizes[rng() % 7];
      a.addr = rng() % span;
      if (rng() % 5 != 0) a.addr -= a.addr % a.size;  // mostly aligned, some straddling lines
      if (rng() % 2 == 0) a.addr = (i * 4) % span;    // a sequential stream between the jumps
      a.kind = rng() % 10 < 3 ? AccessKind::Write : AccessKind::Read;
      a.tensor = static_cast<int16_t>(static_cast<int>(rng() % 4) - 1);
      batch.push_back(a);
      if (batch.size() == 512 || rng() % 200 == 0) {
        fast.access_batch(batch.data(), batch.size());
        general.access_batch(batch.data(), batch.size());
        batch.clear();
      }
    }
    fast.access_batch(batch.data(), batch.size());
    general.access_batch(batch.data(), batch.size());
    check_same_state(fast, general);
    fast.write_back_all();
    general.write_back_all();
    check_same_state(fast, general);
  }
  CHECK(fast_runs == 300);
}

TEST_CASE("the fast path is chosen only for configurations it implements") {
  CacheConfig l1;
  l1.name = "L1";
  l1.size_bytes = 4096;
  l1.ways = 4;
  CacheConfig l2 = l1;
  l2.name = "L2";
  l2.size_bytes = 16384;
  auto fast_with = [&](const CacheConfig& a, const CacheConfig& b, HierarchyOptions o = {}) {
    return Hierarchy(HierarchyConfig{{a, b}, {}, std::nullopt}, o).fast_path();
  };
  CHECK(fast_with(l1, l2));
  HierarchyOptions three_c;  // the analyses are fed from either path
  three_c.classify_misses = true;
  CHECK(fast_with(l1, l2, three_c));
  HierarchyOptions reuse;
  reuse.reuse_distance = true;
  CHECK(fast_with(l1, l2, reuse));
  CacheConfig sectored = l1;
  sectored.sector_bytes = 32;
  CHECK_FALSE(fast_with(sectored, l2));
  CacheConfig inclusive = l2;
  inclusive.inclusion = Inclusion::Inclusive;
  CHECK_FALSE(fast_with(l1, inclusive));
  CacheConfig through = l2;
  through.write_policy = WritePolicy::WriteThrough;
  CHECK_FALSE(fast_with(l1, through));
  CacheConfig no_allocate = l1;
  no_allocate.write_allocate = false;
  CHECK_FALSE(fast_with(no_allocate, l2));
  CacheConfig short_lines = l2;
  short_lines.line_bytes = 32;
  CHECK_FALSE(fast_with(l1, short_lines));
}

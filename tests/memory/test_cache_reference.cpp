// Cache levels against a deliberately simple reference model (a list per set, linear search) on
// hundreds of random configurations and traces: identical hit, miss, eviction, write-back and
// memory-traffic counts.
#include <doctest/doctest.h>

#include "sim/memory/hierarchy.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using namespace tilescope::memory;

namespace {

// The reference: obviously correct, slow. Semantics follow hierarchy.h's contract: invalid ways
// are filled lowest index first; a write covering a whole line is not fetched.
class ReferenceCache {
 public:
  explicit ReferenceCache(const CacheConfig& c)
      : m_c(c),
        m_line(c.line_bytes),
        m_ways(c.ways ? c.ways : c.size_bytes / c.line_bytes),
        m_sets(c.size_bytes / c.line_bytes / m_ways),
        m_rng(c.seed ? c.seed : 0x9E3779B97F4A7C15ull) {
    m_lines.assign(m_sets, std::vector<uint64_t>(m_ways, kNone));
    m_dirty.assign(m_sets, std::vector<bool>(m_ways, false));
    m_order.assign(m_sets, {});
    m_bits.assign(m_sets, std::vector<int>(4 * m_ways + 4, 0));
  }

  void access(uint64_t addr, uint32_t size, bool write) {
    for (uint64_t line = addr / m_line; line <= (addr + size - 1) / m_line; ++line) {
      uint64_t lo = std::max(addr, line * m_line), hi = std::min(addr + size, (line + 1) * m_line);
      one_line(line, static_cast<uint32_t>(hi - lo), write);
    }
  }

  uint64_t accesses = 0, hits = 0, misses = 0, evictions = 0, writebacks = 0;
  uint64_t mem_read = 0, mem_write = 0;

 private:
  static constexpr uint64_t kNone = ~uint64_t{0};

  void one_line(uint64_t line, uint32_t bytes, bool write) {
    ++accesses;
    uint64_t s = line % m_sets;
    std::vector<uint64_t>& set = m_lines[s];
    int w = -1;
    for (uint32_t i = 0; i < m_ways; ++i)
      if (set[i] == line) w = static_cast<int>(i);
    if (w >= 0) {
      ++hits;
      if (m_c.replacement == Replacement::LRU) to_front(s, w);
      if (m_c.replacement == Replacement::TreePLRU) plru_touch(s, w, 1, 0, m_ways);
      do_write(s, w, bytes, write);
      return;
    }
    ++misses;
    if (write && !m_c.write_allocate) {
      mem_write += bytes;
      return;
    }
    for (uint32_t i = 0; i < m_ways && w < 0; ++i)
      if (set[i] == kNone) w = static_cast<int>(i);
    if (w < 0) {
      switch (m_c.replacement) {
        case Replacement::LRU:
        case Replacement::FIFO:
          w = m_order[s].back();
          break;
        case Replacement::Random:
          w = static_cast<int>(next_random() % m_ways);
          break;
        case Replacement::TreePLRU:
          w = plru_victim(s, 1, 0, m_ways);
          break;
      }
      ++evictions;
      if (m_dirty[s][w]) {
        ++writebacks;
        mem_write += m_line;
      }
    }
    set[w] = line;
    m_dirty[s][w] = false;
    to_front(s, w);
    if (m_c.replacement == Replacement::TreePLRU) plru_touch(s, w, 1, 0, m_ways);
    if (!(write && bytes == m_line)) mem_read += m_line;
    do_write(s, w, bytes, write);
  }

  void do_write(uint64_t s, int w, uint32_t bytes, bool write) {
    if (!write) return;
    if (m_c.write_policy == WritePolicy::WriteBack) {
      m_dirty[s][w] = true;
    } else {
      mem_write += bytes;
    }
  }

  void to_front(uint64_t s, int w) {
    auto& o = m_order[s];
    o.erase(std::remove(o.begin(), o.end(), w), o.end());
    o.insert(o.begin(), w);
  }

  // Tree-PLRU written recursively over way ranges; the left half has ceil(n/2) ways.
  void plru_touch(uint64_t s, int w, uint32_t node, uint32_t lo, uint32_t hi) {
    if (hi - lo <= 1) return;
    uint32_t mid = lo + (hi - lo + 1) / 2;
    bool left = static_cast<uint32_t>(w) < mid;
    m_bits[s][node] = left ? 1 : 0;  // point at the other half
    if (left)
      plru_touch(s, w, 2 * node, lo, mid);
    else
      plru_touch(s, w, 2 * node + 1, mid, hi);
  }
  int plru_victim(uint64_t s, uint32_t node, uint32_t lo, uint32_t hi) {
    if (hi - lo <= 1) return static_cast<int>(lo);
    uint32_t mid = lo + (hi - lo + 1) / 2;
    return m_bits[s][node] == 0 ? plru_victim(s, 2 * node, lo, mid)
                                : plru_victim(s, 2 * node + 1, mid, hi);
  }
  uint64_t next_random() {  // xorshift64*, as documented for Replacement::Random
    m_rng ^= m_rng >> 12;
    m_rng ^= m_rng << 25;
    m_rng ^= m_rng >> 27;
    return m_rng * 0x2545F4914F6CDD1Dull;
  }

  CacheConfig m_c;
  uint64_t m_line, m_ways, m_sets, m_rng;
  std::vector<std::vector<uint64_t>> m_lines;
  std::vector<std::vector<bool>> m_dirty;
  std::vector<std::vector<int>> m_order;  // front = most recently used (LRU) / filled (FIFO)
  std::vector<std::vector<int>> m_bits;
};

}  // namespace

TEST_CASE("one level matches the reference model on 240 random configurations and traces") {
  std::mt19937_64 rng(20261129);
  const uint32_t way_choices[] = {1, 2, 3, 4, 5, 6, 8, 12, 16, 0};
  const uint32_t line_choices[] = {16, 32, 64, 128};
  const Replacement policies[] = {Replacement::LRU, Replacement::FIFO, Replacement::Random,
                                  Replacement::TreePLRU};
  int checked = 0;
  for (int trial = 0; trial < 240; ++trial) {
    CacheConfig c;
    c.name = "L1";
    c.line_bytes = line_choices[rng() % 4];
    c.ways = way_choices[rng() % 10];
    uint64_t sets = c.ways == 0 ? 1 : 1 + rng() % 9;  // 1..9 sets: powers of two and not
    uint64_t lines =
        c.ways == 0 ? 1 + rng() % 80 : sets * c.ways;  // FA up to 80 lines (>32: indexed)
    c.size_bytes = lines * c.line_bytes;
    c.replacement = policies[rng() % 4];
    c.write_policy = rng() % 2 ? WritePolicy::WriteBack : WritePolicy::WriteThrough;
    c.write_allocate = rng() % 3 != 0;
    c.seed = 1 + rng() % 1000;
    CAPTURE(trial);
    CAPTURE(c.size_bytes);
    CAPTURE(c.ways);
    CAPTURE(c.line_bytes);
    CAPTURE(replacement_name(c.replacement));
    CAPTURE(write_policy_name(c.write_policy));
    CAPTURE(c.write_allocate);

    Hierarchy h(HierarchyConfig{{c}, {}, std::nullopt});
    ReferenceCache ref(c);
    const uint64_t span = c.size_bytes * (1 + rng() % 4);
    const uint32_t sizes[] = {1, 4, 8, c.line_bytes, 12};
    for (int i = 0; i < 3000; ++i) {
      Access a;
      a.size = sizes[rng() % 5];
      a.addr = rng() % span;
      if (rng() % 4 != 0) a.addr -= a.addr % a.size;  // mostly aligned, some straddling lines
      a.kind = rng() % 10 < 3 ? AccessKind::Write : AccessKind::Read;
      h.access(a);
      ref.access(a.addr, a.size, a.kind == AccessKind::Write);
    }
    Counters l1 = h.counters(0), mem = h.counters(1);
    CHECK(l1.accesses == ref.accesses);
    CHECK(l1.hits == ref.hits);
    CHECK(l1.misses == ref.misses);
    CHECK(l1.evictions == ref.evictions);
    CHECK(l1.writebacks == ref.writebacks);
    CHECK(mem.read_bytes == ref.mem_read);
    CHECK(mem.write_bytes == ref.mem_write);
    ++checked;
  }
  CHECK(checked == 240);
}

TEST_CASE("a second non-inclusive level receives exactly the first level's fills and write-backs") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    CacheConfig a, b;
    a.name = "L1";
    a.line_bytes = b.line_bytes = 64;
    a.ways = 1 + static_cast<uint32_t>(rng() % 4);
    a.size_bytes = a.ways * 64 * (1 + rng() % 4);
    b.name = "L2";
    b.ways = 2 + static_cast<uint32_t>(rng() % 5);
    b.size_bytes = b.ways * 64 * (2 + rng() % 6);
    b.replacement = rng() % 2 ? Replacement::LRU : Replacement::TreePLRU;
    CAPTURE(trial);
    Hierarchy h(HierarchyConfig{{a, b}, {}, std::nullopt});
    ReferenceCache r1(a);
    for (int i = 0; i < 4000; ++i) {
      uint64_t addr = (rng() % (b.size_bytes * 3)) & ~uint64_t{3};
      bool write = rng() % 4 == 0;
      h.access(Access{addr, 4, write ? AccessKind::Write : AccessKind::Read});
      r1.access(addr, 4, write);
    }
    CHECK(h.counters(0).misses == r1.misses);
    CHECK(h.counters(0).writebacks == r1.writebacks);
    CHECK(h.counters(1).reads == r1.mem_read / 64);
    CHECK(h.counters(1).writes == r1.writebacks);
    CHECK(h.counters(1).read_bytes == r1.mem_read);
  }
}

// The level-0 fast path skips the replacement update for a hit on its set's most recently used
// way. Interleaved streams (A, B and C of a loop nest) are where that differs from "repeat of the
// previous access", so they get their own comparison with the reference, for every policy.
TEST_CASE("interleaved streams match the reference model for every policy") {
  std::mt19937_64 rng(4242);
  const Replacement policies[] = {Replacement::LRU, Replacement::FIFO, Replacement::Random,
                                  Replacement::TreePLRU};
  const uint32_t way_choices[] = {1, 2, 3, 4, 6, 8, 12, 0};
  for (int trial = 0; trial < 160; ++trial) {
    CacheConfig c;
    c.name = "L1";
    c.line_bytes = 64;
    c.ways = way_choices[rng() % 8];
    const uint64_t sets = c.ways == 0 ? 1 : 1 + rng() % 8;
    c.size_bytes = (c.ways == 0 ? 8 + rng() % 60 : sets * c.ways) * c.line_bytes;
    c.replacement = policies[trial % 4];
    c.write_policy = rng() % 2 ? WritePolicy::WriteBack : WritePolicy::WriteThrough;
    c.write_allocate = rng() % 3 != 0;
    c.seed = 1 + rng() % 1000;
    CAPTURE(trial);
    CAPTURE(c.size_bytes);
    CAPTURE(c.ways);
    CAPTURE(replacement_name(c.replacement));
    Hierarchy h(HierarchyConfig{{c}, {}, std::nullopt});
    ReferenceCache ref(c);
    // Three 4-byte element streams walking matrices of n×n floats: A along rows (several
    // accesses per line), B down columns (a new line each time), C read and written per (i, j).
    const uint64_t n = 8 + rng() % 40;
    const uint64_t a0 = 0, b0 = 4 * n * n + 64 * (rng() % 8), c0 = 2 * b0 + 64 * (rng() % 8);
    std::vector<Access> batch;
    auto emit = [&](uint64_t addr, AccessKind k, int16_t tensor) {
      batch.push_back(Access{addr, 4, k, tensor});
      ref.access(addr, 4, k == AccessKind::Write);
    };
    for (uint64_t i = 0; i < n && batch.size() < 20000; ++i)
      for (uint64_t j = 0; j < n; ++j) {
        emit(c0 + 4 * (i * n + j), AccessKind::Read, 2);
        for (uint64_t k = 0; k < n; ++k) {
          emit(a0 + 4 * (i * n + k), AccessKind::Read, 0);
          emit(b0 + 4 * (k * n + j), AccessKind::Read, 1);
        }
        emit(c0 + 4 * (i * n + j), AccessKind::Write, 2);
      }
    h.access_batch(batch.data(), batch.size());
    Counters l1 = h.counters(0), mem = h.counters(1);
    CHECK(l1.accesses == ref.accesses);
    CHECK(l1.hits == ref.hits);
    CHECK(l1.misses == ref.misses);
    CHECK(l1.evictions == ref.evictions);
    CHECK(l1.writebacks == ref.writebacks);
    CHECK(mem.read_bytes == ref.mem_read);
    CHECK(mem.write_bytes == ref.mem_write);
  }
}

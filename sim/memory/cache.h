// One set-associative cache level: configuration, tag store and replacement state.
//
// The Cache only answers structural questions (where is this line, which way to evict, install,
// invalidate); the Hierarchy (hierarchy.h) drives it and does all counting, so a reference model
// in the tests can check the same decisions.
//
// Layout choices for speed: tags, sector masks and list links are flat vectors indexed by
// set * ways + way; a power-of-two set count uses a mask, any other count falls back to a modulo;
// sets with more than kScanWays ways (fully-associative caches) find lines through a hash index
// instead of a linear scan.
#pragma once

#include "sim/memory/line_map.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::memory {

enum class Replacement : uint8_t { LRU, FIFO, Random, TreePLRU };
enum class WritePolicy : uint8_t { WriteBack, WriteThrough };
// NonInclusive: a line may or may not also be in the levels above (no action on eviction).
// Inclusive: every line of the levels above is also here, so evicting a line here invalidates its
// copies above ("back-invalidation").
enum class Inclusion : uint8_t { NonInclusive, Inclusive };

const char* replacement_name(Replacement);   // "lru", "fifo", "random", "plru"
const char* write_policy_name(WritePolicy);  // "write-back", "write-through"
const char* inclusion_name(Inclusion);       // "non-inclusive", "inclusive"

struct CacheConfig {
  std::string name = "L1";
  uint64_t size_bytes = 32 * 1024;
  uint32_t line_bytes = 64;   // power of two
  uint32_t sector_bytes = 0;  // fill granularity; 0 = the whole line; power of two, ≤ 32 per line
  uint32_t ways = 8;          // 0 = fully associative
  Replacement replacement = Replacement::LRU;
  WritePolicy write_policy = WritePolicy::WriteBack;
  bool write_allocate = true;
  Inclusion inclusion = Inclusion::NonInclusive;
  uint64_t seed = 1;  // for Replacement::Random; a fixed seed makes runs repeatable
  // Descriptive figures for the analytic model and the views; 0 = not known.
  double bandwidth_bytes_per_s = 0;
  double latency_cycles = 0;
  double latency_ns = 0;
  int shared_by = 1;  // cores / SMs sharing one instance of this level

  uint32_t sector_size() const { return sector_bytes == 0 ? line_bytes : sector_bytes; }
  uint64_t lines() const { return size_bytes / line_bytes; }
  uint32_t effective_ways() const;  // ways, or lines() when fully associative
  uint64_t sets() const { return lines() / effective_ways(); }
  // "" when the configuration is usable, else what is wrong in a learner's terms.
  std::string check() const;
};

class Cache {
 public:
  static constexpr uint64_t kInvalid = ~uint64_t{0};
  static constexpr uint32_t kScanWays = 32;

  explicit Cache(const CacheConfig& config);  // throws std::invalid_argument when check() fails

  const CacheConfig& config() const { return m_config; }
  uint64_t sets() const { return m_sets; }
  uint32_t ways() const { return m_ways; }

  uint64_t set_of(uint64_t line) const { return m_set_pow2 ? (line & m_set_mask) : line % m_sets; }
  // Global way index (set * ways + way) holding `line`, or -1.
  int64_t find(uint64_t line) const {
    if (m_indexed) {
      const uint64_t* w = m_index.find(line);
      return w ? static_cast<int64_t>(*w) : -1;
    }
    // Scan the whole set without an early exit: the compiler turns the select into a
    // conditional move, so a hit at a random way costs no branch misprediction.
    const uint64_t base = set_of(line) * m_ways;
    const uint64_t* tags = m_tags.data() + base;
    int64_t hit = -1;
    for (uint32_t i = 0; i < m_ways; ++i) hit = tags[i] == line ? static_cast<int64_t>(i) : hit;
    return hit < 0 ? -1 : static_cast<int64_t>(base) + hit;
  }
  // Replacement-state update for an access to `line` that hit `way`.
  void touch(uint64_t line, uint64_t way) {
    switch (m_config.replacement) {
      case Replacement::LRU:
        if (m_indexed) {
          move_to_head(set_of(line), way);
        } else {
          m_stamp[way] = ++m_clock;
        }
        break;
      case Replacement::TreePLRU:
        plru_touch(set_of(line), way);
        break;
      case Replacement::FIFO:
      case Replacement::Random:
        break;
    }
  }
  // The way a new line of `set` goes to: an invalid way when there is one (lowest index first on
  // a cold set), else the policy's victim. The way may still hold a valid line to evict.
  // Inline with install() and invalidate(): they run on every miss of every level.
  uint64_t victim(uint64_t set) {
    const uint64_t base = set * m_ways;
    if (!m_stamp.empty()) {
      // LRU / FIFO: the oldest stamp; invalid ways have stamp 0, so they come first, lowest
      // index first among them.
      // Branch-free minimum (conditional moves): which way is oldest is data-dependent and
      // would mispredict a branch about half the time.
      const uint64_t* st = m_stamp.data() + base;
      uint64_t oldest = st[0];
      uint32_t best = 0;
      for (uint32_t i = 1; i < m_ways; ++i) {
        const bool older = st[i] < oldest;
        oldest = older ? st[i] : oldest;
        best = older ? i : best;
      }
      return base + best;
    }
    return victim_slow(set);
  }
  // Puts `line` into `way` with the given sectors valid, clean, and updates replacement state.
  void install(uint64_t way, uint64_t line, uint32_t valid_mask, int16_t tensor) {
    if (m_indexed) index_replace(way, line);
    m_tags[way] = line;
    m_valid[way] = valid_mask;
    m_dirty[way] = 0;
    m_tensor[way] = tensor;
    // Filling counts as a use for every policy (FIFO's order is its fill order).
    if (!m_stamp.empty()) {
      m_stamp[way] = ++m_clock;
    } else {
      fill_slow(line, way);
    }
  }
  void invalidate(uint64_t way) {
    if (m_tags[way] == kInvalid) return;
    if (m_indexed) {
      invalidate_indexed(way);
      return;
    }
    m_tags[way] = kInvalid;
    m_valid[way] = 0;
    m_dirty[way] = 0;
    m_tensor[way] = -1;
    if (!m_stamp.empty()) m_stamp[way] = 0;
  }

  uint64_t tag(uint64_t way) const { return m_tags[way]; }
  bool valid(uint64_t way) const { return m_tags[way] != kInvalid; }
  uint32_t& valid_mask(uint64_t way) { return m_valid[way]; }
  uint32_t& dirty_mask(uint64_t way) { return m_dirty[way]; }
  uint32_t* dirty_masks() { return m_dirty.data(); }
  uint32_t valid_mask(uint64_t way) const { return m_valid[way]; }
  uint32_t dirty_mask(uint64_t way) const { return m_dirty[way]; }
  int16_t tensor(uint64_t way) const { return m_tensor[way]; }
  uint64_t total_ways() const { return m_tags.size(); }
  size_t memory_bytes() const;

 private:
  static constexpr uint32_t kNil = ~uint32_t{0};
  // `set` is always passed in: recomputing it from a global way index would cost a division.
  void unlink(uint64_t set, uint64_t way);
  void move_to_head(uint64_t set, uint64_t way);
  void move_to_tail(uint64_t set, uint64_t way);
  void plru_touch(uint64_t set, uint64_t way);
  uint32_t plru_victim(uint64_t set) const;
  uint64_t next_random();
  uint64_t victim_slow(uint64_t set);
  void fill_slow(uint64_t line, uint64_t way);
  void index_replace(uint64_t way, uint64_t line);
  void invalidate_indexed(uint64_t way);

  CacheConfig m_config;
  uint64_t m_sets;
  uint32_t m_ways;
  bool m_set_pow2;
  uint64_t m_set_mask;
  bool m_indexed;  // find() through m_index instead of scanning the set

  std::vector<uint64_t> m_tags;   // line number, or kInvalid
  std::vector<uint32_t> m_valid;  // valid sectors
  std::vector<uint32_t> m_dirty;  // dirty sectors
  std::vector<int16_t> m_tensor;  // tensor that brought the line in (for snapshots and stats)
  // Sets of at most kScanWays ways keep a stamp per way (time of last use for LRU, of fill for
  // FIFO): a hit is one store, and a miss scans the set for an invalid way or the oldest stamp.
  std::vector<uint64_t> m_stamp;
  uint64_t m_clock = 0;
  // Larger (indexed) sets keep a recency (LRU) or insertion (FIFO) list instead, head = most
  // recent, with invalid ways at the tail, so both "invalid way first" and the victim are O(1).
  std::vector<uint32_t> m_prev, m_next;  // way-in-set indices
  std::vector<uint32_t> m_head, m_tail;  // per set
  std::vector<uint8_t> m_plru;           // per set: one byte per tree node (heap order)
  uint32_t m_plru_nodes = 0;
  uint64_t m_rng;
  LineMap m_index;
};

}  // namespace tilescope::memory

// One set-associative cache level: configuration, tag store and replacement state.
//
// The Cache only answers structural questions (where is this line, which way to evict, install,
// invalidate); the Hierarchy (hierarchy.h) drives it and does all counting, so a reference model
// in the tests can check the same decisions.
//
// Layout choices for speed: tags, sector masks and list links are flat vectors indexed by
// set * ways + way; a power-of-two set count uses a mask, any other count a multiply-high by a
// precomputed reciprocal (no division); sets with more than kScanWays ways (fully-associative
// caches) find lines through a hash index instead of a linear scan. Each set remembers its most
// recently used way, so the hierarchy can recognise a repeat hit on it without a scan (mru()).
#pragma once

#include "sim/memory/line_map.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <bit>
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

// line → set: a mask for a power-of-two set count, else line mod sets without a division.
class SetIndex {
 public:
  explicit SetIndex(uint64_t sets = 1)
      : m_sets(sets),
        m_mask(sets - 1),
        // (2^64 - 1) / sets equals floor(2^64 / sets) because sets (≥ 3, not a power of two) does
        // not divide 2^64.
        m_recip((sets & (sets - 1)) == 0 ? 0 : ~uint64_t{0} / sets) {}
  uint64_t operator()(uint64_t line) const {
    if (m_recip == 0) return line & m_mask;
    // q = mulhi(line, floor(2^64 / sets)) is the quotient or one less (the reciprocal is short of
    // 2^64 / sets by less than one, and line < 2^64), so one conditional subtraction fixes the
    // remainder.
    const uint64_t q =
        static_cast<uint64_t>((static_cast<unsigned __int128>(line) * m_recip) >> 64);
    const uint64_t r = line - q * m_sets;
    return r >= m_sets ? r - m_sets : r;
  }

 private:
  uint64_t m_sets, m_mask, m_recip;
};

// Geometry limits: beyond them a configuration is a typo (`line = 1 B` on a 256 MiB level), and
// the simulator's per-line arrays (~32 B a line) would take gigabytes.
inline constexpr uint64_t kMaxCacheLines = uint64_t{1} << 23;
inline constexpr uint32_t kMaxLineBytes = 64 * 1024;
inline constexpr uint32_t kMaxWays = 1u << 16;

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
  // false: a dirty victim is counted as a write-back but sent nowhere. Real write-back caches
  // send it to the level below; cachegrind models no write-back traffic at all, so a machine set
  // up to compare with cachegrind drops them (machine key `writebacks = dropped`).
  bool writebacks_to_next = true;
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

// Bit i set when keys[i] == key, for i < ways (≤ 32). `keys` must be readable up to index
// ways + 2: the SIMD loop loads four at a time and masks the bits past `ways`.
inline uint64_t match_keys(const uint32_t* keys, uint32_t ways, uint32_t key) {
  uint64_t match = 0;
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi32(static_cast<int>(key));
  for (uint32_t i = 0; i < ways; i += 4) {
    const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + i));
    match |= static_cast<uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(k, want))))
             << i;
  }
  return match & ((uint64_t{1} << ways) - 1);
#else
  for (uint32_t i = 0; i < ways; ++i) match |= static_cast<uint64_t>(keys[i] == key) << i;
  return match;
#endif
}

// match_keys() for ways ≤ 16, unrolled and branch-free: `keys` must be readable up to index 15.
inline uint64_t match_keys16(const uint32_t* keys, uint32_t ways, uint32_t key) {
#if defined(__SSE2__)
  const __m128i want = _mm_set1_epi32(static_cast<int>(key));
  auto quad = [&](int i) {
    const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(keys + i));
    return static_cast<uint64_t>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(k, want))));
  };
  const uint64_t match = quad(0) | quad(4) << 4 | quad(8) << 8 | quad(12) << 12;
  return match & ((uint64_t{1} << ways) - 1);
#else
  return match_keys(keys, ways, key);
#endif
}

class Cache {
 public:
  static constexpr uint64_t kInvalid = ~uint64_t{0};
  static constexpr uint32_t kScanWays = 32;

  explicit Cache(const CacheConfig& config);  // throws std::invalid_argument when check() fails

  const CacheConfig& config() const { return m_config; }
  uint64_t sets() const { return m_sets; }
  uint32_t ways() const { return m_ways; }
  bool indexed() const { return m_indexed; }  // large sets: lines found through a hash index

  uint64_t set_of(uint64_t line) const { return m_set_index(line); }
  // A copy of the line → set mapping, for loops that keep it in registers.
  SetIndex set_index() const { return m_set_index; }
  // Global way index (set * ways + way) holding `line`, or -1.
  int64_t find(uint64_t line) const { return find_in_set(set_of(line), line); }
  // As find(), for a caller that already knows the set (set == set_of(line)).
  int64_t find_in_set(uint64_t set, uint64_t line) const {
    if (m_indexed) {
      const uint64_t* w = m_index.find(line);
      return w ? static_cast<int64_t>(*w) : -1;
    }
    // Compare the low 32 bits of every way's tag (all ways at once where SIMD allows), then
    // confirm the (usually single) candidate against the full tag.
    const uint64_t base = set * m_ways;
    const uint32_t* keys = m_key.data() + base;
    uint64_t match = m_ways <= 16 ? match_keys16(keys, m_ways, static_cast<uint32_t>(line))
                                  : match_keys(keys, m_ways, static_cast<uint32_t>(line));
    while (match != 0) {
      const uint64_t way = base + static_cast<uint64_t>(std::countr_zero(match));
      if (m_tags[way] == line) return static_cast<int64_t>(way);
      match &= match - 1;
    }
    return -1;
  }
  // The set's most recently touched or filled way (a global index). When it holds the line being
  // accessed, touching it again changes no replacement state for any policy: it is already the
  // newest stamp, list head or front of the order (LRU, FIFO), its tree-PLRU path bits already
  // point away from it, and random replacement keeps no state. The hierarchy's fast path relies on
  // exactly this.
  uint64_t mru(uint64_t set) const { return m_mru[set]; }
  // Replacement-state update for an access to `line` that hit `way`.
  void touch(uint64_t line, uint64_t way) { touch_in_set(set_of(line), way); }
  void touch_in_set(uint64_t set, uint64_t way) {
    m_mru[set] = static_cast<uint32_t>(way);
    switch (m_config.replacement) {
      case Replacement::LRU:
        if (m_nibble) {
          order_to_front(set, static_cast<uint32_t>(way - set * m_ways));
        } else if (m_indexed) {
          move_to_head(set, way);
        } else {
          m_stamp[way] = ++m_clock;
        }
        break;
      case Replacement::TreePLRU:
        plru_touch(set, way);
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
    if (m_nibble) {
      // Lowest invalid way first, else the last way in recency / fill order.
      const uint32_t free = m_free[set];
      return base + (free != 0 ? static_cast<uint64_t>(std::countr_zero(free))
                               : (m_order[set] >> (4 * (m_ways - 1))) & 15);
    }
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
  // LRU or FIFO with at most 16 ways, not indexed: the order is kept in nibbles (see m_order).
  bool nibble_order() const { return m_nibble; }
  // A nibble order word with way-in-set `w` moved to the front (most recent).
  static uint64_t nibble_to_front(uint64_t order, uint32_t w) {
    // Position of w: the lowest zero nibble of order ^ (w in every nibble). The classic zero-byte
    // test can flag a nibble above a true zero (borrow), never one below it.
    const uint64_t x = order ^ (uint64_t{w} * 0x1111111111111111ull);
    const uint64_t zero = (x - 0x1111111111111111ull) & ~x & 0x8888888888888888ull;
    const uint32_t shift = static_cast<uint32_t>(std::countr_zero(zero)) & ~3u;  // 4 × position
    // Nibbles up to and including w's position shift up by one (dropping w), w goes to the front,
    // the rest stay. (16 << 60 wraps to 0, so at the last position the mask is all ones.)
    const uint64_t upto = (uint64_t{16} << shift) - 1;
    return (order & ~upto) | ((order << 4) & upto) | w;
  }
  // Puts `line` into `way` with the given sectors valid, clean, and updates replacement state.
  void install(uint64_t way, uint64_t line, uint32_t valid_mask, int16_t tensor) {
    install_in_set(set_of(line), way, line, valid_mask, tensor);
  }
  void install_in_set(uint64_t set, uint64_t way, uint64_t line, uint32_t valid_mask,
                      int16_t tensor) {
    m_mru[set] = static_cast<uint32_t>(way);
    if (m_indexed) index_replace(way, line);
    m_tags[way] = line;
    m_key[way] = static_cast<uint32_t>(line);
    m_valid[way] = valid_mask;
    m_dirty[way] = 0;
    m_tensor[way] = tensor;
    // Filling counts as a use for every policy (FIFO's order is its fill order).
    if (m_nibble) {
      const uint32_t local = static_cast<uint32_t>(way - set * m_ways);
      m_free[set] &= ~(1u << local);
      order_to_front(set, local);
    } else if (!m_stamp.empty()) {
      m_stamp[way] = ++m_clock;
    } else {
      fill_slow(set, way);
    }
  }
  // Empties `way`. The set's mru() may still name it; its tag no longer matches any line.
  void invalidate(uint64_t way) {
    if (m_tags[way] == kInvalid) return;
    if (m_indexed) {
      invalidate_indexed(way);
      return;
    }
    m_tags[way] = kInvalid;
    m_key[way] = static_cast<uint32_t>(kInvalid);
    m_valid[way] = 0;
    m_dirty[way] = 0;
    m_tensor[way] = -1;
    if (!m_stamp.empty()) m_stamp[way] = 0;
    // Its place in the order no longer matters: free ways are chosen before the order is read. (A
    // division, but invalidations are rare: dirty evictions and back-invalidations.)
    if (m_nibble) m_free[way / m_ways] |= 1u << (way % m_ways);
  }

  uint64_t tag(uint64_t way) const { return m_tags[way]; }
  bool valid(uint64_t way) const { return m_tags[way] != kInvalid; }
  uint32_t& valid_mask(uint64_t way) { return m_valid[way]; }
  uint32_t& dirty_mask(uint64_t way) { return m_dirty[way]; }
  uint32_t* dirty_masks() { return m_dirty.data(); }
  const uint64_t* tags() const { return m_tags.data(); }
  const uint32_t* valid_masks() const { return m_valid.data(); }
  const uint32_t* mru_ways() const { return m_mru.data(); }
  uint32_t valid_mask(uint64_t way) const { return m_valid[way]; }
  uint32_t dirty_mask(uint64_t way) const { return m_dirty[way]; }
  int16_t tensor(uint64_t way) const { return m_tensor[way]; }
  uint64_t total_ways() const { return m_tags.size(); }
  size_t memory_bytes() const;

 private:
  // The hierarchy's fast path (Hierarchy::fast_path()) reads and updates the arrays directly,
  // with the policy resolved once per level rather than once per access.
  friend class Hierarchy;
  static constexpr uint32_t kNil = ~uint32_t{0};
  // `set` is always passed in: recomputing it from a global way index would cost a division.
  void unlink(uint64_t set, uint64_t way);
  void move_to_head(uint64_t set, uint64_t way);
  void move_to_tail(uint64_t set, uint64_t way);
  void plru_touch(uint64_t set, uint64_t way);
  uint32_t plru_victim(uint64_t set) const;
  uint64_t next_random();
  uint64_t victim_slow(uint64_t set);
  void fill_slow(uint64_t set, uint64_t way);
  // Moves way-in-set `w` to the front (most recent) of the set's nibble order.
  void order_to_front(uint64_t set, uint32_t w) { m_order[set] = nibble_to_front(m_order[set], w); }
  void index_replace(uint64_t way, uint64_t line);
  void invalidate_indexed(uint64_t way);

  CacheConfig m_config;
  uint64_t m_sets;
  uint32_t m_ways;
  SetIndex m_set_index;
  bool m_indexed;  // find() through m_index instead of scanning the set

  std::vector<uint64_t> m_tags;   // line number, or kInvalid
  std::vector<uint32_t> m_key;    // low 32 bits of m_tags (+15 spare entries): the SIMD pre-filter
  std::vector<uint32_t> m_valid;  // valid sectors
  std::vector<uint32_t> m_dirty;  // dirty sectors
  std::vector<int16_t> m_tensor;  // tensor that brought the line in (for snapshots and stats)
  std::vector<uint32_t> m_mru;    // per set: global index of the way touched or filled last
  // Other sets of at most kScanWays ways keep a stamp per way (time of last use for LRU, of fill
  // for FIFO): a hit is one store, and a miss scans the set for an invalid way or the oldest stamp.
  std::vector<uint64_t> m_stamp;
  // LRU and FIFO sets of at most 16 ways instead keep their order in one word: nibble i is the way
  // at position i (0 = most recent use, or fill for FIFO), plus a bitmask of invalid ways, so the
  // victim is O(1) instead of a scan of the stamps.
  bool m_nibble = false;
  std::vector<uint64_t> m_order;
  std::vector<uint32_t> m_free;
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

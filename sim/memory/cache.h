// One set-associative cache level: configuration, tag store and replacement state.
//
// The Cache only answers structural questions (where is this line, which way to evict, install,
// invalidate); the Hierarchy (hierarchy.h) drives it and does all counting, so a reference model
// in the tests can check the same decisions.
//
// Layout choices for speed: tags, sector masks and list links are flat arrays indexed by
// set * ways + way; a power-of-two set count uses a mask, any other count a multiply-high by a
// precomputed reciprocal (no division); sets with more than kScanWays ways (fully-associative
// caches) find lines through a hash index instead of a linear scan. Each set remembers its most
// recently used way, so the hierarchy can recognise a repeat hit on it without a scan (mru()).
//
// Layout choice for memory: every per-way array starts all zero bytes, and the values are stored so
// that zero is an empty way (tags and tensors complemented, list links relative to the initial
// list). Large arrays are then fresh anonymous pages (ZeroedArray) that take no memory until a way
// on them is filled: a 508 MiB fully-associative L3 (8.3 M ways, 250 MB of tables) costs only what
// a trace touches.
#pragma once

#include "sim/memory/line_map.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
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

// The allocation behind ZeroedArray (cache.cpp): throws std::bad_alloc when the memory is refused.
void* zeroed_bytes(size_t bytes, bool& mapped);
void release_bytes(void* p, size_t bytes, bool mapped);

// A fixed-size array whose elements start as zero bytes. Large ones (≥ 1 MiB) are anonymous
// memory mapped fresh from the kernel: a page takes physical memory only once written, so a table
// sized for a huge cache costs what the simulation touches. Smaller ones come from calloc.
template <typename T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t count) : m_size(count) {
    m_data = static_cast<T*>(zeroed_bytes(count * sizeof(T), m_mapped));
  }
  ZeroedArray(const ZeroedArray& o) : ZeroedArray(o.m_size) {
    for (size_t i = 0; i < m_size; ++i) m_data[i] = o.m_data[i];
  }
  ZeroedArray(ZeroedArray&& o) noexcept { swap(o); }
  ZeroedArray& operator=(ZeroedArray o) noexcept {
    swap(o);
    return *this;
  }
  ~ZeroedArray() { release_bytes(m_data, m_size * sizeof(T), m_mapped); }

  T* data() { return m_data; }
  const T* data() const { return m_data; }
  T& operator[](size_t i) { return m_data[i]; }
  const T& operator[](size_t i) const { return m_data[i]; }
  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  size_t bytes() const { return m_size * sizeof(T); }

 private:
  void swap(ZeroedArray& o) noexcept {
    std::swap(m_data, o.m_data);
    std::swap(m_size, o.m_size);
    std::swap(m_mapped, o.m_mapped);
  }
  T* m_data = nullptr;
  size_t m_size = 0;
  bool m_mapped = false;
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
    const uint32_t key = stored_key(line);
    uint64_t match = m_ways <= 16 ? match_keys16(keys, m_ways, key) : match_keys(keys, m_ways, key);
    while (match != 0) {
      const uint64_t way = base + static_cast<uint64_t>(std::countr_zero(match));
      if (m_tags[way] == stored_tag(line)) return static_cast<int64_t>(way);
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
  // Nibble-order sets only: the way second in the set's order word (for LRU the second most
  // recent), a cheap first guess before find_in_set() when mru() missed — a loop alternating
  // between two lines of one set finds the other there. Any way is a correct guess to test.
  uint64_t second_way(uint64_t set) const { return set * m_ways + ((m_order[set] >> 4) & 15); }
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
    m_tags[way] = stored_tag(line);
    m_key[way] = stored_key(line);
    m_filled[way >> kBlockShift] = 1;
    m_valid[way] = valid_mask;
    m_dirty[way] = 0;
    m_tensor[way] = stored_tensor(tensor);
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
    if (m_tags[way] == 0) return;
    if (m_indexed) {
      invalidate_indexed(way);
      return;
    }
    m_tags[way] = 0;
    m_key[way] = 0;
    m_valid[way] = 0;
    m_dirty[way] = 0;
    m_tensor[way] = 0;
    if (!m_stamp.empty()) m_stamp[way] = 0;
    // Its place in the order no longer matters: free ways are chosen before the order is read. (A
    // division, but invalidations are rare: dirty evictions and back-invalidations.)
    if (m_nibble) m_free[way / m_ways] |= 1u << (way % m_ways);
  }

  uint64_t tag(uint64_t way) const { return ~m_tags[way]; }  // kInvalid for an empty way
  bool valid(uint64_t way) const { return m_tags[way] != 0; }
  // How the per-way arrays hold a line, its key and its tensor: complemented, so that an empty way
  // is all zero bytes (kInvalid → 0, tensor −1 → 0). Callers that read the arrays directly compare
  // stored values.
  static uint64_t stored_tag(uint64_t line) { return ~line; }
  static uint32_t stored_key(uint64_t line) { return ~static_cast<uint32_t>(line); }
  static int16_t stored_tensor(int16_t tensor) { return static_cast<int16_t>(~tensor); }
  uint32_t& valid_mask(uint64_t way) { return m_valid[way]; }
  uint32_t& dirty_mask(uint64_t way) { return m_dirty[way]; }
  uint32_t* dirty_masks() { return m_dirty.data(); }
  const uint64_t* stored_tags() const { return m_tags.data(); }  // stored_tag() per way
  const uint32_t* valid_masks() const { return m_valid.data(); }
  const uint32_t* mru_ways() const { return m_mru.data(); }
  uint32_t valid_mask(uint64_t way) const { return m_valid[way]; }
  uint32_t dirty_mask(uint64_t way) const { return m_dirty[way]; }
  int16_t tensor(uint64_t way) const { return stored_tensor(m_tensor[way]); }
  uint64_t total_ways() const { return m_tags.size(); }
  // Calls f(way) for every valid way, in increasing order. Blocks of 2^kBlockShift ways in which no
  // line was ever filled are skipped without being read: a scan of a huge, mostly empty cache
  // costs neither the time nor the memory of its untouched tables (reading a fresh page maps it).
  static constexpr uint32_t kBlockShift = 9;  // 512 ways: one 4 KiB page of tags
  template <typename F>
  void for_each_valid_way(F&& f) const {
    const uint64_t n = m_tags.size();
    for (uint64_t b = 0; (b << kBlockShift) < n; ++b) {
      if (m_filled[b] == 0) continue;
      const uint64_t end = std::min(n, (b + 1) << kBlockShift);
      for (uint64_t way = b << kBlockShift; way < end; ++way)
        if (m_tags[way] != 0) f(way);
    }
  }
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
  // Indexed sets' list links, stored XOR the initial list's (head = way W−1 … tail = way 0, so a
  // cold set fills ways 0, 1, 2, … in order), which makes a fresh set all zero bytes.
  uint32_t initial_next(uint32_t local) const { return local == 0 ? kNil : local - 1; }
  uint32_t initial_prev(uint32_t local) const { return local + 1 == m_ways ? kNil : local + 1; }
  uint32_t next_of(uint64_t base, uint32_t local) const {
    return m_next[base + local] ^ initial_next(local);
  }
  uint32_t prev_of(uint64_t base, uint32_t local) const {
    return m_prev[base + local] ^ initial_prev(local);
  }
  void set_next(uint64_t base, uint32_t local, uint32_t v) {
    m_next[base + local] = v ^ initial_next(local);
  }
  void set_prev(uint64_t base, uint32_t local, uint32_t v) {
    m_prev[base + local] = v ^ initial_prev(local);
  }
  void index_replace(uint64_t way, uint64_t line);
  void invalidate_indexed(uint64_t way);

  CacheConfig m_config;
  uint64_t m_sets;
  uint32_t m_ways;
  SetIndex m_set_index;
  bool m_indexed;  // find() through m_index instead of scanning the set

  // Per way, zero = empty (see stored_tag()):
  ZeroedArray<uint64_t> m_tags;   // stored_tag(line): ~line, or 0
  ZeroedArray<uint32_t> m_key;    // stored_key(line) (+15 spare entries): the SIMD pre-filter
  ZeroedArray<uint32_t> m_valid;  // valid sectors
  ZeroedArray<uint32_t> m_dirty;  // dirty sectors
  ZeroedArray<int16_t> m_tensor;  // stored_tensor() of the tensor that brought the line in
  ZeroedArray<uint8_t> m_filled;  // per block of 2^kBlockShift ways: 1 once a line was filled there
  std::vector<uint32_t> m_mru;    // per set: global index of the way touched or filled last
  // Other sets of at most kScanWays ways keep a stamp per way (time of last use for LRU, of fill
  // for FIFO): a hit is one store, and a miss scans the set for an invalid way or the oldest stamp.
  ZeroedArray<uint64_t> m_stamp;
  // LRU and FIFO sets of at most 16 ways instead keep their order in one word: nibble i is the way
  // at position i (0 = most recent use, or fill for FIFO), plus a bitmask of invalid ways, so the
  // victim is O(1) instead of a scan of the stamps.
  bool m_nibble = false;
  std::vector<uint64_t> m_order;
  std::vector<uint32_t> m_free;
  uint64_t m_clock = 0;
  // Larger (indexed) sets keep a recency (LRU) or insertion (FIFO) list instead, head = most
  // recent, with invalid ways at the tail, so both "invalid way first" and the victim are O(1).
  ZeroedArray<uint32_t> m_prev, m_next;  // way-in-set indices, stored as set_next() says
  std::vector<uint32_t> m_head, m_tail;  // per set
  ZeroedArray<uint8_t> m_plru;           // per set: one byte per tree node (heap order)
  uint32_t m_plru_nodes = 0;
  uint64_t m_rng;
  LineMap m_index;
};

}  // namespace tilescope::memory

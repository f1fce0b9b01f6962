// The hierarchy's request path (split into sectors, hit/miss, evict, fill, write policies,
// back-invalidation), its level-0 fast path for repeat hits, and the side analyses it feeds.
#include "sim/memory/hierarchy.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace tilescope::memory {

namespace {
constexpr uint64_t kNoUnit = ~uint64_t{0};
}

Counters& Counters::operator+=(const Counters& o) {
  accesses += o.accesses;
  reads += o.reads;
  writes += o.writes;
  hits += o.hits;
  misses += o.misses;
  compulsory += o.compulsory;
  capacity += o.capacity;
  conflict += o.conflict;
  sector_misses += o.sector_misses;
  evictions += o.evictions;
  writebacks += o.writebacks;
  back_invalidations += o.back_invalidations;
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  return *this;
}

Counters with_totals(Counters c) {
  c.accesses = c.reads + c.writes;
  c.hits = c.accesses - c.misses;
  return c;
}

std::string HierarchyConfig::check() const {
  if (levels.empty()) return "a hierarchy needs at least one cache level";
  if (levels.size() > kMaxLevels)
    return "a hierarchy of " + std::to_string(levels.size()) + " cache levels is more than " +
           std::to_string(kMaxLevels) + " (real machines have 1 to 4)";
  uint64_t total_lines = 0;
  for (size_t k = 0; k < levels.size(); ++k) {
    if (std::string err = levels[k].check(); !err.empty()) return err;
    total_lines += levels[k].lines();
    if (total_lines > 2 * kMaxCacheLines)
      return "the cache levels hold " + std::to_string(total_lines) +
             " lines together, more than the simulator's limit of " +
             std::to_string(2 * kMaxCacheLines) + " (it keeps ~32 B per line)";
    if (k == 0 && levels[k].inclusion == Inclusion::Inclusive)
      return "cache level " + levels[k].name +
             ": the first level cannot be inclusive (there is no level above it to include)";
  }
  if (scratchpad) return scratchpad->check();
  return "";
}

// A level as the fast path sees it: the Cache's arrays (fixed in size after construction, so the
// pointers stay valid) and its geometry, with the replacement policy resolved once.
struct Hierarchy::FastLevel {
  enum class Order : uint8_t { NibbleLru, NibbleFifo, General };
  explicit FastLevel(Cache& c)
      : cache(&c),
        tags(c.m_tags.data()),
        key(c.m_key.data()),
        valid(c.m_valid.data()),
        dirty(c.m_dirty.data()),
        tensor(c.m_tensor.data()),
        filled(c.m_filled.data()),
        mru(c.m_mru.data()),
        order_words(c.m_order.data()),
        free(c.m_free.data()),
        set_of(c.set_index()),
        ways(c.ways()),
        line_shift(static_cast<uint32_t>(std::countr_zero(c.config().line_bytes))),
        line_bytes(c.config().line_bytes),
        last_nibble(4 * (c.ways() - 1)),
        order_mask(c.ways() >= 16 ? ~uint64_t{0} : (uint64_t{1} << (4 * c.ways())) - 1),
        order(order_of(c)) {}
  static Order order_of(const Cache& c) {
    if (!c.nibble_order()) return Order::General;
    return c.config().replacement == Replacement::LRU ? Order::NibbleLru : Order::NibbleFifo;
  }
  Cache* cache;
  // The Cache's per-way arrays as stored: tags, keys and tensors complemented (Cache::stored_tag),
  // so an empty way's tag is 0 and a line is compared as Cache::stored_tag(line).
  uint64_t* tags;
  uint32_t* key;
  uint32_t* valid;
  uint32_t* dirty;
  int16_t* tensor;
  uint8_t* filled;
  uint32_t* mru;
  uint64_t* order_words;  // nibble levels only
  uint32_t* free;         // nibble levels only
  SetIndex set_of;
  uint32_t ways, line_shift, line_bytes;
  uint32_t last_nibble;  // shift of the order word's last (oldest) nibble
  uint64_t order_mask;   // the order word's nibbles in use (the others stay 0)
  Order order;
};

struct Hierarchy::Level {
  explicit Level(const CacheConfig& c) : cache(c) {}
  Cache cache;
  uint32_t sector_shift = 0;  // log2(sector bytes)
  uint32_t sector_bits = 0;   // log2(sectors per line)
  uint32_t sector_bytes = 0;
  uint32_t line_bytes = 0;
  bool write_back = true;
  bool write_allocate = true;
  bool inclusive = false;
  bool drop_writebacks = false;
  // Same-line fast path (level 0 only): the sector touched by the previous access and its way.
  uint64_t last_unit = kNoUnit;
  uint64_t last_way = 0;
  uint32_t last_sbit = 0;
};

Hierarchy::Hierarchy(HierarchyConfig config, HierarchyOptions options)
    : m_config(std::move(config)), m_options(options) {
  if (std::string err = m_config.check(); !err.empty()) throw std::invalid_argument(err);
  for (const CacheConfig& c : m_config.levels) {
    auto level = std::make_unique<Level>(c);
    level->sector_bytes = c.sector_size();
    level->line_bytes = c.line_bytes;
    level->sector_shift = static_cast<uint32_t>(std::countr_zero(c.sector_size()));
    level->sector_bits = static_cast<uint32_t>(std::countr_zero(c.line_bytes / c.sector_size()));
    level->write_back = c.write_policy == WritePolicy::WriteBack;
    level->write_allocate = c.write_allocate;
    level->inclusive = c.inclusion == Inclusion::Inclusive;
    level->drop_writebacks = !c.writebacks_to_next;
    m_levels.push_back(std::move(level));
  }
  if (options.classify_misses || options.reuse_distance) {
    // 3C: a unit (sector) is a compulsory miss on its first touch, and a same-size
    // fully-associative LRU cache would hit it exactly when its reuse distance is below the
    // level's capacity in units.
    std::vector<uint64_t> shadow_units;
    for (const CacheConfig& c : m_config.levels)
      shadow_units.push_back(c.size_bytes / c.sector_size());
    m_analysis =
        std::make_unique<AnalysisPipeline>(std::move(shadow_units), options.analysis_thread);
  }
  m_fast = !options.force_general_path;
  for (size_t k = 0; k < m_levels.size(); ++k) {
    const Level& L = *m_levels[k];
    // Lines no shorter than the level above's: every fill and write-back from above is then one
    // line here, so the fast path never splits a request.
    m_fast = m_fast && L.sector_bits == 0 && L.write_back && L.write_allocate && !L.inclusive &&
             !L.drop_writebacks && (k == 0 || L.line_bytes >= m_levels[k - 1]->line_bytes);
  }
  if (m_fast) {
    for (const auto& level : m_levels) m_fast_levels.emplace_back(level->cache);
    const bool common = std::has_single_bit(m_levels[0]->cache.sets()) &&
                        m_levels[0]->cache.config().line_bytes == 64;
    using Order = FastLevel::Order;
    switch (m_fast_levels[0].order) {
      case Order::NibbleLru:
        m_fast_batch = common ? &Hierarchy::fast_batch<true, int(Order::NibbleLru)>
                              : &Hierarchy::fast_batch<false, int(Order::NibbleLru)>;
        break;
      case Order::NibbleFifo:
        m_fast_batch = common ? &Hierarchy::fast_batch<true, int(Order::NibbleFifo)>
                              : &Hierarchy::fast_batch<false, int(Order::NibbleFifo)>;
        break;
      case Order::General:
        m_fast_batch = common ? &Hierarchy::fast_batch<true, int(Order::General)>
                              : &Hierarchy::fast_batch<false, int(Order::General)>;
        break;
    }
  }
  m_counters.assign(m_levels.size() + 1, std::vector<Counters>(1));
  m_row_data.resize(m_counters.size());
  grow_counters(0);
  if (m_config.scratchpad) m_scratchpad = std::make_unique<Scratchpad>(*m_config.scratchpad);
}

Hierarchy::~Hierarchy() = default;

void Hierarchy::grow_counters(size_t index) {
  m_rows = std::max(m_rows, index + 1);
  for (size_t k = 0; k < m_counters.size(); ++k) {
    m_counters[k].resize(m_rows);
    m_row_data[k] = m_counters[k].data();
  }
}

// [SECTION] Hot path

void Hierarchy::access_batch(const Access* accesses, size_t count) {
  m_trace_accesses += count;
  if (m_fast) {
    (this->*m_fast_batch)(accesses, count);
    return;
  }
  Level& l0 = *m_levels.front();
  const uint32_t shift = l0.sector_shift;
  const uint32_t sector_bits = l0.sector_bits;
  const uint64_t sector_mask = (uint64_t{1} << sector_bits) - 1;
  const bool write_back = l0.write_back;
  // A hit on the most recently used way of its set needs no replacement update (see Cache::mru()),
  // whatever other streams touched other sets in between — so the A/B/C streams of a loop nest
  // all take this path. The reuse distances (and the 3C split read from them) see every access.
  AnalysisPipeline* const analysis = m_analysis.get();
  const Cache& c0 = l0.cache;
  const SetIndex set_of = c0.set_index();
  const uint64_t* const tags = c0.stored_tags();
  const uint32_t* const valid = c0.valid_masks();
  const uint32_t* const mru = c0.mru_ways();
  const bool nibble = c0.nibble_order();
  uint32_t* const dirty = l0.cache.dirty_masks();
  // The fast path's state lives in locals: through members, every counter store (uint64_t)
  // could alias them and force reloads. They are refreshed after each slow-path access.
  uint64_t last_unit = l0.last_unit, last_way = l0.last_way;
  uint32_t last_sbit = l0.last_sbit;
  Counters* counters = m_row_data[0];
  size_t tensors = m_rows;
  for (size_t i = 0; i < count; ++i) {
    const Access& a = accesses[i];
    const bool write = a.kind == AccessKind::Write;
    const uint64_t unit = a.addr >> shift;
    const uint64_t last = (a.addr + a.size - 1) >> shift;
    // A hit that changes no replacement state, so only counters (and the dirty bit) move.
    if (last == unit && (!write || write_back) && a.space == AddressSpace::Global) {
      const size_t t = a.tensor < 0 ? 0 : static_cast<size_t>(a.tensor) + 1;
      bool hit;
      uint64_t way;
      uint32_t sbit;
      // First the cheapest test, a repeat of the last slow-path sector: fast-path hits change
      // no replacement state, so that sector is still its set's most recent.
      if (unit == last_unit) {
        hit = true;
        way = last_way;
        sbit = last_sbit;
      } else {
        const uint64_t line = unit >> sector_bits;
        const uint64_t set = set_of(line);
        way = mru[set];
        sbit = 1u << (unit & sector_mask);
        hit = tags[way] == Cache::stored_tag(line) && (valid[way] & sbit) != 0;
        if (!hit) {
          // A hit on another way of the set: unit_access's hit path without its generality (the
          // replacement update, then the counters below). The line becomes its set's most
          // recent, so it is the new "last slow-path sector".
          const uint64_t second = nibble ? c0.second_way(set) : 0;
          const int64_t found = nibble && tags[second] == Cache::stored_tag(line)
                                    ? int64_t(second)
                                    : c0.find_in_set(set, line);
          if (found >= 0 && (valid[found] & sbit) != 0 && t < tensors) {
            l0.cache.touch_in_set(set, uint64_t(found));
            hit = true;
            way = uint64_t(found);
            l0.last_unit = last_unit = unit;
            l0.last_way = last_way = way;
            l0.last_sbit = last_sbit = sbit;
          }
        }
      }
      if (hit && t < tensors) [[likely]] {
        Counters& c = counters[t];
        if (write) {
          ++c.writes;
          c.write_bytes += a.size;
          dirty[way] |= sbit;
        } else {
          ++c.reads;
          c.read_bytes += a.size;
        }
        if (analysis) analysis->record(0, unit, AnalysisPipeline::kHit);
        continue;
      }
    }
    if (a.space == AddressSpace::Shared) [[unlikely]] {
      shared_access(a);
      continue;
    }
    if (a.size == 0) [[unlikely]]
      continue;
    if (last == unit) {
      unit_access(0, unit, a.addr, a.size, write, a.tensor);
    } else {
      request(0, a.addr, a.size, write, a.tensor);
    }
    last_unit = l0.last_unit;
    last_way = l0.last_way;
    last_sbit = l0.last_sbit;
    counters = m_row_data[0];
    tensors = m_rows;
  }
}

// [SECTION] Fast path
//
// The general path (request → unit_access → evict) specialised for fast_path() configurations:
// one line per level, so no sector masks; no side analyses; no inclusion; write-back and
// write-allocate. Every counter and every replacement decision is the general path's, in the same
// order (a dirty victim's write-back reaches the level below before this access's fetch does).
//
// Shape, from the profile of bench-sim (b) (a tiled GEMM whose B stream misses L1 on every access
// and finds its line on its L2 set's most recent way): the batch loop keeps only what a hit needs
// in registers; everything else is one out-of-line call (fast_miss0) that holds level 0's lookup,
// victim and install for its replacement order and the next level's most-recent-way test inline,
// so the common miss costs one call frame. Counter rows are checked once per access there: all
// levels have the same rows (grow_counters), and a victim's tensor had its row when it was filled.

namespace {

// Counts one access at a level. `accesses` and `hits` are derived when read (with_totals).
[[gnu::always_inline]] inline void count_access(Counters& c, uint32_t bytes, bool write, bool hit) {
  if (write) {
    ++c.writes;
    c.write_bytes += bytes;
  } else {
    ++c.reads;
    c.read_bytes += bytes;
  }
  if (!hit) ++c.misses;
}

}  // namespace

// One access of `bytes` at level k to `line` (counter row `row`), after the caller found it not
// on the set's most recent way (or did not look): counts it, and on a hit updates the replacement
// state and dirty bit; on a miss evicts (writing a dirty victim back below) and installs the line.
// Returns whether it hit; `way` receives the line's way. `order` is a FastLevel::Order.
template <int order>
[[gnu::always_inline]] inline bool Hierarchy::fast_lookup(const FastLevel& F, size_t k,
                                                          uint64_t line, uint32_t bytes, bool write,
                                                          int16_t tensor, size_t row,
                                                          uint64_t& way) {
  constexpr bool nibble = order != static_cast<int>(FastLevel::Order::General);
  constexpr bool lru = order == static_cast<int>(FastLevel::Order::NibbleLru);
  Counters* const rows = m_row_data[k];
  const uint64_t set = F.set_of(line);
  bool hit = false;
  if constexpr (nibble) {
    // LRU / FIFO in nibble order, ≤ 16 ways: Cache::touch_in_set, victim and install_in_set.
    const uint32_t ways = F.ways;
    uint64_t* const tags = F.tags;
    const uint64_t stored = Cache::stored_tag(line);
    const uint64_t base = set * ways;
    uint64_t match = match_keys16(F.key + base, ways, Cache::stored_key(line));
    while (match != 0) {
      way = base + static_cast<uint64_t>(std::countr_zero(match));
      if (tags[way] == stored) {
        hit = true;
        break;
      }
      match &= match - 1;
    }
    if (hit) {
      F.mru[set] = static_cast<uint32_t>(way);
      if constexpr (lru)
        F.order_words[set] =
            Cache::nibble_to_front(F.order_words[set], static_cast<uint32_t>(way - base));
      if (write) F.dirty[way] = 1;
    } else {
      const uint32_t free = F.free[set];
      const uint64_t order_word = F.order_words[set];
      const uint32_t local = free != 0 ? static_cast<uint32_t>(std::countr_zero(free))
                                       : static_cast<uint32_t>(order_word >> F.last_nibble) & 15;
      way = base + local;
      if (tags[way] == 0) [[unlikely]] {
        // A way's first fill: its block of the tables is in use from now on (for_each_valid_way).
        F.filled[way >> Cache::kBlockShift] = 1;
      } else {
        // evict() of a non-inclusive level. The way is not emptied first (as evict() does for a
        // dirty victim): nothing below looks at this level, and the install overwrites every
        // field, leaving exactly the state invalidate-then-install leaves. The level below never
        // touches this one, so the order word read above is still this set's.
        const int16_t vtensor = Cache::stored_tensor(F.tensor[way]);
        Counters& v = rows[row_of(vtensor)];
        ++v.evictions;
        if (F.dirty[way] != 0) [[unlikely]] {
          ++v.writebacks;
          fast_access(k + 1, ~tags[way] << F.line_shift, F.line_bytes, true, vtensor);
        }
      }
      F.mru[set] = static_cast<uint32_t>(way);
      tags[way] = stored;
      F.key[way] = Cache::stored_key(line);
      F.valid[way] = 1;
      F.dirty[way] = write ? 1 : 0;
      F.tensor[way] = Cache::stored_tensor(tensor);
      F.free[set] = free & ~(1u << local);
      // A full set's victim is its last nibble: moving it to the front shifts the whole word
      // (what nibble_to_front computes, without finding the position).
      F.order_words[set] = free != 0 ? Cache::nibble_to_front(order_word, local)
                                     : ((order_word << 4) | local) & F.order_mask;
    }
  } else {
    // Other policies and geometries: the Cache's own calls.
    Cache& cache = *F.cache;
    const int64_t found = cache.find_in_set(set, line);
    hit = found >= 0;
    if (hit) {
      way = static_cast<uint64_t>(found);
      cache.touch_in_set(set, way);
      if (write) cache.dirty_mask(way) = 1;
    } else {
      way = cache.victim(set);
      if (cache.valid(way)) {
        const int16_t vtensor = cache.tensor(way);
        const uint32_t dirty = cache.dirty_mask(way);
        Counters& v = rows[row_of(vtensor)];
        ++v.evictions;
        if (dirty != 0 || cache.indexed()) {
          const uint64_t vaddr = cache.tag(way) << F.line_shift;
          cache.invalidate(way);
          if (dirty != 0) {
            ++v.writebacks;
            fast_access(k + 1, vaddr, F.line_bytes, true, vtensor);
          }
        }
      }
      cache.install_in_set(set, way, line, 1, tensor);
      if (write) cache.dirty_mask(way) = 1;
    }
  }
  // The row pointer again: a write-back below may have grown the rows (it cannot: its tensor's row
  // exists, but reloading costs one load and keeps the rule local).
  count_access(m_row_data[k][row], bytes, write, hit);
  note(k, line, hit, row);
  return hit;
}

// fast_lookup() with the level's replacement order chosen at run time.
bool Hierarchy::fast_lookup_any(const FastLevel& F, size_t k, uint64_t line, uint32_t bytes,
                                bool write, int16_t tensor, size_t row, uint64_t& way) {
  switch (F.order) {
    case FastLevel::Order::NibbleLru:
      return fast_lookup<static_cast<int>(FastLevel::Order::NibbleLru)>(F, k, line, bytes, write,
                                                                        tensor, row, way);
    case FastLevel::Order::NibbleFifo:
      return fast_lookup<static_cast<int>(FastLevel::Order::NibbleFifo)>(F, k, line, bytes, write,
                                                                         tensor, row, way);
    case FastLevel::Order::General:
      break;
  }
  return fast_lookup<static_cast<int>(FastLevel::Order::General)>(F, k, line, bytes, write, tensor,
                                                                  row, way);
}

// access_batch() for fast_path() hierarchies. The loop handles what needs no replacement update
// — a repeat of the last line looked up, or a hit on its set's most recent way: counters and the
// dirty bit only — with few enough live values to stay in registers; everything else goes out of
// line to fast_miss0(). Compiled per level 0: its geometry (64 B lines and a power-of-two set
// count, as constants and a mask, or anything else) and replacement order (fast_miss0's lookup).
template <bool common, int order>
void Hierarchy::fast_batch(const Access* accesses, size_t count) {
  Level& l0 = *m_levels.front();
  const FastLevel& f0 = m_fast_levels[0];
  // The common level 0 (64 B lines, a power-of-two set count) with its geometry as constants:
  // fewer live values in the loop, so fewer of them spill.
  const uint32_t shift = common ? 6 : f0.line_shift;
  const uint64_t line_bytes = common ? 64 : f0.line_bytes;
  const uint64_t offset_mask = line_bytes - 1;
  const SetIndex set_index = f0.set_of;
  const uint64_t set_mask = f0.cache->sets() - 1;
  const auto set_of = [&](uint64_t line) {
    if constexpr (common)
      return line & set_mask;
    else
      return set_index(line);
  };
  const uint64_t* const tags = f0.tags;
  uint32_t* const mru = f0.mru;
  uint32_t* const dirty = f0.dirty;
  AnalysisPipeline* const analysis = m_analysis.get();
  uint64_t last_line = l0.last_unit, last_way = l0.last_way;
  Counters* counters = m_row_data[0];
  size_t rows = m_rows;
  for (size_t i = 0; i < count; ++i) {
    const Access& a = accesses[i];
    const uint64_t addr = a.addr;
    const uint64_t line = addr >> shift;
    const uint64_t stored = Cache::stored_tag(line);
    // Within one line and not empty (size − 1 wraps to 2^32 − 1 for size 0).
    const bool one_line = (addr & offset_mask) + static_cast<uint32_t>(a.size - 1) < line_bytes;
    if (!one_line || a.space != AddressSpace::Global) [[unlikely]] {
      if (a.space == AddressSpace::Shared) {
        shared_access(a);
      } else if (a.size != 0) {
        request(0, a.addr, a.size, a.kind == AccessKind::Write, a.tensor);  // spans lines
        last_line = l0.last_unit;
        last_way = l0.last_way;
        counters = m_row_data[0];
        rows = m_rows;
      }
      continue;
    }
    const bool write = a.kind == AccessKind::Write;
    // row_of() without a branch: −1 → 0, t ≥ 0 → t + 1; anything below −1 wraps past the rows and
    // goes out of line, where row_of() files it under row 0.
    const size_t row = static_cast<uint16_t>(a.tensor + 1);
    uint64_t way;
    bool hit;
    if (line == last_line) {
      way = last_way;
      hit = true;
    } else {
      const uint64_t set = set_of(line);
      way = mru[set];
      hit = tags[way] == stored;  // whole lines: a present line is valid
      if constexpr (order != static_cast<int>(FastLevel::Order::General)) {
        // The way second in the set's order (for LRU the second most recent): a loop alternating
        // two lines of one set finds the other there. A hit moves it to the front (LRU) and makes
        // it the set's most recent, so it is the new last line looked up.
        if (!hit && row < rows) {
          const uint64_t base = set * f0.ways;
          const uint64_t order_word = f0.order_words[set];
          const uint32_t second = static_cast<uint32_t>(order_word >> 4) & 15;
          if (tags[base + second] == stored) {
            way = base + second;
            hit = true;
            mru[set] = static_cast<uint32_t>(way);
            if constexpr (order == static_cast<int>(FastLevel::Order::NibbleLru))
              f0.order_words[set] = Cache::nibble_to_front(order_word, second);
            last_line = line;
            last_way = way;
          }
        }
      }
    }
    if (hit && row < rows) [[likely]] {
      Counters& c = counters[row];
      if (write) {
        ++c.writes;
        c.write_bytes += a.size;
        dirty[way] = 1;
      } else {
        ++c.reads;
        c.read_bytes += a.size;
      }
      if (analysis) analysis->record(0, line, AnalysisPipeline::kHit);
      continue;
    }
    last_way = fast_miss0<order>(line, a.size, write, a.tensor);
    last_line = line;
    counters = m_row_data[0];
    rows = m_rows;
  }
  l0.last_unit = last_line;
  l0.last_way = last_way;
  l0.last_sbit = 1;
}

// Level 0's full lookup for fast_batch() and, on a miss, the fetch from below, whose first level is
// tested here for a hit on its set's most recent way (no replacement update: only counters).
// Returns level 0's way for the line. `order` is level 0's FastLevel::Order.
template <int order>
[[gnu::noinline]] uint64_t Hierarchy::fast_miss0(uint64_t line, uint32_t bytes, bool write,
                                                 int16_t tensor) {
  const size_t row = row_of(tensor);
  if (row >= m_rows) [[unlikely]]
    grow_counters(row);
  const FastLevel& f0 = m_fast_levels[0];
  uint64_t way = 0;
  bool hit = false;
  if constexpr (order == static_cast<int>(FastLevel::Order::General))
    hit = fast_lookup_any(f0, 0, line, bytes, write, tensor, row, way);
  else
    hit = fast_lookup<order>(f0, 0, line, bytes, write, tensor, row, way);
  // A write covering the whole line has nothing to merge, so it fetches nothing.
  if (hit || (write && bytes == f0.line_bytes)) return way;
  const uint64_t addr = line << f0.line_shift;
  if (m_fast_levels.size() > 1) {
    // A B line's fill in the tiled GEMM nearly always finds its L2 line here: one L2 line serves
    // 16 consecutive j, and little else touches that set in between.
    const FastLevel& f1 = m_fast_levels[1];
    const uint64_t line1 = addr >> f1.line_shift;
    if (f1.tags[f1.mru[f1.set_of(line1)]] == Cache::stored_tag(line1)) {
      count_access(m_row_data[1][row], f0.line_bytes, false, true);
      note(1, line1, true, row);
      return way;
    }
  }
  fast_access(1, addr, f0.line_bytes, false, tensor);
  return way;
}

// An access at level k (≥ 1) and, while it misses, the fetch from each level below: a loop, not a
// call per level. Only a dirty victim's write-back recurses.
void Hierarchy::fast_access(size_t k, uint64_t addr, uint32_t bytes, bool write, int16_t tensor) {
  const size_t levels = m_levels.size();
  const size_t row = row_of(tensor);
  if (row >= m_rows) [[unlikely]]
    grow_counters(row);
  for (;; ++k) {
    if (k == levels) {
      memory_access(bytes, write, tensor);
      return;
    }
    const FastLevel& F = m_fast_levels[k];
    const uint64_t line = addr >> F.line_shift;
    // The set's most recent way: a hit there changes no replacement state (Cache::mru()).
    uint64_t way = F.mru[F.set_of(line)];
    bool hit = F.tags[way] == Cache::stored_tag(line);
    if (hit) {
      if (write) F.dirty[way] = 1;
      count_access(m_row_data[k][row], bytes, write, true);
      note(k, line, true, row);
    } else {
      hit = fast_lookup_any(F, k, line, bytes, write, tensor, row, way);
    }
    if (hit || (write && bytes == F.line_bytes)) return;
    addr = line << F.line_shift;
    bytes = F.line_bytes;
    write = false;
  }
}

// Main memory always "hits": it counts the request and its bytes (both paths end here).
void Hierarchy::memory_access(uint32_t bytes, bool write, int16_t tensor) {
  Counters& c = counter(m_levels.size(), tensor);
  if (write) {
    ++c.writes;
    c.write_bytes += bytes;
  } else {
    ++c.reads;
    c.read_bytes += bytes;
  }
}

void Hierarchy::request(size_t k, uint64_t addr, uint32_t size, bool write, int16_t tensor) {
  if (k == m_levels.size()) {
    memory_access(size, write, tensor);
    return;
  }
  const Level& L = *m_levels[k];
  const uint64_t end = addr + size;
  const uint64_t first = addr >> L.sector_shift, last = (end - 1) >> L.sector_shift;
  if (first == last) {  // the common case: a fill or write-back of one sector
    unit_access(k, first, addr, size, write, tensor);
    return;
  }
  for (uint64_t u = first; u <= last; ++u) {
    uint64_t lo = std::max(addr, u << L.sector_shift);
    uint64_t hi = std::min(end, (u + 1) << L.sector_shift);
    unit_access(k, u, lo, static_cast<uint32_t>(hi - lo), write, tensor);
  }
}

void Hierarchy::unit_access(size_t k, uint64_t unit, uint64_t addr, uint32_t bytes, bool write,
                            int16_t tensor) {
  Level& L = *m_levels[k];
  Cache& cache = L.cache;
  Counters* c = &counter(k, tensor);
  if (write) {
    ++c->writes;
    c->write_bytes += bytes;
  } else {
    ++c->reads;
    c->read_bytes += bytes;
  }
  const uint64_t line = unit >> L.sector_bits;
  const uint32_t sbit = 1u << (unit & ((1u << L.sector_bits) - 1));
  const uint64_t sector_addr = unit << L.sector_shift;
  const uint64_t set = cache.set_of(line);
  int64_t found = cache.find_in_set(set, line);
  if (found >= 0 && (cache.valid_mask(found) & sbit)) {
    note(k, unit, true, 0);
    cache.touch_in_set(set, found);
    if (write) {
      if (L.write_back) {
        cache.dirty_mask(found) |= sbit;
      } else {
        request(k + 1, addr, bytes, true, tensor);
      }
    }
    if (k == 0) {
      L.last_unit = unit;
      L.last_way = found;
      L.last_sbit = sbit;
    }
    return;
  }

  ++c->misses;
  note(k, unit, false, row_of(tensor));
  const bool fetch = !(write && bytes == L.sector_bytes);
  uint64_t way;
  if (found >= 0) {
    // The line is here but this sector is not: fill the sector, no eviction.
    ++c->sector_misses;
    way = static_cast<uint64_t>(found);
    cache.valid_mask(way) |= sbit;
    cache.touch_in_set(set, way);
  } else {
    if (write && !L.write_allocate) {
      if (k == 0) L.last_unit = kNoUnit;
      request(k + 1, addr, bytes, true, tensor);
      return;
    }
    way = cache.victim(set);
    if (cache.valid(way)) evict(k, way);
    cache.install_in_set(set, way, line, sbit, tensor);
  }
  if (k == 0) {
    // Set before the fetch: a back-invalidation during it resets this if it hits level 0.
    L.last_unit = unit;
    L.last_way = way;
    L.last_sbit = sbit;
  }
  if (fetch) request(k + 1, sector_addr, L.sector_bytes, false, tensor);
  if (write) {
    if (L.write_back) {
      cache.dirty_mask(way) |= sbit;
    } else {
      request(k + 1, addr, bytes, true, tensor);
    }
  }
}

void Hierarchy::evict(size_t k, uint64_t way) {
  Level& L = *m_levels[k];
  Cache& cache = L.cache;
  const uint64_t vline = cache.tag(way);
  const int16_t vtensor = cache.tensor(way);
  const uint64_t vaddr = vline * L.line_bytes;
  uint32_t dirty = cache.dirty_mask(way);
  const uint32_t valid = cache.valid_mask(way);
  Counters& c = counter(k, vtensor);
  ++c.evictions;
  // A clean victim of a scanned set in a non-inclusive level sends nothing below, and the caller
  // installs over every field of the way next, so emptying it first would be wasted stores.
  if (dirty == 0 && !L.inclusive && !cache.indexed()) return;
  // Invalidate before anything goes below: requests there may come back up as invalidations.
  cache.invalidate(way);
  if (L.inclusive && back_invalidate(k, vaddr, L.line_bytes)) dirty = valid;
  if (dirty == 0) return;
  ++counter(k, vtensor).writebacks;
  if (L.drop_writebacks) return;
  for (uint32_t s = 0; s < 32; ++s)
    if (dirty & (1u << s))
      request(k + 1, vaddr + uint64_t{s} * L.sector_bytes, L.sector_bytes, true, vtensor);
}

bool Hierarchy::back_invalidate(size_t k, uint64_t addr, uint32_t bytes) {
  bool any_dirty = false;
  for (size_t j = 0; j < k; ++j) {
    Level& U = *m_levels[j];
    uint64_t first = addr / U.line_bytes, last = (addr + bytes - 1) / U.line_bytes;
    for (uint64_t line = first; line <= last; ++line) {
      int64_t way = U.cache.find(line);
      if (way < 0) continue;
      Counters& c = counter(j, U.cache.tensor(way));
      ++c.back_invalidations;
      if (U.cache.dirty_mask(way) != 0) {
        // The dirty data moves down into the line being evicted below.
        ++c.writebacks;
        any_dirty = true;
      }
      U.cache.invalidate(way);
    }
    U.last_unit = kNoUnit;
  }
  return any_dirty;
}

// [SECTION] Steps, scratchpad, flush

void Hierarchy::step_boundary(uint64_t step) {
  flush_warp();
  if (m_on_step) m_on_step(step, *this);
}

void Hierarchy::finish() {
  flush_warp();
  if (m_analysis) m_analysis->drain();
}

void Hierarchy::shared_access(const Access& a) {
  if (!m_scratchpad)
    throw std::invalid_argument(
        "the trace has a shared-memory access but the "
        "machine has no scratchpad");
  const bool write = a.kind == AccessKind::Write;
  // Consecutive shared accesses of one warp, up to a warp's width, form one warp-wide request.
  if (!m_warp_lanes.empty() && (a.warp != m_warp_id || write != m_warp_write ||
                                m_warp_lanes.size() == m_scratchpad->config().warp_size))
    flush_warp();
  m_warp_id = a.warp;
  m_warp_write = write;
  m_warp_lanes.push_back({a.addr, a.size});
}

void Hierarchy::flush_warp() {
  if (m_warp_lanes.empty()) return;
  m_scratchpad->warp_access(m_warp_lanes, m_warp_write);
  m_warp_lanes.clear();
}

void Hierarchy::write_back_all() {
  for (size_t k = 0; k < m_levels.size(); ++k) {
    Level& L = *m_levels[k];
    Cache& cache = L.cache;
    // Requests go to the levels below only (a back-invalidation there may empty ways here, which
    // the scan then finds empty), so the scan order is way order, as it always was.
    cache.for_each_valid_way([&](uint64_t way) {
      const uint32_t dirty = cache.dirty_mask(way);
      if (!cache.valid(way) || dirty == 0) return;
      const int16_t t = cache.tensor(way);
      ++counter(k, t).writebacks;
      cache.dirty_mask(way) = 0;
      if (L.drop_writebacks) return;
      const uint64_t vaddr = cache.tag(way) * L.line_bytes;
      for (uint32_t s = 0; s < 32; ++s)
        if (dirty & (1u << s))
          request(k + 1, vaddr + uint64_t{s} * L.sector_bytes, L.sector_bytes, true, t);
    });
  }
}

// [SECTION] Queries

const Cache& Hierarchy::cache(int level) const {
  return m_levels.at(level)->cache;
}

void Hierarchy::set_estimate(const std::vector<std::vector<Counters>>& rows,
                             const ScratchpadStats& scratchpad, uint64_t trace_accesses) {
  if (rows.size() != m_counters.size())
    throw std::invalid_argument("Hierarchy::set_estimate: one row list per level and memory");
  if (m_analysis) m_analysis->drain();
  for (size_t k = 0; k < rows.size(); ++k) {
    m_counters[k] = rows[k];
    m_rows = std::max(m_rows, rows[k].size());
  }
  grow_counters(m_rows - 1);
  if (m_scratchpad) m_scratchpad->set_stats(scratchpad);
  m_trace_accesses = trace_accesses;
}

std::vector<Counters> Hierarchy::counters_by_tensor(int level) const {
  std::vector<Counters> rows = m_counters.at(level);
  if (m_analysis) m_analysis->drain();
  for (size_t i = 0; i < rows.size(); ++i) {
    Counters& c = rows[i];
    if (m_analysis && size_t(level) < m_levels.size()) {
      const AnalysisPipeline::Split s = m_analysis->split(size_t(level), i);
      c.compulsory = s.compulsory;
      c.capacity = s.capacity;
      c.conflict = s.conflict;
    }
    c = with_totals(c);
  }
  return rows;
}

Counters Hierarchy::counters(int level) const {
  Counters sum;
  for (const Counters& c : counters_by_tensor(level)) sum += c;
  return sum;
}

Counters Hierarchy::counters(int level, int tensor) const {
  const std::vector<Counters> v = counters_by_tensor(level);
  size_t i = tensor < 0 ? 0 : static_cast<size_t>(tensor) + 1;
  return i < v.size() ? v[i] : Counters{};
}

int Hierarchy::max_tensor() const {
  size_t n = 0;
  for (const auto& v : m_counters) n = std::max(n, v.size());
  return static_cast<int>(n) - 2;
}

size_t Hierarchy::cache_memory_bytes() const {
  size_t bytes = 0;
  for (const auto& level : m_levels) bytes += level->cache.memory_bytes();
  return bytes;
}

const ReuseDistance* Hierarchy::reuse(int level) const {
  if (!m_options.reuse_distance || level < 0 || size_t(level) >= m_levels.size()) return nullptr;
  m_analysis->drain();
  return &m_analysis->reuse(size_t(level));
}

std::vector<ResidentLine> Hierarchy::resident_lines(int level) const {
  const Level& L = *m_levels.at(level);
  std::vector<ResidentLine> out;
  L.cache.for_each_valid_way([&](uint64_t way) {
    out.push_back({L.cache.tag(way) * L.line_bytes, L.line_bytes, L.cache.tensor(way),
                   L.cache.valid_mask(way), L.cache.dirty_mask(way)});
  });
  return out;
}

}  // namespace tilescope::memory

// Tag store and replacement policies (LRU, FIFO, random, tree-PLRU) of one cache level.
#include "sim/memory/cache.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <new>
#include <stdexcept>

namespace tilescope::memory {

const char* replacement_name(Replacement r) {
  switch (r) {
    case Replacement::LRU:
      return "lru";
    case Replacement::FIFO:
      return "fifo";
    case Replacement::Random:
      return "random";
    case Replacement::TreePLRU:
      return "plru";
  }
  return "?";
}

const char* write_policy_name(WritePolicy w) {
  return w == WritePolicy::WriteBack ? "write-back" : "write-through";
}

const char* inclusion_name(Inclusion i) {
  return i == Inclusion::Inclusive ? "inclusive" : "non-inclusive";
}

uint32_t CacheConfig::effective_ways() const {
  if (ways != 0) return ways;
  uint64_t n = lines();
  return n > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<uint32_t>(n);
}

std::string CacheConfig::check() const {
  auto fail = [&](const std::string& what) { return "cache level " + name + ": " + what; };
  if (line_bytes == 0 || !std::has_single_bit(line_bytes))
    return fail("line size " + std::to_string(line_bytes) + " B is not a power of two");
  uint32_t sector = sector_size();
  if (!std::has_single_bit(sector))
    return fail("sector size " + std::to_string(sector) + " B is not a power of two");
  if (sector > line_bytes)
    return fail("sector size " + std::to_string(sector) + " B is larger than the line (" +
                std::to_string(line_bytes) + " B)");
  if (line_bytes / sector > 32)
    return fail("a line may have at most 32 sectors (" + std::to_string(line_bytes) + " B / " +
                std::to_string(sector) + " B = " + std::to_string(line_bytes / sector) + ")");
  if (size_bytes == 0 || size_bytes % line_bytes != 0)
    return fail("size " + std::to_string(size_bytes) + " B is not a whole number of " +
                std::to_string(line_bytes) + " B lines");
  if (line_bytes > kMaxLineBytes)
    return fail("line size " + std::to_string(line_bytes) + " B is larger than " +
                std::to_string(kMaxLineBytes / 1024) + " KiB");
  if (lines() > kMaxCacheLines)
    return fail(std::to_string(lines()) + " lines (" + std::to_string(size_bytes) + " B / " +
                std::to_string(line_bytes) + " B) is more than the simulator's limit of " +
                std::to_string(kMaxCacheLines) + " lines a level (it keeps ~32 B per line)");
  if (ways > kMaxWays)
    return fail(std::to_string(ways) + " ways is more than " + std::to_string(kMaxWays) +
                " (write `ways = full` for a fully associative level)");
  uint32_t w = effective_ways();
  if (lines() % w != 0)
    return fail(std::to_string(lines()) + " lines do not divide into sets of " + std::to_string(w) +
                " ways");
  return "";
}

void* zeroed_bytes(size_t bytes, bool& mapped) {
  mapped = false;
  if (bytes == 0) return nullptr;
  if (bytes >= (size_t{1} << 20)) {
    // Fresh anonymous pages read as zero and take memory only when written (calloc may reuse
    // and clear heap memory, touching every page).
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    mapped = true;
    return p;
  }
  void* p = std::calloc(bytes, 1);
  if (!p) throw std::bad_alloc();
  return p;
}

void release_bytes(void* p, size_t bytes, bool mapped) {
  if (!p) return;
  if (mapped)
    munmap(p, bytes);
  else
    std::free(p);
}

Cache::Cache(const CacheConfig& config) : m_config(config) {
  if (std::string err = config.check(); !err.empty()) throw std::invalid_argument(err);
  m_ways = config.effective_ways();
  m_sets = config.sets();
  m_set_index = SetIndex(m_sets);
  m_indexed = m_ways > kScanWays;
  uint64_t n = m_sets * m_ways;
  // All ways empty: zero bytes (see stored_tag()), nothing written here.
  m_tags = ZeroedArray<uint64_t>(n);
  m_key = ZeroedArray<uint32_t>(n + 15);  // + 15: see match_keys16()
  m_valid = ZeroedArray<uint32_t>(n);
  m_dirty = ZeroedArray<uint32_t>(n);
  m_tensor = ZeroedArray<int16_t>(n);
  m_filled = ZeroedArray<uint8_t>((n >> kBlockShift) + 1);
  // Way 0 of each set: invalid, so no line matches it until something is filled.
  m_mru.resize(m_sets);
  for (uint64_t s = 0; s < m_sets; ++s) m_mru[s] = static_cast<uint32_t>(s * m_ways);
  if (m_indexed) {
    // Initial list: head = way W-1 … tail = way 0 (zero bytes in the XOR-stored links).
    m_prev = ZeroedArray<uint32_t>(n);
    m_next = ZeroedArray<uint32_t>(n);
    m_head.assign(m_sets, m_ways - 1);
    m_tail.assign(m_sets, 0);
  } else if (config.replacement == Replacement::LRU || config.replacement == Replacement::FIFO) {
    if (m_ways <= 16) {
      m_nibble = true;
      // Any permutation of the ways will do as the starting order: a cold set fills its invalid
      // ways (lowest first) before the order is consulted.
      uint64_t order = 0;
      for (uint32_t i = 0; i < m_ways; ++i) order |= uint64_t{i} << (4 * i);
      m_order.assign(m_sets, order);
      m_free.assign(m_sets, m_ways == 32 ? ~0u : (1u << m_ways) - 1);
    } else {
      m_stamp = ZeroedArray<uint64_t>(n);
    }
  }
  if (config.replacement == Replacement::TreePLRU) {
    m_plru_nodes = 2 * std::bit_ceil(m_ways);
    m_plru = ZeroedArray<uint8_t>(m_sets * m_plru_nodes);
  }
  m_rng = config.seed == 0 ? 0x9E3779B97F4A7C15ull : config.seed;
  if (m_indexed) m_index = LineMap(1024);
}

size_t Cache::memory_bytes() const {
  return m_tags.bytes() + m_key.bytes() + m_stamp.bytes() + m_mru.capacity() * 4 +
         m_order.capacity() * 8 + m_free.capacity() * 4 + m_valid.bytes() + m_dirty.bytes() +
         m_tensor.bytes() + m_filled.bytes() + m_prev.bytes() + m_next.bytes() +
         (m_head.capacity() + m_tail.capacity()) * 4 + m_plru.bytes() + m_index.memory_bytes();
}

void Cache::unlink(uint64_t set, uint64_t way) {
  const uint64_t base = set * m_ways;
  const uint32_t local = static_cast<uint32_t>(way - base);
  const uint32_t p = prev_of(base, local), x = next_of(base, local);
  if (p != kNil)
    set_next(base, p, x);
  else
    m_head[set] = x;
  if (x != kNil)
    set_prev(base, x, p);
  else
    m_tail[set] = p;
}

void Cache::move_to_head(uint64_t set, uint64_t way) {
  const uint64_t base = set * m_ways;
  const uint32_t local = static_cast<uint32_t>(way - base);
  if (m_head[set] == local) return;
  unlink(set, way);
  set_prev(base, local, kNil);
  set_next(base, local, m_head[set]);
  set_prev(base, m_head[set], local);  // the list is never empty: `way` was just unlinked from it
  m_head[set] = local;
}

void Cache::move_to_tail(uint64_t set, uint64_t way) {
  const uint64_t base = set * m_ways;
  const uint32_t local = static_cast<uint32_t>(way - base);
  if (m_tail[set] == local) return;
  unlink(set, way);
  set_next(base, local, kNil);
  set_prev(base, local, m_tail[set]);
  set_next(base, m_tail[set], local);
  m_tail[set] = local;
}

// Tree-PLRU over any number of ways: node n covers ways [lo, hi); its left child (2n) covers the
// first ceil((hi-lo)/2) of them. A node's bit says which half holds the next victim (0 = left), and
// an access flips the bits on its path to point away from it. With a power-of-two count this is
// the textbook tree; other counts give a slightly unbalanced tree.
void Cache::plru_touch(uint64_t set, uint64_t way) {
  uint32_t w = static_cast<uint32_t>(way - set * m_ways);
  uint8_t* bits = m_plru.data() + set * m_plru_nodes;
  uint32_t node = 1, lo = 0, hi = m_ways;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (w < mid) {
      bits[node] = 1;
      node = 2 * node;
      hi = mid;
    } else {
      bits[node] = 0;
      node = 2 * node + 1;
      lo = mid;
    }
  }
}

uint32_t Cache::plru_victim(uint64_t set) const {
  const uint8_t* bits = m_plru.data() + set * m_plru_nodes;
  uint32_t node = 1, lo = 0, hi = m_ways;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo + 1) / 2;
    if (bits[node] == 0) {
      node = 2 * node;
      hi = mid;
    } else {
      node = 2 * node + 1;
      lo = mid;
    }
  }
  return lo;
}

uint64_t Cache::next_random() {
  // xorshift64*: small, fast and fully determined by the seed.
  m_rng ^= m_rng >> 12;
  m_rng ^= m_rng << 25;
  m_rng ^= m_rng >> 27;
  return m_rng * 0x2545F4914F6CDD1Dull;
}

uint64_t Cache::victim_slow(uint64_t set) {
  uint64_t base = set * m_ways;
  if (m_indexed) {
    uint64_t tail = base + m_tail[set];
    if (m_tags[tail] == 0) return tail;
  } else {
    for (uint32_t i = 0; i < m_ways; ++i)
      if (m_tags[base + i] == 0) return base + i;
  }
  switch (m_config.replacement) {
    case Replacement::LRU:
    case Replacement::FIFO:
      return base + m_tail[set];  // only indexed sets get here
    case Replacement::Random:
      return base + next_random() % m_ways;
    case Replacement::TreePLRU:
      return base + plru_victim(set);
  }
  return base;
}

void Cache::fill_slow(uint64_t set, uint64_t way) {
  if (m_indexed) move_to_head(set, way);
  if (m_config.replacement == Replacement::TreePLRU) plru_touch(set, way);
}

void Cache::index_replace(uint64_t way, uint64_t line) {
  if (valid(way)) m_index.erase(tag(way));
  m_index.insert(line, way);
}

void Cache::invalidate_indexed(uint64_t way) {
  const uint64_t line = tag(way);
  const uint64_t set = set_of(line);
  m_index.erase(line);
  m_tags[way] = 0;
  m_key[way] = 0;
  m_valid[way] = 0;
  m_dirty[way] = 0;
  m_tensor[way] = 0;
  move_to_tail(set, way);
}

}  // namespace tilescope::memory

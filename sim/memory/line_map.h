// An open-addressing hash map from line numbers to 64-bit values, for the simulator's side tables
// (reuse-distance last use, large-associativity index).
//
// std::unordered_map allocates a node per insert; this keeps two flat arrays, probes linearly and
// deletes by backward shifting, so lookups touch one or two cache lines and never allocate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tilescope::memory {

class LineMap {
 public:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // never a valid key: line numbers are < 2^63

  explicit LineMap(size_t expected = 64) { rehash(capacity_for(expected)); }

  size_t size() const { return m_size; }

  // Pointer to the value stored for `key`, or nullptr.
  uint64_t* find(uint64_t key) {
    for (size_t i = slot(key);; i = (i + 1) & m_mask) {
      if (m_keys[i] == key) return &m_vals[i];
      if (m_keys[i] == kEmpty) return nullptr;
    }
  }
  const uint64_t* find(uint64_t key) const { return const_cast<LineMap*>(this)->find(key); }

  // Inserts (key, value) when absent; returns true when it was inserted, false when present
  // (then the stored value is left unchanged).
  bool insert(uint64_t key, uint64_t value) {
    if ((m_size + 1) * 4 > m_keys.size() * 3) rehash(m_keys.size() * 2);
    for (size_t i = slot(key);; i = (i + 1) & m_mask) {
      if (m_keys[i] == key) return false;
      if (m_keys[i] == kEmpty) {
        m_keys[i] = key;
        m_vals[i] = value;
        ++m_size;
        return true;
      }
    }
  }

  void assign(uint64_t key, uint64_t value) {
    if (uint64_t* v = find(key)) {
      *v = value;
    } else {
      insert(key, value);
    }
  }

  bool erase(uint64_t key) {
    size_t i = slot(key);
    while (m_keys[i] != key) {
      if (m_keys[i] == kEmpty) return false;
      i = (i + 1) & m_mask;
    }
    // Backward-shift deletion: move later members of the probe run into the hole so lookups
    // never need tombstones.
    size_t hole = i;
    for (size_t j = (hole + 1) & m_mask; m_keys[j] != kEmpty; j = (j + 1) & m_mask) {
      size_t home = slot(m_keys[j]);
      bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        m_keys[hole] = m_keys[j];
        m_vals[hole] = m_vals[j];
        hole = j;
      }
    }
    m_keys[hole] = kEmpty;
    --m_size;
    return true;
  }

  void clear() {
    std::fill(m_keys.begin(), m_keys.end(), kEmpty);
    m_size = 0;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < m_keys.size(); ++i)
      if (m_keys[i] != kEmpty) f(m_keys[i], m_vals[i]);
  }

  size_t memory_bytes() const { return m_keys.capacity() * 16; }

 private:
  static size_t capacity_for(size_t expected) {
    size_t c = 16;
    while (c * 3 < expected * 4) c *= 2;
    return c;
  }
  size_t slot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> m_shift) & m_mask;
  }
  void rehash(size_t capacity) {
    std::vector<uint64_t> keys = std::move(m_keys), vals = std::move(m_vals);
    m_keys.assign(capacity, kEmpty);
    m_vals.assign(capacity, 0);
    m_mask = capacity - 1;
    int bits = 0;
    while ((size_t{1} << bits) < capacity) ++bits;
    m_shift = 64 - bits;
    m_size = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != kEmpty) insert(keys[i], vals[i]);
  }

  std::vector<uint64_t> m_keys, m_vals;
  size_t m_mask = 0;
  int m_shift = 60;
  size_t m_size = 0;
};

}  // namespace tilescope::memory

// An open-addressing hash map from line numbers to 64-bit values, for the simulator's side tables
// (reuse-distance last use, large-associativity index).
//
// std::unordered_map allocates a node per insert; this keeps one flat array of (key, value) pairs,
// probes linearly and deletes by backward shifting, so a lookup usually touches one cache line and
// never allocates.
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
      if (m_slots[i].key == key) return &m_slots[i].value;
      if (m_slots[i].key == kEmpty) return nullptr;
    }
  }
  const uint64_t* find(uint64_t key) const { return const_cast<LineMap*>(this)->find(key); }

  // Inserts (key, value) when absent; returns true when it was inserted, false when present
  // (then the stored value is left unchanged).
  bool insert(uint64_t key, uint64_t value) {
    if ((m_size + 1) * 4 > m_slots.size() * 3) rehash(m_slots.size() * 2);
    for (size_t i = slot(key);; i = (i + 1) & m_mask) {
      if (m_slots[i].key == key) return false;
      if (m_slots[i].key == kEmpty) {
        m_slots[i] = {key, value};
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
    while (m_slots[i].key != key) {
      if (m_slots[i].key == kEmpty) return false;
      i = (i + 1) & m_mask;
    }
    // Backward-shift deletion: move later members of the probe run into the hole so lookups
    // never need tombstones.
    size_t hole = i;
    for (size_t j = (hole + 1) & m_mask; m_slots[j].key != kEmpty; j = (j + 1) & m_mask) {
      size_t home = slot(m_slots[j].key);
      bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        m_slots[hole] = m_slots[j];
        hole = j;
      }
    }
    m_slots[hole].key = kEmpty;
    --m_size;
    return true;
  }

  void clear() {
    for (Slot& e : m_slots) e.key = kEmpty;
    m_size = 0;
  }

  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& e : m_slots)
      if (e.key != kEmpty) f(e.key, e.value);
  }

  size_t memory_bytes() const { return m_slots.capacity() * sizeof(Slot); }

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
    std::vector<Slot> old = std::move(m_slots);
    m_slots.assign(capacity, Slot{kEmpty, 0});
    m_mask = capacity - 1;
    int bits = 0;
    while ((size_t{1} << bits) < capacity) ++bits;
    m_shift = 64 - bits;
    m_size = 0;
    for (const Slot& e : old)
      if (e.key != kEmpty) insert(e.key, e.value);
  }

  struct Slot {
    uint64_t key, value;
  };
  std::vector<Slot> m_slots;
  size_t m_mask = 0;
  int m_shift = 60;
  size_t m_size = 0;
};

}  // namespace tilescope::memory

// Side analyses that run beside a cache level only when asked: the fully-associative LRU shadow
// used to split misses into compulsory / capacity / conflict (3C), and the reuse-distance
// histogram. Both are O(1) or O(log n) per access and bounded in memory by the distinct lines.
#pragma once

#include "sim/memory/line_map.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tilescope::memory {

// A fully-associative LRU cache of `capacity` lines that only answers "would this hit?".
// A hash map finds the node and an intrusive doubly linked list keeps recency, so an access is
// O(1) whatever the capacity (a 50 MB L2 shadow has 400 K lines).
class FullyAssociativeLru {
 public:
  explicit FullyAssociativeLru(uint64_t capacity_lines);
  // Records an access to `line`; returns whether it hit.
  bool access(uint64_t line);
  uint64_t capacity() const { return m_capacity; }

 private:
  static constexpr uint32_t kNil = ~uint32_t{0};
  void unlink(uint32_t n);
  void push_front(uint32_t n);

  uint64_t m_capacity;
  LineMap m_index;  // line → node
  std::vector<uint64_t> m_line;
  std::vector<uint32_t> m_prev, m_next;
  uint32_t m_head = kNil, m_tail = kNil;
};

// Reuse (stack) distance: for each access, the number of distinct lines touched since the previous
// access to the same line (0 = touched again right away; "cold" = never touched before).
//
// Fenwick tree over "last use" times: each line marks the time of its latest access, so the
// distance is the count of marks strictly between the previous use and now — O(log n) per access.
// Times are renumbered (compacted) when the tree fills, so memory is O(distinct lines), not
// O(trace length).
class ReuseDistance {
 public:
  static constexpr int kBuckets = 64;
  // Bucket b holds distances d with bit_width(d) == b: b0 = {0}, b1 = {1}, b2 = [2,3], b3 = [4,7]…
  static int bucket_of(uint64_t distance);
  static uint64_t bucket_low(int b) { return b == 0 ? 0 : uint64_t{1} << (b - 1); }
  static uint64_t bucket_high(int b) { return b == 0 ? 0 : (uint64_t{1} << b) - 1; }

  ReuseDistance();
  // Returns the distance, or kCold for a first touch; also adds it to the histogram.
  static constexpr uint64_t kCold = ~uint64_t{0};
  uint64_t access(uint64_t line);
  // A repeat of the line accessed just before: distance 0 and no change to the tree, which lets
  // the hierarchy's same-line fast path skip the tree entirely.
  void repeat_last() { ++m_histogram[0]; }

  const std::array<uint64_t, kBuckets>& histogram() const { return m_histogram; }
  uint64_t cold() const { return m_cold; }

 private:
  void add(uint64_t pos, int32_t delta);
  int64_t prefix(uint64_t pos) const;  // sum of marks at positions [0, pos]
  void compact();

  LineMap m_last;               // line → time of last use
  std::vector<int32_t> m_tree;  // Fenwick tree, 1-based inside
  uint64_t m_now = 0;
  std::array<uint64_t, kBuckets> m_histogram{};
  uint64_t m_cold = 0;
};

}  // namespace tilescope::memory

// The side analysis that runs beside a cache level only when asked: reuse (stack) distances, from
// which both the reuse-distance histogram and the compulsory / capacity / conflict split (3C) are
// read — a same-size fully-associative LRU cache hits exactly when the distance is below its
// capacity in lines, so one structure answers both.
#pragma once

#include "sim/memory/line_map.h"

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace tilescope::memory {

// Reuse (stack) distance: for each access, the number of distinct lines touched since the previous
// access to the same line (0 = touched again right away; "cold" = never touched before) — the
// line's depth in an LRU stack of every line.
//
// The top of that stack (kFront lines) is a small array searched and rotated in place: loop nests
// reuse a handful of lines most of the time (a GEMM's inner loop alternates between two), and such
// an access costs a few compares. The rest of the stack is a Fenwick tree over "last use" times:
// a line leaving the front marks the next time, so the marks keep the stack's order, and a deeper
// line's distance is kFront plus the marks after its own — O(log n). Times are renumbered in one
// linear pass (compacted) when the tree fills, so memory is O(distinct lines), not O(trace length).
class ReuseDistance {
 public:
  static constexpr int kBuckets = 64;
  static constexpr uint32_t kFront = 8;
  // Bucket b holds distances d with bit_width(d) == b: b0 = {0}, b1 = {1}, b2 = [2,3], b3 = [4,7]…
  static int bucket_of(uint64_t distance) {
    const int b = static_cast<int>(std::bit_width(distance));
    return b < kBuckets ? b : kBuckets - 1;
  }
  static uint64_t bucket_low(int b) { return b == 0 ? 0 : uint64_t{1} << (b - 1); }
  static uint64_t bucket_high(int b) { return b == 0 ? 0 : (uint64_t{1} << b) - 1; }

  ReuseDistance();
  // Returns the distance, or kCold for a first touch; also adds it to the histogram.
  static constexpr uint64_t kCold = ~uint64_t{0};
  uint64_t access(uint64_t line) {
    // The common case inline: the line is at the top of the stack.
    for (uint32_t p = 0; p < m_front_size; ++p) {
      if (m_front[p] != line) continue;
      for (uint32_t q = p; q > 0; --q) m_front[q] = m_front[q - 1];
      m_front[0] = line;
      ++m_histogram[bucket_of(p)];
      return p;
    }
    return access_deep(line);
  }

  const std::array<uint64_t, kBuckets>& histogram() const { return m_histogram; }
  uint64_t cold() const { return m_cold; }

 private:
  static constexpr uint64_t kInFront = ~uint64_t{0};  // m_last's value for a line in m_front
  uint64_t access_deep(uint64_t line);
  void mark(uint64_t line);  // `line` leaves the front: it takes the next time
  void add(uint64_t pos, int32_t delta);
  int64_t prefix(uint64_t pos) const;  // sum of marks at positions [0, pos]
  void compact();

  std::array<uint64_t, kFront> m_front{};  // most recent first
  uint32_t m_front_size = 0;
  LineMap m_last;                 // line → time of last use (tree position), or kInFront
  std::vector<int32_t> m_tree;    // Fenwick tree, 1-based inside
  std::vector<uint64_t> m_owner;  // time → the line marked there, kInFront once unmarked
  uint64_t m_now = 0;             // next time to mark
  uint64_t m_marks = 0;           // lines in the tree
  std::array<uint64_t, kBuckets> m_histogram{};
  uint64_t m_cold = 0;
};

}  // namespace tilescope::memory

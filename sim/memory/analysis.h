// The side analysis that runs beside a cache level only when asked: reuse (stack) distances, from
// which both the reuse-distance histogram and the compulsory / capacity / conflict split (3C) are
// read — a same-size fully-associative LRU cache hits exactly when the distance is below its
// capacity in lines, so one structure answers both.
#pragma once

#include "sim/memory/line_map.h"

#include <array>
#include <bit>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tilescope::memory {

// Reuse (stack) distance: for each access, the number of distinct lines touched since the previous
// access to the same line (0 = touched again right away; "cold" = never touched before) — the
// line's depth in an LRU stack of every line.
//
// The top of that stack (kFront lines) is a small array searched and rotated in place: loop nests
// reuse a handful of lines most of the time (a GEMM's inner loop alternates between two), and such
// an access costs a few compares. The rest of the stack is kept as "last use" times: a line
// leaving the front takes the next time, so the times keep the stack's order, and a deeper line's
// distance is kFront plus the number of lines whose time is later than its own. Those times are
// bits (one per time, set while a line holds it) counted by 64-bit words, whose counts sit in a
// Fenwick tree — O(log(n / 64)) per access, small enough to stay in the core's nearest cache.
// Times are renumbered (compacted) in one pass when they run out, so memory is O(distinct lines),
// not O(trace length). Each line has a slot (its index in first-touch order): the front and the
// time table refer to slots, so only a line's first lookup per trip below the front hashes.
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
      if (m_front[p].line != line) continue;
      const Front f = m_front[p];
      for (uint32_t q = p; q > 0; --q) m_front[q] = m_front[q - 1];
      m_front[0] = f;
      ++m_histogram[bucket_of(p)];
      return p;
    }
    return access_deep(line);
  }

  const std::array<uint64_t, kBuckets>& histogram() const { return m_histogram; }
  uint64_t cold() const { return m_cold; }

 private:
  static constexpr uint32_t kNoTime = ~uint32_t{0};  // m_time of a slot in the front
  static constexpr uint32_t kNoSlot = ~uint32_t{0};  // m_owner of a time no line holds
  struct Front {
    uint64_t line;
    uint32_t slot;
  };
  uint64_t access_deep(uint64_t line);
  void mark(uint32_t slot);  // `slot` leaves the front: it takes the next time
  void add_word(uint64_t word, int32_t delta);
  int64_t words_through(uint64_t word) const;  // lines with times in words [0, word]
  void compact();

  std::array<Front, kFront> m_front{};  // most recent first
  uint32_t m_front_size = 0;
  LineMap m_slot;                 // line → slot
  std::vector<uint32_t> m_time;   // slot → time, kNoTime while in the front
  std::vector<uint32_t> m_owner;  // time → slot, kNoSlot once left
  std::vector<uint64_t> m_bits;   // bit t set while a line holds time t
  std::vector<int32_t> m_tree;    // Fenwick tree over m_bits' popcounts, 1-based inside
  uint64_t m_now = 0;             // next time to give
  uint64_t m_marks = 0;           // lines behind the front
  std::array<uint64_t, kBuckets> m_histogram{};
  uint64_t m_cold = 0;
};

// Every level's reuse distances and 3C split, computed from the unit streams the hierarchy records:
// the hierarchy notes each access's unit (and, for a miss, its counter row) in a chunk per level,
// and full chunks are analysed in order — on a worker thread when `threaded` (the second core
// does the analysis while the first simulates the caches), else at once. Each level's stream is
// analysed in the order it was recorded either way, so the results are the same.
class AnalysisPipeline {
 public:
  struct Split {
    uint64_t compulsory = 0, capacity = 0, conflict = 0;
  };
  static constexpr uint32_t kHit = ~uint32_t{0};  // record()'s row for an access that hit

  // shadow_units[k]: level k's capacity in units (sectors), the fully-associative LRU cache whose
  // hits are distances below it.
  AnalysisPipeline(std::vector<uint64_t> shadow_units, bool threaded);
  ~AnalysisPipeline();
  AnalysisPipeline(const AnalysisPipeline&) = delete;
  AnalysisPipeline& operator=(const AnalysisPipeline&) = delete;

  // An access of `unit` at level k: a hit (row = kHit) or a miss counted in counter row `row`.
  void record(size_t k, uint64_t unit, uint32_t row) {
    Chunk& c = *m_open[k];
    if (row != kHit) c.misses.push_back({c.size, row});
    c.units[c.size++] = unit;
    if (c.size == kChunkUnits) submit(k);
  }
  // Analyses everything recorded so far; the results below are then complete. Throws what an
  // analysis on the worker threw (std::length_error past 2^30 distinct lines a level).
  void drain();
  const ReuseDistance& reuse(size_t k) const { return m_reuse[k]; }
  // The 3C split of level k's misses in counter row `row` (zeros for a row with none).
  Split split(size_t k, size_t row) const {
    return row < m_split[k].size() ? m_split[k][row] : Split{};
  }

 private:
  static constexpr size_t kChunkUnits = 16384;
  static constexpr size_t kMaxChunks = 16;  // in flight at once, per pipeline
  struct Miss {
    size_t index;  // into units
    uint32_t row;
  };
  struct Chunk {
    size_t level = 0, size = 0;
    std::unique_ptr<uint64_t[]> units{new uint64_t[kChunkUnits]};
    std::vector<Miss> misses;
  };
  void submit(size_t k);  // hands level k's open chunk on and opens a fresh one
  void analyse(Chunk& c);
  void work();

  std::vector<uint64_t> m_shadow_units;
  std::vector<ReuseDistance> m_reuse;
  std::vector<std::vector<Split>> m_split;  // [level][row]
  std::vector<std::unique_ptr<Chunk>> m_open;
  // Threaded: chunks waiting for the worker, and emptied ones for reuse.
  std::mutex m_mutex;
  std::condition_variable m_wake, m_done;
  std::deque<std::unique_ptr<Chunk>> m_queue, m_spare;
  size_t m_chunks = 0;  // allocated so far
  bool m_busy = false, m_stop = false;
  std::exception_ptr m_error;  // the worker's first exception, rethrown by drain()
  std::thread m_worker;
};

}  // namespace tilescope::memory

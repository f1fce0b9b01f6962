// Reuse distance (a front array and a Fenwick tree) against naive references: a list-based LRU
// stack, and the fully-associative LRU cache that the 3C split reads from it.
#include <doctest/doctest.h>

#include "sim/memory/analysis.h"

#include <algorithm>
#include <array>
#include <random>
#include <unordered_set>
#include <vector>

using namespace tilescope::memory;

namespace {

// The distinct lines touched since `line`'s last use in `trace`, by a backwards scan (O(n)).
uint64_t naive_distance(const std::vector<uint64_t>& trace, uint64_t line) {
  std::unordered_set<uint64_t> seen;
  for (size_t j = trace.size(); j-- > 0;) {
    if (trace[j] == line) return seen.size();
    seen.insert(trace[j]);
  }
  return ReuseDistance::kCold;
}

}  // namespace

TEST_CASE("reuse distance on a hand sequence") {
  // A B C A: A's reuse sees B and C in between → 2. B then sees C and A → 2. B again → 0.
  ReuseDistance r;
  CHECK(r.access(1) == ReuseDistance::kCold);
  CHECK(r.access(2) == ReuseDistance::kCold);
  CHECK(r.access(3) == ReuseDistance::kCold);
  CHECK(r.access(1) == 2);
  CHECK(r.access(2) == 2);
  CHECK(r.access(2) == 0);
  CHECK(r.cold() == 3);
  CHECK(r.histogram()[0] == 1);                            // distance 0
  CHECK(r.histogram()[ReuseDistance::bucket_of(2)] == 2);  // bucket [2, 3]
}

TEST_CASE("reuse distance equals the naive count of distinct lines since the last use") {
  // Long enough to force several compactions of the Fenwick tree (it starts at 65536 slots).
  std::mt19937_64 rng(3);
  ReuseDistance r;
  std::vector<uint64_t> trace;
  for (int i = 0; i < 200000; ++i) {
    uint64_t line = rng() % 4 == 0 ? rng() % 5000 : rng() % 64;
    uint64_t got = r.access(line);
    if (i % 97 == 0) {  // naive O(n·d) check on a sample
      CAPTURE(i);
      REQUIRE(got == naive_distance(trace, line));
    }
    trace.push_back(line);
  }
}

TEST_CASE("a distance below the capacity is a hit of a list-based fully-associative LRU") {
  // The 3C split reads "a same-size fully-associative LRU would hit" as distance < capacity.
  std::mt19937_64 rng(5);
  for (uint64_t capacity : {1, 3, 8, 9, 16, 100}) {
    ReuseDistance r;
    std::vector<uint64_t> list;  // front = most recent
    for (int i = 0; i < 20000; ++i) {
      uint64_t line = rng() % (capacity * 2 + 1);
      auto it = std::find(list.begin(), list.end(), line);
      bool expect = it != list.end();
      if (expect) list.erase(it);
      list.insert(list.begin(), line);
      if (list.size() > capacity) list.pop_back();
      CAPTURE(capacity);
      CAPTURE(i);
      REQUIRE((r.access(line) < capacity) == expect);
    }
  }
}

TEST_CASE("reuse distance equals an LRU stack's depth on every access, across compactions") {
  // Few or many live lines (the tree, 65536 times, compacts every few thousand to tens of thousands
  // of accesses), with runs that stay inside the front array and jumps far behind it.
  for (uint64_t universe : {12, 40, 3000}) {
    std::mt19937_64 rng(universe);
    ReuseDistance r;
    std::vector<uint64_t> stack;  // front = most recent
    std::array<uint64_t, ReuseDistance::kBuckets> histogram{};
    uint64_t cold = 0;
    for (int i = 0; i < 300000; ++i) {
      const uint64_t line = rng() % 3 == 0 ? rng() % universe : (i / 7) % 10;
      auto it = std::find(stack.begin(), stack.end(), line);
      uint64_t expect = ReuseDistance::kCold;
      if (it != stack.end()) {
        expect = uint64_t(it - stack.begin());
        stack.erase(it);
        ++histogram[ReuseDistance::bucket_of(expect)];
      } else {
        ++cold;
      }
      stack.insert(stack.begin(), line);
      CAPTURE(universe);
      CAPTURE(i);
      REQUIRE(r.access(line) == expect);
    }
    CHECK(r.histogram() == histogram);
    CHECK(r.cold() == cold);
  }
}

TEST_CASE("reuse distance stays exact while the times grow past their first 65536") {
  // ~40000 lines held behind the front: compaction must grow the time table (4 × held) and keep
  // every later distance exact. A naive backwards scan checks a sample.
  std::mt19937_64 rng(11);
  ReuseDistance r;
  std::vector<uint64_t> trace;
  for (int i = 0; i < 400000; ++i) {
    const uint64_t line = i < 40000 ? uint64_t(i) : rng() % 2 == 0 ? rng() % 40000 : rng() % 16;
    const uint64_t got = r.access(line);
    if (i % 1009 == 0) {
      CAPTURE(i);
      REQUIRE(got == naive_distance(trace, line));
    }
    trace.push_back(line);
  }
  CHECK(r.cold() == 40000);
}

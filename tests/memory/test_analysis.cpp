// Reuse distance (Fenwick tree) and the fully-associative LRU shadow against naive references.
#include <doctest/doctest.h>

#include "sim/memory/analysis.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

using namespace tilescope::memory;

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
      uint64_t expect = ReuseDistance::kCold;
      std::set<uint64_t> seen;
      for (size_t j = trace.size(); j-- > 0;) {
        if (trace[j] == line) {
          expect = seen.size();
          break;
        }
        seen.insert(trace[j]);
      }
      CAPTURE(i);
      REQUIRE(got == expect);
    }
    trace.push_back(line);
  }
}

TEST_CASE("fully-associative LRU shadow matches a list-based LRU") {
  std::mt19937_64 rng(5);
  for (uint64_t capacity : {1, 3, 16, 100}) {
    FullyAssociativeLru fa(capacity);
    std::vector<uint64_t> list;  // front = most recent
    for (int i = 0; i < 20000; ++i) {
      uint64_t line = rng() % (capacity * 2 + 1);
      auto it = std::find(list.begin(), list.end(), line);
      bool expect = it != list.end();
      if (expect) list.erase(it);
      list.insert(list.begin(), line);
      if (list.size() > capacity) list.pop_back();
      REQUIRE(fa.access(line) == expect);
    }
  }
}

// Fully-associative LRU shadow (for the 3C split) and Fenwick-tree reuse distance.
#include "sim/memory/analysis.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

namespace tilescope::memory {

// [SECTION] FullyAssociativeLru

FullyAssociativeLru::FullyAssociativeLru(uint64_t capacity_lines)
    : m_capacity(capacity_lines), m_index(1024) {
  if (capacity_lines == 0 || capacity_lines >= kNil)
    throw std::invalid_argument("fully-associative shadow: capacity must be 1 .. 2^32-2 lines");
}

void FullyAssociativeLru::unlink(uint32_t n) {
  uint32_t p = m_prev[n], x = m_next[n];
  if (p != kNil)
    m_next[p] = x;
  else
    m_head = x;
  if (x != kNil)
    m_prev[x] = p;
  else
    m_tail = p;
}

void FullyAssociativeLru::push_front(uint32_t n) {
  m_prev[n] = kNil;
  m_next[n] = m_head;
  if (m_head != kNil)
    m_prev[m_head] = n;
  else
    m_tail = n;
  m_head = n;
}

bool FullyAssociativeLru::access(uint64_t line) {
  if (uint64_t* node = m_index.find(line)) {
    uint32_t n = static_cast<uint32_t>(*node);
    if (n != m_head) {
      unlink(n);
      push_front(n);
    }
    return true;
  }
  uint32_t n;
  if (m_line.size() < m_capacity) {
    // Nodes are created on demand so a huge shadow that sees a small trace stays small.
    n = static_cast<uint32_t>(m_line.size());
    m_line.push_back(line);
    m_prev.push_back(kNil);
    m_next.push_back(kNil);
  } else {
    n = m_tail;
    unlink(n);
    m_index.erase(m_line[n]);
    m_line[n] = line;
  }
  push_front(n);
  m_index.insert(line, n);
  return false;
}

// [SECTION] ReuseDistance

int ReuseDistance::bucket_of(uint64_t distance) {
  return std::min(kBuckets - 1, static_cast<int>(std::bit_width(distance)));
}

ReuseDistance::ReuseDistance() : m_last(1024), m_tree(1 << 16, 0) {}

void ReuseDistance::add(uint64_t pos, int32_t delta) {
  for (uint64_t i = pos + 1; i < m_tree.size(); i += i & (~i + 1)) m_tree[i] += delta;
}

int64_t ReuseDistance::prefix(uint64_t pos) const {
  int64_t s = 0;
  for (uint64_t i = pos + 1; i > 0; i -= i & (~i + 1)) s += m_tree[i];
  return s;
}

uint64_t ReuseDistance::access(uint64_t line) {
  if (m_now + 1 >= m_tree.size()) compact();
  uint64_t distance = kCold;
  if (uint64_t* last = m_last.find(line)) {
    // Marks strictly after the previous use: each is a distinct line touched since.
    distance = static_cast<uint64_t>(prefix(m_now) - prefix(*last));
    add(*last, -1);
    *last = m_now;
    ++m_histogram[bucket_of(distance)];
  } else {
    m_last.insert(line, m_now);
    ++m_cold;
  }
  add(m_now, +1);
  ++m_now;
  return distance;
}

void ReuseDistance::compact() {
  // Renumber the live marks 0..D-1 in time order; relative order is all the distances need.
  std::vector<std::pair<uint64_t, uint64_t>> live;  // (time, line)
  live.reserve(m_last.size());
  m_last.for_each([&](uint64_t line, uint64_t time) { live.emplace_back(time, line); });
  std::sort(live.begin(), live.end());
  size_t capacity = std::max<size_t>(size_t{1} << 16, 2 * live.size() + 2);
  m_tree.assign(capacity + 1, 0);
  for (size_t t = 0; t < live.size(); ++t) {
    m_last.assign(live[t].second, t);
    m_tree[t + 1] += 1;
  }
  // Linear-time Fenwick build: push each node's sum to its parent.
  for (size_t i = 1; i < m_tree.size(); ++i) {
    size_t parent = i + (i & (~i + 1));
    if (parent < m_tree.size()) m_tree[parent] += m_tree[i];
  }
  m_now = live.size();
}

}  // namespace tilescope::memory

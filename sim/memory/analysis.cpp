// Reuse (stack) distance: a small most-recent front and a Fenwick tree behind it.
#include "sim/memory/analysis.h"

#include <algorithm>

namespace tilescope::memory {

ReuseDistance::ReuseDistance() : m_last(1024), m_tree((1 << 16) + 1, 0), m_owner(1 << 16) {}

void ReuseDistance::add(uint64_t pos, int32_t delta) {
  for (uint64_t i = pos + 1; i < m_tree.size(); i += i & (~i + 1)) m_tree[i] += delta;
}

int64_t ReuseDistance::prefix(uint64_t pos) const {
  int64_t s = 0;
  for (uint64_t i = pos + 1; i > 0; i -= i & (~i + 1)) s += m_tree[i];
  return s;
}

uint64_t ReuseDistance::access_deep(uint64_t line) {
  uint64_t distance = kCold;
  if (uint64_t* last = m_last.find(line)) {
    // Every front line was used after this one, and so was every line marked after its time.
    const uint64_t t = *last;
    distance = m_front_size + static_cast<uint64_t>(int64_t(m_marks) - prefix(t));
    add(t, -1);
    m_owner[t] = kInFront;
    --m_marks;
    *last = kInFront;
    ++m_histogram[bucket_of(distance)];
  } else {
    m_last.insert(line, kInFront);
    ++m_cold;
  }
  if (m_front_size == kFront) {
    mark(m_front[kFront - 1]);
  } else {
    ++m_front_size;
  }
  for (uint32_t q = m_front_size - 1; q > 0; --q) m_front[q] = m_front[q - 1];
  m_front[0] = line;
  return distance;
}

void ReuseDistance::mark(uint64_t line) {
  if (m_now + 1 >= m_tree.size()) compact();
  *m_last.find(line) = m_now;
  m_owner[m_now] = line;
  add(m_now, +1);
  ++m_marks;
  ++m_now;
}

void ReuseDistance::compact() {
  // Renumber the live marks 0..D-1 in time order (relative order is all the distances need): one
  // pass over the times, which m_owner already holds in order.
  uint64_t live = 0;
  for (uint64_t t = 0; t < m_now; ++t) {
    const uint64_t line = m_owner[t];
    if (line == kInFront) continue;
    *m_last.find(line) = live;
    m_owner[live++] = line;
  }
  const size_t capacity = std::max<size_t>(size_t{1} << 16, 4 * live + 2);
  m_owner.resize(capacity);
  m_tree.assign(capacity + 1, 0);
  for (uint64_t t = 0; t < live; ++t) m_tree[t + 1] = 1;
  // Linear-time Fenwick build: push each node's sum to its parent.
  for (size_t i = 1; i < m_tree.size(); ++i) {
    const size_t parent = i + (i & (~i + 1));
    if (parent < m_tree.size()) m_tree[parent] += m_tree[i];
  }
  m_now = live;
}

}  // namespace tilescope::memory

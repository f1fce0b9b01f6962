// Reuse (stack) distance: a small most-recent front and a Fenwick tree behind it; the pipeline that
// feeds it each level's recorded units, on a worker thread or at once.
#include "sim/memory/analysis.h"

#include <algorithm>
#include <bit>
#include <exception>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace tilescope::memory {

namespace {
constexpr uint64_t kInitialTimes = uint64_t{1} << 16;
}

ReuseDistance::ReuseDistance()
    : m_slot(1024),
      m_owner(kInitialTimes, kNoSlot),
      m_bits(kInitialTimes / 64, 0),
      m_tree(kInitialTimes / 64 + 1, 0) {}

void ReuseDistance::add_word(uint64_t word, int32_t delta) {
  for (uint64_t i = word + 1; i < m_tree.size(); i += i & (~i + 1)) m_tree[i] += delta;
}

int64_t ReuseDistance::words_through(uint64_t word) const {
  int64_t s = 0;
  for (uint64_t i = word + 1; i > 0; i -= i & (~i + 1)) s += m_tree[i];
  return s;
}

uint64_t ReuseDistance::access_deep(uint64_t line) {
  uint64_t distance = kCold;
  uint32_t slot;
  if (const uint64_t* found = m_slot.find(line)) {
    // Every front line was used after this one, and so was every line holding a later time.
    slot = static_cast<uint32_t>(*found);
    const uint64_t t = m_time[slot];
    const uint64_t word = t / 64;
    const uint64_t later_in_word = m_bits[word] & ~((uint64_t{2} << (t % 64)) - 1);
    distance = m_front_size + static_cast<uint64_t>(std::popcount(later_in_word)) +
               static_cast<uint64_t>(int64_t(m_marks) - words_through(word));
    m_bits[word] &= ~(uint64_t{1} << (t % 64));
    add_word(word, -1);
    m_owner[t] = kNoSlot;
    --m_marks;
    m_time[slot] = kNoTime;
    ++m_histogram[bucket_of(distance)];
  } else {
    slot = static_cast<uint32_t>(m_time.size());
    m_slot.insert(line, slot);
    m_time.push_back(kNoTime);
    ++m_cold;
  }
  if (m_front_size == kFront) {
    mark(m_front[kFront - 1].slot);
  } else {
    ++m_front_size;
  }
  for (uint32_t q = m_front_size - 1; q > 0; --q) m_front[q] = m_front[q - 1];
  m_front[0] = {line, slot};
  return distance;
}

void ReuseDistance::mark(uint32_t slot) {
  if (m_now == m_owner.size()) compact();
  m_time[slot] = static_cast<uint32_t>(m_now);
  m_owner[m_now] = slot;
  m_bits[m_now / 64] |= uint64_t{1} << (m_now % 64);
  add_word(m_now / 64, +1);
  ++m_marks;
  ++m_now;
}

void ReuseDistance::compact() {
  // Renumber the held times 0..D-1 in order (relative order is all the distances need): one pass,
  // m_owner already lists them in time order and is rewritten in place (live ≤ t).
  uint64_t live = 0;
  for (uint64_t t = 0; t < m_now; ++t) {
    const uint32_t slot = m_owner[t];
    if (slot == kNoSlot) continue;
    m_time[slot] = static_cast<uint32_t>(live);
    m_owner[live++] = slot;
  }
  // Room for at least as many new times as lines held, so compaction costs O(1) per access.
  const uint64_t times = std::max(kInitialTimes, (4 * live + 64) / 64 * 64);
  if (times >= kNoTime) throw std::length_error("reuse distance: more than 2^30 distinct lines");
  m_owner.resize(times);
  std::fill(m_owner.begin() + static_cast<std::ptrdiff_t>(live), m_owner.end(), kNoSlot);
  m_bits.assign(times / 64, 0);
  m_tree.assign(times / 64 + 1, 0);
  for (uint64_t t = 0; t < live; ++t) {
    m_bits[t / 64] |= uint64_t{1} << (t % 64);
    m_tree[t / 64 + 1] += 1;
  }
  // Linear-time Fenwick build: push each node's sum to its parent.
  for (size_t i = 1; i < m_tree.size(); ++i) {
    const size_t parent = i + (i & (~i + 1));
    if (parent < m_tree.size()) m_tree[parent] += m_tree[i];
  }
  m_now = live;
}

// [SECTION] AnalysisPipeline

AnalysisPipeline::AnalysisPipeline(std::vector<uint64_t> shadow_units, bool threaded)
    : m_shadow_units(std::move(shadow_units)),
      m_reuse(m_shadow_units.size()),
      m_split(m_shadow_units.size()) {
  for (size_t k = 0; k < m_shadow_units.size(); ++k) {
    m_open.push_back(std::make_unique<Chunk>());
    m_open.back()->level = k;
  }
  m_chunks = m_open.size();
  if (!threaded) return;
  try {
    m_worker = std::thread([this] { work(); });
  } catch (const std::system_error&) {
    // No thread to be had (a process or container limit): the same analyses, inline.
  }
}

AnalysisPipeline::~AnalysisPipeline() {
  if (!m_worker.joinable()) return;
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_one();
  m_worker.join();
}

void AnalysisPipeline::analyse(Chunk& c) {
  ReuseDistance& reuse = m_reuse[c.level];
  std::vector<Split>& split = m_split[c.level];
  const uint64_t shadow = m_shadow_units[c.level];
  size_t next = 0;
  for (size_t i = 0; i < c.size; ++i) {
    const uint64_t distance = reuse.access(c.units[i]);
    if (next == c.misses.size() || c.misses[next].index != i) continue;
    const uint32_t row = c.misses[next++].row;
    if (row >= split.size()) split.resize(row + 1);
    Split& s = split[row];
    ++(distance == ReuseDistance::kCold ? s.compulsory
       : distance >= shadow             ? s.capacity
                                        : s.conflict);
  }
  c.size = 0;
  c.misses.clear();
}

void AnalysisPipeline::submit(size_t k) {
  if (!m_worker.joinable()) {
    analyse(*m_open[k]);
    return;
  }
  std::unique_lock lock(m_mutex);
  m_queue.push_back(std::move(m_open[k]));
  m_wake.notify_one();
  if (m_spare.empty() && m_chunks < kMaxChunks) {
    ++m_chunks;
    m_open[k] = std::make_unique<Chunk>();
  } else {
    m_done.wait(lock, [&] { return !m_spare.empty(); });
    m_open[k] = std::move(m_spare.front());
    m_spare.pop_front();
  }
  m_open[k]->level = k;
}

void AnalysisPipeline::work() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
    if (m_queue.empty()) return;  // stopping, nothing left
    std::unique_ptr<Chunk> c = std::move(m_queue.front());
    m_queue.pop_front();
    m_busy = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      analyse(*c);
    } catch (...) {  // handed to the simulating thread by drain(), never lost on this one
      error = std::current_exception();
      c->size = 0;
      c->misses.clear();
    }
    lock.lock();
    if (error && !m_error) m_error = error;
    m_busy = false;
    m_spare.push_back(std::move(c));
    m_done.notify_all();
  }
}

void AnalysisPipeline::drain() {
  for (size_t k = 0; k < m_open.size(); ++k)
    if (m_open[k]->size > 0) submit(k);
  if (!m_worker.joinable()) return;
  std::unique_lock lock(m_mutex);
  m_done.wait(lock, [&] { return m_queue.empty() && !m_busy; });
  if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
}

}  // namespace tilescope::memory

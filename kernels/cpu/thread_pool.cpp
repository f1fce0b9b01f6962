// The kernels' persistent worker pool (thread_pool.h). A call publishes its tasks as a new
// generation in one atomic word and wakes the workers through it (C++20 atomic wait/notify, a
// futex on Linux): no mutex that every woken worker must take in turn. Workers spin briefly on that
// word before sleeping, and the caller spins on the count of busy workers before sleeping, so
// back-to-back calls and short calls pay no sleep/wake round trip — the way OpenMP runtimes (and
// so Eigen's threads) keep their teams warm.
//
// The first version slept on one condition variable: at 256³ on 16 threads a call (~20 µs of
// arithmetic per thread) took 0.16 ms, most of it 15 workers re-taking one mutex after
// notify_all and again to report done (kernels/cpu/PERF.md).
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tilescope::kernels {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long an idle worker spins before it sleeps (TILESCOPE_POOL_SPIN_US overrides it, for
// measuring), and how long the caller spins waiting for the workers to finish.
std::chrono::microseconds worker_spin() {
  static const std::chrono::microseconds spin = [] {
    const char* env = std::getenv("TILESCOPE_POOL_SPIN_US");
    return std::chrono::microseconds(env && *env ? std::max(0L, std::atol(env)) : 0L);
  }();
  return spin;
}
constexpr auto kCallerSpin = std::chrono::microseconds(200);

// Spins until `pred()` or `spin` has passed; true when pred() held.
template <class Pred>
bool spin_until(std::chrono::microseconds spin, Pred pred) {
  if (spin.count() <= 0) return pred();
  const auto end = std::chrono::steady_clock::now() + spin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= end) return pred();
  }
}

class Pool {
 public:
  ~Pool() {
    m_word.store(kQuit, std::memory_order_release);
    m_word.notify_all();
    for (std::thread& t : m_workers) t.join();
  }

  void run(int threads, int count, const std::function<void(int)>& task) {
    std::lock_guard turn(m_call);  // one call at a time
    const int helpers = std::min({threads, count, kMaxThreads}) - 1;
    while (static_cast<int>(m_workers.size()) < helpers) {
      // A new worker starts from the word as it is now, before this call publishes its own, so
      // it cannot take this call's word for one it has already served.
      const int index = static_cast<int>(m_workers.size());
      const uint32_t before = m_word.load(std::memory_order_relaxed);
      m_seen[size_t(index)].store(before, std::memory_order_relaxed);
      m_workers.emplace_back([this, index, before] { work(index, before); });
    }
    // Every worker of the last call has finished with these: the last call waited for them.
    m_task = &task;
    m_count = count;
    m_next.store(0, std::memory_order_relaxed);
    m_busy.store(helpers, std::memory_order_relaxed);
    // One 32-bit word (a futex) says which call it is and how many workers it wants, so a worker
    // never mixes one call's generation with another's helper count. The generation wraps after
    // 2^22 calls: a word equal to one a helper last served would not wake it, so skip such values.
    uint32_t word = 0;
    do {
      m_generation = (m_generation + 1) & kGenerationMask;
      word = (m_generation << kHelperBits) | uint32_t(helpers);
    } while (word == kQuit || served_before(word, helpers));
    m_word.store(word, std::memory_order_release);
    if (helpers > 0) m_word.notify_all();
    claim();
    // The caller's share is done; wait for the helpers that took part.
    for (int busy = m_busy.load(std::memory_order_acquire); busy != 0;
         busy = m_busy.load(std::memory_order_acquire)) {
      if (!spin_until(kCallerSpin, [&] { return m_busy.load(std::memory_order_acquire) == 0; }))
        m_busy.wait(m_busy.load(std::memory_order_acquire), std::memory_order_acquire);
    }
    m_task = nullptr;
  }

 private:
  static constexpr int kHelperBits = 10;
  static constexpr int kMaxThreads = 1 << kHelperBits;
  static constexpr uint32_t kGenerationMask = (uint32_t(1) << (32 - kHelperBits)) - 1;
  static constexpr uint32_t kQuit = ~uint32_t(0);

  bool served_before(uint32_t word, int helpers) const {
    for (int i = 0; i < helpers; ++i)
      if (m_seen[size_t(i)].load(std::memory_order_relaxed) == word) return true;
    return false;
  }

  void claim() {
    for (int i = m_next.fetch_add(1, std::memory_order_relaxed); i < m_count;
         i = m_next.fetch_add(1, std::memory_order_relaxed))
      (*m_task)(i);
  }

  void work(int index, uint32_t seen) {
    for (;;) {
      if (!spin_until(worker_spin(), [&] { return m_word.load(std::memory_order_acquire) != seen; }))
        m_word.wait(seen, std::memory_order_acquire);
      const uint32_t word = m_word.load(std::memory_order_acquire);
      if (word == seen) continue;  // woken without a new call
      if (word == kQuit) return;
      seen = word;
      m_seen[size_t(index)].store(word, std::memory_order_relaxed);
      const int helpers = static_cast<int>(word & (uint64_t(kMaxThreads) - 1));
      if (index >= helpers) continue;  // this call wants fewer threads
      claim();
      if (m_busy.fetch_sub(1, std::memory_order_acq_rel) == 1) m_busy.notify_one();
    }
  }

  std::mutex m_call;
  std::vector<std::thread> m_workers;
  const std::function<void(int)>* m_task = nullptr;
  int m_count = 0;
  // Per worker: the last word it took (a fixed array: workers read it while others are added).
  std::array<std::atomic<uint32_t>, kMaxThreads> m_seen{};
  uint32_t m_generation = 0;
  std::atomic<uint32_t> m_word{0};
  std::atomic<int> m_next{0};
  std::atomic<int> m_busy{0};
};

}  // namespace

void parallel_tasks(int threads, int count, const std::function<void(int task)>& task) {
  if (count <= 0) return;
  if (threads <= 1 || count == 1) {
    for (int i = 0; i < count; ++i) task(i);
    return;
  }
  static Pool pool;
  pool.run(threads, count, task);
}

}  // namespace tilescope::kernels

// The kernels' persistent worker pool (thread_pool.h): workers sleep on a condition variable
// between calls; a call publishes its tasks as a new generation and wakes them.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tilescope::kernels {

namespace {

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard lock(m_mutex);
      m_quit = true;
    }
    m_wake.notify_all();
    for (std::thread& t : m_workers) t.join();
  }

  void run(int threads, int count, const std::function<void(int)>& task) {
    std::lock_guard turn(m_call);  // one call at a time
    const int helpers = std::min(threads, count) - 1;
    while (static_cast<int>(m_workers.size()) < helpers) {
      const int index = static_cast<int>(m_workers.size());
      m_workers.emplace_back([this, index] { work(index); });
    }
    {
      std::lock_guard lock(m_mutex);
      m_task = &task;
      m_count = count;
      m_helpers = helpers;
      m_next = 0;
      m_busy = helpers;
      ++m_generation;
    }
    if (helpers > 0) m_wake.notify_all();
    claim();
    // The caller's share is done; wait for the helpers that took part.
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [this] { return m_busy == 0; });
    m_task = nullptr;
  }

 private:
  void claim() {
    for (int i = m_next.fetch_add(1); i < m_count; i = m_next.fetch_add(1)) (*m_task)(i);
  }
  void work(int index) {
    uint64_t seen = 0;
    std::unique_lock lock(m_mutex);
    for (;;) {
      m_wake.wait(lock, [&] { return m_quit || m_generation != seen; });
      if (m_quit) return;
      seen = m_generation;
      if (index >= m_helpers) continue;  // this call wants fewer threads
      lock.unlock();
      claim();
      lock.lock();
      if (--m_busy == 0) m_done.notify_one();
    }
  }

  std::mutex m_call;
  std::mutex m_mutex;
  std::condition_variable m_wake, m_done;
  std::vector<std::thread> m_workers;
  const std::function<void(int)>* m_task = nullptr;
  int m_count = 0, m_helpers = 0, m_busy = 0;
  std::atomic<int> m_next{0};
  uint64_t m_generation = 0;
  bool m_quit = false;
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

// The kernels' worker pool (thread_pool.h): every task runs exactly once per call, whatever the
// thread count, task count and the calls before it (more threads, then fewer: workers that sit a
// call out must not take part in the next one twice); calls from several threads take turns.
// Expected counts are the hand count "each index once".
#include "kernels/cpu/thread_pool.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace tilescope::kernels;

namespace {

// Runs one call and returns how often each task index ran.
std::vector<int> run_counts(int threads, int count) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
  parallel_tasks(threads, count, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
  std::vector<int> out;
  for (const auto& h : hits) out.push_back(h.load());
  return out;
}

}  // namespace

TEST_CASE("parallel_tasks runs every task once over a sequence of thread and task counts") {
  // Threads up and down (workers created, then some idle), tasks fewer and more than threads.
  const int threads[] = {4, 8, 2, 8, 3, 1, 16, 5, 16, 2};
  const int counts[] = {1, 7, 64, 3, 1000, 9, 16, 2, 333, 50};
  for (int round = 0; round < 20; ++round)
    for (size_t c = 0; c < std::size(threads); ++c) {
      const std::vector<int> hits = run_counts(threads[c], counts[c]);
      CAPTURE(round);
      CAPTURE(threads[c]);
      CAPTURE(counts[c]);
      CHECK(hits == std::vector<int>(static_cast<size_t>(counts[c]), 1));
    }
  CHECK(run_counts(8, 0).empty());
}

TEST_CASE("parallel_tasks: calls from two threads at once take turns and each finishes whole") {
  std::atomic<int> wrong{0};
  auto caller = [&](int threads) {
    for (int call = 0; call < 200; ++call) {
      const std::vector<int> hits = run_counts(threads, 37);
      for (int h : hits) wrong += h != 1;
    }
  };
  std::thread a(caller, 6), b(caller, 3);
  a.join();
  b.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("parallel_tasks returns only after the slowest task") {
  std::atomic<int> finished{0};
  parallel_tasks(4, 4, [&](int i) {
    if (i == 3) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    finished.fetch_add(1);
  });
  CHECK(finished.load() == 4);
}

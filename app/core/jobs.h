// Background jobs for the app: long work (trace simulation, JIT compile and timing) runs on a
// worker thread with a progress fraction and a cancel flag; the frame loop only polls.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tilescope::core {

// Shared between a job's thread and the frame loop.
struct JobProgress {
  std::atomic<double> fraction{0.0};
  std::atomic<bool> cancel{false};
  std::atomic<bool> finished{false};
  // What the job is doing now ("compiling", "timing"), for the progress line.
  void set_phase(std::string phase) {
    std::lock_guard lock(m_mutex);
    m_phase = std::move(phase);
  }
  std::string phase() const {
    std::lock_guard lock(m_mutex);
    return m_phase;
  }
  // Numbers so far, for the view to show while the job runs (the Memory job's counters as the
  // trace streams through): lines of text, replaced whole.
  void set_partial(std::vector<std::string> lines) {
    std::lock_guard lock(m_mutex);
    m_partial = std::move(lines);
  }
  std::vector<std::string> partial() const {
    std::lock_guard lock(m_mutex);
    return m_partial;
  }

 private:
  mutable std::mutex m_mutex;
  std::string m_phase;
  std::vector<std::string> m_partial;
};

// Thrown inside a job's work when it sees JobProgress::cancel.
struct JobCancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

// Job threads of this process whose work has not returned yet. Quitting cancels every job and
// waits for this to reach 0 only so long: a job that does not look at its cancel flag (a compiler
// child, a stranger's lesson) must never keep the app from closing (issue #25).
inline std::atomic<int>& job_threads_working() {
  static std::atomic<int> count{0};
  return count;
}

// Waits up to `seconds` for every job's work to return; true when none is left.
inline bool wait_for_job_threads(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (job_threads_working().load() > 0) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// One job slot: at most one run at a time. The result (or error) is handed over by poll() on the
// frame loop's thread, so views never see a half-written result. Movable (the thread works on a
// heap-allocated slot that does not move), so the state that owns it can be returned by value.
template <typename Result>
class Job {
 public:
  using Work = std::function<Result(JobProgress&)>;
  Job() : m_slot(std::make_unique<Slot>()) {}
  Job(Job&&) noexcept = default;
  Job& operator=(Job&& other) noexcept {
    if (this != &other) {
      stop();
      m_slot = std::move(other.m_slot);
    }
    return *this;
  }
  ~Job() { stop(); }

  // Starts `work` for `key` (what the result will belong to); a running job is cancelled first.
  void start(std::string key, Work work) {
    stop();
    Slot& s = *m_slot;
    s.key = std::move(key);
    s.progress = std::make_shared<JobProgress>();
    s.done_result.reset();
    s.done_error.clear();
    ++job_threads_working();
    s.thread = std::thread([&s, progress = s.progress, work = std::move(work)] {
      std::optional<Result> result;
      std::string error;
      try {
        result = work(*progress);
      } catch (const JobCancelled&) {
        error = "cancelled";
      } catch (const std::bad_alloc&) {
        // The sizing before a start keeps this rare; a learner never reads "std::bad_alloc".
        error =
            "ran out of memory (this computer could not give the job what it asked for); "
            "try a smaller model";
      } catch (const std::exception& e) {
        error = e.what();
      }
      {
        std::lock_guard lock(s.mutex);
        s.done_result = std::move(result);
        s.done_error = std::move(error);
      }
      progress->finished = true;
      --job_threads_working();
    });
  }

  void cancel() {
    if (m_slot && m_slot->progress) m_slot->progress->cancel = true;
  }

  bool running() const { return m_slot && m_slot->thread.joinable(); }
  double fraction() const {
    return m_slot && m_slot->progress ? m_slot->progress->fraction.load() : 0.0;
  }
  std::string phase() const {
    return m_slot && m_slot->progress ? m_slot->progress->phase() : std::string();
  }
  std::vector<std::string> partial() const {
    return m_slot && m_slot->progress ? m_slot->progress->partial() : std::vector<std::string>{};
  }
  const std::string& key() const { return m_slot->key; }

  // When the job has finished: joins it and returns true with `out`/`error` filled (one of them).
  bool poll(std::optional<Result>& out, std::string& error) {
    if (!running() || !m_slot->progress->finished) return false;
    m_slot->thread.join();
    std::lock_guard lock(m_slot->mutex);
    out = std::move(m_slot->done_result);
    error = std::move(m_slot->done_error);
    m_slot->done_result.reset();
    return true;
  }

  // Cancels and waits (used on shutdown and before a restart).
  void stop() {
    cancel();
    if (running()) m_slot->thread.join();
  }

 private:
  struct Slot {
    std::thread thread;
    std::shared_ptr<JobProgress> progress;
    std::string key;
    std::mutex mutex;
    std::optional<Result> done_result;
    std::string done_error;
  };
  std::unique_ptr<Slot> m_slot;
};

}  // namespace tilescope::core

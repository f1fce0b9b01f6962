// Background jobs for the app: long work (trace simulation, JIT compile and timing) runs on a
// worker thread with a progress fraction and a cancel flag; the frame loop only polls.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace tilescope::gui {

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

 private:
  mutable std::mutex m_mutex;
  std::string m_phase;
};

// Thrown inside a job's work when it sees JobProgress::cancel.
struct JobCancelled : std::exception {
  const char* what() const noexcept override { return "cancelled"; }
};

// One job slot: at most one run at a time. The result (or error) is handed over by poll() on the
// frame loop's thread, so views never see a half-written result.
template <typename Result>
class Job {
 public:
  using Work = std::function<Result(JobProgress&)>;
  Job() = default;
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;
  ~Job() { stop(); }

  // Starts `work` for `key` (what the result will belong to); a running job is cancelled first.
  void start(std::string key, Work work) {
    stop();
    m_key = std::move(key);
    m_progress = std::make_shared<JobProgress>();
    m_done_result.reset();
    m_done_error.clear();
    auto progress = m_progress;
    m_thread = std::thread([this, progress, work = std::move(work)] {
      std::optional<Result> result;
      std::string error;
      try {
        result = work(*progress);
      } catch (const JobCancelled&) {
        error = "cancelled";
      } catch (const std::exception& e) {
        error = e.what();
      }
      {
        std::lock_guard lock(m_mutex);
        m_done_result = std::move(result);
        m_done_error = std::move(error);
      }
      progress->finished = true;
    });
  }

  void cancel() {
    if (m_progress) m_progress->cancel = true;
  }

  bool running() const { return m_thread.joinable(); }
  double fraction() const { return m_progress ? m_progress->fraction.load() : 0.0; }
  std::string phase() const { return m_progress ? m_progress->phase() : std::string(); }
  const std::string& key() const { return m_key; }

  // When the job has finished: joins it and returns true with `out`/`error` filled (one of them).
  bool poll(std::optional<Result>& out, std::string& error) {
    if (!m_thread.joinable() || !m_progress->finished) return false;
    m_thread.join();
    std::lock_guard lock(m_mutex);
    out = std::move(m_done_result);
    error = std::move(m_done_error);
    m_done_result.reset();
    return true;
  }

  // Cancels and waits (used on shutdown and before a restart).
  void stop() {
    cancel();
    if (m_thread.joinable()) m_thread.join();
  }

 private:
  std::thread m_thread;
  std::shared_ptr<JobProgress> m_progress;
  std::string m_key;
  std::mutex m_mutex;
  std::optional<Result> m_done_result;
  std::string m_done_error;
};

}  // namespace tilescope::gui

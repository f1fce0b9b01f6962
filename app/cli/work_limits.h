// Sizing long CLI work before it starts: the memory this machine can give (refuse beyond it, with
// how much was needed) and progress lines on stderr while a terminal watches.
//
// A learner can type a model that needs 12 GiB or a simulation of 10^10 accesses as easily as a
// small one. Commands estimate first, refuse what cannot finish, and report progress on what
// can, so nothing runs silently for minutes or grows until the kernel kills it.
#pragma once

#include "sim/memory/access.h"
#include "sim/predict/work_size.h"

#include <chrono>
#include <cstdint>
#include <string>

namespace tilescope::cli {

// The memory budget is the model's (sim/predict/work_size.h), shared with the app.
using predict::memory_budget;
using predict::MemoryBudget;

// "2 GiB (2147483648 bytes)": rounded for reading (io::format_bytes), exact for checking.
std::string format_bytes_exact(uint64_t bytes);
// "8.8 T", "3.4 G", "120 M", "5000": for access counts.
std::string format_count(double n);

// Progress of `what` on stderr, at most twice a second, only when stderr is a terminal (a pipe
// or a log file gets no carriage-return noise). total 0: unknown, show the count and rate only.
class Progress {
 public:
  Progress(std::string what, double total);
  ~Progress();  // ends the line it drew, if any
  void update(double done);

 private:
  std::string m_what;
  double m_total;
  bool m_enabled;
  bool m_drawn = false;
  std::chrono::steady_clock::time_point m_start, m_last;
};

// Forwards every access to `next` and reports the count to a Progress.
class ProgressSink final : public memory::AccessSink {
 public:
  ProgressSink(memory::AccessSink& next, Progress& progress) : m_next(next), m_progress(progress) {}
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* accesses, size_t count) override;
  void step_boundary(uint64_t step) override { m_next.step_boundary(step); }
  uint64_t count() const { return m_count; }

 private:
  memory::AccessSink& m_next;
  Progress& m_progress;
  uint64_t m_count = 0, m_next_report = 0;
};

}  // namespace tilescope::cli

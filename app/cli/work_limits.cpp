// Size formatting and terminal progress for the CLI's long-running commands.
#include "work_limits.h"

#include "sim/io/format.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tilescope::cli {

std::string format_bytes_exact(uint64_t bytes) {
  const std::string shown = io::format_bytes(double(bytes));
  return bytes < 1024 ? shown : shown + " (" + std::to_string(bytes) + " bytes)";
}

std::string format_count(double n) {
  char b[32];
  if (n >= 1e12)
    std::snprintf(b, sizeof b, "%.1f T", n / 1e12);
  else if (n >= 1e9)
    std::snprintf(b, sizeof b, "%.1f G", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(b, sizeof b, "%.1f M", n / 1e6);
  else
    std::snprintf(b, sizeof b, "%.0f", n);
  return b;
}

Progress::Progress(std::string what, double total)
    : m_what(std::move(what)),
      m_total(total),
      m_enabled(isatty(STDERR_FILENO) == 1),
      m_start(std::chrono::steady_clock::now()),
      m_last(m_start) {}

Progress::~Progress() {
  if (m_drawn) std::fprintf(stderr, "\n");
}

void Progress::update(double done) {
  if (!m_enabled) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - m_last < std::chrono::milliseconds(500)) return;
  m_last = now;
  const double seconds = std::chrono::duration<double>(now - m_start).count();
  const double rate = seconds > 0 ? done / seconds : 0;
  char b[256];
  if (m_total > 0 && rate > 0)
    std::snprintf(b, sizeof b, "\r%s: %s of %s (%.0f%%), %s/s, about %.0f s left   ",
                  m_what.c_str(), format_count(done).c_str(), format_count(m_total).c_str(),
                  100.0 * done / m_total, format_count(rate).c_str(),
                  done < m_total ? (m_total - done) / rate : 0.0);
  else
    std::snprintf(b, sizeof b, "\r%s: %s, %s/s   ", m_what.c_str(), format_count(done).c_str(),
                  format_count(rate).c_str());
  std::fputs(b, stderr);
  std::fflush(stderr);
  m_drawn = true;
}

void ProgressSink::access_batch(const memory::Access* accesses, size_t count) {
  m_next.access_batch(accesses, count);
  m_count += count;
  // The clock is read once per million accesses, not per batch: progress must cost nothing.
  if (m_count >= m_next_report) {
    m_progress.update(double(m_count));
    m_next_report = m_count + (1u << 20);
  }
}

}  // namespace tilescope::cli

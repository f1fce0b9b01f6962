// A filter on std::cerr: error messages quote the user's files, and a file can hold escape
// sequences (colours, cursor moves, a retitled terminal) or a 10 MB token; what reaches the
// terminal has control characters shown as \xNN and every line cut at a readable length.
#pragma once

#include <cstddef>
#include <streambuf>
#include <string>

namespace tilescope::cli {

class TerminalGuard final : public std::streambuf {
 public:
  // Wraps `target`; lines longer than `max_line` bytes are cut with "… (N more bytes)".
  explicit TerminalGuard(std::streambuf* target, size_t max_line = 2000);
  ~TerminalGuard() override;

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  void put(char c);
  void end_line();

  std::streambuf* m_target;
  size_t m_max_line;
  size_t m_column = 0;
  size_t m_dropped = 0;
};

}  // namespace tilescope::cli

// What tilescope-cli writes to a terminal is filtered: error messages quote the user's files, and
// lesson titles, prose and check strings, machine names and --tensor names are printed too. A file
// can hold escape sequences (colours, cursor moves, a retitled terminal), C1 controls, bidirectional
// overrides (U+202E reverses what follows) or a 10 MB token. What reaches the terminal has such
// bytes shown as \xNN (and such characters as \uXXXX); standard error's lines are also cut at a
// readable length. Newlines, tabs, carriage returns and ordinary UTF-8 pass unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <streambuf>
#include <string>
#include <string_view>

namespace tilescope::cli {

// The filter itself, a chunk at a time: a UTF-8 sequence may be split between chunks.
class TerminalText {
 public:
  // Lines longer than `max_line` bytes are cut with "… (N more bytes)"; SIZE_MAX: never.
  explicit TerminalText(size_t max_line = SIZE_MAX) : m_max_line(max_line) {}
  void feed(std::string_view in, std::string& out);
  // Bytes of an unfinished sequence and the note of a cut line, at the end of the stream.
  void finish(std::string& out);

 private:
  void byte(unsigned char c, std::string& out);
  void flush_pending(std::string& out);  // an incomplete or invalid sequence: \xNN each
  void emit(std::string_view s, std::string& out);
  void end_line(std::string& out);

  size_t m_max_line;
  size_t m_column = 0;
  size_t m_dropped = 0;
  std::string m_pending;  // a UTF-8 sequence begun, `m_need` bytes long
  size_t m_need = 0;
};

// A filter on a stream buffer (std::cerr's): everything written passes TerminalText.
class TerminalGuard final : public std::streambuf {
 public:
  explicit TerminalGuard(std::streambuf* target, size_t max_line = 2000);
  ~TerminalGuard() override;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  std::streambuf* m_target;
  TerminalText m_text;
  std::string m_out;
};

// Puts C's stdout (printf) and std::cout through one TerminalText, in the order written: stdout
// becomes a stream of ours (fopencookie) that filters into file descriptor 1, and std::cout
// writes into it. Call once, first thing in main.
void guard_standard_output();

}  // namespace tilescope::cli

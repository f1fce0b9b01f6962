// TerminalText, TerminalGuard and the guarded standard output: see terminal_guard.h.
#include "terminal_guard.h"

#include "sim/io/input.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace tilescope::cli {

// [SECTION] TerminalText

void TerminalText::emit(std::string_view s, std::string& out) {
  if (m_column >= m_max_line || s.size() > m_max_line - m_column) {
    const size_t room = m_column >= m_max_line ? 0 : m_max_line - m_column;
    out.append(s.substr(0, room));
    m_dropped += s.size() - room;
    m_column = m_max_line;
    return;
  }
  out.append(s);
  m_column += s.size();
}

void TerminalText::end_line(std::string& out) {
  if (m_dropped) {
    out += "… (" + std::to_string(m_dropped) + " more bytes)";
    m_dropped = 0;
  }
  m_column = 0;
}

void TerminalText::flush_pending(std::string& out) {
  for (const char c : m_pending) {
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\x%02x", static_cast<unsigned char>(c));
    emit(esc, out);
  }
  m_pending.clear();
  m_need = 0;
}

void TerminalText::byte(unsigned char c, std::string& out) {
  if (m_need > 0) {
    if ((c & 0xC0) == 0x80) {
      m_pending += static_cast<char>(c);
      if (m_pending.size() < m_need) return;
      uint32_t cp = 0;
      if (io::utf8_length(m_pending, 0, cp) != m_pending.size()) {
        flush_pending(out);  // overlong, a surrogate, past U+10FFFF
      } else if (io::is_steering(cp)) {
        char esc[12];
        std::snprintf(esc, sizeof esc, "\\u%04X", static_cast<unsigned>(cp));
        emit(esc, out);
        m_pending.clear();
        m_need = 0;
      } else {
        emit(m_pending, out);
        m_pending.clear();
        m_need = 0;
      }
      return;
    }
    flush_pending(out);  // cut short: the byte starts afresh
  }
  if (c == '\n') {
    end_line(out);
    out += '\n';
  } else if (c == '\r') {
    m_column = 0;  // progress lines redraw themselves with a carriage return
    out += '\r';
  } else if (c == '\t' || (c >= 0x20 && c < 0x7F)) {
    emit(std::string_view(reinterpret_cast<const char*>(&c), 1), out);
  } else if (c >= 0xC2 && c <= 0xF4) {
    m_pending.assign(1, static_cast<char>(c));
    m_need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  } else {
    m_pending.assign(1, static_cast<char>(c));  // a control, DEL, or a byte no sequence starts with
    flush_pending(out);
  }
}

void TerminalText::feed(std::string_view in, std::string& out) {
  for (const char c : in) byte(static_cast<unsigned char>(c), out);
}

void TerminalText::finish(std::string& out) {
  flush_pending(out);
  if (m_dropped) end_line(out);
}

// [SECTION] TerminalGuard

TerminalGuard::TerminalGuard(std::streambuf* target, size_t max_line)
    : m_target(target), m_text(max_line) {}

TerminalGuard::~TerminalGuard() {
  m_out.clear();
  m_text.finish(m_out);
  m_target->sputn(m_out.data(), static_cast<std::streamsize>(m_out.size()));
  m_target->pubsync();
}

TerminalGuard::int_type TerminalGuard::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  const char c = traits_type::to_char_type(ch);
  xsputn(&c, 1);
  return ch;
}

std::streamsize TerminalGuard::xsputn(const char* s, std::streamsize n) {
  m_out.clear();
  m_text.feed(std::string_view(s, static_cast<size_t>(n)), m_out);
  m_target->sputn(m_out.data(), static_cast<std::streamsize>(m_out.size()));
  return n;
}

int TerminalGuard::sync() {
  return m_target->pubsync();
}

// [SECTION] Standard output

namespace {

TerminalText* g_stdout_text = nullptr;

ssize_t cookie_write(void*, const char* data, size_t size) {
  std::string out;
  g_stdout_text->feed(std::string_view(data, size), out);
  return io::write_all(STDOUT_FILENO, out) ? static_cast<ssize_t>(size) : -1;
}

int cookie_close(void*) {
  std::string out;
  g_stdout_text->finish(out);
  return io::write_all(STDOUT_FILENO, out) ? 0 : -1;
}

// std::cout's buffer: each write goes into C's stdout (ours), so printf and << keep their order.
class StdioForward final : public std::streambuf {
 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    return std::fputc(traits_type::to_char_type(ch), stdout) == EOF ? traits_type::eof() : ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<size_t>(n), stdout));
  }
  int sync() override { return std::fflush(stdout); }
};

}  // namespace

void guard_standard_output() {
  std::fflush(stdout);
  g_stdout_text = new TerminalText();  // lives until exit: stdio flushes stdout after main
  cookie_io_functions_t io{};
  io.write = cookie_write;
  io.close = cookie_close;
  FILE* guarded = fopencookie(nullptr, "w", io);
  if (!guarded) return;  // unfiltered, as before: better than no output
  // Line-buffered on a terminal (a prompt or progress shows at once), fully buffered into a pipe.
  setvbuf(guarded, nullptr, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
  stdout = guarded;
  // Never destroyed: std::cout is flushed after main's statics are gone.
  static StdioForward* const forward = new StdioForward();
  std::cout.rdbuf(forward);
}

}  // namespace tilescope::cli

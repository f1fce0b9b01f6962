// TerminalGuard: see terminal_guard.h.
#include "terminal_guard.h"

#include <cstdio>

namespace tilescope::cli {

TerminalGuard::TerminalGuard(std::streambuf* target, size_t max_line)
    : m_target(target), m_max_line(max_line) {}

TerminalGuard::~TerminalGuard() {
  if (m_dropped) end_line();
  m_target->pubsync();
}

void TerminalGuard::put(char c) {
  if (m_column >= m_max_line) {
    ++m_dropped;
    return;
  }
  m_target->sputc(c);
  ++m_column;
}

void TerminalGuard::end_line() {
  if (m_dropped) {
    const std::string note = "… (" + std::to_string(m_dropped) + " more bytes)";
    m_target->sputn(note.data(), static_cast<std::streamsize>(note.size()));
    m_dropped = 0;
  }
  m_column = 0;
}

TerminalGuard::int_type TerminalGuard::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  const auto c = static_cast<unsigned char>(traits_type::to_char_type(ch));
  if (c == '\n') {
    end_line();
    m_target->sputc('\n');
  } else if (c == '\r') {
    // Progress lines redraw themselves with a carriage return.
    m_column = 0;
    m_target->sputc('\r');
  } else if ((c < 0x20 && c != '\t') || c == 0x7F) {
    char esc[8];
    std::snprintf(esc, sizeof esc, "\\x%02x", c);
    for (const char* p = esc; *p; ++p) put(*p);
  } else {
    put(static_cast<char>(c));
  }
  return ch;
}

int TerminalGuard::sync() {
  return m_target->pubsync();
}

}  // namespace tilescope::cli

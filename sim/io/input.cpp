// Capped file reading and printable(): see input.h.
#include "sim/io/input.h"

#include "sim/io/format.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace tilescope::io {

namespace {

// Joins message parts. (GCC 12 at -O3 reports a false -Wrestrict on `"literal" + std::string&&`,
// GCC bug 105329; appending to one string avoids the pattern.)
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

}  // namespace

TextInput read_text_input(const std::string& path, uint64_t max_bytes, std::string_view what) {
  TextInput r;
  // O_NONBLOCK: opening a FIFO nobody writes to returns at once instead of blocking forever (a
  // lesson's file=, recorded() or a session path could name one: issue #25).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    r.error =
        errno == ENOENT
            ? join({"cannot open ", what, " '", printable(path), "': no such file"})
            : join({"cannot open ", what, " '", printable(path), "': ", std::strerror(errno)});
    return r;
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.error = join({"cannot read ", what, " '", printable(path), "': ", std::strerror(errno)});
    return r;
  }
  if (S_ISDIR(st.st_mode)) {
    r.error = join({"'", printable(path), "' is a directory, not ", what});
    return r;
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    r.error = join({"'", printable(path), "' is ", format_bytes(double(st.st_size)),
                    ", larger than ", format_bytes(double(max_bytes)), " (the limit for ", what,
                    "); is it the right file?"});
    return r;
  }
  // A regular file reads to its end; a pipe, socket or device is waited on at most
  // kStreamIdleSeconds for each chunk (a FIFO's writer that never writes, a terminal).
  const bool stream = !S_ISREG(st.st_mode);
  if (!stream) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && stream) {
      // A writer is there but nothing has come yet (with no writer at all, read says end).
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, kStreamIdleSeconds * 1000) == 0) {
        r.error =
            join({"'", printable(path), "' gave no data for ", std::to_string(kStreamIdleSeconds),
                  " s (a pipe nobody writes to?); ", what, " must be a file"});
        return r;
      }
      continue;
    }
    if (n < 0) {
      r.error = join({"cannot read ", what, " '", printable(path), "': ", std::strerror(errno)});
      return r;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > max_bytes) {
      r.error = join({"'", printable(path), "' has more than ", format_bytes(double(max_bytes)),
                      " (the limit for ", what,
                      "); an endless stream such as /dev/zero is not a file tilescope can read"});
      return r;
    }
  }
  r.ok = true;
  r.text = std::move(text);
  return r;
}

bool write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

size_t utf8_length(std::string_view s, size_t i, uint32_t& cp) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  cp = n == 1 ? c : n == 2 ? (c & 0x1Fu) : n == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  static constexpr uint32_t kLeast[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kLeast[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return n;
}

bool is_steering(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

bool valid_utf8(std::string_view text) {
  uint32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_length(text, i, cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string editor_safe_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  uint32_t cp = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = text[i] == '\0' ? 0 : utf8_length(text, i, cp);
    if (n == 0) {
      out += text[i] == '\0' ? "\u2400" : "\uFFFD";  // ␀ or the replacement character
      i += 1;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string printable(std::string_view text, size_t max_chars, bool keep_newlines) {
  std::string out;
  size_t shown = 0, i = 0;
  uint32_t cp = 0;
  for (; i < text.size() && shown < max_chars; ++shown) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool control = c < 0x20 || c == 0x7F;
    if (control && (c == '\t' || (keep_newlines && c == '\n'))) control = false;
    size_t n = control ? 0 : utf8_length(text, i, cp);
    if (n == 0) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
      i += 1;
    } else if (n > 1 && is_steering(cp)) {
      char esc[12];
      std::snprintf(esc, sizeof esc, "\\u%04X", static_cast<unsigned>(cp));
      out += esc;
      i += n;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (i < text.size()) out += join({"… (", std::to_string(text.size() - i), " more bytes)"});
  return out;
}

std::string trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

}  // namespace tilescope::io

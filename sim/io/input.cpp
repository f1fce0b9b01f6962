// Capped file reading and printable(): see input.h.
#include "sim/io/input.h"

#include "sim/io/format.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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
  namespace fs = std::filesystem;
  TextInput r;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    r.error = join({"cannot open ", what, " '", printable(path), "': no such file"});
    return r;
  }
  if (fs::is_directory(st)) {
    r.error = join({"'", printable(path), "' is a directory, not ", what});
    return r;
  }
  if (fs::is_regular_file(st)) {
    uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes) {
      r.error =
          join({"'", printable(path), "' is ", format_bytes(double(size)), ", larger than ",
                format_bytes(double(max_bytes)), " (the limit for ", what, "); is it the right file?"});
      return r;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    r.error = join({"cannot open ", what, " '", printable(path), "': ", std::strerror(errno)});
    return r;
  }
  // Devices and pipes have no size to ask for: read in chunks and stop one byte past the cap.
  std::string text;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      r.error = join({"'", printable(path), "' has more than ", format_bytes(double(max_bytes)),
                      " (the limit for ", what,
                      "); an endless stream such as /dev/zero is not a file tilescope can read"});
      return r;
    }
  }
  if (in.bad()) {
    r.error = join({"cannot read ", what, " '", printable(path), "'"});
    return r;
  }
  r.ok = true;
  r.text = std::move(text);
  return r;
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (a stray or
// truncated byte, an overlong form, a surrogate, past U+10FFFF); its code point in `cp`.
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

// Characters that steer a terminal or the order text is shown in rather than being shown: the C1
// controls (U+0080-U+009F: U+009B is a CSI on some terminals) and the bidirectional controls
// (U+202E makes "txt.exe" read "exe.txt"), and the line and paragraph separators.
bool is_steering(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

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

}  // namespace tilescope::io

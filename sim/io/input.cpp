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

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string printable(std::string_view text, size_t max_chars, bool keep_newlines) {
  std::string out;
  size_t shown = 0, i = 0;
  for (; i < text.size() && shown < max_chars; ++shown) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool control = c < 0x20 || c == 0x7F;
    if (control && (c == '\t' || (keep_newlines && c == '\n'))) control = false;
    size_t n = control ? 0 : utf8_length(text, i);
    if (n == 0) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
      i += 1;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  if (i < text.size()) out += join({"… (", std::to_string(text.size() - i), " more bytes)"});
  return out;
}

}  // namespace tilescope::io

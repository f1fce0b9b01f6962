// Word wrap at spaces only (text_wrap.h).
#include "app/core/text_wrap.h"

namespace tilescope::core {

namespace {

// The byte length of the UTF-8 character at s[i] (1 for a stray byte).
size_t char_len(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t n = b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  return i + n <= s.size() ? n : 1;
}

// Appends one paragraph (no '\n' in it) wrapped to `width`.
void wrap_paragraph(std::string_view p, float width,
                    const std::function<float(std::string_view)>& measure, std::string& out) {
  size_t line = 0;  // where the current line starts in p
  size_t pos = 0;
  while (pos < p.size()) {
    // The next word: [pos, end), with the spaces before it.
    size_t end = p.find(' ', pos);
    while (end == pos) end = p.find(' ', ++pos);  // runs of spaces belong to the word after
    if (end == std::string_view::npos) end = p.size();
    if (measure(p.substr(line, end - line)) <= width) {
      pos = end;
      continue;
    }
    if (line < pos && p[pos - 1] == ' ') {
      // The word does not fit after the line: the line ends at the space before it.
      out.append(p.substr(line, pos - 1 - line));
      out += '\n';
      line = pos;
      if (measure(p.substr(line, end - line)) <= width) {
        pos = end;
        continue;
      }
    }
    // One word wider than the line: as many characters as fit (one at least), then the rest.
    size_t cut = line + char_len(p, line);
    while (cut < end) {
      const size_t next = cut + char_len(p, cut);
      if (measure(p.substr(line, next - line)) > width) break;
      cut = next;
    }
    out.append(p.substr(line, cut - line));
    if (cut < p.size()) out += '\n';
    line = pos = cut;
  }
  out.append(p.substr(line));
}

}  // namespace

std::string wrap_at_spaces(std::string_view text, float width,
                           const std::function<float(std::string_view)>& measure) {
  if (width <= 0) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t start = 0;
  while (true) {
    const size_t nl = text.find('\n', start);
    wrap_paragraph(text.substr(start, nl == std::string_view::npos ? std::string_view::npos
                                                                    : nl - start),
                   width, measure, out);
    if (nl == std::string_view::npos) break;
    out += '\n';
    start = nl + 1;
  }
  return out;
}

}  // namespace tilescope::core

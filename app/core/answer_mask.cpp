// AnswerMask (answer_mask.h): number tokens read with their shown precision and scale.
#include "app/core/answer_mask.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace tilescope::core {

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// The scale a suffix right after a number gives it (after optional spaces): SI and binary
// prefixes and the percent sign, as the formatters write them.
double prefix_scale(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i >= s.size()) return 1;
  const std::string_view rest = s.substr(i);
  const auto starts = [&](std::string_view p) { return rest.substr(0, p.size()) == p; };
  struct Prefix {
    std::string_view text;
    double scale;
  };
  static const Prefix kPrefixes[] = {{"KiB", 1024.0},
                                     {"MiB", 1048576.0},
                                     {"GiB", 1073741824.0},
                                     {"TiB", 1099511627776.0},
                                     {"k", 1e3},
                                     {"K", 1e3},
                                     {"M", 1e6},
                                     {"G", 1e9},
                                     {"T", 1e12},
                                     {"P", 1e15},
                                     {"m", 1e-3},
                                     {"\xC2\xB5", 1e-6},  // µ
                                     {"u", 1e-6},
                                     {"n", 1e-9},
                                     {"%", 0.01}};
  for (const Prefix& p : kPrefixes) {
    if (!starts(p.text)) continue;
    // A prefix only when a unit letter or the end follows ("M", "MFLOP", "ms"), not a word
    // ("Memory"): binary prefixes are whole units already.
    const size_t after = i + p.text.size();
    const bool whole_unit = p.text.size() == 3 || p.text == "%";
    if (!whole_unit && after < s.size() && std::islower(static_cast<unsigned char>(s[after])) &&
        s[after] != 's')
      continue;
    // Nor an acronym ("6 GPU kernels", "4 SMs"): a capital after the prefix starts a unit.
    if (!whole_unit && after < s.size() && std::isupper(static_cast<unsigned char>(s[after]))) {
      size_t end = after;
      while (end < s.size() && std::isalpha(static_cast<unsigned char>(s[end]))) ++end;
      const std::string_view unit = s.substr(after, end - after);
      if (unit != "B" && unit != "FLOP" && unit != "FLOPS" && unit != "W") continue;
    }
    return p.scale;
  }
  return 1;
}

}  // namespace

std::string AnswerMask::apply(std::string_view text) const {
  if (m_hidden.empty()) return std::string(text);
  std::string out(text);
  size_t i = 0;
  while (i < text.size()) {
    // A number starts with a digit that does not continue a word ("L2", "x2").
    if (!digit(text[i]) ||
        (i > 0 && (std::isalpha(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      ++i;
      continue;
    }
    const size_t begin = i;
    std::string plain;  // the digits without thousands separators
    int decimals = -1;  // digits after the point; -1: no point
    int significant = 0;
    bool leading = true;
    while (i < text.size()) {
      const char c = text[i];
      if (digit(c)) {
        plain += c;
        if (decimals >= 0) ++decimals;
        if (c != '0' || !leading) {
          leading = false;
          ++significant;
        }
        ++i;
      } else if (c == ',' && decimals < 0 && i + 3 < text.size() + 1 && digit(text[i + 1]) &&
                 i + 3 <= text.size() && digit(text[i + 2]) && digit(text[i + 3])) {
        ++i;  // a thousands separator: "67,174,400"
      } else if (c == '.' && decimals < 0 && i + 1 < text.size() && digit(text[i + 1])) {
        plain += '.';
        decimals = 0;
        ++i;
      } else {
        break;
      }
    }
    const size_t mantissa_end = i;
    int exponent = 0;
    if (i + 1 < text.size() && (text[i] == 'e' || text[i] == 'E') &&
        (digit(text[i + 1]) || ((text[i + 1] == '-' || text[i + 1] == '+') && i + 2 < text.size() &&
                                digit(text[i + 2])))) {
      size_t j = i + 1;
      const bool negative = text[j] == '-';
      if (text[j] == '-' || text[j] == '+') ++j;
      int e = 0;
      while (j < text.size() && digit(text[j]) && e < 400) e = e * 10 + (text[j++] - '0');
      exponent = negative ? -e : e;
      i = j;
    }
    const size_t end = i;
    const double scale = prefix_scale(text.substr(end)) * std::pow(10.0, exponent);
    const double value = std::strtod(plain.c_str(), nullptr) * scale;
    // The value stands for anything that rounds to it: half a unit of its last digit.
    const double half = 0.5 * std::pow(10.0, -(decimals < 0 ? 0 : decimals)) * scale;
    bool hide = false;
    for (const Hidden& h : m_hidden) {
      const double slack = 1e-9 * std::fabs(h.value);
      if (std::fabs(h.value - value) > std::max(half, h.band * std::fabs(h.value)) + slack)
        continue;
      if (h.context.empty()) {
        hide = hide || significant >= 2;
        continue;
      }
      // The words after the number: "16 wavefronts", "16-way".
      size_t k = mantissa_end;
      while (k < text.size() && (text[k] == ' ' || text[k] == '-')) ++k;
      for (const std::string& w : h.context)
        if (text.substr(k, w.size()) == w) hide = true;
    }
    if (hide)
      for (size_t k = begin; k < mantissa_end; ++k)
        if (digit(out[k])) out[k] = '?';
  }
  return out;
}

}  // namespace tilescope::core

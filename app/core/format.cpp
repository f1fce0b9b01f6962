// Number formatting for the app: exact counts with thousands separators and short SI / binary
// forms.
#include "app/core/format.h"

#include <cmath>
#include <cstdio>

namespace tilescope::core {

std::string format_thousands(int64_t value) {
  // Work on the magnitude as unsigned so INT64_MIN does not overflow when negated.
  const bool negative = value < 0;
  uint64_t magnitude =
      negative ? uint64_t(0) - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return negative ? "-" + out : out;
}

std::string format_si(double value) {
  static const char* kPrefixes[] = {"", " K", " M", " G", " T", " P", " E"};
  double magnitude = std::fabs(value);
  int prefix = 0;
  while (magnitude >= 999.5 && prefix < 6) {
    magnitude /= 1000.0;
    value /= 1000.0;
    ++prefix;
  }
  char buf[64];
  if (prefix == 0 && value == std::floor(value)) {
    std::snprintf(buf, sizeof buf, "%.0f", value);
  } else if (magnitude >= 99.95) {
    std::snprintf(buf, sizeof buf, "%.0f%s", value, kPrefixes[prefix]);
  } else if (magnitude >= 9.995) {
    std::snprintf(buf, sizeof buf, "%.1f%s", value, kPrefixes[prefix]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%s", value, kPrefixes[prefix]);
  }
  return buf;
}

std::string format_flops(int64_t flops) {
  const std::string s = format_si(static_cast<double>(flops));
  return s + (s.back() >= '0' && s.back() <= '9' ? " FLOP" : "FLOP");
}

std::string format_int_list(const std::vector<int64_t>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out + "]";
}

std::string format_percent(double fraction) {
  if (fraction > 0.0 && fraction < 0.0005) return "<0.1%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

std::string duration_text(double seconds) {
  char buf[48];
  if (seconds >= 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.0f days", seconds / 86400);
  else if (seconds >= 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.0f hours", seconds / 3600);
  else if (seconds >= 120)
    std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(seconds));
  return buf;
}

}  // namespace tilescope::core

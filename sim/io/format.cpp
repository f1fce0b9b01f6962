// format_bytes: binary units, three significant digits; format_rate; format_ms; text columns.
#include "sim/io/format.h"

#include <cmath>
#include <cstdio>

namespace tilescope::io {

std::string format_rate(double bytes_per_s) {
  char buf[32];
  if (bytes_per_s >= 1e12)
    std::snprintf(buf, sizeof buf, "%.3g TB/s", bytes_per_s / 1e12);
  else
    std::snprintf(buf, sizeof buf, "%.3g GB/s", bytes_per_s / 1e9);
  return buf;
}

std::string format_ms(double ms) {
  char buf[32];
  if (ms >= 100)
    std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  else if (ms >= 1)
    std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  else
    std::snprintf(buf, sizeof buf, "%.1f µs", ms * 1000);
  return buf;
}

std::string format_bytes(double bytes) {
  if (!std::isfinite(bytes)) return std::isnan(bytes) ? "NaN B" : (bytes > 0 ? "inf B" : "-inf B");
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  const char* sign = bytes < 0 ? "-" : "";
  double v = std::fabs(bytes);
  int unit = 0;
  while (unit < 6 && v >= 1024) {
    v /= 1024;
    ++unit;
  }
  char buf[48];
  if (unit == 0 || v >= 100)
    std::snprintf(buf, sizeof buf, "%s%.0f %s", sign, v, kUnits[unit]);
  else
    std::snprintf(buf, sizeof buf, "%s%.3g %s", sign, v, kUnits[unit]);
  return buf;
}

size_t text_columns(std::string_view text) {
  size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80 ? 1 : 0;  // not a continuation byte
  return columns;
}

std::string pad_right(const std::string& text, size_t width) {
  const size_t columns = text_columns(text);
  return columns >= width ? text : text + std::string(width - columns, ' ');
}

std::string pad_left(const std::string& text, size_t width) {
  const size_t columns = text_columns(text);
  return columns >= width ? text : std::string(width - columns, ' ') + text;
}

}  // namespace tilescope::io

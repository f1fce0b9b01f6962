// format_bytes: binary units, three significant digits.
#include "sim/io/format.h"

#include <cmath>
#include <cstdio>

namespace tilescope::io {

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

}  // namespace tilescope::io

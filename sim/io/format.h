// The one way tilescope writes a byte count for people: binary units, three significant digits.
#pragma once

#include <string>

namespace tilescope::io {

// "96 B", "4 KiB", "1.5 MiB", "12.5 KiB", "100 MiB", "2.25 GiB": whole bytes below 1 KiB, then
// the largest binary unit that keeps the number at least 1, with three significant digits and no
// trailing zeros (at least the whole part: "1024 KiB" just below 1 MiB). Negative counts keep
// their sign; NaN and infinities are written as such. Every view, message, explanation and report
// uses it, so the same size reads the same everywhere.
std::string format_bytes(double bytes);

}  // namespace tilescope::io

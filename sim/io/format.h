// The one way tilescope writes a byte count for people: binary units, three significant digits;
// durations and rates likewise, and text padded to terminal columns.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tilescope::io {

// "96 B", "4 KiB", "1.5 MiB", "12.5 KiB", "100 MiB", "2.25 GiB": whole bytes below 1 KiB, then
// the largest binary unit that keeps the number at least 1, with three significant digits and no
// trailing zeros (at least the whole part: "1024 KiB" just below 1 MiB). Negative counts keep
// their sign; NaN and infinities are written as such. Every view, message, explanation and report
// uses it, so the same size reads the same everywhere.
std::string format_bytes(double bytes);

// A bandwidth in decimal units, as machine files and datasheets give them, three significant
// digits: "4.8 TB/s", "270 GB/s".
std::string format_rate(double bytes_per_s);

// A duration in milliseconds: "120 ms", "1.94 ms", "310.5 µs" (the Timings view, the counters
// table's times).
std::string format_ms(double ms);

// Columns a text takes in a terminal, counted in code points: "µs" and "→" are one column, not the
// two and three bytes UTF-8 spends on them. The CLI's tables line up by it.
size_t text_columns(std::string_view text);
// `text` padded with spaces to `width` columns, on the right (left-aligned) or on the left
// (right-aligned); a text already as wide comes back as it is.
std::string pad_right(const std::string& text, size_t width);
std::string pad_left(const std::string& text, size_t width);

}  // namespace tilescope::io

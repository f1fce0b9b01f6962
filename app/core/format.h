// Number formatting for the app: exact counts with thousands separators and short SI / binary
// forms.
#pragma once

#include "sim/io/format.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::core {

// 43352064 → "43,352,064".
std::string format_thousands(int64_t value);

// A count with an SI prefix and three significant digits: 43352064 → "43.4 M", 512 → "512".
// FLOPs are counted, not measured in bytes, so they use powers of 1000.
std::string format_si(double value);

// FLOPs with an SI prefix: 43352064 → "43.4 MFLOP", 10 → "10 FLOP".
std::string format_flops(int64_t flops);

// Bytes in binary units, because memory sizes are powers of two: 2097152 → "2 MiB", 96 → "96 B".
using io::format_bytes;  // sim/io/format.h

// "[64, 1024]" style list of int64 values (strides, shapes).
std::string format_int_list(const std::vector<int64_t>& values);

// A percentage with one decimal place: 0.4213 → "42.1%". A share that is not zero but rounds to
// 0.0% prints as "<0.1%", so a learner does not read it as nothing.
std::string format_percent(double fraction);

// A wait in words, as a learner plans around it: "7 s", "12 minutes", "3 hours", "4 days".
std::string duration_text(double seconds);

}  // namespace tilescope::core

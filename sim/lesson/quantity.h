// Quantities a learner types for a predict block — "2.5 MiB", "4e6", "37%", "3x", "1.2 ms" — in
// the units a predict block may name, parsed to the unit's base and formatted back.
//
//   unit     base             suffixes a learner may type (case does not matter)
//   bytes    bytes            B, byte(s), KB MB GB TB PB (10^3 steps), KiB MiB GiB TiB (2^10 steps)
//   B/s      bytes/s          the bytes suffixes with /s: GB/s, GiB/s, ...
//   s        seconds          s, ms, us, µs, ns
//   FLOP     FLOP             FLOP(s) with k M G T P
//   FLOP/s   FLOP/s           FLOP/s or FLOPS with k M G T P
//   x        times            x, ×
//   %        a fraction       %; a bare number is in percent too (37 → 0.37)
//   (none)   a plain number   % (37% → 0.37); x; k M G T P
// A prefix alone stands for the unit with it: "120k" FLOP and "3k" are decimal; "4M" bytes is
// 4 MiB, as machine files write "48K" for 48 KiB (type "4 MB" for 4e6). Not for B/s, s, x or %.
// (sim/model's parse_quantity reads machine files; this one adds what a learner types: signs,
// thousands commas, percent, times, ratios and FLOP counts.)
// Numbers are decimal with an optional exponent (4e6) and optional thousands commas (1,048,576).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

// The unit names above, "" (a plain number) excluded.
const std::vector<std::string>& predict_units();
bool is_predict_unit(const std::string& unit);

struct Quantity {
  bool ok = false;
  double value = 0;   // in the unit's base
  std::string error;  // when !ok: what was expected, with examples
};

// Parses a learner's quantity in `unit`; an error says what a quantity of that unit looks like.
Quantity parse_quantity(std::string_view text, const std::string& unit);

// A value as a learner would write it, 4 significant digits: "2.25 MiB", "1.2 ms", "37%",
// "2.003x", "1.5 GFLOP"; parse_quantity reads it back (to those digits).
std::string format_quantity(double value, const std::string& unit);

}  // namespace tilescope::lesson

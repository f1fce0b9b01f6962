// io::format_bytes, the one byte formatter: binary units, three significant digits. Each
// expected string is the count worked out by hand beside it.
#include "sim/io/format.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using tilescope::io::format_bytes;

TEST_CASE("whole bytes below 1 KiB") {
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(96) == "96 B");
  CHECK(format_bytes(1023) == "1023 B");
}

TEST_CASE("the largest binary unit that keeps the number at least 1, three digits") {
  CHECK(format_bytes(1024) == "1 KiB");
  CHECK(format_bytes(1536) == "1.5 KiB");    // 1.5 × 1024
  CHECK(format_bytes(12800) == "12.5 KiB");  // 12.5 × 1024
  CHECK(format_bytes(48 * 1024) == "48 KiB");
  CHECK(format_bytes(2 * 1024 * 1024) == "2 MiB");
  CHECK(format_bytes(1310720) == "1.25 MiB");             // 1.25 × 2^20
  CHECK(format_bytes(1234567) == "1.18 MiB");             // 1.1774 MiB
  CHECK(format_bytes(100.5 * 1024 * 1024) == "100 MiB");  // three digits: the whole part
  CHECK(format_bytes(60.0 * (1 << 30)) == "60 GiB");
  CHECK(format_bytes(1023.6 * 1024) == "1024 KiB");  // just below 1 MiB stays in KiB
  CHECK(format_bytes(2.0 * (1ull << 60)) == "2 EiB");
}

TEST_CASE("signs and non-finite counts") {
  CHECK(format_bytes(-1536) == "-1.5 KiB");
  CHECK(format_bytes(-96) == "-96 B");
  CHECK(format_bytes(std::numeric_limits<double>::infinity()) == "inf B");
  CHECK(format_bytes(std::nan("")) == "NaN B");
}

TEST_CASE("text columns: code points, not bytes; padding on either side") {
  using tilescope::io::pad_left;
  using tilescope::io::pad_right;
  using tilescope::io::text_columns;
  CHECK(text_columns("") == 0);
  CHECK(text_columns("13.6 µs") == 7);  // µ is two bytes, one column
  CHECK(text_columns("x → y") == 5);    // → is three bytes
  CHECK(pad_right("1.9 µs", 8) == "1.9 µs  ");
  CHECK(pad_left("1.9 µs", 8) == "  1.9 µs");
  CHECK(pad_right("already wide", 4) == "already wide");
  CHECK(pad_left("already wide", 4) == "already wide");
}

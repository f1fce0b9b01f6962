// The answer mask (app/core/answer_mask.h): a number is hidden when a hidden value rounds to it at
// the precision shown, whatever the formatter wrote; small counts and unrelated numbers stay.
#include "app/core/answer_mask.h"

#include <doctest/doctest.h>

using tilescope::core::AnswerMask;

TEST_CASE("answer mask: the same value in every form the views write it") {
  // flops(layer) of lesson 1: 2 · 64 · 512 · 1024 + 2 · 64 · 512 = 67,174,400.
  AnswerMask m;
  m.set({{67174400.0, 0.01, {}}});
  CHECK(m.apply("67,174,400 FLOP") == "??,???,??? FLOP");
  CHECK(m.apply("67174400") == "????????");
  CHECK(m.apply("67.2 MFLOP") == "??.? MFLOP");  // 67.15e6 ≤ 67,174,400 < 67.25e6
  CHECK(m.apply("(67.2 M)") == "(??.? M)");
  CHECK(m.apply("6.72e7") == "?.??e7");
  CHECK(m.apply("66.4 MFLOP") == "66.4 MFLOP");        // 1.2% off: outside the 1% band
  CHECK(m.apply("64 x 512") == "64 x 512");            // unrelated counts stay
  CHECK(m.apply("L2 hit 67.2 M") == "L2 hit ??.? M");  // "L2" is a name, not a number
}

TEST_CASE("answer mask: binary sizes, ratios, percentages, times; small counts kept") {
  AnswerMask m;
  // lesson 2: DRAM bytes unfused 98,560 and fused 49,408; their ratio 1.995.
  // The answer's band is its block's tolerance (10%), the operands' 1%.
  m.set({{98560.0, 0.01, {}}, {49408.0, 0.01, {}}, {1.99481, 0.10, {}}});
  CHECK(m.apply("96.2 KiB at DRAM") == "??.? KiB at DRAM");  // 96.15–96.25 KiB
  CHECK(m.apply("48.2 KiB") == "??.? KiB");                  // 49,408 B is 48.25 KiB exactly
  CHECK(m.apply("2.00x fewer") == "?.??x fewer");
  CHECK(m.apply("1.995x") == "?.???x");
  CHECK(m.apply("2.1x") == "?.?x");  // 5% off, inside the answer's 10%
  CHECK(m.apply("2.4x") == "2.4x");  // 20% off
  CHECK(m.apply("2x") == "2x");      // one significant digit: kept
  CHECK(m.apply("2 kernels") == "2 kernels");
  AnswerMask pct;
  pct.set({{0.374, 0.01, {}}});
  CHECK(pct.apply("hit rate 37.4%") == "hit rate ??.?%");
  CHECK(pct.apply("hit rate 37.9%") == "hit rate 37.9%");
  AnswerMask t;
  t.set({{3.5e-6, 0.01, {}}});
  CHECK(t.apply("3.50 µs") == "?.?? µs");
  CHECK(t.apply("3.50 ms") == "3.50 ms");
  AnswerMask none;
  CHECK(none.apply("67.2 M") == "67.2 M");
}

TEST_CASE("answer mask: a small count is hidden only beside the words that say what it counts") {
  // Lesson 5: the W tile's reads split 16 ways; 16 is also a loop extent and a tile size.
  AnswerMask m;
  m.set({{16.0, 0.01, {"wavefront", "way"}}});
  CHECK(m.apply("32 lanes → 16 wavefronts (2 without conflicts)") ==
        "32 lanes → ?? wavefronts (2 without conflicts)");
  CHECK(m.apply("a 16-way conflict") ==
        "a ?"
        "?-way conflict");  // (no trigraph)
  CHECK(m.apply("j.i.o 16 thread.x") == "j.i.o 16 thread.x");
  CHECK(m.apply("W 4×16 (256 B)") == "W 4×16 (256 B)");
  // Lesson 16: "6 GPU kernels" is six kernels, not six giga-anything; "6 GB" is a size.
  AnswerMask kernels;
  kernels.set({{6.0, 0.01, {"GPU kernel", "kernel"}}});
  CHECK(kernels.apply("5 framework operators, 6 GPU kernels") ==
        "5 framework operators, ? GPU kernels");
  CHECK(kernels.apply("6 kernels") == "? kernels");
  AnswerMask size;
  size.set({{6e9, 0.01, {}}});
  CHECK(size.apply("6.00 GB") == "?.?? GB");
  CHECK(size.apply("6.00 GPU") == "6.00 GPU");
  AnswerMask two;
  two.set({{2.0, 0.01, {"way"}}});
  CHECK(two.apply("2-way") == "?-way");  // one digit, but said what it counts
  CHECK(two.apply("2 kernels") == "2 kernels");
}

// Word wrap at spaces only (app/core/text_wrap.h): "80.2 KiB" stays on one line.
#include "app/core/text_wrap.h"

#include <doctest/doctest.h>

using tilescope::core::wrap_at_spaces;

namespace {

// Every character one unit wide (a UTF-8 character counts once).
float chars(std::string_view s) {
  float n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("wrap at spaces: a number with a decimal point is never split") {
  // The line is 47 characters; ImGui 1.86 would break after "80." where its width runs out.
  const std::string t = "80.2 KiB reached HBM3e; the minimum is 80.2 KiB";
  CHECK(wrap_at_spaces(t, 40, chars) == "80.2 KiB reached HBM3e; the minimum is\n80.2 KiB");
  CHECK(wrap_at_spaces(t, 36, chars) == "80.2 KiB reached HBM3e; the minimum\nis 80.2 KiB");
  CHECK(wrap_at_spaces(t, 100, chars) == t);
  CHECK(wrap_at_spaces(t, 0, chars) == t);  // no width: no wrap
}

TEST_CASE("wrap at spaces: own newlines stay; a word wider than the line is cut between characters") {
  CHECK(wrap_at_spaces("ab cd\nef gh", 5, chars) == "ab cd\nef gh");
  CHECK(wrap_at_spaces("ab cd ef", 5, chars) == "ab cd\nef");
  CHECK(wrap_at_spaces("abcdefgh", 3, chars) == "abc\ndef\ngh");
  CHECK(wrap_at_spaces("x abcdefgh", 3, chars) == "x\nabc\ndef\ngh");
  // UTF-8: "××××" is four characters, cut two and two, never inside one.
  CHECK(wrap_at_spaces("\u00D7\u00D7\u00D7\u00D7", 2, chars) == "\u00D7\u00D7\n\u00D7\u00D7");
  // A width under one character still makes progress, one character a line.
  CHECK(wrap_at_spaces("abc", 0.5f, chars) == "a\nb\nc");
}

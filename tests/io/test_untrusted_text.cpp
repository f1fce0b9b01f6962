// What untrusted bytes become before they reach a terminal, an editor or a recursive JSON value
// (issue #25): printable() escapes controls that steer a terminal or the reading order,
// editor_safe_text() makes NUL and invalid UTF-8 visible, parse_json() refuses deep nesting
// before nlohmann's recursive copies and prints can overflow the stack. Each expectation is
// worked out by hand beside it.
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <doctest/doctest.h>

#include <string>

using namespace tilescope::io;

TEST_CASE("printable escapes ESC, BEL, C1 controls and bidirectional overrides") {
  CHECK(printable("a\x1b[31mb") == "a\\x1b[31mb");
  CHECK(printable("bell\a") == "bell\\x07");
  // U+009B (CSI on some terminals) is C2 9B in UTF-8.
  CHECK(printable("x\xc2\x9by") == "x\\u009By");
  // U+202E RIGHT-TO-LEFT OVERRIDE (E2 80 AE) and U+2066 LEFT-TO-RIGHT ISOLATE (E2 81 A6).
  CHECK(printable("txt\xe2\x80\xae" "exe") == "txt\\u202Eexe");
  CHECK(printable("\xe2\x81\xa6x") == "\\u2066x");
  // Ordinary non-ASCII text is kept: é (C3 A9), → (E2 86 92), 😀 (F0 9F 98 80).
  CHECK(printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
}

TEST_CASE("printable escapes overlong forms and surrogates byte by byte") {
  // C0 AF is an overlong '/', ED A0 80 a UTF-16 surrogate: neither is UTF-8.
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  CHECK_FALSE(valid_utf8("\xc0\xaf"));
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));
  CHECK(valid_utf8("caf\xc3\xa9"));
}

TEST_CASE("editor-safe text: NUL becomes U+2400, an invalid byte U+FFFD, the rest unchanged") {
  const std::string nul("x\0y", 3);
  CHECK(editor_safe_text(nul) == "x\xe2\x90\x80y");
  CHECK(editor_safe_text("a\xffz") == "a\xef\xbf\xbdz");
  CHECK(editor_safe_text("caf\xc3\xa9\n") == "caf\xc3\xa9\n");
  // The result never holds a NUL, so a NUL-terminated widget sees the whole text.
  CHECK(editor_safe_text(nul).find('\0') == std::string::npos);
}

TEST_CASE("json depth is counted outside strings, with where it first passes the limit") {
  // {"a": [[1]], "s": "[[[["}: the object, then two lists; the brackets in the string do not count.
  const JsonDepth d = json_depth(R"({"a": [[1]], "s": "[[[[\"["})", 2);
  CHECK(d.depth == 3);
  CHECK(d.line == 1);
  CHECK(d.column == 8);  // the second '[' of "[[1]]" is the 8th character
  CHECK(json_depth("[1, [2]]", 2).line == 0);
}

TEST_CASE("parse_json refuses nesting past the limit and says where; parses the rest") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const JsonInput r = parse_json(deep);
  CHECK_FALSE(r.ok);
  CHECK(r.error == "line 1, column 65: nests 100000 levels of lists and objects deep (at most 64 "
                   "are read)");
  const JsonInput ok = parse_json(R"({"k": [1, 2, {"m": true}]})");
  REQUIRE(ok.ok);
  CHECK(ok.value["k"][2]["m"] == true);
  const JsonInput bad = parse_json("{ not json");
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("parse error") != std::string::npos);
}

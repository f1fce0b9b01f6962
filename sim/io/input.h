// Reading files a user names (models, lessons, machines, sessions) with a size cap, and printing
// untrusted text (file contents echoed in errors) so it cannot drive the terminal.
//
// A learner may point tilescope at anything: a directory, /dev/zero, a FIFO, a 4 GB log. Every
// reader goes through read_text_input(), which reads at most `max_bytes` + 1 bytes and refuses
// the rest with a message that says what and how big, instead of growing until memory runs out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tilescope::io {

// Limits for the text files tilescope reads whole. Models, lessons and machine files written by
// hand are a few KiB; a session holds one model text and its steps.
inline constexpr uint64_t kMaxModelBytes = 8ull << 20;
inline constexpr uint64_t kMaxLessonBytes = 8ull << 20;
inline constexpr uint64_t kMaxMachineBytes = 1ull << 20;
inline constexpr uint64_t kMaxSessionBytes = 16ull << 20;
inline constexpr uint64_t kMaxRecordingBytes = 64ull << 20;
// Longest line a streamed reader (din traces) accepts: a din line is "label address size".
inline constexpr size_t kMaxStreamLineBytes = 4096;

struct TextInput {
  bool ok = false;
  std::string text;   // the whole file when ok
  std::string error;  // when !ok: "is a directory", "is larger than 8 MiB (the limit for …)", …
};

// Reads `path` whole when it is a regular file (or a stream that ends) of at most `max_bytes`.
// `what` names the kind of file for the message ("a model file"). Never throws.
TextInput read_text_input(const std::string& path, uint64_t max_bytes, std::string_view what);

// Text from a file, made safe to print: control characters (ESC, NUL, BEL, CR, …; not tab or
// newline when `keep_newlines`) become \xNN, invalid UTF-8 bytes too; C1 controls, bidirectional
// overrides and isolates (U+202E, U+2066, …) and the line separators become \uXXXX; anything past
// `max_chars` is cut with "… (N more bytes)".
std::string printable(std::string_view text, size_t max_chars = 160, bool keep_newlines = false);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or stray bytes).
bool valid_utf8(std::string_view text);

// Text an editor widget can hold: NUL bytes become U+2400 (␀), bytes that are not UTF-8 become
// U+FFFD, so a NUL-terminated widget never sees a length that differs from the text's.
std::string editor_safe_text(std::string_view text);

}  // namespace tilescope::io

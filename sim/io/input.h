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
// How long a pipe or device named as an input may stay silent before the read gives up.
inline constexpr int kStreamIdleSeconds = 10;
// Longest line a streamed reader (din traces) accepts: a din line is "label address size".
inline constexpr size_t kMaxStreamLineBytes = 4096;

struct TextInput {
  bool ok = false;
  std::string text;   // the whole file when ok
  std::string error;  // when !ok: "is a directory", "is larger than 8 MiB (the limit for …)", …
};

// Reads `path` whole when it is a regular file (or a stream that ends) of at most `max_bytes`.
// `what` names the kind of file for the message ("a model file"). Never blocks on a FIFO without
// a writer (it reads as empty) or on a stream silent for kStreamIdleSeconds. Never throws.
TextInput read_text_input(const std::string& path, uint64_t max_bytes, std::string_view what);

// Writes all of `bytes` to file descriptor `fd`, retrying short writes and EINTR; false on an
// error (errno says which).
bool write_all(int fd, std::string_view bytes);

// Text from a file, made safe to print: control characters (ESC, NUL, BEL, CR, …; not tab or
// newline when `keep_newlines`) become \xNN, invalid UTF-8 bytes too; C1 controls, bidirectional
// overrides and isolates (U+202E, U+2066, …) and the line separators become \uXXXX; anything past
// `max_chars` is cut with "… (N more bytes)".
std::string printable(std::string_view text, size_t max_chars = 160, bool keep_newlines = false);

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when it is not one (a stray or
// truncated byte, an overlong form, a surrogate, past U+10FFFF); its code point in `cp`.
size_t utf8_length(std::string_view s, size_t i, uint32_t& cp);

// Characters that steer a terminal or the order text is shown in rather than being shown: the C1
// controls (U+0080-U+009F: U+009B is a CSI on some terminals), the bidirectional controls
// (U+202E makes "txt.exe" read "exe.txt") and the line and paragraph separators.
bool is_steering(uint32_t cp);

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or stray bytes).
bool valid_utf8(std::string_view text);

// Text an editor widget can hold: NUL bytes become U+2400 (␀), bytes that are not UTF-8 become
// U+FFFD, so a NUL-terminated widget never sees a length that differs from the text's.
std::string editor_safe_text(std::string_view text);

// `s` without its leading and trailing whitespace (std::isspace): a line or a field of a file a
// user wrote (lessons, machines, answers).
std::string trim(std::string_view s);

}  // namespace tilescope::io

// A lesson's Markdown as plain data: blocks (headings, paragraphs, list items, code, tables,
// rules) holding styled spans, parsed with md4c; and the word wrap the lesson view draws them
// with. No ImGui: tests read the model and the wrapped lines with a fixed-width measure.
//
// Maths between dollars (`$4 \times 4096^2$`) comes out as plain text with Unicode (4 × 4096²),
// which any font with the Latin-1 and super/subscript ranges shows legibly.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core::md {

// Style bits of a span; a span may combine them (bold code inside a link).
enum SpanStyle : uint8_t {
  kPlain = 0,
  kStrong = 1,
  kEmph = 2,
  kCode = 4,
  kLink = 8,
  kMath = 16,
  kStrike = 32,
  kImage = 64,  // an image: `text` is its alt text, `href` its source path
};

struct Span {
  std::string text;  // "\n" alone is a hard line break
  uint8_t style = kPlain;
  std::string href;  // links and images
};

enum class BlockKind { Paragraph, Heading, ListItem, Code, Table, Rule };

struct Block {
  BlockKind kind = BlockKind::Paragraph;
  int level = 0;       // heading 1-6; list item nesting depth (1 = top level)
  int quote = 0;       // how many block quotes it sits in
  std::string bullet;  // list items: "•", "3." or "" for a continuation paragraph
  std::vector<Span> spans;
  std::string code, lang;                            // code blocks (each line ends in '\n')
  std::vector<std::vector<std::vector<Span>>> rows;  // tables: rows of cells; row 0 is the head
};

// Parses CommonMark with tables, strikethrough and $maths$. Raw HTML (comments such as the lesson
// step markers) is dropped. Never throws. (A build without md4c — the headless GPU machine's —
// keeps each blank-line separated part as one plain paragraph.)
std::vector<Block> parse_markdown(std::string_view text);

// LaTeX as it appears in a lesson's maths, as readable text: \times → ×, ^2 → ², _i → ᵢ,
// \frac{a}{b} → (a)/(b) (bare when one token), \le → ≤, \cdot → ·, Greek letters, \text{x} → x.
// Anything it does not know is kept as written, minus the backslash.
std::string latex_to_text(std::string_view tex);

// The concatenated text of spans (tests, and the search for a step's place).
std::string plain_text(const std::vector<Span>& spans);

// [SECTION] Word wrap

// Width in pixels of `text` drawn in `style`'s font.
using SpanMeasure = std::function<float(std::string_view text, uint8_t style)>;

struct WrappedRun {
  size_t span = 0;   // index into the spans
  std::string text;  // the part of the span on this line
  float x = 0, w = 0;
};
struct WrappedLine {
  std::vector<WrappedRun> runs;
  float width = 0;
};

// Breaks spans into lines no wider than `width`: at blanks, after a hard break, and inside a word
// only when the word alone is wider than a line. Images sit on a line of their own.
std::vector<WrappedLine> wrap_spans(const std::vector<Span>& spans, float width,
                                    const SpanMeasure& measure);

}  // namespace tilescope::core::md

// A read-only source listing in the monospace font with simple syntax colours (keywords, numbers,
// comments), drawn on ImDrawList line by line with a clipper so long generated files stay cheap.
#pragma once

#include <imgui.h>

#include <string>
#include <string_view>

namespace tilescope::gui {

struct CodeColours {
  ImU32 text, keyword, number, comment, line_number;
};

// Fills the current child window (scrollable) with `source`.
void draw_code(const char* id, std::string_view source, ImFont* mono, const CodeColours& colours,
               ImVec2 size);

// The colour class of each byte of one line: 0 text, 1 keyword, 2 number, 3 comment. Exposed for
// tests.
std::string classify_code_line(std::string_view line);

}  // namespace tilescope::gui

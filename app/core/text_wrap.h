// Word wrap that breaks only at spaces. ImGui 1.86's TextWrapped also breaks after '.', ',' and
// ';', so "80.2 KiB" came out as "80." and "2 KiB" on two lines (the Memory inspector at 1280
// wide); a word longer than the line is still broken, between characters, as a last resort.
//
// Pure C++ (no ImGui): the widget (app/gui/widgets/text_wrap.h) passes the font's measure.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tilescope::core {

// `text` with '\n' put in place of the spaces where its lines must break to be at most `width`
// wide by `measure`; its own newlines stay. A width of 0 or less wraps nothing.
std::string wrap_at_spaces(std::string_view text, float width,
                           const std::function<float(std::string_view)>& measure);

}  // namespace tilescope::core

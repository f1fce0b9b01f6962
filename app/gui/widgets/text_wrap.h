// text_wrapped: ImGui::TextWrapped that breaks lines only at spaces (app/core/text_wrap.h says
// why), at the same wrap position ImGui would use (the pushed one, else the content's right edge).
#pragma once

#include <imgui.h>

namespace tilescope::gui {

void text_wrapped(const char* fmt, ...) IM_FMTARGS(1);
// The same in the disabled (secondary) text colour: ImGui::TextDisabled, wrapped.
void disabled_wrapped(const char* fmt, ...) IM_FMTARGS(1);

}  // namespace tilescope::gui

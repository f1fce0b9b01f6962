// Wrapped text that keeps "80.2 KiB" on one line (text_wrap.h).
#include "app/gui/widgets/text_wrap.h"

#include "app/core/text_wrap.h"

#include <imgui_internal.h>

#include <cstdarg>
#include <cstdio>
#include <string>

namespace tilescope::gui {

namespace {

void wrapped_v(const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(text.data(), text.size() + 1, fmt, args);
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (window->SkipItems) return;
  // As TextWrapped: the pushed wrap position, else the right edge of the content region.
  const float wrap_pos = window->DC.TextWrapPos < 0.0f ? 0.0f : window->DC.TextWrapPos;
  const float width = ImGui::CalcWrapWidthForPos(window->DC.CursorPos, wrap_pos);
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  const std::string lines = core::wrap_at_spaces(text, width, [&](std::string_view s) {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
  });
  ImGui::PushTextWrapPos(-1.0f);  // the lines are already broken: ImGui must not break them again
  ImGui::TextUnformatted(lines.data(), lines.data() + lines.size());
  ImGui::PopTextWrapPos();
}

}  // namespace

void text_wrapped(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  wrapped_v(fmt, args);
  va_end(args);
}

void disabled_wrapped(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  wrapped_v(fmt, args);
  ImGui::PopStyleColor();
  va_end(args);
}

}  // namespace tilescope::gui

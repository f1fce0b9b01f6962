// The AddText wrappers and the mask they apply (text_mask.h). The wrapped names are Itanium-ABI
// mangled member functions: the first parameter is `this`.
#include "app/gui/widgets/text_mask.h"

#include <imgui.h>

#include <cstring>

namespace tilescope::gui {

namespace {

core::AnswerMask g_mask;
int g_paused = 0;
bool g_recording = false;
std::vector<std::string> g_recorded;

// The text to draw for [begin, end): masked unless paused; recorded when asked.
std::string filtered(const char* begin, const char* end) {
  if (!end) end = begin + std::strlen(begin);
  std::string text = g_paused > 0 || g_mask.empty() ? std::string(begin, end)
                                                    : g_mask.apply(std::string_view(begin, end - begin));
  if (g_recording) g_recorded.push_back(text);
  return text;
}

}  // namespace

void set_text_mask(core::AnswerMask mask) {
  g_mask = std::move(mask);
}

TextMaskPause::TextMaskPause() {
  ++g_paused;
}
TextMaskPause::~TextMaskPause() {
  --g_paused;
}

void record_frame_text() {
  g_recording = true;
  g_recorded.clear();
}

std::vector<std::string> take_frame_text() {
  g_recording = false;
  return std::move(g_recorded);
}

}  // namespace tilescope::gui

extern "C" {

// ImDrawList::AddText(const ImFont*, float, const ImVec2&, ImU32, const char*, const char*,
//                     float, const ImVec4*)
void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap, const ImVec4* clip);
void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
    ImDrawList* self, const ImFont* font, float size, const ImVec2& pos, ImU32 col,
    const char* begin, const char* end, float wrap, const ImVec4* clip) {
  const std::string text = tilescope::gui::filtered(begin, end);
  __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(
      self, font, size, pos, col, text.data(), text.data() + text.size(), wrap, clip);
}

// ImDrawList::AddText(const ImVec2&, ImU32, const char*, const char*)
void __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos,
                                                     ImU32 col, const char* begin,
                                                     const char* end);
void __wrap__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* self, const ImVec2& pos,
                                                     ImU32 col, const char* begin,
                                                     const char* end) {
  const std::string text = tilescope::gui::filtered(begin, end);
  __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(self, pos, col, text.data(),
                                                  text.data() + text.size());
}

}  // extern "C"

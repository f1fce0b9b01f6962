// The AddText wrappers and the mask they apply (text_mask.h). The wrapped names are Itanium-ABI
// mangled member functions: the first parameter is `this`.
#include "app/gui/widgets/text_mask.h"

#include <imgui.h>
#include <imgui_internal.h>  // ImDrawListSharedData: the default font of a draw list

#include <algorithm>
#include <cfloat>

#include <cstring>

namespace tilescope::gui {

namespace {

core::AnswerMask g_mask;
int g_paused = 0;
bool g_recording = false;
std::vector<std::string> g_recorded;
bool g_clip_check = false;
std::vector<ClippedText> g_clipped;

// The text to draw for [begin, end): masked unless paused; recorded when asked.
std::string filtered(const char* begin, const char* end) {
  if (!end) end = begin + std::strlen(begin);
  std::string text = g_paused > 0 || g_mask.empty() ? std::string(begin, end)
                                                    : g_mask.apply(std::string_view(begin, end - begin));
  if (g_recording) g_recorded.push_back(text);
  return text;
}

}  // namespace

// Records `text` when it runs past the right edge of its clip rectangle while its start is inside
// it (a text wholly outside is scrolled away or culled, not cut).
void check_clip(const ImDrawList* list, const ImFont* font, float size, const ImVec2& pos,
                const std::string& text, float wrap, const ImVec4* fine_clip) {
  if (!g_clip_check || !font || text.empty()) return;
  ImVec4 clip = list->_CmdHeader.ClipRect;
  if (fine_clip) {
    clip.x = std::max(clip.x, fine_clip->x);
    clip.y = std::max(clip.y, fine_clip->y);
    clip.z = std::min(clip.z, fine_clip->z);
    clip.w = std::min(clip.w, fine_clip->w);
  }
  if (pos.x >= clip.z || pos.y >= clip.w || pos.x < clip.x - 1.0f) return;
  const ImVec2 s = font->CalcTextSizeA(size, FLT_MAX, wrap, text.data(), text.data() + text.size());
  if (pos.y + s.y <= clip.y) return;
  const float cut = pos.x + s.x - clip.z;
  if (cut > 1.0f)
    g_clipped.push_back({list->_OwnerName ? list->_OwnerName : "", text, cut});
}

void set_clip_check(bool on) {
  g_clip_check = on;
}

void clear_clipped_text() {
  g_clipped.clear();
}

const std::vector<ClippedText>& clipped_text() {
  return g_clipped;
}

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
  tilescope::gui::check_clip(self, font ? font : self->_Data->Font,
                             size > 0.0f ? size : self->_Data->FontSize, pos, text, wrap, clip);
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
  tilescope::gui::check_clip(self, self->_Data->Font, self->_Data->FontSize, pos, text, 0.0f,
                             nullptr);
  __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(self, pos, col, text.data(),
                                                  text.data() + text.size());
}

}  // extern "C"

// Small horizontal bars on ImDrawList: share-of-total bars for the canvas and the inspector.
#include "app/gui/widgets/bars.h"

#include <algorithm>

namespace tilescope::gui {

void draw_share_bar(ImDrawList* dl, ImVec2 min, ImVec2 max, double fraction, ImU32 bg, ImU32 fill,
                    float rounding) {
  dl->AddRectFilled(min, max, bg, rounding);
  const double f = std::clamp(fraction, 0.0, 1.0);
  if (f <= 0.0) return;
  const float w = std::max(1.0f, static_cast<float>((max.x - min.x) * f));
  dl->AddRectFilled(min, ImVec2(min.x + w, max.y), fill, rounding);
}

void share_bar_item(double fraction, ImU32 bg, ImU32 fill, float width, const char* label) {
  const float h = ImGui::GetTextLineHeight();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float bar_h = std::max(4.0f, h * 0.55f);
  const float y0 = p.y + (h - bar_h) / 2;
  draw_share_bar(ImGui::GetWindowDrawList(), ImVec2(p.x, y0), ImVec2(p.x + width, y0 + bar_h),
                 fraction, bg, fill);
  ImGui::Dummy(ImVec2(width, h));
  if (label && *label) {
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
  }
}

}  // namespace tilescope::gui

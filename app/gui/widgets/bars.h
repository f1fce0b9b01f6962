// Small horizontal bars on ImDrawList: share-of-total bars for the canvas and the inspector.
#pragma once

#include <imgui.h>

namespace tilescope::gui {

// A filled bar from `min` to `max`; the first `fraction` (clamped to 0..1) drawn in `fill`.
// A non-zero fraction always shows at least one pixel so a tiny share is visibly not zero.
void draw_share_bar(ImDrawList* dl, ImVec2 min, ImVec2 max, double fraction, ImU32 bg, ImU32 fill,
                    float rounding = 2.0f);

// The same as an ImGui item (takes layout space): a bar `width` wide, one text line tall, with
// `label` drawn after it.
void share_bar_item(double fraction, ImU32 bg, ImU32 fill, float width, const char* label);

}  // namespace tilescope::gui

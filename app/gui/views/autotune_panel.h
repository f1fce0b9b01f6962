// The Timings view's autotune section (tile-size sweep heatmaps), drawn inside its panel.
#pragma once

#include "app/gui/views/views.h"

namespace tilescope::gui {

// Draws at the cursor of the current ImGui window; `rect` is the panel (for the height left).
void draw_autotune_section(ViewContext& ctx, const core::Rect& rect);

}  // namespace tilescope::gui

// The Tiles view's two modes share its transport and its mode switch: the loop-nest walk
// (view_tiles.cpp) and the GPU wave seen from one block and one warp (view_tiles_gpu.cpp).
#pragma once

#include "app/gui/views/views.h"

namespace tilescope::gui {

// |< < Play > scrub fps, over frames 0 … last.
void tiles_transport(ViewContext& ctx, const core::Rect& rect, int frame, int last);
// The two radio buttons; true when the GPU mode is on.
bool tiles_mode_switch(ViewContext& ctx);
// The GPU mode's body, below the switch, inside the Tiles panel.
void draw_tiles_gpu(ViewContext& ctx, const core::Rect& rect);

}  // namespace tilescope::gui

// Colours and fonts for the three themes (light, dark, projector). Node colours use the
// Okabe-Ito palette, which stays distinguishable under the common colour-vision deficiencies.
#pragma once

#include "app/core/app_state.h"

#include <imgui.h>

namespace tilescope::gui {

struct Palette {
  ImU32 canvas_bg, grid, node_bg, node_border, text, subtext, edge, edge_label, label_bg;
  ImU32 selection, hover, bar_bg, error, error_bg, ok, stale_bg;
  ImU32 category[11];  // indexed by NodeCategory
  float line_scale;    // thicker lines for the projector
};

const Palette& palette(core::Theme theme);
ImU32 category_colour(const Palette& p, core::NodeCategory c);
const char* category_name(core::NodeCategory c);  // legend text

// Sets ImGui's style colours and sizes for a theme (call between frames).
void apply_imgui_style(core::Theme theme, float content_scale);

// Fonts loaded once at start, one set per type size (desk and projector).
struct FontSet {
  ImFont* ui = nullptr;       // Inter Regular
  ImFont* ui_bold = nullptr;  // Inter SemiBold
  ImFont* mono = nullptr;     // JetBrains Mono
  float px = 0.0f;
};

struct Fonts {
  FontSet desk;
  FontSet projector;
  const FontSet& for_theme(core::Theme t) const {
    return t == core::Theme::Projector ? projector : desk;
  }
};

// Loads Inter and JetBrains Mono at both sizes into the ImGui atlas; when a font file is missing,
// prints one warning line and falls back to ImGui's built-in font at the same size.
Fonts load_fonts(float content_scale);

}  // namespace tilescope::gui

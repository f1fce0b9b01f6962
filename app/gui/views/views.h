// The app's views, one per file. Each draws one fixed panel from the AppState and pushes
// Commands for whatever the user did; none of them changes the state directly.
#pragma once

#include "app/gui/app_state.h"
#include "app/gui/commands.h"
#include "app/gui/theme.h"

#include <vector>

namespace tilescope::gui {

struct ViewContext {
  const AppState& state;
  std::vector<Command>& commands;  // applied after this frame
  const FontSet& fonts;
  const Palette& palette;
  void push(Command c) { commands.push_back(std::move(c)); }
};

// Opens a borderless, fixed ImGui window covering `rect` (the panels never move or overlap).
bool begin_panel(const char* id, const Rect& rect, bool padded = true);
void end_panel();

void draw_model_text_view(ViewContext& ctx, const Rect& rect);
void draw_graph_view(ViewContext& ctx, const Rect& rect);
void draw_inspector_view(ViewContext& ctx, const Rect& rect);
void draw_status_bar_view(ViewContext& ctx, const Rect& rect);

}  // namespace tilescope::gui

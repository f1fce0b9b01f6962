// The app's views, one per file. Each draws one fixed panel from the AppState and pushes
// Commands for whatever the user did; none of them changes the state directly.
#pragma once

#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/gui/theme.h"
#include "app/gui/views/view_caches.h"
#include "app/gui/widgets/gui_store.h"
#include "sim/predict/occupancy.h"
#include "sim/predict/time_model.h"

#include <string>
#include <vector>

namespace tilescope::gui {

struct ViewContext {
  const core::AppState& state;
  std::vector<core::Command>& commands;  // applied after this frame
  ViewCaches& caches;                    // what views keep between frames (view_caches.h)
  const FontSet& fonts;
  const Palette& palette;
  const FontSet* large = nullptr;  // the projector's type, for text read from across a room
  void push(core::Command c) { commands.push_back(std::move(c)); }
};

// The named widgets drawn this frame (gui_store.h's WidgetRect), kept in the context's GuiStore.
std::vector<WidgetRect>& widget_rects();
// Records the last ImGui item under `name`.
void note_widget(const std::string& name);

// Opens a borderless, fixed ImGui window covering `rect` (the panels never move or overlap).
bool begin_panel(const char* id, const core::Rect& rect, bool padded = true);
void end_panel();
// A side panel's section title: bold, with a rule under it.
void section_heading(const ViewContext& ctx, const char* text);

void draw_model_text_view(ViewContext& ctx, const core::Rect& rect);
void draw_graph_view(ViewContext& ctx, const core::Rect& rect);
void draw_inspector_view(ViewContext& ctx, const core::Rect& rect);
void draw_status_bar_view(ViewContext& ctx, const core::Rect& rect);
// The Open / Save file browser over the window while it is open (files.h's `files` commands).
void draw_file_browser(ViewContext& ctx, const core::Rect& window);
// File ▸ Open model over a schedule or edited text: replay the steps, open without them, or
// cancel (state.pending_open), with what replaying would keep.
void draw_open_choice(ViewContext& ctx, const core::Rect& window);

// The centre's tab strip and the workbench views (one file each), with their side panels.
void draw_tabs_view(ViewContext& ctx, const core::Rect& rect);
// Keys that work in every view and in presentation mode: 1-8, Ctrl+Z/Y, F5, F11, F12, and in
// presentation mode the arrows (history, or the lesson's steps while a lesson is open) and space
// (tile animation). With a lesson open: Alt+Right / Alt+Left and N / P step through it, and R in
// presentation mode reveals the current prediction to the class.
void handle_global_keys(ViewContext& ctx);
void draw_schedule_view(ViewContext& ctx, const core::Rect& rect);
void draw_schedule_inspector(ViewContext& ctx, const core::Rect& rect);
// The Schedule panel's occupancy calculator (occupancy_panel.cpp) counts one block's resources:
// the occupancy.* controls (panel_controls.h), the current kernel's launch where a control is 0,
// on the workbench's machine. `none` says why nothing is counted (a CPU, a GPU file without per-SM
// limits, no machine); the state JSON reports what the panel shows from the same function.
struct OccupancyShown {
  std::string none;
  predict::KernelResources resources;
  bool threads_from_kernel = false, smem_from_kernel = false;
  int64_t grid_blocks = 0;  // the current kernel's launch, for its waves
  predict::Occupancy occupancy;
};
OccupancyShown occupancy_shown(const core::AppState& state);
// Its section: the three fields, the blocks per SM each resource allows, the limiter, the waves
// and three curves (or the line saying why there is no occupancy to count).
void draw_occupancy_section(ViewContext& ctx);
// The Roofline view's predicted point on a GPU machine: the time model (predict/time_model.h) on
// the current kernel's simulated counts (FMAs, warp instructions, data-stage passes, L2 and DRAM
// bytes) and the Occupancy section's resources (registers as typed there: a schedule not compiled
// yet has no ptxas count). `none` says why there is no point (a CPU, no simulation yet, ...).
struct PredictedTimeShown {
  std::string none;
  predict::TimePrediction time;
  double flops = 0;
  double intensity = 0;  // FLOP per DRAM byte, where the point sits
  int64_t registers = 0;
  // When the launch has fewer blocks than the machine has SMs: "1 block for 132 SMs (131 idle:
  // bind a loop to block.x to use them)" ("" otherwise).
  std::string launch_note;
};
PredictedTimeShown predicted_time_shown(const core::AppState& state);
void draw_memory_view(ViewContext& ctx, const core::Rect& rect);
void draw_memory_inspector(ViewContext& ctx, const core::Rect& rect);
void draw_timings_view(ViewContext& ctx, const core::Rect& rect);
void draw_timings_inspector(ViewContext& ctx, const core::Rect& rect);
// What the framework ran for each node, from a profiler trace (app/core/trace_doc.h).
void draw_trace_view(ViewContext& ctx, const core::Rect& rect);
void draw_trace_inspector(ViewContext& ctx, const core::Rect& rect);
void draw_roofline_view(ViewContext& ctx, const core::Rect& rect);
void draw_tiles_view(ViewContext& ctx, const core::Rect& rect);
// The lesson catalogue (centre, key 7), the open lesson's text (left panel), and the first
// screen's pointer to them.
void draw_lessons_view(ViewContext& ctx, const core::Rect& rect);
void draw_lesson_text_view(ViewContext& ctx, const core::Rect& rect);
void draw_start_here(ViewContext& ctx, const core::Rect& centre);

// Shared by the workbench views: a command from its script text (views push what a user did).
core::Command command_from(const std::string& line);
// A panel control changed in its widget: pushes `control NAME VALUE` (panel_controls.h), which
// the next frame's state shows.
void push_control(ViewContext& ctx, const char* name, const std::string& value);
// The Memory and Roofline views' state before a result exists (drawn; true when there is none).
bool memory_empty_state(ViewContext& ctx);
// A job sized and not started (core::HeldJob): its message (in the error colour when refused) and,
// when it is only long, a button labelled `anyway`; returns true when that button was pressed.
bool held_job_lines(ViewContext& ctx, const core::HeldJob& held, const char* anyway);
// A progress bar with a Cancel button for a running job; returns true when it was drawn.
void job_progress_line(ViewContext& ctx, const char* what, double fraction,
                       const std::string& phase);

}  // namespace tilescope::gui

// The Tiles view's two modes share its transport and its mode switch: the loop-nest walk
// (view_tiles.cpp) and the GPU wave seen from one block and one warp (view_tiles_gpu.cpp).
#pragma once

#include "app/gui/views/views.h"

#include <imgui.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

namespace tilescope::gui {

// |< < Play > scrub fps, over frames 0 … last.
void tiles_transport(ViewContext& ctx, const core::Rect& rect, int frame, int last);
// The two radio buttons; true when the GPU mode is on.
bool tiles_mode_switch(ViewContext& ctx);
// The GPU mode's body, below the switch, inside the Tiles panel.
void draw_tiles_gpu(ViewContext& ctx, const core::Rect& rect);

// Counters over time (tiles_counters.cpp), for a walk recorded through a machine's hierarchy (the
// loop nest's on a CPU machine, the GPU mode's wave): the plot across `width` at `origin`
// (tiles_counters_height tall; `key` names the recording, for the plot's cache), and the small
// caches' set × way grids at `frame` (returns the size used).
float tiles_counters_height(float em);
void draw_tiles_counters(ViewContext& ctx, const core::CountersOverTime& t, const std::string& key,
                         int frame, ImVec2 origin, float width);
ImVec2 draw_tiles_cache(ViewContext& ctx, const core::TilesResult& t, int frame, ImVec2 origin,
                        float width, float height);

// A grid's drawn size at `cell` pixels a bin: it keeps its shape's aspect ratio (x of 64×1024 is
// a wide strip, not a square): the longer side keeps its cells, the shorter shrinks, never below
// one cell.
inline ImVec2 tile_grid_size(const core::TileGrid& g, float cell) {
  float gw = cell * float(g.bin_cols), gh = cell * float(g.bin_rows);
  const double aspect = double(g.rows) / double(std::max<int64_t>(g.cols, 1));
  if (aspect < 1)
    gh = std::max(std::min(cell, gh), std::min(gh, float(gw * aspect)));
  else
    gw = std::max(std::min(cell, gw), std::min(gw, float(gh / aspect)));
  return ImVec2(gw, gh);
}

// Until the recording of `key` (result_key names what `result` or `error` belongs to) is there,
// each mode draws the same states: the job held for its size (with "Walk it anyway"), the job
// running (its progress, `what`), or the start of one (`tiles record`). True when one was drawn.
template <typename Result>
bool tiles_recording_pending(ViewContext& ctx, const std::string& key,
                             const std::string& result_key, const std::optional<Result>& result,
                             const std::string& error, const core::Job<Result>& job,
                             const std::string& what) {
  const auto& held = ctx.state.workbench.tiles_held;
  if (auto h = held.find(key); h != held.end() && (result_key != key || !result)) {
    if (held_job_lines(ctx, h->second, "Walk it anyway"))
      ctx.push(command_from("tiles record anyway"));
    return true;
  }
  if (result_key == key && (result || !error.empty())) return false;
  if (job.running() && job.key() == key) {
    job_progress_line(ctx, what.c_str(), job.fraction(), "");
  } else if (!job.running()) {
    ctx.push(command_from("tiles record"));
    ImGui::TextDisabled("Starting…");
  }
  return true;
}

}  // namespace tilescope::gui

// Counters over time under the Tiles animation (issue #32): each cache level's hit rate in every
// window between two frames as a line, main memory's bytes per window as bars, a cursor at the
// animation's frame (a click seeks there) and the numbers at it; beside the tensors, the small
// caches' sets and ways as they stand at that frame (core/tile_grid.h records both in the walk).
#include "app/gui/views/memory_views.h"
#include "app/gui/views/tiles_modes.h"

#include "app/core/format.h"
#include "app/gui/widgets/text_wrap.h"
#include "sim/io/format.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// Every frame's windows of a recording, computed once per recording: keyed by the workbench's
// tiles key (the schedule and machine it was recorded for; a new recording may reuse the storage).
const ViewCaches::CountersWindows& windows_of(ViewCaches::CountersWindows& cache,
                                              const std::string& key, const CountersOverTime& t) {
  if (cache.key == key && cache.recording == &t && cache.frames == t.frame_counters.size())
    return cache;
  cache = ViewCaches::CountersWindows{key, &t, t.frame_counters.size(), {}, 1};
  const size_t memory = t.level_names.size() - 1;
  for (size_t i = 0; i < t.frame_counters.size(); ++i) {
    cache.windows.push_back(counters_window(t, i));
    cache.max_memory_bytes = std::max(cache.max_memory_bytes, cache.windows.back()[memory].bytes);
  }
  return cache;
}

}  // namespace

float tiles_counters_height(float em) {
  return em * 9.5f;
}

void draw_tiles_counters(ViewContext& ctx, const CountersOverTime& t, const std::string& key,
                         int frame, ImVec2 origin, float width) {
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const int last = int(t.frame_counters.size()) - 1;
  if (last < 1) return;
  const size_t f = size_t(std::clamp(frame, 0, last));
  const size_t memory = t.level_names.size() - 1;  // main memory is the last level

  // The numbers at the cursor: this frame's window.
  const std::vector<LevelWindow>& now = windows_of(ctx.caches.counters, key, t).windows[f];
  std::string line =
      "Counters over time on " + t.machine + " · frame " + std::to_string(f) + "'s window: ";
  for (size_t l = 0; l < memory; ++l)
    line += now[l].level + " hit " +
            (now[l].accesses ? format_percent(now[l].hit_rate()) : std::string("—")) + " · ";
  line += now[memory].level + " " + io::format_bytes(double(now[memory].bytes));
  ImGui::SetCursorScreenPos(origin);
  ImGui::PushTextWrapPos(origin.x + width - ImGui::GetWindowPos().x);  // window-local
  ImGui::TextUnformatted(line.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("The window: trace accesses %s to %s, since the previous frame.",
                      format_thousands(int64_t(f ? t.frame_accesses[f - 1] : 0)).c_str(),
                      format_thousands(int64_t(t.frame_accesses[f])).c_str());

  // The plot: 0–100 % on the left; bars of main-memory bytes per window from the bottom.
  const float x0 = origin.x + em * 3.2f, x1 = origin.x + width - em * 0.5f;
  const float y0 = ImGui::GetCursorScreenPos().y + em * 0.3f;
  const float y1 = origin.y + tiles_counters_height(em) - em * 1.6f;
  if (x1 - x0 < em * 4 || y1 - y0 < em * 2) return;
  dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), p.node_border);
  for (int pct : {0, 50, 100}) {
    const float y = y1 - (y1 - y0) * float(pct) / 100.0f;
    dl->AddLine(ImVec2(x0, y), ImVec2(x1, y), p.grid);
    const std::string label = std::to_string(pct) + "%";
    dl->AddText(ImVec2(x0 - ImGui::CalcTextSize(label.c_str()).x - em * 0.3f, y - em * 0.5f),
                p.subtext, label.c_str());
  }
  const auto px = [&](size_t frame_index) {
    return x0 + (x1 - x0) * float(frame_index) / float(last);
  };
  const ViewCaches::CountersWindows& cache = windows_of(ctx.caches.counters, key, t);
  const std::vector<std::vector<LevelWindow>>& windows = cache.windows;
  const uint64_t max_bytes = cache.max_memory_bytes;
  const float bar_w = std::max(1.0f, (x1 - x0) / float(last) - 1.0f);
  for (size_t i = 1; i <= size_t(last); ++i) {
    const float h = (y1 - y0) * 0.45f * float(double(windows[i][memory].bytes) / double(max_bytes));
    dl->AddRectFilled(ImVec2(px(i) - bar_w, y1 - h), ImVec2(px(i), y1), p.bar_bg);
  }
  static constexpr int kColours[] = {0, 2, 3, 6, 8};
  for (size_t l = 0; l < memory; ++l) {
    const ImU32 col = p.category[kColours[l % 5]];
    ImVec2 prev(-1, -1);
    for (size_t i = 1; i <= size_t(last); ++i) {
      if (windows[i][l].accesses == 0) {
        prev = ImVec2(-1, -1);  // a window with no access at this level: no point
        continue;
      }
      const ImVec2 pt(px(i), y1 - (y1 - y0) * float(windows[i][l].hit_rate()));
      if (prev.x >= 0) dl->AddLine(prev, pt, col, 2.0f * p.line_scale);
      prev = pt;
    }
  }
  // The cursor, and a click (or a drag) seeks the animation there.
  dl->AddLine(ImVec2(px(f), y0), ImVec2(px(f), y1), p.selection, 2.0f * p.line_scale);
  ImGui::SetCursorScreenPos(ImVec2(x0, y0));
  ImGui::InvisibleButton("counters-over-time", ImVec2(x1 - x0, y1 - y0));
  note_widget("tiles.counters.plot");
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    const float u = std::clamp((ImGui::GetIO().MousePos.x - x0) / (x1 - x0), 0.0f, 1.0f);
    const int to = int(std::lround(u * float(last)));
    if (to != frame) ctx.push(command_from("tiles seek " + std::to_string(to)));
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Click or drag to move the animation to that frame.");

  // The legend: a swatch per cache level, then the bars; shorter words where the long ones do
  // not fit on one line (large type in a narrow view).
  const std::string bars_long = "bars: " + t.level_names[memory] + " bytes per window (highest " +
                                io::format_bytes(double(max_bytes)) + ")";
  const std::string bars_short = "bars: " + t.level_names[memory] + " bytes";
  float long_w = ImGui::CalcTextSize(bars_long.c_str()).x + em;
  for (size_t l = 0; l < memory; ++l)
    long_w += em * 2.3f + ImGui::CalcTextSize((t.level_names[l] + " hit rate").c_str()).x;
  const bool fits = x0 + long_w <= x1;
  float lx = x0;
  const float ly = y1 + em * 0.3f;
  for (size_t l = 0; l < memory; ++l) {
    const std::string name = t.level_names[l] + (fits ? " hit rate" : "");
    dl->AddRectFilled(ImVec2(lx, ly + em * 0.35f), ImVec2(lx + em, ly + em * 0.65f),
                      p.category[kColours[l % 5]]);
    dl->AddText(ImVec2(lx + em * 1.3f, ly), p.subtext, name.c_str());
    lx += em * 2.3f + ImGui::CalcTextSize(name.c_str()).x;
  }
  dl->AddRectFilled(ImVec2(lx, ly + em * 0.2f), ImVec2(lx + em * 0.6f, ly + em * 0.8f), p.bar_bg);
  dl->AddText(ImVec2(lx + em * 0.9f, ly), p.subtext, (fits ? bars_long : bars_short).c_str());
}

ImVec2 draw_tiles_cache(ViewContext& ctx, const TilesResult& t, int frame, ImVec2 origin,
                        float width, float height) {
  if (t.frame_grids.empty()) return ImVec2(0, 0);
  const size_t f = size_t(std::clamp(frame, 0, int(t.frame_grids.size()) - 1));
  std::vector<std::string> names;
  if (const schedule::Program* program = ctx.state.workbench.program())
    for (const graph::Tensor& tensor : program->graph->tensors()) names.push_back(tensor.name);
  // The grids stack in the column: each gets its share of the height, the legend the rest.
  const float em = ImGui::GetFontSize();
  const float each = std::max(em * 4, (height - em * 8) / float(t.frame_grids[f].size()) - em);
  return draw_cache_grids(ctx, t.frame_grids[f], names, origin, width, each,
                          "The caches at this frame. Paler: longer since the core last used "
                          "the line (hover a cell for its age in accesses).");
}

}  // namespace tilescope::gui

// The Tiles view: every tensor of the current kernel as a grid in memory order, coloured by how
// often each element (or bin of elements) has been accessed so far; the current tile (what the
// last step of the step loop touched) is boxed and the cells touched since the previous frame are
// tinted; each grid keeps its shape's aspect ratio. A staged tile (x_shared) is drawn right after
// the tensor it copies, on its own colour scale. Play, pause, step, scrub. The GPU mode (one wave
// seen from a block and a warp) is drawn by view_tiles_gpu.cpp.
#include "app/gui/views/tiles_modes.h"
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/gui/widgets/image_texture.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

constexpr int kHeatLevels = 12;

ImU32 heat_colour(double t, ImU32 bg) {
  // Background → orange → dark red as the count grows; log-scaled so one access already shows.
  const ImVec4 b = ImGui::ColorConvertU32ToFloat4(bg);
  const ImVec4 hot(0.90f, 0.45f, 0.05f, 1.0f), max(0.55f, 0.05f, 0.05f, 1.0f);
  const float f = static_cast<float>(std::clamp(t, 0.0, 1.0));
  ImVec4 c;
  if (f < 0.5f) {
    const float u = f * 2;
    c = ImVec4(b.x + (hot.x - b.x) * u, b.y + (hot.y - b.y) * u, b.z + (hot.z - b.z) * u, 1);
  } else {
    const float u = (f - 0.5f) * 2;
    c = ImVec4(hot.x + (max.x - hot.x) * u, hot.y + (max.y - hot.y) * u,
               hot.z + (max.z - hot.z) * u, 1);
  }
  return ImGui::ColorConvertFloat4ToU32(c);
}

// Draws the colour scale's legend, from one access to the most any bin gets by the end.
void draw_heat_legend(ViewContext& ctx, ImDrawList* dl, float em, const TilesResult& t,
                      double peak) {
  const Palette& p = ctx.palette;
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float sw = em * 1.2f;
  ImGui::TextDisabled("accesses per element:  1");
  ImGui::SameLine();
  const ImVec2 bar = ImGui::GetCursorScreenPos();
  for (int i = 0; i < kHeatLevels; ++i)
    dl->AddRectFilled(ImVec2(bar.x + i * sw, at.y + em * 0.15f),
                      ImVec2(bar.x + (i + 1) * sw, at.y + em * 1.05f),
                      heat_colour(0.15 + 0.85 * (i + 1) / kHeatLevels, p.bar_bg));
  ImGui::Dummy(ImVec2(sw * kHeatLevels, em));
  ImGui::SameLine();
  const bool staged = std::any_of(t.grids.begin(), t.grids.end(),
                                  [](const TileGrid& g) { return !g.staged_from.empty(); });
  ImGui::TextDisabled("%s (log scale)", format_thousands(int64_t(std::lround(peak))).c_str());
  if (staged) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_wrapped(
        "A staged copy (a tile in shared memory or a scratchpad) is drawn beside the tensor it "
        "copies, on its own colour scale: its few elements are rewritten with every copy.");
    ImGui::PopStyleColor();
  }
}

// Draws one grid's bins at `at` as one image, tints the bins touched since the previous frame,
// and boxes the current tile.
void draw_tile_grid(ViewContext& ctx, ImDrawList* dl, const TilesResult& t, const TileGrid& g,
                    size_t gi, int frame, double grid_peak, ImVec2 at, ImVec2 size) {
  const Palette& p = ctx.palette;
  const std::vector<uint32_t>& now = t.frames[size_t(frame)];
  const std::vector<uint32_t>& before = t.frames[size_t(std::max(frame - 1, 0))];
  // One texture per grid, kept between frames (the GL objects outlive no context: see
  // RgbaTexture), and the pixels' buffer.
  std::vector<RgbaTexture>& grid_textures = ctx.caches.tiles.textures;
  std::vector<uint32_t>& grid_pixels = ctx.caches.tiles.pixels;
  const float x = at.x, gy = at.y, gw = size.x, gh = size.y;
  const float cw = gw / float(g.bin_cols), ch = gh / float(g.bin_rows);
  // The bins are one image (one textured quad, drawn unblended: every colour is opaque), so a
  // software rasteriser sets up two triangles per grid rather than one rectangle per run of
  // equal colour. Bins touched since the previous frame get a tint, drawn as runs over the
  // image, and their bounding box one outline.
  int touched_r0 = g.bin_rows, touched_r1 = -1, touched_c0 = g.bin_cols, touched_c1 = -1;
  std::vector<uint32_t>& pixels = grid_pixels;
  pixels.assign(size_t(g.bin_rows) * size_t(g.bin_cols), 0);
  struct TintRun {
    int row, first, end;  // touched bins [first, end) of one row
  };
  std::vector<TintRun> tint_runs;
  for (int r = 0; r < g.bin_rows; ++r) {
    const size_t row = g.offset + size_t(r) * size_t(g.bin_cols);
    int run_start = -1;
    for (int c = 0; c <= g.bin_cols; ++c) {
      bool touched = false;
      if (c < g.bin_cols) {
        const uint32_t v = now[row + size_t(c)];
        const double per_elem = v * g.inv_elems[size_t(r) * size_t(g.bin_cols) + size_t(c)];
        // Quantised to the legend's levels: the eye cannot tell more apart.
        const double heat = v ? std::log1p(per_elem) / std::log1p(grid_peak) : 0.0;
        const double level = std::ceil(heat * kHeatLevels) / kHeatLevels;
        pixels[size_t(r) * size_t(g.bin_cols) + size_t(c)] =
            v ? heat_colour(0.15 + 0.85 * level, p.bar_bg) : p.bar_bg;
        touched = frame > 0 && v != before[row + size_t(c)];
        if (touched) {
          touched_r0 = std::min(touched_r0, r), touched_r1 = std::max(touched_r1, r);
          touched_c0 = std::min(touched_c0, c), touched_c1 = std::max(touched_c1, c);
        }
      }
      if (touched && run_start < 0) run_start = c;
      if (!touched && run_start >= 0) {
        tint_runs.push_back({r, run_start, c});
        run_start = -1;
      }
    }
  }
  if (grid_textures.size() <= gi) grid_textures.resize(gi + 1);
  RgbaTexture& texture = grid_textures[gi];
  texture.upload(g.bin_cols, g.bin_rows, pixels.data());
  draw_opaque_image(dl, texture, ImVec2(x, gy), ImVec2(x + gw, gy + gh));
  for (const TintRun& run : tint_runs)
    dl->AddRectFilled(ImVec2(x + run.first * cw, gy + run.row * ch),
                      ImVec2(x + run.end * cw, gy + (run.row + 1) * ch),
                      (p.text & 0x00FFFFFFu) | 0x28000000u);
  // The box: the current tile (what the last step touched), recorded with the frames; older
  // results without it box what changed since the previous frame.
  if (size_t(frame) < t.frame_tiles.size() && gi < t.frame_tiles[size_t(frame)].size()) {
    const TileBox& b = t.frame_tiles[size_t(frame)][gi];
    touched_r0 = b.r0, touched_r1 = b.r1, touched_c0 = b.c0, touched_c1 = b.c1;
  }
  if (touched_r1 >= 0)
    dl->AddRect(ImVec2(x + touched_c0 * cw, gy + touched_r0 * ch),
                ImVec2(x + (touched_c1 + 1) * cw, gy + (touched_r1 + 1) * ch), p.text, 0, 0,
                std::max(2.0f, std::min(cw, ch) * 0.4f));
  dl->AddRect(ImVec2(x, gy), ImVec2(x + gw, gy + gh), p.node_border);
}

}  // namespace

void tiles_transport(ViewContext& ctx, const Rect& rect, int frame, int last) {
  const Workbench& wb = ctx.state.workbench;
  const float em = ImGui::GetFontSize();
  if (ImGui::Button("|<")) ctx.push(command_from("tiles seek 0"));
  ImGui::SameLine();
  if (ImGui::Button("<")) ctx.push(command_from("tiles back"));
  ImGui::SameLine();
  if (ImGui::Button(wb.tiles_playing ? "Pause" : "Play"))
    ctx.push(command_from(wb.tiles_playing ? "tiles pause" : "tiles play"));
  ImGui::SameLine();
  if (ImGui::Button(">")) ctx.push(command_from("tiles step"));
  ImGui::SameLine();
  int scrub = frame;
  ImGui::SetNextItemWidth(std::max(em * 8, rect.w - em * 26));
  if (ImGui::SliderInt("##scrub", &scrub, 0, last, "frame %d") && scrub != frame)
    ctx.push(command_from("tiles seek " + std::to_string(scrub)));
  ImGui::SameLine();
  float speed = static_cast<float>(wb.tiles_speed);
  ImGui::SetNextItemWidth(em * 6);
  if (ImGui::SliderFloat("fps", &speed, 1, 60, "%.0f") && speed != float(wb.tiles_speed))
    ctx.push(command_from("tiles speed " + std::to_string(speed)));
}

bool tiles_mode_switch(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  if (ImGui::RadioButton("Loop nest walk", !wb.tiles_gpu)) ctx.push(command_from("tiles gpu off"));
  note_widget("tiles.mode.walk");
  ImGui::SameLine();
  if (ImGui::RadioButton("GPU: blocks and warps", wb.tiles_gpu))
    ctx.push(command_from("tiles gpu on"));
  note_widget("tiles.mode.gpu");
  return wb.tiles_gpu;
}

void draw_tiles_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  if (!begin_panel("Tiles", rect)) {
    end_panel();
    return;
  }
  if (wb.kernel() && tiles_mode_switch(ctx)) {
    draw_tiles_gpu(ctx, rect);
    end_panel();
    return;
  }
  const schedule::Kernel* k = wb.kernel();
  if (!k) {
    text_wrapped("No kernel: type a model in the left panel.");
    end_panel();
    return;
  }
  if (tiles_recording_pending(ctx, wb.tiles_key_now(), wb.tiles_key, wb.tiles, wb.tiles_error,
                              wb.tiles_job, "Walking the loop nest of " + k->name + "…")) {
    end_panel();
    return;
  }
  if (!wb.tiles) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("Could not walk this schedule: %s", wb.tiles_error.c_str());
    ImGui::PopStyleColor();
    if (ImGui::Button("Walk it again")) ctx.push(command_from("tiles record anyway"));
    end_panel();
    return;
  }
  const TilesResult& t = *wb.tiles;
  const float em = ImGui::GetFontSize();
  const int last = static_cast<int>(t.frames.size()) - 1;
  const int frame = std::clamp(static_cast<int>(std::floor(wb.tiles_frame)), 0, last);

  // [SECTION] Transport: back, play/pause, step, scrub, speed
  tiles_transport(ctx, rect, frame, last);
  const uint64_t step = t.frame_step[size_t(frame)];
  disabled_wrapped(
      "step %s of %s (of loop %s) · colour: accesses so far · box: the current tile · "
      "tint: touched since the previous frame",
      format_thousands(int64_t(step)).c_str(), format_thousands(int64_t(t.steps)).c_str(),
      t.step_loop.c_str());

  // [SECTION] Grids, laid out left to right, wrapping
  // Colour by accesses per element (TileGrid::inv_elems), scaled to the run's peak.
  const double peak = t.peak_per_element;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // Legend: the colour scale from one access to the most any bin gets by the end.
  draw_heat_legend(ctx, dl, em, t, peak);
  const ImVec2 start = ImGui::GetCursorScreenPos();
  // Counters over time (a CPU machine's hierarchy walked along): the plot at the bottom, the
  // caches at this frame in a column on the right when the view is wide enough.
  const bool counters = t.frame_counters.size() > 1;
  const float plot_h = counters ? tiles_counters_height(em) : 0.0f;
  const bool cache_column = counters && !t.frame_grids.empty() &&
                            !t.frame_grids[size_t(frame)].empty() && rect.w > em * 36;
  const float cache_w = cache_column ? std::clamp(rect.w * 0.3f, em * 11, em * 20) : 0.0f;
  const float avail_w = rect.x + rect.w - start.x - em - (cache_column ? cache_w + em : 0.0f);
  const float avail_h = rect.y + rect.h - start.y - em - plot_h;
  const float cell = std::clamp(
      std::min(avail_w / (kTileBins * 2.3f), avail_h / (kTileBins * 1.2f)), 3.0f, em * 0.9f);
  float x = start.x, y = start.y, row_h = 0;
  size_t grid_index = 0;
  for (const TileGrid& g : t.grids) {
    const ImVec2 size = tile_grid_size(g, cell);
    const float gw = size.x, gh = size.y;
    // A staged copy says what it copies and where it lives, and is coloured on its own scale.
    const std::string title =
        g.name + (g.output ? " (out)" : "") +
        (g.staged_from.empty() ? "" : " (" + g.level + " copy of " + g.staged_from + ")") + "  " +
        std::to_string(g.rows) + "×" + std::to_string(g.cols) +
        (g.rows > g.bin_rows || g.cols > g.bin_cols ? " (binned: mean per bin)" : "");
    // The title counts too: a long one ran into the caches' column.
    const float title_w =
        ctx.fonts.ui_bold->CalcTextSizeA(ctx.fonts.px, FLT_MAX, 0, title.c_str()).x;
    if (x > start.x && x + std::max(gw, title_w) > start.x + avail_w) {
      x = start.x;
      y += row_h + em * 2.2f;
      row_h = 0;
    }
    const double grid_peak = g.staged_from.empty() ? peak : std::max(g.peak_per_element, 1.0);
    dl->AddText(ctx.fonts.ui_bold, ctx.fonts.px, ImVec2(x, y), p.text, title.c_str());
    const float gy = y + em * 1.4f;
    draw_tile_grid(ctx, dl, t, g, grid_index, frame, grid_peak, ImVec2(x, gy), ImVec2(gw, gh));
    ++grid_index;
    x += std::max(gw, title_w) + em * 1.5f;
    row_h = std::max(row_h, gh + em * 1.4f);
  }
  ImGui::Dummy(ImVec2(avail_w, y + row_h - start.y));
  if (counters) {
    const ImVec2 plot_at(rect.x + em, rect.y + rect.h - plot_h);
    draw_tiles_counters(ctx, t, wb.tiles_key, frame, plot_at, rect.w - em * 2);
  } else if (wb.machine && wb.machine->kind == "gpu") {
    disabled_wrapped(
        "Counters over time and the caches at each step follow this walk through a CPU "
        "machine's caches (tiny, host); on a GPU, the GPU mode above plots them along the "
        "wave it follows.");
  }
  if (cache_column) {
    const ImVec2 at(rect.x + rect.w - cache_w - em, start.y);
    draw_tiles_cache(ctx, t, frame, at, cache_w, avail_h);
  }
  end_panel();
}

}  // namespace tilescope::gui

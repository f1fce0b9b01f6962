// The Tiles view's GPU mode: one wave of the current kernel on the chosen GPU machine, seen from
// a block and a warp the learner picks (core/tiles_gpu.h records it).
// - The launch grid: the blocks done in earlier waves, the resident blocks of this wave, the
//   picked block; a click picks another. The warp buttons pick a warp of that block.
// - Each tensor in memory order, every bin coloured by the closest level that holds it now: the
//   picked block's SM's L1, else the L2; what the wave touched in the last step is tinted, the
//   picked block's tile boxed, the picked warp's lanes dotted.
// - The picked warp's instructions in the last step, grouped by pattern, each with its sectors
//   drawn slot by slot (coalesced: the lanes fill the few sectors they fetch) or its shared-memory
//   banks (a bank asked for two words is a two-way conflict).
#include "app/gui/views/tiles_modes.h"
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/core/tiles_gpu.h"
#include "app/gui/widgets/image_texture.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

ImU32 mix(ImU32 a, ImU32 b, float t) {
  const ImVec4 x = ImGui::ColorConvertU32ToFloat4(a), y = ImGui::ColorConvertU32ToFloat4(b);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(x.x + (y.x - x.x) * t, x.y + (y.y - x.y) * t,
                                               x.z + (y.z - x.z) * t, 1.0f));
}

ImU32 with_alpha(ImU32 c, int alpha) { return (c & 0x00FFFFFFu) | (ImU32(alpha) << 24); }

std::string bytes_text(uint64_t b) {
  if (b >= (uint64_t(1) << 20) && b % (uint64_t(1) << 20) == 0)
    return std::to_string(b >> 20) + " MiB";
  if (b >= 1024 && b % 1024 == 0) return std::to_string(b >> 10) + " KiB";
  return std::to_string(b) + " B";
}

// The launch grid: one cell per block, rows = y (then z), columns = x.
void draw_block_picker(ViewContext& ctx, const GpuTilesResult& t, float max_w, float max_h) {
  const Palette& p = ctx.palette;
  const int64_t cols = t.grid[0], rows = t.grid[1] * t.grid[2];
  const float cell = std::clamp(std::min(max_w / float(cols), max_h / float(rows)), 2.0f,
                                ImGui::GetFontSize() * 1.6f);
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const ImVec2 size(cell * float(cols), cell * float(rows));
  ImGui::InvisibleButton("##blocks", ImVec2(std::max(size.x, 1.0f), std::max(size.y, 1.0f)));
  const bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 wave_col = p.category[2], done_col = mix(p.bar_bg, p.text, 0.25f);
  const bool labels = cell >= ImGui::GetFontSize() * 1.4f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t pid = t.block_at[size_t(r * cols + c)];
      const int64_t wave = pid / t.resident;
      const ImVec2 a(at.x + float(c) * cell, at.y + float(r) * cell);
      const ImVec2 b(a.x + cell - (cell > 4 ? 1 : 0), a.y + cell - (cell > 4 ? 1 : 0));
      dl->AddRectFilled(a, b, wave < t.wave ? done_col : wave == t.wave ? wave_col : p.bar_bg);
      if (labels) {
        const std::string n = std::to_string(pid);
        const ImVec2 ts = ImGui::CalcTextSize(n.c_str());
        if (ts.x < cell - 2)
          dl->AddText(ImVec2(a.x + (cell - ts.x) / 2, a.y + (cell - ts.y) / 2),
                      wave == t.wave ? p.node_bg : p.subtext, n.c_str());
      }
      if (t.blocks <= 1024)
        widget_rects().push_back({"tiles.block." + std::to_string(pid),
                                  Rect{a.x, a.y, cell, cell}, true});
    }
  // The picked block.
  for (int64_t i = 0; i < rows * cols; ++i)
    if (t.block_at[size_t(i)] == t.block) {
      const ImVec2 a(at.x + float(i % cols) * cell, at.y + float(i / cols) * cell);
      // Outlined in the text colour (the wave's fill is orange in both themes), the selection
      // colour inside it.
      const float w = std::max(2.0f, cell * 0.15f);
      dl->AddRect(a, ImVec2(a.x + cell, a.y + cell), p.text, 0, 0, w);
      dl->AddRect(ImVec2(a.x + w, a.y + w), ImVec2(a.x + cell - w, a.y + cell - w), p.selection, 0,
                  0, std::max(1.0f, w * 0.6f));
    }
  if (hovered) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int64_t c = std::clamp<int64_t>(int64_t((m.x - at.x) / cell), 0, cols - 1);
    const int64_t r = std::clamp<int64_t>(int64_t((m.y - at.y) / cell), 0, rows - 1);
    const int64_t pid = t.block_at[size_t(r * cols + c)];
    ImGui::SetTooltip("block %lld = (x %lld, y %lld): wave %lld, SM %lld — click to follow it",
                      static_cast<long long>(pid), static_cast<long long>(c),
                      static_cast<long long>(r % t.grid[1]),
                      static_cast<long long>(pid / t.resident + 1),
                      static_cast<long long>(pid % t.resident));
    if (clicked && pid != t.block) ctx.push(command_from("tiles block " + std::to_string(pid)));
  }
}

// A key's swatch and its words, on one line.
void swatch(ImU32 fill, ImU32 outline, const char* text) {
  const float em = ImGui::GetFontSize();
  const ImVec2 a = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(a.x, a.y + em * 0.15f), ImVec2(a.x + em, a.y + em * 1.05f), fill);
  if (outline) dl->AddRect(ImVec2(a.x, a.y + em * 0.15f), ImVec2(a.x + em, a.y + em * 1.05f), outline,
                           0, 0, 2.0f);
  ImGui::Dummy(ImVec2(em * 1.3f, em));
  ImGui::SameLine();
  ImGui::TextUnformatted(text);
}

// The sectors of a global access, slot by slot (4-byte words), lanes' words filled; or the banks
// of a shared access, each with the distinct words asked of it.
void draw_access_picture(ViewContext& ctx, const GpuTilesResult& t, const GpuWarpAccess& w,
                         uint32_t banks, float max_w) {
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  const float h = em * 0.9f;
  if (w.shared) {
    std::vector<std::set<int64_t>> words(banks);
    for (int64_t e : w.lane_elem) words[size_t(e % int64_t(banks))].insert(e);
    const float bw = std::max(2.0f, std::min(em * 0.8f, (max_w - em * 16) / float(banks)));
    for (uint32_t b = 0; b < banks; ++b) {
      const size_t n = words[b].size();
      const ImVec2 a(at.x + float(b) * bw, at.y);
      const ImU32 fill = n == 0 ? p.bar_bg : n == 1 ? p.ok : p.error;
      dl->AddRectFilled(a, ImVec2(a.x + bw - 1, a.y + h), fill);
      if (n > 1 && bw >= em * 0.7f) {
        const std::string s = std::to_string(n);
        dl->AddText(ImVec2(a.x + 2, a.y), p.node_bg, s.c_str());
      }
    }
    ImGui::Dummy(ImVec2(bw * float(banks), h));
    ImGui::SameLine();
    ImGui::TextDisabled("banks 0 … %u (number: words asked of one bank)", banks - 1);
    return;
  }
  const int64_t per = int64_t(t.sector_bytes / 4);
  std::map<int64_t, std::vector<bool>> sectors;  // sector → its words asked for
  for (int64_t e : w.lane_elem) {
    std::vector<bool>& s = sectors[e / per];
    s.resize(size_t(per), false);
    s[size_t(e % per)] = true;
  }
  const size_t gaps = sectors.empty() ? 0 : sectors.size() - 1;
  const float slot = std::clamp((max_w - float(gaps) * em * 0.3f) / float(sectors.size() * size_t(per)),
                                1.0f, em * 0.6f);
  float x = at.x;
  int64_t prev = -2;
  const ImU32 fill = w.sectors <= w.ideal_sectors ? p.ok : p.error;
  for (const auto& [sec, used] : sectors) {
    if (prev >= 0 && sec != prev + 1) x += em * 0.3f;  // not adjacent in memory
    for (int64_t i = 0; i < per; ++i) {
      const ImVec2 a(x + float(i) * slot, at.y);
      dl->AddRectFilled(a, ImVec2(a.x + slot, a.y + h), used[size_t(i)] ? fill : p.bar_bg);
    }
    dl->AddRect(ImVec2(x, at.y), ImVec2(x + slot * float(per), at.y + h), p.node_border);
    x += slot * float(per);
    prev = sec;
  }
  ImGui::Dummy(ImVec2(std::max(1.0f, x - at.x), h));
}

// Draws the launch's summary, the block picker, the warp buttons and the colour key.
void draw_gpu_launch(ViewContext& ctx, const Rect& rect, float em, const GpuTilesResult& t) {
  const Palette& p = ctx.palette;
  const auto bc = [&](int64_t pid) {
    for (size_t i = 0; i < t.block_at.size(); ++i)
      if (t.block_at[i] == pid)
        return std::pair<int64_t, int64_t>(int64_t(i) % t.grid[0], int64_t(i) / t.grid[0]);
    return std::pair<int64_t, int64_t>(0, 0);
  };
  const auto [bx, by] = bc(t.block);
  const std::string waves =
      t.waves == 1 ? "all of them run in one wave"
                   : "so the grid runs in " + std::to_string(t.waves) + " waves";
  text_wrapped(
      "%s on %s: grid %lld×%lld×%lld = %lld block%s of %lld threads (%d warp%s); up to %lld run "
      "at once (one per SM), %s. Block %lld = (x %lld, y %lld) runs in wave %lld on SM %lld.",
      t.kernel.c_str(), t.machine.c_str(), static_cast<long long>(t.grid[0]),
      static_cast<long long>(t.grid[1]), static_cast<long long>(t.grid[2]),
      static_cast<long long>(t.blocks), t.blocks == 1 ? "" : "s",
      static_cast<long long>(t.block_dims[0] * t.block_dims[1] * t.block_dims[2]),
      t.warps_per_block, t.warps_per_block == 1 ? "" : "s", static_cast<long long>(t.resident),
      waves.c_str(), static_cast<long long>(t.block), static_cast<long long>(bx),
      static_cast<long long>(by), static_cast<long long>(t.wave + 1),
      static_cast<long long>(t.sm));
  ImGui::BeginGroup();
  ImGui::TextDisabled("Blocks (click one to follow it)");
  draw_block_picker(ctx, t, std::min(rect.w * 0.32f, em * 18), em * 10);
  ImGui::EndGroup();
  ImGui::SameLine(0, em * 1.5f);
  ImGui::BeginGroup();
  ImGui::TextDisabled("Warp of block %lld:", static_cast<long long>(t.block));
  for (int w = 0; w < t.warps_per_block && w < 64; ++w) {
    if (w % 16 != 0) ImGui::SameLine(0, em * 0.2f);
    const bool on = w == t.warp;
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(p.selection));
    const std::string label = std::to_string(w) + "##warp";
    if (ImGui::SmallButton(label.c_str()) && !on)
      ctx.push(command_from("tiles warp " + std::to_string(w)));
    note_widget("tiles.warp." + std::to_string(w));
    if (on) ImGui::PopStyleColor();
  }
  const ImU32 l1_col = p.category[0], l2_col = p.category[1];
  swatch(l1_col, 0,
         ("held in SM " + std::to_string(t.sm) + "'s " + t.l1_name + " (" + bytes_text(t.l1_bytes) +
          ", its own)").c_str());
  swatch(l2_col, 0,
         ("held in " + t.l2_name + " (" + bytes_text(t.l2_bytes) + ", every SM's)").c_str());
  swatch(with_alpha(p.category[2], 110), 0, "touched by this wave in the last step");
  swatch(p.bar_bg, p.selection, ("block " + std::to_string(t.block) + "'s tile in that step").c_str());
  swatch(p.bar_bg, 0, "in no cache: the next touch goes to memory");
  ImGui::EndGroup();
}

// Draws the caption of the frame shown: which step of the wave it is.
void draw_gpu_step_caption(const GpuTilesResult& t, const GpuTilesFrame& f, int frame, int last) {
  std::string what;
  if (frame == 0)
    what = "the wave's start: what earlier waves left in the caches";
  else if (!t.blocks_in_turn)
    what = "after every block of the wave ran one more iteration of its serial loop (in step)";
  else if (!t.step_loop.empty())
    what = "after one iteration of loop " + t.step_loop +
           " of one block: no serial loop sits outside the thread loops, so the simulated "
           "blocks of a wave take turns";
  else
    what = "after one block: its body has no serial loop, so the blocks of a wave take turns";
  const bool own = frame > 0 && size_t(frame) >= t.first_block_frame &&
                   std::any_of(f.block.begin(), f.block.end(),
                               [](const TileBox& b) { return !b.empty(); });
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("frame %d of %d · %s%s", frame, last, what.c_str(),
                     own ? "" : (" · block " + std::to_string(t.block) + " is not running in this step (its first step is frame " + std::to_string(t.first_block_frame) + ")").c_str());
  ImGui::PopStyleColor();
}

// Draws one tensor's grid at `at`: bins coloured by cache level, the wave's touches tinted, the
// warp's lanes dotted and the picked block's tile boxed.
void draw_gpu_grid(ViewContext& ctx, ImDrawList* dl, const GpuTilesResult& t,
                   const GpuTilesFrame& f, size_t gi, ImVec2 at, ImVec2 size) {
  const Palette& p = ctx.palette;
  const TileGrid& g = t.grids[gi];
  const ImU32 l1_col = p.category[0], l2_col = p.category[1];
  const float x = at.x, gy = at.y, gw = size.x, gh = size.y;
  const float cw = gw / float(g.bin_cols), ch = gh / float(g.bin_rows);
  std::vector<RgbaTexture>& textures = ctx.caches.tiles_gpu.textures;
  std::vector<uint32_t>& pixels = ctx.caches.tiles_gpu.pixels;
  pixels.assign(g.bins(), p.bar_bg);
  for (size_t i = 0; i < g.bins(); ++i) {
    const uint8_t l1 = f.l1[g.offset + i], l2 = f.l2[g.offset + i];
    if (l1 > 0)
      pixels[i] = mix(p.bar_bg, l1_col, 0.35f + 0.65f * float(l1) / 255.0f);
    else if (l2 > 0)
      pixels[i] = mix(p.bar_bg, l2_col, 0.35f + 0.65f * float(l2) / 255.0f);
  }
  if (textures.size() <= gi) textures.resize(gi + 1);
  textures[gi].upload(g.bin_cols, g.bin_rows, pixels.data());
  draw_opaque_image(dl, textures[gi], ImVec2(x, gy), ImVec2(x + gw, gy + gh));
  for (int r = 0; r < g.bin_rows; ++r)
    for (int c = 0; c < g.bin_cols; ++c)
      if (f.wave[g.offset + size_t(r) * size_t(g.bin_cols) + size_t(c)])
        dl->AddRectFilled(ImVec2(x + float(c) * cw, gy + float(r) * ch),
                          ImVec2(x + float(c + 1) * cw, gy + float(r + 1) * ch),
                          with_alpha(p.category[2], 110));
  // The picked warp's lanes, one dot per bin they fall in.
  std::set<size_t> dots;
  for (const GpuWarpAccess& w : f.warp)
    if (w.grid == int(gi))
      for (int64_t e : w.lane_elem) {
        if (e < 0 || e >= g.rows * g.cols) continue;
        const auto [br, bcol] = g.bin_of(uint64_t(e));
        dots.insert(br * size_t(g.bin_cols) + bcol);
      }
  for (size_t d : dots) {
    const float cx = x + (float(d % size_t(g.bin_cols)) + 0.5f) * cw;
    const float cy = gy + (float(d / size_t(g.bin_cols)) + 0.5f) * ch;
    const float rad = std::max(2.0f, std::min(cw, ch) * 0.35f);
    dl->AddCircleFilled(ImVec2(cx, cy), rad + 1.0f, p.node_bg);
    dl->AddCircleFilled(ImVec2(cx, cy), rad, p.text);
  }
  if (gi < f.block.size() && !f.block[gi].empty()) {
    const TileBox& b = f.block[gi];
    dl->AddRect(ImVec2(x + float(b.c0) * cw, gy + float(b.r0) * ch),
                ImVec2(x + float(b.c1 + 1) * cw, gy + float(b.r1 + 1) * ch), p.selection, 0, 0,
                std::max(2.0f, std::min(cw, ch) * 0.4f));
  }
  dl->AddRect(ImVec2(x, gy), ImVec2(x + gw, gy + gh), p.node_border);
}

// Draws every tensor's grid, laid out left to right and wrapping.
void draw_gpu_tensors(ViewContext& ctx, const Rect& rect, float em, const GpuTilesResult& t,
                      const GpuTilesFrame& f) {
  const Palette& p = ctx.palette;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 start = ImGui::GetCursorScreenPos();
  const float avail_w = rect.x + rect.w - start.x - em;
  const float avail_h = rect.y + rect.h - start.y - em;
  // The grids share one row where they can and leave half the height to the warp's picture.
  float cols_total = 0, rows_max = 1;
  for (const TileGrid& g : t.grids) {
    cols_total += float(g.bin_cols);
    rows_max = std::max(rows_max, float(g.bin_rows));
  }
  const float gaps = float(t.grids.size()) * em * 1.5f;
  const float cell = std::clamp(
      std::min((avail_w - gaps) / std::max(cols_total, 1.0f), avail_h * 0.42f / rows_max), 2.0f,
      em * 0.7f);
  float x = start.x, y = start.y, row_h = 0;
  for (size_t gi = 0; gi < t.grids.size(); ++gi) {
    const TileGrid& g = t.grids[gi];
    const ImVec2 size = tile_grid_size(g, cell);
    const float gw = size.x, gh = size.y;
    const std::string title =
        g.name + (g.output ? " (out)" : "") +
        (g.staged_from.empty() ? "" : " (block " + std::to_string(t.block) + "'s " + g.level + " copy)");
    const float tw = ImGui::CalcTextSize(title.c_str()).x;
    if (x > start.x && x + std::max(gw, tw) > start.x + avail_w) {
      x = start.x;
      y += row_h + em * 0.8f;
      row_h = 0;
    }
    dl->AddText(ctx.fonts.ui_bold, ctx.fonts.px, ImVec2(x, y), p.text, title.c_str());
    const float gy = y + em * 1.4f;
    draw_gpu_grid(ctx, dl, t, f, gi, ImVec2(x, gy), ImVec2(gw, gh));
    x += std::max(gw, tw) + em * 1.5f;
    row_h = std::max(row_h, gh + em * 1.4f);
  }
  ImGui::Dummy(ImVec2(avail_w, y + row_h - start.y + em * 0.3f));
}

// Draws the picked warp's instructions in the last step, each with its sectors or banks.
void draw_gpu_warp_accesses(ViewContext& ctx, const Rect& rect, float em,
                            const GpuTilesResult& t, const GpuTilesFrame& f, int frame,
                            uint32_t banks) {
  const Palette& p = ctx.palette;
  const std::vector<WarpPattern> patterns = warp_patterns(f);
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::Text("Warp %d of block %lld in the last step: %zu instruction%s", t.warp,
              static_cast<long long>(t.block), f.warp.size() + f.warp_more,
              f.warp.size() + f.warp_more == 1 ? "" : "s");
  ImGui::PopFont();
  if (patterns.empty())
    ImGui::TextDisabled(frame == 0 ? "(the wave has not started: step forward)"
                                   : "(this warp touched no memory in that step)");
  for (const WarpPattern& pt : patterns) {
    const std::string words = describe_warp_access(t, *pt.first);
    ImGui::PushStyleColor(ImGuiCol_Text,
                          ImGui::ColorConvertU32ToFloat4(pt.first->coalesced() ? p.text : p.error));
    text_wrapped("%s%s", pt.count > 1 ? (std::to_string(pt.count) + " × ").c_str() : "",
                       words.c_str());
    ImGui::PopStyleColor();
    ImGui::Indent(em);
    draw_access_picture(ctx, t, *pt.first, banks, rect.w - em * 4);
    ImGui::Unindent(em);
  }
  if (t.warp_global > 0)
    text_wrapped(
        "Over the whole wave, warp %d's %s global instructions moved %s sectors; %s would hold "
        "the bytes its lanes asked for, so it moves %.1f× what it needs.",
        t.warp, format_thousands(int64_t(t.warp_global)).c_str(),
        format_thousands(int64_t(t.warp_sectors)).c_str(),
        format_thousands(int64_t(t.warp_ideal_sectors)).c_str(),
        double(t.warp_sectors) / double(std::max<uint64_t>(t.warp_ideal_sectors, 1)));
}

}  // namespace

void draw_tiles_gpu(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  const schedule::Kernel* k = wb.kernel();
  const float em = ImGui::GetFontSize();
  if (!k) return;
  if (!wb.machine) {
    text_wrapped("No machine is loaded: choose a GPU (minigpu, h200, …) in the status bar.");
    return;
  }
  if (const std::string why = gpu_tiles_unavailable(*k, *wb.machine); !why.empty()) {
    text_wrapped("The GPU mode follows one block and one warp of a GPU launch, but %s.",
                       why.c_str());
    return;
  }
  if (tiles_recording_pending(ctx, wb.gpu_tiles_key_now(), wb.gpu_tiles_key, wb.gpu_tiles,
                              wb.gpu_tiles_error, wb.gpu_tiles_job,
                              "Running the wave of block " + std::to_string(wb.tiles_block) + "…"))
    return;
  if (!wb.gpu_tiles) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("Could not follow this pick: %s", wb.gpu_tiles_error.c_str());
    ImGui::PopStyleColor();
    if (ImGui::Button("Follow block 0, warp 0")) {
      ctx.push(command_from("tiles block 0"));
      ctx.push(command_from("tiles warp 0"));
    }
    return;
  }
  const GpuTilesResult& t = *wb.gpu_tiles;
  const int last = std::max(0, static_cast<int>(t.frames.size()) - 1);
  const int frame = std::clamp(static_cast<int>(std::floor(wb.tiles_frame)), 0, last);
  const GpuTilesFrame& f = t.frames[size_t(frame)];
  const uint32_t banks = wb.machine->scratchpad ? wb.machine->scratchpad->banks : 32;

  // [SECTION] The launch and the pick
  draw_gpu_launch(ctx, rect, em, t);

  // [SECTION] Transport and the step
  tiles_transport(ctx, rect, frame, last);
  draw_gpu_step_caption(t, f, frame, last);

  // [SECTION] Tensors
  draw_gpu_tensors(ctx, rect, em, t, f);

  // [SECTION] The warp's instructions in the last step
  draw_gpu_warp_accesses(ctx, rect, em, t, f, frame, banks);

  // [SECTION] Counters over time along the wave (the Memory view's hierarchy, every block),
  // below the warp's instructions: what this mode is first about stays in view.
  ImGui::Spacing();
  if (t.frame_counters.size() > 1) {
    const ImVec2 at = ImGui::GetCursorScreenPos();
    draw_tiles_counters(ctx, t, wb.gpu_tiles_key, frame, at, rect.x + rect.w - at.x - em);
    ImGui::SetCursorScreenPos(at);
    ImGui::Dummy(ImVec2(1, tiles_counters_height(em)));
  }
}

}  // namespace tilescope::gui

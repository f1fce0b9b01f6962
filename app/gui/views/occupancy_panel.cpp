// The Schedule panel's occupancy calculator, in the manner of Nsight Compute's: one block's
// resources (typed, or the current kernel's launch), the blocks per SM each of the SM's resources
// allows with the least of them marked, the warps and occupancy that gives, the grid's waves, and
// occupancy as each resource varies with the others fixed. predict::occupancy counts (the CLI's
// `occupancy` command prints the same); this file only draws, and pushes `control occupancy.*`.
#include "app/gui/views/views.h"

#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"
#include "sim/io/format.h"
#include "sim/schedule/codegen.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

OccupancyShown occupancy_shown(const AppState& state) {
  const Workbench& wb = state.workbench;
  const ViewControls& c = state.controls.views;
  OccupancyShown s;
  s.threads_from_kernel = c.occupancy_threads == 0;
  s.smem_from_kernel = c.occupancy_smem == 0;
  s.resources = {c.occupancy_threads, c.occupancy_registers, c.occupancy_smem};
  if (const schedule::Kernel* k = wb.kernel()) {
    const schedule::LaunchConfig lc = schedule::launch_config(*k);
    if (s.threads_from_kernel) s.resources.threads_per_block = lc.threads();
    if (s.smem_from_kernel) s.resources.smem_per_block = lc.dynamic_smem_bytes;
    s.grid_blocks = lc.blocks();
  }
  if (!wb.machine) {
    s.none = "No machine to count on: " + wb.machine_error;
    return s;
  }
  const predict::Machine& m = *wb.machine;
  // Checked here rather than caught below, so a CPU gets a sentence a learner can act on.
  if (m.kind != "gpu") {
    s.none = "Occupancy is a GPU's idea: how many blocks of threads one SM runs at once. " +
             m.name + " is a CPU; choose a GPU machine (h200, a100, ...) to count it.";
    return s;
  }
  if (!m.sm.known()) {
    s.none = m.name +
             " does not state its per-SM limits (warps, blocks and registers an SM), "
             "so its occupancy cannot be counted.";
    return s;
  }
  try {
    s.occupancy = predict::occupancy(m, s.resources);
  } catch (const std::invalid_argument& e) {
    s.none = e.what();
  }
  return s;
}

namespace {

std::string num(int64_t v) {
  return std::to_string(v);
}

std::string blocks(int64_t n) {
  return num(n) + (n == 1 ? " block" : " blocks");
}

// One resource's field: the value counted (the kernel's while the control is 0 and follows it),
// edited by typing; each edit pushes `control NAME VALUE`, clamped to the control's range so a
// half-typed number is never refused.
void resource_field(ViewContext& ctx, const char* control, int64_t shown, int max, bool from_kernel,
                    const char* label, const std::string& tip) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  int v = int(shown);
  ImGui::SetNextItemWidth(-1.0f);
  if (ImGui::InputInt((std::string("##") + control).c_str(), &v, 0, 0))
    push_control(ctx, control, std::to_string(std::clamp(v, 0, max)));
  note_widget(control);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip.c_str());
  ImGui::TableNextColumn();
  // Wrapped, and the mark on the same line only while it fits: at 200 % the column is narrow.
  text_wrapped("%s", label);
  if (from_kernel) {
    const char* mark = "(kernel's)";
    const float room = ImGui::GetContentRegionAvail().x - ImGui::GetItemRectSize().x -
                       ImGui::GetStyle().ItemSpacing.x;
    if (ImGui::CalcTextSize(mark).x <= room) ImGui::SameLine();
    ImGui::TextDisabled("%s", mark);
  }
}

void draw_inputs(ViewContext& ctx, const OccupancyShown& s) {
  const float em = ImGui::GetFontSize();
  const predict::KernelResources& r = s.resources;
  if (ImGui::BeginTable("occupancy inputs", 2, ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, em * 5);
    ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
    resource_field(ctx, "occupancy.threads", r.threads_per_block, kMaxOccupancyThreads,
                   s.threads_from_kernel, "threads per block",
                   "Threads in one block. 0 follows the current kernel's launch (its thread.x, y "
                   "and z loops).");
    resource_field(ctx, "occupancy.registers", r.registers_per_thread, kMaxOccupancyRegisters,
                   false, "registers per thread",
                   "32-bit registers the compiler gives each thread (0 to " +
                       num(kMaxOccupancyRegisters) + ").");
    resource_field(ctx, "occupancy.smem", r.smem_per_block, kMaxOccupancySmem, s.smem_from_kernel,
                   "shared memory per block (B)",
                   "Bytes of shared memory one block uses. 0 follows the current kernel's staged "
                   "tiles.");
    ImGui::EndTable();
  }
  // Before bind(): the launch is one thread, which a learner would otherwise read as a choice.
  if (s.threads_from_kernel && r.threads_per_block == 1)
    disabled_wrapped("No loop is bound to threads yet: the kernel's blocks are one thread each.");
  // The schedule decides threads and shared memory; the register count only the compiler knows.
  disabled_wrapped(
      "Registers come from the compiler: `run --gpu` prints NVRTC's count for this "
      "schedule, and `nvcc -Xptxas -v` prints it for a hand-written kernel.");
}

struct LimitRow {
  const char* name;
  int64_t blocks;
  std::string each;  // what one block takes, short
  std::string tip;   // the count in a sentence
};

std::vector<LimitRow> limit_rows(const predict::Machine& m, const predict::Occupancy& o) {
  const int64_t parts = std::max<int64_t>(m.sm.sub_partitions, 1);
  const int64_t share = m.sm.registers / parts;
  const int64_t warp = m.scratchpad && m.scratchpad->warp_size > 0 ? m.scratchpad->warp_size : 32;
  std::string reg_tip = "No registers: nothing to limit.";
  if (o.registers_per_warp > 0)
    reg_tip = "Registers are allocated per warp, in units of " + num(m.sm.register_unit) + ": " +
              num(o.registers_per_warp) + " a warp. Each of the SM's " + num(parts) +
              " warp schedulers owns " + num(share) + " of its " + num(m.sm.registers) + ": " +
              num(share / o.registers_per_warp) + " warps each, " +
              num(share / o.registers_per_warp * parts) + " an SM.";
  return {
      {"warps", o.by_warps, num(o.warps_per_block) + " of " + num(m.sm.warps),
       "The SM holds " + num(m.sm.warps) + " warps at once; a block is " + num(o.warps_per_block) +
           " warps (" + num(warp) + " threads each)."},
      {"blocks", o.by_blocks, "1 of " + num(m.sm.blocks),
       "The SM holds at most " + num(m.sm.blocks) + " blocks at once, however small."},
      {"registers", o.by_registers, num(o.registers_per_warp) + " a warp", reg_tip},
      {"shared memory", o.by_smem,
       io::format_bytes(double(o.smem_per_block_allocated)) + " of " +
           io::format_bytes(double(o.smem_per_sm)),
       "A block takes its shared memory plus the driver's " +
           io::format_bytes(double(m.sm.smem_reserved_per_block)) + ", rounded up to " +
           io::format_bytes(double(m.sm.smem_unit)) + ": " +
           io::format_bytes(double(o.smem_per_block_allocated)) + " of the SM's " +
           io::format_bytes(double(o.smem_per_sm)) + "."},
  };
}

// The blocks per SM each resource allows, the least of them (the limiter) on a highlighted row.
void draw_limits_table(ViewContext& ctx, const predict::Machine& m, const predict::Occupancy& o) {
  disabled_wrapped("Blocks one SM holds, by each resource:");
  if (!ImGui::BeginTable("occupancy limits", 3, ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupColumn("resource");
  ImGui::TableSetupColumn("blocks");
  ImGui::TableSetupColumn("each", ImGuiTableColumnFlags_WidthStretch);  // wraps at large type
  for (const LimitRow& row : limit_rows(m, o)) {
    const bool limits = row.blocks == o.blocks_per_sm;
    ImGui::TableNextRow();
    if (limits) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg0, ctx.palette.stale_bg);
    ImGui::PushFont(limits ? ctx.fonts.ui_bold : ctx.fonts.ui);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.name);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.tip.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(row.blocks));
    ImGui::TableNextColumn();
    disabled_wrapped("%s", row.each.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.tip.c_str());
    ImGui::PopFont();
  }
  ImGui::EndTable();
}

// The least limit as a sentence and a bar, then the current kernel's grid in waves.
void draw_summary(ViewContext& ctx, const OccupancyShown& s, const predict::Machine& m) {
  const predict::Occupancy& o = s.occupancy;
  const float em = ImGui::GetFontSize();
  char pct[32];
  std::snprintf(pct, sizeof pct, "occupancy %.0f %%", 100 * o.occupancy);
  share_bar_item(o.occupancy, ctx.palette.bar_bg, ctx.palette.ok, em * 6, pct);
  text_wrapped("%s per SM, limited by %s: %lld of %lld warps, occupancy %.1f %%.",
               blocks(o.blocks_per_sm).c_str(), o.limiter.c_str(),
               static_cast<long long>(o.warps_per_sm), static_cast<long long>(m.sm.warps),
               100 * o.occupancy);
  if (s.grid_blocks > 0 && o.blocks_per_sm > 0) {
    const predict::Waves w = predict::waves(m, o, s.grid_blocks);
    const double f = 100 * w.tail_fill();
    const std::string fill = f < 1 ? "under 1 %" : std::to_string(int(f + 0.5)) + " %";
    const std::string how = w.tail_blocks == 0 ? std::string("every wave full")
                            : w.full_waves == 0
                                ? "it fills " + fill + " of one wave's block slots"
                                : num(w.full_waves) + " full and a tail of " +
                                      blocks(w.tail_blocks) + " (" + fill + " of the slots)";
    disabled_wrapped("This kernel's grid, %s: %lld a wave (%d SMs × %lld), %.3g waves: %s.",
                     blocks(w.blocks).c_str(), static_cast<long long>(w.per_wave), m.cores,
                     static_cast<long long>(o.blocks_per_sm), w.waves, how.c_str());
  }
}

struct CurveSpec {
  predict::OccupancyAxis axis;
  const char* title;
  const char* control;
  int64_t value;  // the block's, marked on the curve
  bool bytes;     // values are bytes (the range written as such)
};

// The x position of `v` on a curve from points.front() to points.back().
float curve_x(const std::vector<predict::OccupancyPoint>& pts, int64_t v, float x0, float w) {
  const double lo = double(pts.front().value), hi = double(pts.back().value);
  const double t =
      hi > lo
          ? (double(std::clamp<int64_t>(v, pts.front().value, pts.back().value)) - lo) / (hi - lo)
          : 0.0;
  return x0 + float(t) * w;
}

// The curve's point nearest to window x `mx`.
const predict::OccupancyPoint& nearest_point(const std::vector<predict::OccupancyPoint>& pts,
                                             float mx, float x0, float w) {
  size_t best = 0;
  for (size_t i = 1; i < pts.size(); ++i)
    if (std::abs(curve_x(pts, pts[i].value, x0, w) - mx) <
        std::abs(curve_x(pts, pts[best].value, x0, w) - mx))
      best = i;
  return pts[best];
}

// One small plot: occupancy 0-100 % as a step line over the resource's range, the block's value
// marked. Hovering names the point under the mouse; a click sets the resource to it (a control
// command, so it replays).
void draw_curve(ViewContext& ctx, const predict::Machine& m, const OccupancyShown& s,
                const CurveSpec& c) {
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  std::vector<predict::OccupancyPoint> pts;
  try {
    pts = predict::occupancy_curve(m, s.resources, c.axis);
  } catch (const std::invalid_argument&) {
  }
  ImGui::TextUnformatted(c.title);
  if (pts.empty()) {
    ImGui::SameLine();
    ImGui::TextDisabled("no value runs");
    return;
  }
  auto label = [&](int64_t v) { return c.bytes ? io::format_bytes(double(v)) : num(v); };
  const std::string range = label(pts.front().value) + " - " + label(pts.back().value);
  // The range at the right of the title, or under it where the two would touch (large type).
  const float range_w = ImGui::CalcTextSize(range.c_str()).x;
  if (ImGui::GetItemRectSize().x + em + range_w <= ImGui::GetContentRegionAvail().x)
    ImGui::SameLine(ImGui::GetContentRegionMax().x - range_w);
  ImGui::TextDisabled("%s", range.c_str());
  const ImVec2 size(std::max(ImGui::GetContentRegionAvail().x, em), em * 2.8f);
  const bool clicked = ImGui::InvisibleButton(c.control, size);
  note_widget(std::string(c.control) + ".curve");
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  const float w = b.x - a.x, h = b.y - a.y;
  auto y_of = [&](double occ) { return b.y - 1 - float(occ) * (h - 2); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(a, b, p.bar_bg, 2.0f);
  dl->AddLine(ImVec2(a.x, y_of(0.5)), ImVec2(b.x, y_of(0.5)), p.grid);
  const float thick = 1.5f * p.line_scale;
  for (size_t i = 0; i < pts.size(); ++i) {
    const float x = curve_x(pts, pts[i].value, a.x, w);
    const float next = i + 1 < pts.size() ? curve_x(pts, pts[i + 1].value, a.x, w) : b.x;
    dl->AddLine(ImVec2(x, y_of(pts[i].occupancy)), ImVec2(next, y_of(pts[i].occupancy)), p.hover,
                thick);
    if (i + 1 < pts.size())
      dl->AddLine(ImVec2(next, y_of(pts[i].occupancy)), ImVec2(next, y_of(pts[i + 1].occupancy)),
                  p.hover, thick);
  }
  const float mx = curve_x(pts, c.value, a.x, w);
  dl->AddLine(ImVec2(mx, a.y), ImVec2(mx, b.y), p.selection, thick);
  if (s.occupancy.error.empty()) {
    // The block's occupancy beside its dot, on the side with room, so each curve reads alone.
    const float my = y_of(s.occupancy.occupancy);
    dl->AddCircleFilled(ImVec2(mx, my), em * 0.25f, p.selection);
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f %%", 100 * s.occupancy.occupancy);
    const ImVec2 ts = ImGui::CalcTextSize(pct);
    const float tx = mx + em * 0.4f + ts.x < b.x ? mx + em * 0.4f : mx - em * 0.4f - ts.x;
    const float ty = std::clamp(my - ts.y - 1, a.y, b.y - ts.y);
    dl->AddText(ImVec2(tx, ty), p.text, pct);
  }
  if (ImGui::IsItemHovered()) {
    const predict::OccupancyPoint& q = nearest_point(pts, ImGui::GetMousePos().x, a.x, w);
    ImGui::SetTooltip("%s %lld: %lld blocks per SM, occupancy %.0f %%\n(click to use it)", c.title,
                      static_cast<long long>(q.value), static_cast<long long>(q.blocks_per_sm),
                      100 * q.occupancy);
  }
  if (clicked) {
    const predict::OccupancyPoint& q = nearest_point(pts, ImGui::GetMousePos().x, a.x, w);
    push_control(ctx, c.control, num(q.value));
  }
}

void draw_curves(ViewContext& ctx, const predict::Machine& m, const OccupancyShown& s) {
  ImGui::Spacing();
  disabled_wrapped(
      "Occupancy (0 - 100 %%) as one resource changes, the others fixed; the upright "
      "line is this block. Click a curve to try a value.");
  const predict::KernelResources& r = s.resources;
  const CurveSpec specs[] = {
      {predict::OccupancyAxis::Threads, "threads per block", "occupancy.threads",
       r.threads_per_block, false},
      {predict::OccupancyAxis::Registers, "registers per thread", "occupancy.registers",
       r.registers_per_thread, false},
      {predict::OccupancyAxis::SharedMemory, "shared memory per block", "occupancy.smem",
       r.smem_per_block, true},
  };
  for (const CurveSpec& c : specs) {
    ImGui::PushID(c.control);
    draw_curve(ctx, m, s, c);
    ImGui::PopID();
  }
}

}  // namespace

void draw_occupancy_section(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  section_heading(ctx, ("Occupancy on " + wb.machine_name).c_str());
  const OccupancyShown s = occupancy_shown(ctx.state);
  if (!s.none.empty()) {
    disabled_wrapped("%s", s.none.c_str());
    return;
  }
  const predict::Machine& m = *wb.machine;
  draw_inputs(ctx, s);
  if (!s.occupancy.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    std::string e = s.occupancy.error;  // predict's sentence, opened as one
    e[0] = char(std::toupper(static_cast<unsigned char>(e[0])));
    text_wrapped("%s.", e.c_str());
    ImGui::PopStyleColor();
  } else {
    draw_limits_table(ctx, m, s.occupancy);
    draw_summary(ctx, s, m);
  }
  draw_curves(ctx, m, s);
}

}  // namespace tilescope::gui

// The Timings view's autotune section: the tile-size sweep of the current kernel as two heatmaps
// (predicted on the machine, measured on this CPU) with colour scales, the best point outlined and
// named, and how well the two rank the points.
#include "app/gui/views/autotune_panel.h"
#include "app/gui/widgets/text_wrap.h"

#include "app/core/format.h"

#include "app/core/autotune_jobs.h"
#include "sim/io/format.h"
#include "sim/predict/machine.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

std::string time_text(double s) {
  return io::format_ms(s * 1000);
}

// Short form for a cell: "1.9", "120", "0.31" (the scale names the unit).
std::string cell_text(double s) {
  char buf[16];
  const double ms = s * 1000;
  if (ms >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", ms);
  else if (ms >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", ms);
  else
    std::snprintf(buf, sizeof buf, "%.2f", ms);
  return buf;
}

// Viridis-like sequential scale (dark purple = fast … yellow = slow): readable under the common
// colour-vision deficiencies and in greyscale.
ImU32 scale_colour(double t) {
  static const float stops[][3] = {{0.267f, 0.005f, 0.329f},
                                   {0.230f, 0.322f, 0.546f},
                                   {0.128f, 0.567f, 0.551f},
                                   {0.370f, 0.789f, 0.383f},
                                   {0.993f, 0.906f, 0.144f}};
  const float f = float(std::clamp(t, 0.0, 1.0)) * 4.0f;
  const int i = std::min(3, int(f));
  const float u = f - float(i);
  return ImGui::ColorConvertFloat4ToU32(ImVec4(stops[i][0] + (stops[i + 1][0] - stops[i][0]) * u,
                                               stops[i][1] + (stops[i + 1][1] - stops[i][1]) * u,
                                               stops[i][2] + (stops[i + 1][2] - stops[i][2]) * u,
                                               1.0f));
}

// Readable text on a scale colour.
ImU32 text_on(double t) {
  return t > 0.55 ? IM_COL32(20, 20, 20, 255) : IM_COL32_WHITE;
}

struct Range {
  double lo = 0, hi = 0;
  bool valid() const { return hi > 0 && lo > 0; }
  // Log position: a 2× change looks alike anywhere on the scale.
  double at(double s) const { return hi > lo ? std::log(s / lo) / std::log(hi / lo) : 0.0; }
};

Range range_of(const AutotuneGrid& g) {
  const auto [lo, hi] = g.time_range();
  return Range{lo, hi};
}

// One heatmap with its axes and colour scale, drawn at the cursor within `width`.
void draw_heatmap(ViewContext& ctx, const AutotuneGrid& g, float width, float max_height,
                  const char* id) {
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  const Range range = range_of(g);
  const bool flat = range.valid() && range.hi <= range.lo * (1 + 1e-9);
  const size_t rows = g.sizes_a.size(), cols = g.sizes_b.size();
  const float label_w = ImGui::CalcTextSize("0000").x + em * 0.4f;  // row labels
  const float cell =
      std::clamp(std::min((width - label_w - em) / float(std::max<size_t>(cols, 1)),
                          (max_height - em * 7.0f) / float(std::max<size_t>(rows, 1))),
                 em * 1.6f, em * 4.0f);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 grid0(o.x + label_w, o.y + em * 2.5f);
  const float gw = cell * float(cols), gh = cell * float(rows);

  // Axes: column sizes across the top, row sizes down the left, each axis named by its loop.
  const std::string top = "tile of " + g.loop_b + " →";
  dl->AddText(ImVec2(grid0.x, o.y), p.subtext, top.c_str());
  for (size_t c = 0; c < cols; ++c) {
    const std::string t = std::to_string(g.sizes_b[c]);
    const ImVec2 ts = ImGui::CalcTextSize(t.c_str());
    dl->AddText(ImVec2(grid0.x + cell * (float(c) + 0.5f) - ts.x / 2, o.y + em * 1.25f), p.text,
                t.c_str());
  }
  for (size_t r = 0; r < rows; ++r) {
    const std::string t = std::to_string(g.sizes_a[r]);
    const ImVec2 ts = ImGui::CalcTextSize(t.c_str());
    dl->AddText(ImVec2(grid0.x - ts.x - em * 0.3f, grid0.y + cell * (float(r) + 0.5f) - ts.y / 2),
                p.text, t.c_str());
  }
  // The row axis's name under the row labels (ImGui draws no rotated text).
  const std::string left = "↑ tile of " + g.loop_a;
  dl->AddText(ImVec2(o.x, grid0.y + gh + em * 0.2f), p.subtext, left.c_str());

  // Cells.
  int hovered = -1;
  const ImVec2 mouse = ImGui::GetMousePos();
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) {
      const AutotunePoint& pt = g.at(r, c);
      const ImVec2 a(grid0.x + cell * float(c), grid0.y + cell * float(r));
      const ImVec2 b(a.x + cell - 1, a.y + cell - 1);
      std::string label;
      ImU32 fg = p.text;
      if (pt.ok()) {
        const double t = flat ? 0.5 : range.at(pt.seconds);
        dl->AddRectFilled(a, b, scale_colour(t));
        label = cell_text(pt.seconds);
        fg = text_on(t);
      } else {
        dl->AddRectFilled(a, b, pt.refused ? p.bar_bg : p.error_bg);
        label = pt.refused ? "×" : "!";
        fg = pt.refused ? p.subtext : p.error;
      }
      const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
      if (ts.x < cell - 2)
        dl->AddText(ImVec2(a.x + (cell - ts.x) / 2, a.y + (cell - ts.y) / 2), fg, label.c_str());
      if (mouse.x >= a.x && mouse.x < b.x && mouse.y >= a.y && mouse.y < b.y &&
          ImGui::IsWindowHovered())
        hovered = int(r * cols + c);
    }
  if (g.best >= 0 && !flat) {
    const size_t r = size_t(g.best) / cols, c = size_t(g.best) % cols;
    const ImVec2 a(grid0.x + cell * float(c), grid0.y + cell * float(r));
    const float t = 3.0f * p.line_scale;
    dl->AddRect(ImVec2(a.x - t * 0.5f, a.y - t * 0.5f),
                ImVec2(a.x + cell - 1 + t * 0.5f, a.y + cell - 1 + t * 0.5f), p.selection, 0.0f, 0,
                t);
  }

  // Colour scale under the grid, log-spaced: fast on the left, slow on the right, with numbers.
  const float sy = grid0.y + gh + em * 1.5f, sh = em * 0.7f;
  const float sw = std::max(gw, em * 10);
  if (flat) {
    dl->AddRectFilled(ImVec2(grid0.x, sy), ImVec2(grid0.x + sw, sy + sh), scale_colour(0.5));
    const std::string t = "every point: " + time_text(range.lo);
    dl->AddText(ImVec2(grid0.x, sy + sh + em * 0.1f), p.text, t.c_str());
  } else if (range.valid()) {
    const int steps = 48;
    for (int i = 0; i < steps; ++i) {
      const float x0 = grid0.x + sw * float(i) / steps, x1 = grid0.x + sw * float(i + 1) / steps;
      dl->AddRectFilled(ImVec2(x0, sy), ImVec2(x1 + 1, sy + sh), scale_colour((i + 0.5) / steps));
    }
    for (int i = 0; i < 3; ++i) {
      const double f = i / 2.0;
      const double s = range.lo * std::pow(range.hi / range.lo, f);
      const std::string t = (i == 0 ? "fast " : "") + time_text(s) + (i == 2 ? " slow" : "");
      const float x = grid0.x + sw * float(f);
      const float tw = ImGui::CalcTextSize(t.c_str()).x;
      dl->AddLine(ImVec2(x, sy + sh), ImVec2(x, sy + sh + em * 0.25f), p.subtext);
      dl->AddText(ImVec2(std::clamp(x - tw / 2, grid0.x, grid0.x + sw - tw), sy + sh + em * 0.2f),
                  p.text, t.c_str());
    }
  }
  ImGui::SetCursorScreenPos(o);
  ImGui::InvisibleButton(id, ImVec2(std::max(width, 1.0f), sy + sh + em * 1.4f - o.y));
  if (hovered >= 0) {
    const AutotunePoint& pt = g.points[size_t(hovered)];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(g.point_name(pt).c_str());
    ImGui::TextDisabled("step applied: %s", pt.step.c_str());
    if (pt.ok())
      ImGui::Text("%s %s — %s", time_text(pt.seconds).c_str(),
                  g.mode == AutotuneMode::Simulator ? "predicted" : "measured", pt.detail.c_str());
    else {
      ImGui::PushTextWrapPos(em * 30);
      text_wrapped("%s: %s", pt.refused ? "refused" : "no time", pt.why.c_str());
      ImGui::PopTextWrapPos();
    }
    ImGui::EndTooltip();
  }
}

// The text under a heatmap: the best point named, refusals counted.
void grid_summary(ViewContext& ctx, const AutotuneGrid& g) {
  const bool sim = g.mode == AutotuneMode::Simulator;
  const Range range = range_of(g);
  if (range.valid() && range.hi <= range.lo * (1 + 1e-9)) {
    const AutotunePoint& b = g.points[size_t(g.best)];
    ImGui::PushFont(ctx.fonts.ui_bold);
    text_wrapped("no best: every point %s %s (%s)", sim ? "predicts" : "measures",
                       time_text(b.seconds).c_str(), b.detail.c_str());
    ImGui::PopFont();
    if (sim && b.detail.rfind("bound by L1", 0) == 0)
      text_wrapped(
          "Every tiling is bound by L1 → core traffic, which tiling cannot change: "
          "the core loads each operand once per multiply-add whatever the order. "
          "Tiles change which level serves those loads; the time follows only once "
          "a lower level binds (try a machine with smaller caches).");
    else if (sim)
      text_wrapped(
          "The binding level moves the same bytes at every point, so this "
          "machine's roofline cannot rank these tilings (hover a cell for its "
          "bound; another machine or another pair of loops may).");
  } else if (g.best >= 0) {
    const AutotunePoint& b = g.points[size_t(g.best)];
    ImGui::PushFont(ctx.fonts.ui_bold);
    text_wrapped("best: %s — %s %s", g.point_name(b).c_str(), time_text(b.seconds).c_str(),
                       sim ? "predicted" : "measured");
    ImGui::PopFont();
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("No point gave a time (hover the cells for why).");
    ImGui::PopStyleColor();
  }
  // The corner where both tiles are the whole loops changes nothing: it is the schedule as it
  // stands, the baseline every other cell is compared with.
  if (const schedule::Kernel* k = ctx.state.workbench.kernel(); k && g.best >= 0) {
    const int la = k->find_loop(g.loop_a), lb = k->find_loop(g.loop_b);
    const AutotunePoint* base =
        la >= 0 && lb >= 0 ? g.find(k->loops[size_t(la)].extent, k->loops[size_t(lb)].extent)
                           : nullptr;
    const AutotunePoint& b = g.points[size_t(g.best)];
    if (base && base->ok() && b.seconds > 0)
      text_wrapped(
          "The cell %lld × %lld tiles nothing (both tiles are the whole loops): it is this "
          "schedule unchanged, %s — the best point is %.2f× %s.",
          static_cast<long long>(base->tile_a), static_cast<long long>(base->tile_b),
          time_text(base->seconds).c_str(), base->seconds / b.seconds,
          sim ? "faster, predicted" : "faster, measured");
  }
  if (const schedule::Kernel* k = ctx.state.workbench.kernel(); sim && k) {
    const AutotuneHint hint = autotune_flat_hint(g, *k);
    if (!hint.text.empty()) {
      text_wrapped("%s", hint.text.c_str());
      const std::string label = "Sweep " + hint.a + " and " + hint.b + "##flat_hint";
      if (ImGui::Button(label.c_str())) {
        ctx.push(command_from("autotune loops " + hint.a + " " + hint.b));
        ctx.push(command_from("autotune sim"));
      }
      note_widget("timings.autotune-flat-hint");
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Sets the two loops to %s and %s and sweeps them on the simulator.",
                          hint.a.c_str(), hint.b.c_str());
    }
  }
  size_t refused = 0, failed = 0;
  for (const AutotunePoint& p : g.points) {
    refused += p.refused;
    failed += p.failed;
  }
  std::string line = std::to_string(g.points.size()) + " points in " +
                     std::to_string(g.wall_seconds).substr(0, 4) + " s";
  if (refused) line += "; × " + std::to_string(refused) + " refused by the schedule";
  if (failed) line += "; ! " + std::to_string(failed) + " without a time";
  ImGui::TextDisabled("%s", line.c_str());
  if (!sim && g.run_spread() > 0)
    disabled_wrapped(
        "Each point timed several times: its median is %.1f%% above its fastest run (median "
        "over the points) — cells closer than that are noise, not a ranking.",
        g.run_spread() * 100);
  // The first refusal in the schedule's words, so the × cells explain themselves.
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  for (const AutotunePoint& p : g.points) {
    if (!p.refused) continue;
    text_wrapped("× e.g. %s: %s", p.step.c_str(), p.why.c_str());
    break;
  }
  for (const std::string& n : g.notes) text_wrapped("%s", n.c_str());
  ImGui::PopStyleColor();
}

// One column: title, then the heatmap, a progress line, an error or a start button.
void grid_column(ViewContext& ctx, AutotuneMode mode, float width, float height) {
  const Workbench& wb = ctx.state.workbench;
  const AutotuneState& s = wb.autotune;
  const bool sim = mode == AutotuneMode::Simulator;
  const std::string key = sim ? autotune_sim_key(wb) : autotune_cpu_key(wb);
  const AutotuneGrid* g = sim ? autotune_sim_result(wb) : autotune_cpu_result(wb);
  const Job<AutotuneGrid>& job = sim ? s.sim_job : s.cpu_job;
  const auto& errors = sim ? s.sim_errors : s.cpu_errors;
  ImGui::PushFont(ctx.fonts.ui_bold);
  if (sim)
    ImGui::Text("Simulator: predicted on %s", wb.machine_name.c_str());
  else
    ImGui::TextUnformatted("Hardware: measured on this CPU");
  ImGui::PopFont();
  ImGui::TextDisabled("%s", sim ? "analytic traffic model + roofline, each point in a moment"
                                : "JIT-compiled, verified, median of 5 runs; one compile a point");
  if (job.running() && job.key() == key) {
    job_progress_line(ctx, sim ? "Predicting…" : "Compiling and timing…", job.fraction(), "");
    ImGui::TextDisabled("%s", job.phase().c_str());
  } else if (!g) {
    if (auto it = errors.find(key); it != errors.end()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
      text_wrapped("Sweep stopped: %s", it->second.c_str());
      ImGui::PopStyleColor();
    }
    const AutotuneLoops l = autotune_loops(wb);
    const size_t n = autotune_tile_sizes(l.extent_a, sim ? 0 : kAutotuneCpuPerAxis).size() *
                     autotune_tile_sizes(l.extent_b, sim ? 0 : kAutotuneCpuPerAxis).size();
    const std::string label =
        (sim ? "Sweep on the simulator (" : "Sweep on this CPU (") + std::to_string(n) + " points)";
    if (ImGui::Button(label.c_str())) ctx.push(command_from(sim ? "autotune sim" : "autotune cpu"));
    if (!sim && ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Each point compiles the generated C++ once (about a second), checks it\n"
          "against the interpreter, then times it. Cancel stops after the point.");
  }
  if (!g) return;
  ImGui::Spacing();
  draw_heatmap(ctx, *g, width, height, sim ? "##sim_heat" : "##cpu_heat");
  grid_summary(ctx, *g);
}

}  // namespace

void draw_autotune_section(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  const schedule::Kernel* k = wb.kernel();
  if (!k) {
    text_wrapped("No kernel to sweep: type a model in the left panel.");
    return;
  }
  const AutotuneLoops loops = autotune_loops(wb);
  text_wrapped("Kernel %s: %s", k->name.c_str(), k->summary.c_str());
  if (!loops.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("%s", loops.error.c_str());
    ImGui::PopStyleColor();
    if (!wb.autotune.want_a.empty() && ImGui::Button("Choose the loops automatically"))
      ctx.push(command_from("autotune loops auto"));
    return;
  }
  // The two loops: any serial loop long enough can be picked for either axis.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Sweep the tiles of loops");
  for (int axis = 0; axis < 2; ++axis) {
    ImGui::SameLine();
    const std::string& cur = axis == 0 ? loops.a : loops.b;
    ImGui::SetNextItemWidth(em * 4.5f);
    if (ImGui::BeginCombo(axis == 0 ? "##loop_a" : "##loop_b", cur.c_str())) {
      for (const schedule::Loop& l : k->loops) {
        if (l.kind != schedule::LoopKind::Serial || l.extent < 8) continue;
        const std::string& other = axis == 0 ? loops.b : loops.a;
        if (l.name == other) continue;
        const std::string text = l.name + " (" + std::to_string(l.extent) + ")";
        if (ImGui::Selectable(text.c_str(), l.name == cur))
          ctx.push(command_from("autotune loops " +
                                (axis == 0 ? l.name + " " + other : other + " " + l.name)));
      }
      ImGui::EndCombo();
    }
    if (axis == 0) {
      ImGui::SameLine();
      ImGui::TextUnformatted("and");
    }
  }
  ImGui::SameLine();
  ImGui::TextUnformatted("; predict on");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 8);
  if (ImGui::BeginCombo("##at_machine", wb.machine_name.c_str())) {
    for (const std::string& m : predict::preset_names())
      if (ImGui::Selectable(m.c_str(), m == wb.machine_name))
        ctx.push(command_from("machine " + m));
    ImGui::EndCombo();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped(
      "Each cell = this schedule (%s) + %s, tile sizes powers of two from 4 up to "
      "the loop's extent. × = the schedule refuses that step; ! = no time.",
      wb.steps_text().empty() ? "no steps" : wb.steps_text().c_str(),
      ("tile(" + loops.a + ", " + loops.b + ", T" + loops.a + ", T" + loops.b + ")").c_str());
  ImGui::PopStyleColor();
  ImGui::Separator();

  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float col_w = (avail_w - em) / 2;
  const float top = ImGui::GetCursorScreenPos().y;
  const float height = std::max(em * 8, rect.y + rect.h - top - em * 9);
  const ImVec2 start = ImGui::GetCursorPos();
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + col_w);
  grid_column(ctx, AutotuneMode::Simulator, col_w, height);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  const float left_bottom = ImGui::GetCursorPosY();
  ImGui::SetCursorPos(ImVec2(start.x + col_w + em, start.y));
  ImGui::BeginGroup();
  ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + col_w);
  grid_column(ctx, AutotuneMode::Cpu, col_w, height);
  ImGui::PopTextWrapPos();
  ImGui::EndGroup();
  ImGui::SetCursorPosY(std::max(left_bottom, ImGui::GetCursorPosY()));

  // Agreement: do the two rank the points alike?
  const AutotuneGrid* sim = autotune_sim_result(wb);
  const AutotuneGrid* hw = autotune_cpu_result(wb);
  if (!sim || !hw) return;
  ImGui::Separator();
  const AutotuneAgreement a = autotune_agreement(*sim, *hw);
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Do the simulator and this CPU agree?");
  ImGui::PopFont();
  if (a.common == 0) {
    text_wrapped("No tile pair has a time in both grids.");
    return;
  }
  const Range sr = range_of(*sim);
  if (sr.valid() && sr.hi <= sr.lo * (1 + 1e-9)) {
    text_wrapped(
        "The simulator predicts the same time for all %zu points both timed, so it "
        "cannot rank them; this CPU's best is %s.",
        a.common, a.hw_best.c_str());
    return;
  }
  if (std::isnan(a.spearman))
    text_wrapped(
        "Over the %zu points both timed, a rank correlation is undefined (too few "
        "points, or all times equal).",
        a.common);
  else
    text_wrapped(
        "Over the %zu points both timed, the rank correlation (Spearman) is %.2f "
        "(1 = the same order, 0 = unrelated, -1 = reversed).",
        a.common, a.spearman);
  text_wrapped(
      "The simulator's best of these, %s, is #%d of %zu on this CPU%s; this CPU's "
      "best is %s.",
      a.sim_best.c_str(), a.sim_best_hw_rank, a.common,
      a.sim_best_hw_rank <= 3 ? " (in its top 3)" : " (not in its top 3)", a.hw_best.c_str());
}

}  // namespace tilescope::gui

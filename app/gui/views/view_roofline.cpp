// The Roofline view: the machine's roofs (fp32 peak; one slanted roof per memory level whose
// bandwidth the machine file states) on log-log axes, and the current kernel as a point at its
// arithmetic intensity against main memory (simulated traffic), with a trail of the earlier
// schedule steps that were simulated on the same machine.
#include "app/gui/views/views.h"

#include "app/gui/format.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tilescope::gui {

void draw_roofline_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.bench;
  const Palette& p = ctx.palette;
  if (!begin_panel("Roofline", rect)) {
    end_panel();
    return;
  }
  if (!wb.machine) {
    ImGui::TextWrapped("No machine loaded: %s", wb.machine_error.c_str());
    end_panel();
    return;
  }
  if (memory_empty_state(ctx)) {
    end_panel();
    return;
  }
  const model::Machine& m = *wb.machine;
  const MemoryResult& cur = *wb.memory_result();
  const double peak = cur.peak_flops;
  struct Roof {
    std::string name;
    double bw;
  };
  std::vector<Roof> roofs;
  for (const memory::CacheConfig& l : m.levels)
    if (l.bandwidth_bytes_per_s > 0) roofs.push_back({l.name, l.bandwidth_bytes_per_s});
  if (m.memory.bandwidth_bytes_per_s > 0)
    roofs.push_back({m.memory.name, m.memory.bandwidth_bytes_per_s});
  const double dram_bw = m.memory.bandwidth_bytes_per_s;
  const float em = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::Text("Roofline of %s: %s fp32", m.name.c_str(),
              peak > 0 ? (format_si(peak) + "FLOP/s").c_str() : "(no peak stated)");
  ImGui::PopFont();
  ImGui::TextDisabled(
      "attainable = min(peak, intensity × bandwidth); intensity = FLOPs / simulated "
      "%s bytes",
      cur.levels.back().name.c_str());
  if (peak <= 0 || roofs.empty()) {
    ImGui::TextWrapped(
        "The machine file for %s states no %s, so there is no roof to draw. Choose a "
        "preset with bandwidths (h200, h100, a100, rtx4090) on the right.",
        m.name.c_str(), peak <= 0 ? "fp32 peak" : "bandwidths");
  }
  // Trail: the earlier steps of this model simulated on this machine, by step count.
  std::vector<const MemoryResult*> trail;
  for (const auto& [key, r] : wb.memory_cache)
    if (r.graph_text == wb.graph_text && r.machine == cur.machine && r.kernel == cur.kernel)
      trail.push_back(&r);
  std::sort(trail.begin(), trail.end(), [](const MemoryResult* a, const MemoryResult* b) {
    return a->step_count < b->step_count;
  });

  // [SECTION] Axes: intensity 1/16 .. 1024 FLOP/B; FLOP/s four decades below the peak to 2x.
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = o.x + em * 4.5f, top = o.y + em, right = rect.x + rect.w - em * 1.5f,
              bottom = rect.y + rect.h - em * 3.0f;
  if (right - left < em * 8 || bottom - top < em * 6 || peak <= 0 || roofs.empty()) {
    end_panel();
    return;
  }
  const double xmin = std::log10(1.0 / 16), xmax = std::log10(1024.0);
  // Three decades under the peak, more only when a point of the trail would fall below.
  double lowest = peak;
  for (const MemoryResult* r : trail) {
    const double i = std::clamp(r->intensity(), std::pow(10.0, xmin), std::pow(10.0, xmax));
    lowest = std::min(lowest, dram_bw > 0 ? std::min(peak, i * dram_bw) : peak);
  }
  const double ymax = std::log10(peak * 2);
  const double ymin = std::min(ymax - 3, std::floor(std::log10(lowest)) - 0.3);
  const auto px = [&](double intensity) {
    return left + float((std::log10(intensity) - xmin) / (xmax - xmin)) * (right - left);
  };
  const auto py = [&](double flops) {
    const double v = std::clamp(std::log10(std::max(flops, 1e-30)), ymin, ymax);
    return bottom - float((v - ymin) / (ymax - ymin)) * (bottom - top);
  };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRect(ImVec2(left, top), ImVec2(right, bottom), p.node_border);
  for (int e = -4; e <= 10; e += 2) {
    const double v = std::pow(2.0, e);
    if (std::log10(v) < xmin || std::log10(v) > xmax) continue;
    const float x = px(v);
    dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), p.grid);
    char buf[16];
    std::snprintf(buf, sizeof buf, e < 0 ? "1/%g" : "%g", e < 0 ? std::pow(2.0, -e) : v);
    dl->AddText(ImVec2(x - em * 0.5f, bottom + em * 0.2f), p.subtext, buf);
  }
  for (double d = std::ceil(ymin); d <= ymax; d += 1) {
    const float y = py(std::pow(10.0, d));
    dl->AddLine(ImVec2(left, y), ImVec2(right, y), p.grid);
    dl->AddText(ImVec2(o.x, y - em * 0.5f), p.subtext,
                (format_si(std::pow(10.0, d)) + "FLOP/s").c_str());
  }
  dl->AddText(ImVec2((left + right) / 2 - em * 6, bottom + em * 1.4f), p.subtext,
              "arithmetic intensity (FLOP per byte)");
  // Roofs: min(peak, I * bw), drawn over the x range.
  int ri = 0;
  for (const Roof& r : roofs) {
    static constexpr int kRoofColours[] = {0, 2, 3, 6, 8};  // distinct Okabe-Ito hues
    const ImU32 col = p.category[kRoofColours[ri++ % 5]];
    const double knee = peak / r.bw;
    const double i0 = std::pow(10.0, xmin);
    const double i1 = std::min(knee, std::pow(10.0, xmax));
    dl->AddLine(ImVec2(px(i0), py(i0 * r.bw)), ImVec2(px(i1), py(i1 * r.bw)), col,
                2.0f * p.line_scale);
    const std::string label = r.name + " " + format_si(r.bw) + "B/s";
    dl->AddText(ImVec2(px(i0) + em * 0.3f, py(i0 * r.bw) - em * 1.2f), col, label.c_str());
  }
  dl->AddLine(ImVec2(px(peak / roofs.front().bw), py(peak)), ImVec2(right, py(peak)), p.text,
              2.0f * p.line_scale);
  // The peak's label sits just right of the steepest roof's knee, above the line; the points'
  // labels go below it, so the two never overlap.
  dl->AddText(ImVec2(px(peak / roofs.front().bw) + em * 0.5f, py(peak) - em * 1.3f), p.text,
              ("peak " + format_si(peak) + "FLOP/s").c_str());
  // Points: each simulated step at its DRAM intensity and its roofline bound.
  ImVec2 prev(-1, -1);
  for (const MemoryResult* r : trail) {
    const double i = std::clamp(r->intensity(), std::pow(10.0, xmin), std::pow(10.0, xmax));
    const double bound = dram_bw > 0 ? std::min(peak, i * dram_bw) : peak;
    const ImVec2 pt(px(i), py(bound));
    const bool is_cur = r == &cur;
    if (prev.x >= 0) dl->AddLine(prev, pt, p.subtext, 1.5f);
    dl->AddCircleFilled(pt, is_cur ? em * 0.45f : em * 0.3f, is_cur ? p.selection : p.subtext);
    char buf[64];
    std::snprintf(buf, sizeof buf, "step %zu: %.2f FLOP/B", r->step_count, r->intensity());
    // Earlier steps label below-left, the current one below-right: equal points stay readable.
    const float tw = ImGui::CalcTextSize(buf).x;
    dl->AddText(ImVec2(is_cur ? pt.x + em * 0.5f : pt.x - tw - em * 0.5f, pt.y + em * 0.3f),
                is_cur ? p.text : p.subtext, buf);
    prev = pt;
  }
  ImGui::Dummy(ImVec2(right - o.x, bottom + em * 2.5f - o.y));
  end_panel();
}

}  // namespace tilescope::gui

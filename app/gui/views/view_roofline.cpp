// The Roofline view: the machine's roofs (fp32 peak; one slanted roof per memory level whose
// bandwidth the machine file states) on log-log axes, and the current kernel as a point at its
// arithmetic intensity against main memory (simulated traffic), with a trail of the earlier
// schedule steps that were simulated on the same machine. The current kernel also gets one
// point per level with a roof (a hierarchical roofline: FLOPs over the bytes that level served,
// on that level's roof): the lowest of them is the binding level. When the kernel has been run on
// this CPU, its measured FLOP/s is a diamond at the same DRAM intensity; on a GPU machine the time
// model's predicted FLOP/s is a triangle under the roofs, its limiter named.
#include "app/gui/views/views.h"
#include "app/gui/widgets/text_wrap.h"

#include "app/core/baseline.h"
#include "app/core/format.h"
#include "app/core/label_place.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// "1–4, 6": step numbers, runs of consecutive ones joined.
std::string step_list(const std::vector<size_t>& steps) {
  std::string out;
  for (size_t a = 0; a < steps.size();) {
    size_t b = a;
    while (b + 1 < steps.size() && steps[b + 1] == steps[b] + 1) ++b;
    if (!out.empty()) out += ", ";
    out += std::to_string(steps[a]);
    if (b > a) out += (b == a + 1 ? ", " : "\u2013") + std::to_string(steps[b]);
    a = b + 1;
  }
  return out;
}

// One roof: a memory level whose bandwidth the machine file states, in its own colour.
struct Roof {
  std::string name;
  double bw;
  ImU32 colour;
};

// The plot area and its log-log axes (intensity across, FLOP/s up) mapped onto the screen.
struct Chart {
  ImDrawList* dl;
  ImVec2 o;
  float em, left, top, right, bottom;
  double xmin, xmax, ymin, ymax;
  float px(double intensity) const {
    return left + float((std::log10(intensity) - xmin) / (xmax - xmin)) * (right - left);
  }
  float py(double flops) const {
    const double v = std::clamp(std::log10(std::max(flops, 1e-30)), ymin, ymax);
    return bottom - float((v - ymin) / (ymax - ymin)) * (bottom - top);
  }
};

// One roof per level with a bandwidth, each with its colour (distinct Okabe-Ito hues); the
// current kernel's per-level points are drawn in the same colour as their roof.
std::vector<Roof> machine_roofs(const predict::Machine& m, const Palette& p) {
  static constexpr int kRoofColours[] = {0, 2, 3, 6, 8};
  std::vector<Roof> roofs;
  const auto add_roof = [&](const std::string& name, double bw) {
    if (bw > 0) roofs.push_back({name, bw, p.category[kRoofColours[roofs.size() % 5]]});
  };
  for (const memory::CacheConfig& l : m.levels) add_roof(l.name, l.bandwidth_bytes_per_s);
  add_roof(m.memory.name, m.memory.bandwidth_bytes_per_s);
  return roofs;
}

// Draws the title line, the formula, and why there is no chart when the machine lacks roofs.
void draw_roofline_heading(ViewContext& ctx, const predict::Machine& m, const MemoryResult& cur,
                           double peak, bool no_roofs) {
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::Text("Roofline of %s: %s fp32", m.name.c_str(),
              peak > 0 ? (format_si(peak) + "FLOP/s").c_str() : "(no peak stated)");
  ImGui::PopFont();
  disabled_wrapped(
      "attainable = min(peak, intensity × bandwidth); intensity = FLOPs / simulated "
      "%s bytes",
      cur.levels.back().name.c_str());
  if (peak <= 0 || no_roofs) {
    text_wrapped(
        "The machine file for %s states no %s, so there is no roof to draw. Choose a "
        "preset with bandwidths (h200, h100, a100, rtx4090) on the right — or, for this "
        "computer, run `tilescope-cli probe` once (about 20 s: it measures every level's "
        "bandwidth on one thread) and choose host-measured.",
        m.name.c_str(), peak <= 0 ? "fp32 peak" : "bandwidths");
  }
}

// Trail: the earlier steps of this model simulated on this machine, by step count.
std::vector<const MemoryResult*> simulated_trail(const Workbench& wb, const MemoryResult& cur) {
  std::vector<const MemoryResult*> trail;
  for (const auto& [key, r] : wb.memory_cache)
    if (r.graph_text == wb.graph_text && r.machine == cur.machine && r.kernel == cur.kernel)
      trail.push_back(&r);
  std::sort(trail.begin(), trail.end(), [](const MemoryResult* a, const MemoryResult* b) {
    return a->step_count < b->step_count;
  });
  return trail;
}

// Draws the frame, the grid lines and the axes' tick labels and title.
void draw_axes(const Chart& c, const Palette& p) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  dl->AddRect(ImVec2(c.left, c.top), ImVec2(c.right, c.bottom), p.node_border);
  for (int e = -4; e <= 10; e += 2) {
    const double v = std::pow(2.0, e);
    if (std::log10(v) < c.xmin || std::log10(v) > c.xmax) continue;
    const float x = c.px(v);
    dl->AddLine(ImVec2(x, c.top), ImVec2(x, c.bottom), p.grid);
    char buf[16];
    std::snprintf(buf, sizeof buf, e < 0 ? "1/%g" : "%g", e < 0 ? std::pow(2.0, -e) : v);
    // Centred under its line, and never past the chart's right edge (1024 was cut off there).
    const float tw = ImGui::CalcTextSize(buf).x;
    dl->AddText(ImVec2(std::min(x - tw / 2, c.right - tw), c.bottom + em * 0.2f), p.subtext, buf);
  }
  for (double d = std::ceil(c.ymin); d <= c.ymax; d += 1) {
    const float y = c.py(std::pow(10.0, d));
    dl->AddLine(ImVec2(c.left, y), ImVec2(c.right, y), p.grid);
    dl->AddText(ImVec2(c.o.x, y - em * 0.5f), p.subtext,
                (format_si(std::pow(10.0, d)) + "FLOP/s").c_str());
  }
  dl->AddText(ImVec2((c.left + c.right) / 2 - em * 6, c.bottom + em * 1.4f), p.subtext,
              "arithmetic intensity (FLOP per byte)");
}

// Draws the slanted roofs, the peak's flat roof and their labels (kept in placed_text).
void draw_roofs(const Chart& c, const Palette& p, const std::vector<Roof>& roofs, double peak,
                std::vector<Rect>& placed_text) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  // Roofs: min(peak, I * bw), drawn over the x range.
  for (const Roof& r : roofs) {
    const ImU32 col = r.colour;
    const double knee = peak / r.bw;
    const double i0 = std::pow(10.0, c.xmin);
    const double i1 = std::min(knee, std::pow(10.0, c.xmax));
    dl->AddLine(ImVec2(c.px(i0), c.py(i0 * r.bw)), ImVec2(c.px(i1), c.py(i1 * r.bw)), col,
                2.0f * p.line_scale);
    const std::string label = r.name + " " + format_si(r.bw) + "B/s";
    const ImVec2 at(c.px(i0) + em * 0.3f, c.py(i0 * r.bw) - em * 1.2f);
    dl->AddText(at, col, label.c_str());
    const ImVec2 size = ImGui::CalcTextSize(label.c_str());
    placed_text.push_back(Rect{at.x, at.y, size.x, size.y});
  }
  dl->AddLine(ImVec2(c.px(peak / roofs.front().bw), c.py(peak)), ImVec2(c.right, c.py(peak)),
              p.text, 2.0f * p.line_scale);
  // The peak's label sits just right of the steepest roof's knee, above the line; the points'
  // labels go below it, so the two never overlap.
  const std::string peak_label = "peak " + format_si(peak) + "FLOP/s";
  const ImVec2 peak_at(c.px(peak / roofs.front().bw) + em * 0.5f, c.py(peak) - em * 1.3f);
  dl->AddText(peak_at, p.text, peak_label.c_str());
  placed_text.push_back(Rect{peak_at.x, peak_at.y, ImGui::CalcTextSize(peak_label.c_str()).x,
                             ImGui::CalcTextSize(peak_label.c_str()).y});
}

// Draws the trail of simulated steps as joined circles; returns their points, in trail order.
std::vector<ImVec2> draw_trail_points(const Chart& c, const Palette& p,
                                      const std::vector<const MemoryResult*>& trail,
                                      const MemoryResult& cur, double peak, double dram_bw) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  // Points: each simulated step at its DRAM intensity and its roofline bound.
  std::vector<ImVec2> pts;
  ImVec2 prev(-1, -1);
  for (const MemoryResult* r : trail) {
    const double i = std::clamp(r->intensity(), std::pow(10.0, c.xmin), std::pow(10.0, c.xmax));
    const double bound = dram_bw > 0 ? std::min(peak, i * dram_bw) : peak;
    const ImVec2 pt(c.px(i), c.py(bound));
    const bool is_cur = r == &cur;
    if (prev.x >= 0) dl->AddLine(prev, pt, p.subtext, 1.5f);
    dl->AddCircleFilled(pt, is_cur ? em * 0.45f : em * 0.3f, is_cur ? p.selection : p.subtext);
    pts.push_back(pt);
    prev = pt;
  }
  return pts;
}

// Draws the trail's intensity labels where they fit, or as tooltips of their points.
void draw_trail_labels(const Chart& c, const Palette& p,
                       const std::vector<const MemoryResult*>& trail, const MemoryResult& cur,
                       const std::vector<ImVec2>& pts, const std::vector<Rect>& placed_text) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  // Steps at the same intensity (a step that moves nothing at DRAM) share one label, "steps 1–4:
  // 12.86 FLOP/B", at the latest of them; the label of the current step's group first, then the
  // latest; none over another, the roofs' or the peak's labels, or a point. A label with no room
  // is left out; hovering its point says it.
  std::vector<std::string> values;
  for (const MemoryResult* r : trail) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.2f FLOP/B", r->intensity());
    values.emplace_back(buf);
  }
  std::vector<std::string> labels(trail.size());
  std::vector<size_t> order;  // the index that carries each group's label
  for (size_t k = trail.size(); k-- > 0;) {
    bool later = false;  // a later step of the same value carries the label
    for (size_t q = k + 1; q < trail.size() && !later; ++q) later = values[q] == values[k];
    if (later) continue;
    std::vector<size_t> steps;
    for (size_t q = 0; q <= k; ++q)
      if (values[q] == values[k]) steps.push_back(trail[q]->step_count);
    labels[k] = (steps.size() == 1 ? "step " : "steps ") + step_list(steps) + ": " + values[k];
    order.push_back(k);
  }
  const auto cur_at = std::find(trail.begin(), trail.end(), &cur);
  const std::string cur_value = cur_at == trail.end() ? "" : values[size_t(cur_at - trail.begin())];
  std::stable_partition(order.begin(), order.end(),
                        [&](size_t k) { return values[k] == cur_value; });
  std::vector<LabelWish> wishes;
  for (size_t k : order) {
    const ImVec2 size = ImGui::CalcTextSize(labels[k].c_str());
    wishes.push_back({pts[k].x, pts[k].y, size.x, size.y});
  }
  std::vector<Rect> obstacles = placed_text;
  for (const ImVec2& pt : pts)
    obstacles.push_back(Rect{pt.x - em * 0.3f, pt.y - em * 0.3f, em * 0.6f, em * 0.6f});
  const std::vector<std::optional<Rect>> spots = place_labels(
      wishes, obstacles, Rect{c.left, c.top, c.right - c.left, c.bottom - c.top}, em * 0.5f);
  for (size_t n = 0; n < order.size(); ++n) {
    const size_t k = order[n];
    const bool is_cur = values[k] == cur_value;
    if (spots[n]) {
      dl->AddText(ImVec2(spots[n]->x, spots[n]->y), is_cur ? p.text : p.subtext,
                  labels[k].c_str());
    } else if (ImGui::IsMouseHoveringRect(ImVec2(pts[k].x - em * 0.5f, pts[k].y - em * 0.5f),
                                          ImVec2(pts[k].x + em * 0.5f, pts[k].y + em * 0.5f))) {
      ImGui::SetTooltip("%s", labels[k].c_str());
    }
  }
}

// Draws the current kernel's square on each level's roof; returns the binding level's name.
std::string draw_level_points(const Chart& c, const Palette& p, const std::vector<Roof>& roofs,
                              const MemoryResult& cur, double peak) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  // Hierarchical roofline of the current kernel: per level with a roof, FLOPs over the bytes it
  // served; the level whose bound is lowest binds.
  const auto level_bytes = [](const LevelResult& l) {
    return double(l.total.read_bytes + l.total.write_bytes);
  };
  std::string binding;
  double binding_bound = 0;
  for (const Roof& roof : roofs) {
    const auto l = std::find_if(cur.levels.begin(), cur.levels.end(),
                                [&](const LevelResult& x) { return x.name == roof.name; });
    if (l == cur.levels.end()) continue;
    const double bw = roof.bw;
    const ImU32 col = roof.colour;
    const double bytes = level_bytes(*l);
    if (bytes <= 0 || cur.flops <= 0) continue;
    const double intensity = double(cur.flops) / bytes;
    const double bound = std::min(peak, intensity * bw);
    if (binding.empty() || bound < binding_bound) binding = roof.name, binding_bound = bound;
    const double shown = std::clamp(intensity, std::pow(10.0, c.xmin), std::pow(10.0, c.xmax));
    const ImVec2 pt(c.px(shown), c.py(std::min(peak, shown * bw)));
    dl->AddRectFilled(ImVec2(pt.x - em * 0.28f, pt.y - em * 0.28f),
                      ImVec2(pt.x + em * 0.28f, pt.y + em * 0.28f), col);
    dl->AddRect(ImVec2(pt.x - em * 0.28f, pt.y - em * 0.28f),
                ImVec2(pt.x + em * 0.28f, pt.y + em * 0.28f), p.text);
  }
  return binding;
}

// Draws baseline A (baseline.h) as a ring at its main-memory intensity on this machine's roof,
// labelled "A" where no label or point is (the spot joins `placed_text`, so the trail's labels
// keep off it); returns the caption's part for it ("" when there is no A).
std::string draw_baseline_point(const Chart& c, const Palette& p, const Workbench& wb,
                                const predict::Machine& m, double peak, double dram_bw,
                                const std::vector<ImVec2>& pts, std::vector<Rect>& placed_text) {
  if (!wb.baseline || !wb.baseline->ready()) return "";
  const Workbench::Baseline& base = *wb.baseline;
  if (base.machine != m.name)
    return "; baseline A " + std::string(base.recording ? "was pinned" : "ran") + " on " +
           base.machine + " and is not drawn here";
  // A schedule sits on the roof at its intensity; a recorded run where it was measured.
  double intensity = 0, flops_per_s = 0;
  if (base.recording) {
    const std::optional<RecordedPoint> r = recorded_point(base.recording->data);
    if (!r) return "; baseline A's recording lacks DRAM bytes or a time and is not drawn";
    intensity = r->flops / r->dram_bytes;
    flops_per_s = r->flops / r->seconds;
  } else {
    intensity = base.result->intensity();
  }
  const double i = std::clamp(intensity, std::pow(10.0, c.xmin), std::pow(10.0, c.xmax));
  if (!base.recording) flops_per_s = dram_bw > 0 ? std::min(peak, i * dram_bw) : peak;
  const ImVec2 pt(c.px(i), c.py(flops_per_s));
  c.dl->AddCircle(pt, c.em * 0.65f, p.text, 0, 2.0f * p.line_scale);
  std::vector<Rect> obstacles = placed_text;
  for (const ImVec2& q : pts)
    obstacles.push_back(Rect{q.x - c.em * 0.3f, q.y - c.em * 0.3f, c.em * 0.6f, c.em * 0.6f});
  const ImVec2 size = ImGui::CalcTextSize("A");
  const std::optional<Rect> spot =
      place_labels({{pt.x, pt.y, size.x, size.y}}, obstacles,
                   Rect{c.left, c.top, c.right - c.left, c.bottom - c.top}, c.em * 0.7f)
          .front();
  if (spot) {
    c.dl->AddText(ImVec2(spot->x, spot->y), p.text, "A");
    placed_text.push_back(*spot);
  }
  char where[64];
  std::snprintf(where, sizeof where, "%.2f FLOP/B", intensity);
  if (base.recording)
    return "; ring A: baseline A (" + base.label + ") at " + where + ", " + format_si(flops_per_s) +
           "FLOP/s measured";
  return "; ring A: baseline A (" + base.label + ") at " + where;
}

// Draws the FLOP/s measured on this CPU as a diamond, with its label.
void draw_measured_point(const Chart& c, const Palette& p, const Workbench& wb,
                         const predict::Machine& m, const MemoryResult& cur, double dram_bw) {
  ImDrawList* dl = c.dl;
  const float em = c.em;
  // Measured on this CPU (same schedule), when the machine is this computer's.
  const CpuRunResult* run = wb.cpu_result();
  const bool host_machine = m.name.rfind("host", 0) == 0;
  if (run && run->verified && run->median_ms > 0 && host_machine && dram_bw > 0) {
    const double measured = double(run->flops) / (run->median_ms * 1e-3);
    const double i = std::clamp(cur.intensity(), std::pow(10.0, c.xmin), std::pow(10.0, c.xmax));
    const ImVec2 pt(c.px(i), c.py(measured));
    const float r = em * 0.45f;
    dl->AddQuadFilled(ImVec2(pt.x, pt.y - r), ImVec2(pt.x + r, pt.y), ImVec2(pt.x, pt.y + r),
                      ImVec2(pt.x - r, pt.y), p.ok);
    const std::string label = "measured here: " + format_si(measured) + "FLOP/s";
    dl->AddText(ImVec2(pt.x + em * 0.6f, pt.y - em * 0.5f), p.ok, label.c_str());
  }
}

// Draws the time model's predicted FLOP/s as a triangle, with its label; returns the line under
// the chart that says what limits it (or "").
std::string draw_predicted_point(const Chart& c, const Palette& p, const PredictedTimeShown& s) {
  if (!s.none.empty() || s.time.seconds <= 0 || s.flops <= 0) return "";
  const double achieved = s.flops / s.time.seconds;
  const double i = std::clamp(s.intensity, std::pow(10.0, c.xmin), std::pow(10.0, c.xmax));
  const ImVec2 pt(c.px(i), c.py(std::max(achieved, std::pow(10.0, c.ymin))));
  const float r = c.em * 0.5f;
  c.dl->AddTriangleFilled(ImVec2(pt.x, pt.y - r), ImVec2(pt.x + r, pt.y + r * 0.8f),
                          ImVec2(pt.x - r, pt.y + r * 0.8f), p.category[3]);
  c.dl->AddTriangle(ImVec2(pt.x, pt.y - r), ImVec2(pt.x + r, pt.y + r * 0.8f),
                    ImVec2(pt.x - r, pt.y + r * 0.8f), p.text);
  const std::string label = "predicted: " + format_si(achieved) + "FLOP/s, " +
                            s.time.limiter + "-bound";
  // Right of the triangle, or left of it where the chart's edge would cut the label.
  const float w = ImGui::CalcTextSize(label.c_str()).x;
  const float x = pt.x + c.em * 0.7f + w <= c.right ? pt.x + c.em * 0.7f : pt.x - c.em * 0.7f - w;
  c.dl->AddText(ImVec2(x, pt.y + c.em * 0.1f), p.text, label.c_str());
  return "triangle: the time model's prediction, " + s.time.summary + " (registers " +
         std::to_string(s.registers) + " a thread, as the Occupancy section says)" +
         (s.launch_note.empty() ? "" : "; " + s.launch_note);
}

}  // namespace

PredictedTimeShown predicted_time_shown(const AppState& state) {
  PredictedTimeShown s;
  const Workbench& wb = state.workbench;
  const MemoryResult* cur = wb.memory_result_shown();
  if (!wb.machine || wb.machine->kind != "gpu") {
    s.none = "the time model predicts GPU kernels: choose a GPU machine";
    return s;
  }
  if (!cur || !cur->gpu) {
    s.none = "no simulation of this kernel on " + wb.machine->name + " yet";
    return s;
  }
  const OccupancyShown occ = occupancy_shown(state);
  if (!occ.none.empty()) {
    s.none = occ.none;
    return s;
  }
  predict::KernelWork w;
  w.name = cur->kernel;
  w.fp32_fmas = double(cur->flops) / 2;
  const schedule::TraceSummary& t = cur->summary;
  w.memory_instructions = double(t.global_instructions + t.shared_instructions);
  w.data_stage_wavefronts = double(t.global_lines + t.shared_wavefronts);
  for (size_t l = 0; l < cur->bytes.names.size(); ++l)
    if (cur->bytes.names[l] == "L2") w.l2_bytes = cur->bytes.bytes[l];
  w.dram_bytes = double(cur->dram_bytes());
  w.blocks = occ.grid_blocks;
  w.resources = occ.resources;
  if (const schedule::Kernel* k = wb.kernel()) {
    const int64_t warps = occ.grid_blocks * ((occ.resources.threads_per_block + 31) / 32);
    const predict::ScheduleLoads loads = predict::schedule_loads(*k, t, warps);
    w.loads_in_flight_per_warp = loads.per_warp;
    w.bytes_per_load = loads.bytes_per_load;
  }
  s.registers = occ.resources.registers_per_thread;
  s.time = predict::predict_time(*wb.machine, w);
  if (!s.time.error.empty()) s.none = s.time.error;
  s.flops = double(cur->flops);
  s.intensity = cur->intensity();
  if (const int64_t sms = wb.machine->cores; occ.grid_blocks < sms)
    s.launch_note = std::to_string(occ.grid_blocks) +
                    (occ.grid_blocks == 1 ? " block for " : " blocks for ") + std::to_string(sms) +
                    " SMs (" + std::to_string(sms - occ.grid_blocks) +
                    " idle: bind a loop to block.x to use them)";
  return s;
}

void draw_roofline_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  if (!begin_panel("Roofline", rect)) {
    end_panel();
    return;
  }
  if (!wb.machine) {
    text_wrapped("No machine loaded: %s", wb.machine_error.c_str());
    end_panel();
    return;
  }
  if (memory_empty_state(ctx)) {
    end_panel();
    return;
  }
  const predict::Machine& m = *wb.machine;
  const MemoryResult& cur = *wb.memory_result_shown();
  const double peak = cur.peak_flops;
  const std::vector<Roof> roofs = machine_roofs(m, p);
  const double dram_bw = m.memory.bandwidth_bytes_per_s;
  const float em = ImGui::GetFontSize();
  draw_roofline_heading(ctx, m, cur, peak, roofs.empty());
  const std::vector<const MemoryResult*> trail = simulated_trail(wb, cur);

  // [SECTION] Axes: intensity 1/16 .. 1024 FLOP/B; FLOP/s four decades below the peak to 2x.
  const ImVec2 o = ImGui::GetCursorScreenPos();
  // On a GPU the time model's line under the chart takes two more lines.
  const PredictedTimeShown predicted_time = predicted_time_shown(ctx.state);
  const float below = predicted_time.none.empty() ? em * 8.0f : em * 5.4f;
  const float left = o.x + em * 4.5f, top = o.y + em, right = rect.x + rect.w - em * 1.5f,
              bottom = rect.y + rect.h - below;
  if (right - left < em * 8 || bottom - top < em * 6 || peak <= 0 || roofs.empty()) {
    end_panel();
    return;
  }
  const double xmin = std::log10(1.0 / 16), xmax = std::log10(1024.0);
  // Three decades under the peak, more only when a point of the trail (or the predicted one) would
  // fall below.
  double lowest = peak;
  for (const MemoryResult* r : trail) {
    const double i = std::clamp(r->intensity(), std::pow(10.0, xmin), std::pow(10.0, xmax));
    lowest = std::min(lowest, dram_bw > 0 ? std::min(peak, i * dram_bw) : peak);
  }
  // The predicted point too: a latency-bound kernel sits far under every roof.
  if (predicted_time.none.empty() && predicted_time.time.seconds > 0 && predicted_time.flops > 0)
    lowest = std::min(lowest, predicted_time.flops / predicted_time.time.seconds);
  const double ymax = std::log10(peak * 2);
  const double ymin = std::min(ymax - 3, std::floor(std::log10(lowest)) - 0.3);
  const Chart c{ImGui::GetWindowDrawList(), o, em, left, top, right, bottom,
                xmin, xmax, ymin, ymax};
  std::vector<Rect> placed_text;  // the roofs' and the peak's labels: the points' keep off them
  draw_axes(c, p);
  draw_roofs(c, p, roofs, peak, placed_text);
  const std::vector<ImVec2> pts = draw_trail_points(c, p, trail, cur, peak, dram_bw);
  const std::string baseline = draw_baseline_point(c, p, wb, m, peak, dram_bw, pts, placed_text);
  draw_trail_labels(c, p, trail, cur, pts, placed_text);
  const std::string binding = draw_level_points(c, p, roofs, cur, peak);
  draw_measured_point(c, p, wb, m, cur, dram_bw);
  const std::string predicted = draw_predicted_point(c, p, predicted_time);
  ImGui::Dummy(ImVec2(right - o.x, bottom + em * 2.0f - o.y));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  text_wrapped(
      "circles: main-memory intensity per simulated step · squares: this step's intensity "
      "against each level (FLOPs / bytes that level served), on its roof%s%s",
      binding.empty() ? "" : ("; lowest = binding: " + binding).c_str(), baseline.c_str());
  if (!predicted.empty()) text_wrapped("%s", predicted.c_str());
  ImGui::PopStyleColor();
  end_panel();
}

}  // namespace tilescope::gui

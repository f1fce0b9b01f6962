// The Memory view: the current kernel's trace simulated on the chosen machine's hierarchy (on a
// worker thread), drawn as boxes per level with arrows as wide as the bytes they carry; its side
// panel picks the machine, meters the schedule's tile working set against each level, and lists
// per-tensor traffic and the compulsory / capacity / conflict split of misses. Every simulated
// miss count and memory byte count is a link to the analytic model's formula for it; small caches
// are drawn set by set, way by way, as the simulation left them.
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/gui/views/memory_views.h"
#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// Each box's lines: its title (and a cache's miss count beside it), then one line under it.
struct BoxText {
  std::string title, line2, misses;
};

// A sampled run says so before any number: what it walked, how sure its numbers are, what it
// cannot see, and the way to the exact run.
void draw_sample_lines(ViewContext& ctx, const MemoryResult& r) {
  const predict::SampleInfo& s = *r.sampled;
  ImGui::PushFont(ctx.fonts.ui_bold);
  text_wrapped(
      "Sampled: every number below is an estimate. %s of %s iterations of loop %s were measured "
      "(%s more warmed the caches first), %.3g%% of the trace, in %.2f s.",
      format_thousands(int64_t(s.measured)).c_str(), format_thousands(int64_t(s.units)).c_str(),
      s.unit_loop.c_str(), format_thousands(int64_t(s.warm)).c_str(), 100 * s.walked_fraction,
      r.seconds);
  ImGui::PopFont();
  if (s.error_known)
    text_wrapped("%s: %s ± %s; %s hit rate %s ± %.2f points (95 %%, sampling error).",
                 r.levels.back().name.c_str(), format_bytes(int64_t(s.dram_bytes)).c_str(),
                 format_bytes(int64_t(s.dram_bytes_error)).c_str(), s.last_level.c_str(),
                 format_percent(s.last_level_hit_rate).c_str(), 100 * s.last_level_hit_rate_error);
  if (s.warm_capped > 0)
    disabled_wrapped(
        "%s of the measured iterations had too short a warm-up to refill %s: data reused from "
        "farther back counts as misses there, which the error bar does not cover.",
        format_thousands(int64_t(s.warm_capped)).c_str(), s.last_level.c_str());
  char label[96];
  std::snprintf(label, sizeof label, "Simulate every access (about %s)",
                duration_text(r.exact_seconds).c_str());
  if (ImGui::Button(label)) ctx.push(command_from("simulate exactly"));
  note_widget("memory.simulate-exactly");
}

// Draws the heading: the kernel, the machine, the trace's size and the whole schedule's traffic.
void draw_memory_heading(ViewContext& ctx, const MemoryResult& r) {
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::Text("%s on %s (%s mode)", r.kernel.c_str(), r.machine.c_str(), r.gpu ? "GPU" : "CPU");
  ImGui::PopFont();
  if (r.sampled) {
    draw_sample_lines(ctx, r);
  } else {
    disabled_wrapped("%s trace accesses simulated in %.2f s%s",
                     format_thousands(int64_t(r.trace_accesses)).c_str(), r.seconds,
                     r.gpu ? " (global accesses coalesced per 32 B sector)" : " (one per element)");
  }
  // The whole schedule beside this kernel: what a fusion changes shows as one number.
  if (r.program && !r.program->levels.empty()) {
    const memory::Counters& d = r.program->levels.back().total;
    const std::string whole = format_bytes(int64_t(r.program->dram_bytes())) + " at " +
                              r.program->levels.back().name + " (read " +
                              format_bytes(int64_t(d.read_bytes)) + ", written " +
                              format_bytes(int64_t(d.write_bytes)) + ")";
    if (r.program->kernels == 1)
      text_wrapped("Whole schedule: this one kernel, %s", whole.c_str());
    else
      text_wrapped("Whole schedule: %zu kernels one after another, %s; this kernel %s",
                  r.program->kernels, whole.c_str(), format_bytes(int64_t(r.dram_bytes())).c_str());
    note_widget("memory.program-total");
  } else if (!r.program_note.empty()) {
    disabled_wrapped("%s", r.program_note.c_str());
  }
}

// The lines of every box: the core's, then one per level.
std::vector<BoxText> box_texts(const MemoryResult& r) {
  std::vector<BoxText> texts;
  texts.push_back({r.gpu ? "SMs: threads and registers" : "Core: registers",
                   r.gpu ? "shared-memory accesses: " +
                               format_si(double(r.summary.shared_reads + r.summary.shared_writes)) +
                               " lane accesses"
                         : "register tiles make no traffic",
                   ""});
  for (size_t i = 0; i < r.levels.size(); ++i) {
    const LevelResult& l = r.levels[i];
    const bool dram = i + 1 == r.levels.size();
    texts.push_back({l.name + (l.size_bytes ? "  " + format_bytes(int64_t(l.size_bytes)) : ""),
                     dram ? "read " + format_bytes(int64_t(l.total.read_bytes)) + ", written " +
                                format_bytes(int64_t(l.total.write_bytes))
                          : "hit rate " + format_percent(l.total.hit_rate()) + " of " +
                                format_si(double(l.total.accesses)) + " accesses",
                     dram ? "" : format_thousands(int64_t(l.total.misses)) + " misses"});
  }
  return texts;
}

// Draws the boxes, one per level under the core's, and the arrows as wide as the bytes they
// carry; returns the right edge of everything drawn.
float draw_memory_boxes(ViewContext& ctx, const Rect& rect, float em, const MemoryResult& r,
                        const std::vector<BoxText>& texts, ImVec2 origin, float x0, float box_w,
                        float box_h, float gap) {
  const Palette& p = ctx.palette;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const size_t n = r.levels.size() + 1;  // + the core
  // Arrow width: proportional to bytes, the largest flow drawn 1.6 em wide.
  uint64_t max_bytes = 1;
  for (const LevelResult& l : r.levels)
    max_bytes = std::max<uint64_t>(max_bytes, l.total.read_bytes + l.total.write_bytes);
  float right = x0 + box_w;  // right edge of everything drawn so far (the grids go after it)
  // Links are placed after the boxes are drawn (the draw list would cover them otherwise).
  struct Link {
    ImVec2 at;
    std::string text, target;
  };
  std::vector<Link> links;
  for (size_t i = 0; i < n; ++i) {
    const float y = origin.y + static_cast<float>(i) * (box_h + gap);
    const ImVec2 a(x0, y), b(x0 + box_w, y + box_h);
    dl->AddRectFilled(a, b, p.node_bg, 6.0f);
    dl->AddRect(a, b, p.node_border, 6.0f, 0, 1.5f * p.line_scale);
    const float tx = a.x + em * 0.6f;
    const BoxText& t = texts[i];
    dl->AddText(ctx.fonts.ui_bold, ctx.fonts.px, ImVec2(tx, y + em * 0.4f), p.text,
                t.title.c_str());
    if (i == 0) {
      dl->AddText(ImVec2(tx, y + em * 1.6f), p.subtext, t.line2.c_str());
      continue;
    }
    const LevelResult& l = r.levels[i - 1];
    const bool dram = i == n - 1;
    if (dram) {
      links.push_back({ImVec2(tx, y + em * 1.6f), t.line2, l.name});
    } else {
      dl->AddText(ImVec2(tx, y + em * 1.6f), p.subtext, t.line2.c_str());
      // The miss count, right-aligned on the title line: the number the formula explains.
      const float mw = ImGui::CalcTextSize(t.misses.c_str()).x;
      links.push_back({ImVec2(b.x - em * 0.6f - mw, y + em * 0.4f), t.misses, l.name});
    }
    if (!dram) {
      draw_share_bar(dl, ImVec2(tx, y + em * 2.8f), ImVec2(b.x - em * 0.6f, y + em * 3.1f),
                     l.total.hit_rate(), p.bar_bg, p.ok);
    }
    // The arrow from the level above into this one: the bytes that reached this level.
    const uint64_t bytes = l.total.read_bytes + l.total.write_bytes;
    const float w = std::max(1.5f, em * 1.6f * float(double(bytes) / double(max_bytes)));
    // Two short lines rather than one long one: the grids of small caches go to the right.
    const std::string label = format_bytes(int64_t(bytes)) + " requested\n(" +
                              format_bytes(int64_t(l.total.read_bytes)) + " read, " +
                              format_bytes(int64_t(l.total.write_bytes)) + " written)";
    // The arrow at the boxes' middle, moved left when its label would run out of the view.
    const float label_w = ImGui::CalcTextSize(label.c_str()).x;
    const float ax = std::max(x0 + em * 1.5f + w / 2,
                              std::min(x0 + box_w * 0.5f, rect.x + rect.w - em * 3 - label_w - w / 2));
    const float ya = y - gap + 2, yb = y - 2;  // from the bottom of the box above
    dl->AddRectFilled(ImVec2(ax - w / 2, ya), ImVec2(ax + w / 2, yb - em * 0.5f), p.edge);
    dl->AddTriangleFilled(ImVec2(ax - w / 2 - em * 0.4f, yb - em * 0.5f),
                          ImVec2(ax + w / 2 + em * 0.4f, yb - em * 0.5f), ImVec2(ax, yb), p.edge);
    dl->AddText(ImVec2(ax + w / 2 + em, (ya + yb) / 2 - em * 1.1f), p.edge_label, label.c_str());
    right = std::max(right, ax + w / 2 + em + ImGui::CalcTextSize(label.c_str()).x);
  }
  for (const Link& link : links) {
    ImGui::SetCursorScreenPos(link.at);
    formula_link(ctx, link.text, link.target);
  }
  return right;
}

}  // namespace

// The status lines every memory-based view shows before it has a result: nothing to simulate,
// running (progress + cancel), failed, or not started (starts it).
bool memory_empty_state(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  if (!wb.machine) {
    // Host detection failed (or the chosen file did not load) and there is nothing to simulate
    // on: say so here, where the learner looks, with the way on.
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("No machine to simulate on: %s", wb.machine_error.c_str());
    ImGui::PopStyleColor();
    ImGui::TextUnformatted("Pick a machine preset:");
    for (const std::string& m : predict::preset_names()) {
      ImGui::SameLine();
      if (ImGui::Button(m.c_str())) ctx.push(command_from("machine " + m));
    }
    return true;
  }
  if (!wb.kernel()) {
    text_wrapped("No kernel to simulate: type a model in the left panel%s",
                       wb.lower_error.empty() ? "." : (": " + wb.lower_error).c_str());
    return true;
  }
  if (!wb.machine_refusal.empty()) {
    // The machine changed under the schedule: say which step it cannot run, and the two ways on.
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("Cannot simulate on %s: %s", wb.machine_name.c_str(),
                       wb.machine_refusal.c_str());
    ImGui::PopStyleColor();
    const std::string back =
        "Go back to before step " + std::to_string(wb.machine_refusal_step + 1);
    if (ImGui::Button(back.c_str()))
      ctx.push(command_from("goto-step " + std::to_string(wb.machine_refusal_step)));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "goto-step %zu: the later steps stay in the history (redo brings them back)",
          wb.machine_refusal_step);
    // Or keep the steps and pick a machine they fit.
    for (const std::string& m : wb.machines_fitting) {
      ImGui::SameLine();
      if (ImGui::Button(("Use " + m).c_str())) ctx.push(command_from("machine " + m));
      note_widget("memory.use-machine." + m);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("machine %s: every step of the history is legal on it", m.c_str());
    }
    return true;
  }
  if (wb.memory_result()) return false;
  const std::string key = wb.memory_key();
  // While the next result is computed the previous one stays on screen, marked as such: in front
  // of a class a blank view between two steps loses the thread.
  const MemoryResult* previous = wb.previous_memory_result();
  const auto keep_previous = [&] {
    disabled_wrapped("Below: the previous result (%s, %zu steps) until this one is ready.",
                        previous->kernel.c_str(), previous->step_count);
    return false;
  };
  if (wb.memory_job.running() && wb.memory_job.key() == key) {
    job_progress_line(ctx,
                      ("Simulating " + wb.kernel()->name + " on " + wb.machine_name + "…").c_str(),
                      wb.memory_job.fraction(), "");
    // The numbers as they stream (the trace so far), before the whole result.
    const std::vector<std::string> partial = wb.memory_job.partial();
    for (const std::string& line : partial) text_wrapped("%s", line.c_str());
    if (!partial.empty()) note_widget("memory.partial");
    return previous ? keep_previous() : true;
  }
  if (auto held = wb.memory_held.find(key); held != wb.memory_held.end()) {
    if (held_job_lines(ctx, held->second, "Simulate anyway"))
      ctx.push(command_from("simulate anyway"));
    if (!held->second.refused) {
      ImGui::Spacing();
      if (held->second.analytic.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
        text_wrapped(
            "The analytic model does not cover this kernel (GPU mode, or a loop "
            "nest it cannot count), so there is no answer without the walk.");
        ImGui::PopStyleColor();
      } else {
        ImGui::TextUnformatted("The analytic model's answer, which needs no walk:");
        ImGui::PushFont(ctx.fonts.mono);
        for (const std::string& line : held->second.analytic)
          text_wrapped("%s", line.c_str());
        ImGui::PopFont();
      }
    }
  } else if (auto it = wb.memory_errors.find(key); it != wb.memory_errors.end()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("Simulation stopped: %s", it->second.c_str());
    ImGui::PopStyleColor();
    if (ImGui::Button("Simulate again")) ctx.push(command_from("simulate anyway"));
  } else if (!wb.memory_job.running()) {
    // Nothing for this (schedule, machine) yet: start at once, as the learner came to see it.
    ctx.push(command_from("simulate"));
    if (previous) {
      ImGui::TextUnformatted("Starting the simulation…");
      return keep_previous();
    }
  } else {
    ImGui::TextDisabled("Waiting for the previous simulation to stop…");
    if (previous) return keep_previous();
  }
  return true;
}

void draw_memory_view(ViewContext& ctx, const Rect& rect) {
  if (!begin_panel("Memory", rect)) {
    end_panel();
    return;
  }
  if (memory_empty_state(ctx)) {
    end_panel();
    return;
  }
  const MemoryResult& r = *ctx.state.workbench.memory_result_shown();
  const float em = ImGui::GetFontSize();
  draw_memory_heading(ctx, r);
  draw_baseline_section(ctx);

  // [SECTION] Boxes and arrows: the core on top, main memory at the bottom.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float avail_h = rect.y + rect.h - origin.y - em;
  const size_t n = r.levels.size() + 1;  // + the core
  const float box_h = std::max(em * 3.2f, std::min(em * 4.4f, avail_h / (n * 1.9f)));
  const float gap =
      std::clamp((avail_h - box_h * n) / std::max<size_t>(n - 1, 1), em * 2.0f, em * 5.0f);
  const std::vector<BoxText> texts = box_texts(r);
  // As wide as its widest line needs (a level's title beside its miss count; the line under it),
  // at most the view less a margin: large type in a narrow centre wrote the count over the title.
  float need = 0;
  for (const BoxText& t : texts) {
    const float title_w =
        ctx.fonts.ui_bold->CalcTextSizeA(ctx.fonts.px, FLT_MAX, 0, t.title.c_str()).x;
    const float misses_w = t.misses.empty() ? 0 : em * 1.5f + ImGui::CalcTextSize(t.misses.c_str()).x;
    need = std::max({need, title_w + misses_w, ImGui::CalcTextSize(t.line2.c_str()).x});
  }
  const float box_w = std::clamp(need + em * 1.2f, std::min(rect.w * 0.42f, em * 22),
                                 std::max(em * 8, rect.w - em * 2));
  const float x0 = origin.x + em;
  const float right = draw_memory_boxes(ctx, rect, em, r, texts, origin, x0, box_w, box_h, gap);
  const float boxes_h = static_cast<float>(n) * box_h + static_cast<float>(n - 1) * gap;
  ImGui::SetCursorScreenPos(origin);
  ImGui::Dummy(ImVec2(box_w, boxes_h));
  if (!r.grids.empty() && rect.x + rect.w - em - (right + em * 2) < em * 6) {
    // No room beside the boxes: say where the grids went rather than draw them cut off.
    ImGui::SetCursorScreenPos(ImVec2(x0, origin.y + boxes_h + em * 0.5f));
    disabled_wrapped("The cache's sets and ways are drawn beside these boxes in a wider window.");
  } else if (!r.grids.empty()) {
    // The small caches as they ended, beside the boxes.
    const ImVec2 at(right + em * 2, origin.y);
    const ImVec2 used = draw_cache_grids(ctx, r, at, rect.x + rect.w - em - at.x,
                                         std::min(avail_h * 0.6f, em * 36));
    ImGui::SetCursorScreenPos(at);
    ImGui::Dummy(used);
  }
  end_panel();
  draw_formula_popup(ctx, rect);
}

namespace {
void draw_result_details(ViewContext& ctx, const MemoryResult& result);
}  // namespace

void draw_memory_inspector(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  if (!begin_panel("Memory details", rect)) {
    end_panel();
    return;
  }
  section_heading(ctx, "Machine");
  const std::vector<std::string> presets = predict::preset_names();
  if (ImGui::BeginCombo("##machine", wb.machine_name.c_str())) {
    for (const std::string& m : presets)
      if (ImGui::Selectable(m.c_str(), m == wb.machine_name))
        ctx.push(command_from("machine " + m));
    ImGui::EndCombo();
  }
  if (wb.machine) {
    text_wrapped("%s", wb.machine->description.c_str());
    // Where a host machine's figures came from (sysfs, CPUID, or a labelled default).
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    for (const std::string& note : wb.machine->notes) text_wrapped("%s", note.c_str());
    ImGui::PopStyleColor();
  }
  draw_machine_editor(ctx);
  disabled_wrapped("Results are kept per schedule and machine.");
  section_heading(ctx, "Working set of one tile");
  draw_working_set_meter(ctx);
  if (const MemoryResult* r = wb.memory_result()) draw_result_details(ctx, *r);
  draw_measured_section(ctx);
  end_panel();
}

namespace {

// The simulated result's details: misses by cause, per tensor, against the minimum.
void draw_result_details(ViewContext& ctx, const MemoryResult& result) {
  const Workbench& wb = ctx.state.workbench;
  const MemoryResult* r = &result;
  section_heading(ctx, "Misses by cause (3C)");
  if (r->sampled) {
    // A sampled run keeps no per-line history: zeros here would read as "no misses of any kind".
    disabled_wrapped(
        "Not split: the split follows every line from its first touch, which a sampled run "
        "does not see. \"Simulate every access\" above gives it.");
  } else if (ImGui::BeginTable("3c", 4,
                               ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("level");
    ImGui::TableSetupColumn("compulsory");
    ImGui::TableSetupColumn("capacity");
    ImGui::TableSetupColumn("conflict");
    ImGui::TableHeadersRow();
    for (size_t i = 0; i + 1 < r->levels.size(); ++i) {
      const memory::Counters& c = r->levels[i].total;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(r->levels[i].name.c_str());
      for (uint64_t v : {c.compulsory, c.capacity, c.conflict}) {
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_si(double(v)).c_str());
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s of %s misses", format_thousands(int64_t(v)).c_str(),
                            format_thousands(int64_t(c.misses)).c_str());
      }
    }
    ImGui::EndTable();
  }
  if (!r->sampled)
    disabled_wrapped(
        "compulsory: first touch; capacity: a fully associative cache of the same size "
        "misses too; conflict: the rest.");
  section_heading(ctx, "Per tensor");
  disabled_wrapped("Click a number for the analytic model's formula.");
  const size_t last = r->levels.size() - 1;
  if (ImGui::BeginTable("tensors", int(r->levels.size()) + 1,
                        ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("tensor");
    for (size_t i = 0; i < last; ++i)
      ImGui::TableSetupColumn((r->levels[i].name + " misses").c_str());
    ImGui::TableSetupColumn((r->levels[last].name + " bytes").c_str());
    ImGui::TableHeadersRow();
    size_t rows = 0;
    for (const LevelResult& l : r->levels) rows = std::max(rows, l.by_tensor.size());
    for (size_t t = 0; t < rows; ++t) {
      const auto at = [&](size_t level) {
        const auto& v = r->levels[level].by_tensor;
        return t < v.size() ? v[t] : memory::Counters{};
      };
      if (at(0).accesses == 0 && at(last).accesses == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const size_t id = t;  // index = tensor id + 1
      const std::string name = id == 0                           ? "(other)"
                               : id - 1 < r->tensor_names.size() ? r->tensor_names[id - 1]
                                                                 : "?";
      ImGui::TextUnformatted(name.c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s: %s %s accesses, hit rate %s", name.c_str(),
                          format_thousands(int64_t(at(0).accesses)).c_str(),
                          r->levels[0].name.c_str(), format_percent(at(0).hit_rate()).c_str());
      for (size_t i = 0; i <= last; ++i) {
        ImGui::TableNextColumn();
        const memory::Counters c = at(i);
        const std::string text = i == last ? format_bytes(int64_t(c.read_bytes + c.write_bytes))
                                           : format_si(double(c.misses));
        if (id == 0)
          ImGui::TextUnformatted(text.c_str());  // unlabelled accesses have no formula
        else
          formula_link(ctx, text, r->levels[i].name + " " + name);
      }
    }
    ImGui::EndTable();
  }
  draw_baseline_tensors(ctx);
  section_heading(ctx, "Against the minimum");
  if (const schedule::Kernel* k = wb.kernel()) {
    int64_t min_bytes = 0;
    for (const schedule::KernelTensor& t : k->tensors) min_bytes += t.bytes();
    text_wrapped(
        "%s reached %s; the minimum is %s (each of the kernel's tensors read or "
        "written once).",
        format_bytes(int64_t(r->dram_bytes())).c_str(), r->levels[last].name.c_str(),
        format_bytes(min_bytes).c_str());
  }
}

}  // namespace

}  // namespace tilescope::gui

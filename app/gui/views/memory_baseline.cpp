// Baseline A beside the current schedule B (core/baseline.h): the Memory view's table per level
// and in time, the side panel's table per tensor, and the Timings panel's measured A and B.
#include "app/gui/views/memory_views.h"

#include "app/core/baseline.h"
#include "app/core/format.h"
#include "app/gui/widgets/text_wrap.h"
#include "sim/io/format.h"

#include <imgui.h>

#include <cmath>
#include <optional>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// Better is fewer misses, bytes and seconds, or a higher hit rate.
ImU32 change_colour(const Palette& p, const CompareRow& r) {
  const double d = r.delta();
  if (d == 0 || std::abs(r.relative()) < 1e-4) return p.subtext;
  const bool better = r.what == "hit rate" ? d > 0 : d < 0;
  return better ? p.ok : p.error;
}

// One row of a comparison table: what, A, B and the change in its colour.
void compare_row(const Palette& p, const std::string& what, const CompareRow& r) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(what.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(value_text(r, r.a).c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(value_text(r, r.b).c_str());
  ImGui::TableNextColumn();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(change_colour(p, r)));
  ImGui::TextUnformatted(change_text(r).c_str());
  ImGui::PopStyleColor();
}

// `narrow`: a side panel's table, whose columns share its width (at 200 % type a fitted table
// would run past the panel's edge).
bool begin_compare_table(const char* id, const char* first, bool narrow = false) {
  if (!ImGui::BeginTable(
          id, 4,
          (narrow ? ImGuiTableFlags_SizingStretchProp : ImGuiTableFlags_SizingFixedFit) |
              ImGuiTableFlags_RowBg))
    return false;
  ImGui::TableSetupColumn(first);
  ImGui::TableSetupColumn("A");
  ImGui::TableSetupColumn("B (now)");
  ImGui::TableSetupColumn("change");
  ImGui::TableHeadersRow();
  return true;
}

}  // namespace

void draw_baseline_section(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  if (!wb.baseline) {
    if (ImGui::SmallButton("Pin as baseline A")) ctx.push(command_from("baseline pin"));
    note_widget("memory.baseline.pin");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Keep this schedule's numbers as A, then go on changing the schedule (B):\n"
          "each level, each tensor and the time show A, B and the change.\n"
          "The Schedule view's history pins any earlier step the same way.");
    return;
  }
  const Workbench::Baseline& a = *wb.baseline;
  ImGui::PushFont(ctx.fonts.ui_bold);
  if (a.recording)  // its label names the device
    text_wrapped("Baseline A: %s", a.label.c_str());
  else
    text_wrapped("Baseline A: %s, on %s", a.label.c_str(), a.machine.c_str());
  ImGui::PopFont();
  if (ImGui::SmallButton("Clear A")) ctx.push(command_from("baseline clear"));
  note_widget("memory.baseline.clear");
  if (a.key != wb.memory_key()) {  // B is another schedule (or machine): it may become A
    ImGui::SameLine();
    if (ImGui::SmallButton("Pin this as A")) ctx.push(command_from("baseline pin"));
    note_widget("memory.baseline.pin");
  }
  if (!a.error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("A could not be simulated: %s", a.error.c_str());
    ImGui::PopStyleColor();
    return;
  }
  if (!a.ready()) {
    job_progress_line(ctx, "Simulating A…",
                      wb.baseline_job.running() ? wb.baseline_job.fraction() : 0, "");
    return;
  }
  const std::optional<Comparison> c = workbench_comparison(wb);
  if (!c) return;
  for (const std::string& n : c->notes) disabled_wrapped("%s", n.c_str());
  if (begin_compare_table("baseline.levels", "level")) {
    for (const CompareRow& r : c->levels) compare_row(p, r.level + " " + r.what, r);
    if (c->time) compare_row(p, c->time_label, *c->time);
    ImGui::EndTable();
  }
  note_widget("memory.baseline.table");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("A: %s\nB: %s\n%s: A by %s, B by %s", c->a_label.c_str(), c->b_label.c_str(),
                      c->time_label.c_str(), c->a_binding.c_str(), c->b_binding.c_str());
}

void draw_baseline_tensors(ViewContext& ctx) {
  const std::optional<Comparison> c = workbench_comparison(ctx.state.workbench);
  if (!c) return;
  section_heading(ctx, "Per tensor against A");
  if (c->tensors.empty()) {
    disabled_wrapped("%s", ctx.state.workbench.baseline->recording
                               ? "A is a recording: it has no per-tensor counts."
                               : "Neither A nor B moves a tensor's bytes.");
    return;
  }
  if (begin_compare_table("baseline.tensors", "tensor")) {
    for (const CompareRow& r : c->tensors) compare_row(ctx.palette, r.tensor + " " + r.level, r);
    ImGui::EndTable();
  }
}

void draw_baseline_timings(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  if (!wb.baseline) return;
  const Workbench::Baseline& a = *wb.baseline;
  ImGui::Spacing();
  section_heading(ctx, "Against baseline A");
  text_wrapped("A: %s", a.label.c_str());
  const auto measured = [&](const std::string& key) -> std::optional<double> {
    auto it = wb.cpu_cache.find(key);
    if (it == wb.cpu_cache.end() || !it->second.verified) return std::nullopt;
    return it->second.median_ms / 1e3;
  };
  const std::optional<Comparison> c = workbench_comparison(wb);
  if (a.recording) {
    disabled_wrapped(
        "A was measured on %s, not on this computer: its time stands beside B's roofline bound "
        "on %s. Run B on the GPU (tilescope-cli run --gpu) for a measured pair.",
        a.recording->device.c_str(), a.machine.c_str());
    if (c && c->time) {
      const CompareRow& t = *c->time;
      text_wrapped("A, measured: %s", value_text(t, t.a).c_str());
      text_wrapped("B, its roofline bound: %s", value_text(t, t.b).c_str());
      ImGui::TextUnformatted("change:");
      ImGui::SameLine();
      ImGui::PushStyleColor(ImGuiCol_Text,
                            ImGui::ColorConvertU32ToFloat4(change_colour(ctx.palette, t)));
      ImGui::TextUnformatted(change_text(t).c_str());
      ImGui::PopStyleColor();
    }
    return;
  }
  const std::optional<double> ma = measured(a.schedule_key), mb = measured(wb.schedule_key());
  if (begin_compare_table("baseline.time", "time", true)) {
    if (c && c->time) compare_row(ctx.palette, c->time_label, *c->time);
    if (ma && mb) compare_row(ctx.palette, "measured here", {"time", "", "seconds", *ma, *mb});
    ImGui::EndTable();
  }
  if (!ma) {
    const bool running = wb.cpu_job.running() && wb.cpu_job.key() == a.schedule_key;
    if (running)
      job_progress_line(ctx, "Running A…", wb.cpu_job.fraction(), wb.cpu_job.phase());
    else if (ImGui::Button("Run A on this CPU"))
      ctx.push(command_from("baseline run-cpu"));
    note_widget("timings.baseline.run-cpu");
  }
  if (!mb) disabled_wrapped("Run B (above) too, and the two measured times stand side by side.");
}

}  // namespace tilescope::gui

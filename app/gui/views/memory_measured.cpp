// The Memory view's "Predicted vs measured" section: a committed hardware-counter recording (ncu
// on the H200 for a GPU machine, cachegrind's simulated caches for a CPU one) beside the
// simulator's prediction of the same kernel, level by level (core/counters_compare.h).
#include "app/gui/views/memory_views.h"
#include "app/gui/widgets/text_wrap.h"

#include "app/core/counters_compare.h"
#include "app/core/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

std::string signed_percent(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", pct);
  return buf;
}

// The error cell: a percentage, or for bank conflicts the difference in wavefronts (a count
// predicted as 0 has no meaningful percentage).
std::string error_text(const CounterLevelRow& row) {
  if (!row.predicted) return "—";
  if (row.conflict_slack) {
    const double d = *row.predicted - row.measured;
    return d == 0 ? "equal" : (d > 0 ? "+" : "−") + format_si(std::fabs(d));
  }
  return row.error_pct ? signed_percent(*row.error_pct) : "—";
}

std::string target_text(const CounterLevelRow& row) {
  if (row.bound_pct) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "target: within ±%.0f%%", *row.bound_pct);
    return buf;
  }
  if (row.conflict_slack)
    return "target: equal, within 5% of the shared-memory instructions (" +
           format_si(*row.conflict_slack) + " wavefronts)";
  return "no target: shown for information";
}

}  // namespace

void draw_measured_section(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  section_heading(ctx, "Predicted vs measured");
  const std::string kind = wb.machine ? wb.machine->kind : "cpu";
  const auto* rec =
      counters_for_machine_kind(wb.counters_recorded, kind, wb.machine ? wb.machine->name : "");
  if (!rec || rec->second.runs.empty()) {
    text_wrapped("No %s counters recording in assets/recorded/ (%s makes one).",
                       kind == "gpu" ? "Nsight Compute" : "cachegrind",
                       kind == "gpu" ? "tilescope-cli bench --gpu --counters on a GPU machine"
                                     : "scripts/cachegrind_compare.sh --counters-json");
    return;
  }
  const kernels::CounterReport& report = rec->second;
  const std::string device = report.device.is_object() ? report.device.value("name", "") : "";
  const std::string day = report.date.substr(0, 10);  // ISO date; the time is in the file
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  if (report.tool == "cachegrind")
    text_wrapped(
        "Recorded %s: the CPU versions under cachegrind (its simulated caches, %s), beside "
        "tilescope's simulation of the same schedules — %s.",
        day.c_str(), report.ncu_version.c_str(),
        std::filesystem::path(rec->first).filename().c_str());
  else
    text_wrapped(
        "Recorded %s on %s with Nsight Compute: the hand-written CUDA versions, beside the "
        "simulator's trace of the same launch — %s. The current schedule runs there with "
        "tilescope-cli run --gpu.",
        day.c_str(), device.empty() ? "a GPU" : device.c_str(),
        std::filesystem::path(rec->first).filename().c_str());
  ImGui::PopStyleColor();

  const int count = int(report.runs.size());
  const int chosen = std::clamp(ctx.state.controls.views.measured_run, 0, count - 1);
  const char* pin_label = "Pin as A";
  ImGui::SetNextItemWidth(-(ImGui::CalcTextSize(pin_label).x +
                            2 * ImGui::GetStyle().FramePadding.x +
                            ImGui::GetStyle().ItemSpacing.x));
  if (ImGui::BeginCombo("##measured-run", counter_run_label(report.runs[size_t(chosen)]).c_str())) {
    for (int i = 0; i < count; ++i) {
      if (ImGui::Selectable(counter_run_label(report.runs[size_t(i)]).c_str(), i == chosen))
        ctx.push(command_from("control memory.measured-run " + std::to_string(i)));
      note_widget("memory.measured-run." + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  note_widget("memory.measured-run");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Which recorded kernel to compare (%d runs in this recording)", count);
  const kernels::CounterRun& run = report.runs[size_t(chosen)];
  ImGui::SameLine();
  ImGui::BeginDisabled(run.error.has_value());
  if (ImGui::Button(pin_label))
    ctx.push(command_from("baseline pin-recorded " + std::to_string(chosen)));
  ImGui::EndDisabled();
  note_widget("memory.measured.pin");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(
        "Pin this measured kernel as baseline A: the Memory view then shows its measured\n"
        "L2 and DRAM traffic (and time) beside your schedule's, B, as you change it.");

  if (run.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("This run did not complete: %s", run.error->c_str());
    ImGui::PopStyleColor();
    return;
  }
  if (!run.predicted || run.predicted->twin.empty())
    text_wrapped("Not predicted: %s", run.predicted && !run.predicted->no_twin_reason.empty()
                                                ? run.predicted->no_twin_reason.c_str()
                                                : "this version has no trace description");
  else {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    text_wrapped("Predicted by %s (%s).", run.predicted->twin.c_str(),
                       run.predicted->method.c_str());
    ImGui::PopStyleColor();
  }

  const std::vector<CounterLevelRow> rows = counter_level_rows(report, run);
  if (ImGui::BeginTable("measured", 4, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("level");
    ImGui::TableSetupColumn("predicted");
    ImGui::TableSetupColumn("measured");
    ImGui::TableSetupColumn("error");
    ImGui::TableHeadersRow();
    for (const CounterLevelRow& row : rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.level.c_str());
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", row.what.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.predicted ? format_si(*row.predicted).c_str() : "—");
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_si(row.measured).c_str());
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s %s", format_thousands(int64_t(std::llround(row.measured))).c_str(),
                          row.what.c_str());
      ImGui::TableNextColumn();
      // A row without a target (L1 sectors, DRAM with the SM's blocks apart) is information.
      const ImU32 colour = !row.bound_pct && !row.conflict_slack ? ctx.palette.subtext
                           : row.within                          ? ctx.palette.ok
                                                                 : ctx.palette.error;
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(colour));
      ImGui::TextUnformatted(error_text(row).c_str());
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s — %s", target_text(row).c_str(), row.within ? "met" : "missed");
    }
    ImGui::EndTable();
  }
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("%s", report.tool == "cachegrind"
                               ? "Targets: LL within ±15%, D1 within ±25%. Green: met."
                               : "Targets: DRAM ±15%, L2 ±25%, conflicts equal. Green: met.");
  ImGui::PopStyleColor();
  for (const CounterLevelRow& row : rows) {
    if (row.cause.empty()) continue;
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(
                                             row.within ? ctx.palette.subtext : ctx.palette.error));
    text_wrapped("%s %s: %s", row.level.c_str(), row.within ? "(within target)" : "misses",
                       row.cause.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace tilescope::gui

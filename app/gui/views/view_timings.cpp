// The Timings view: an autotune sweep of the current kernel's tile sizes (predicted and measured
// heatmaps, autotune_panel.cpp) or the recorded benchmark reports (CPU and the H200 run) as bars
// and a table, each labelled with its device and date; its side panel runs the current kernel's
// generated C++ on this CPU (JIT, verify against the interpreter, median of repeats) next to the
// predicted time.
#include "app/gui/views/autotune_panel.h"
#include "app/gui/views/memory_views.h"
#include "app/gui/views/views.h"

#include "app/core/counters_compare.h"
#include "app/core/format.h"
#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"

#include "sim/io/format.h"
#include "sim/predict/roofline.h"
#include "sim/predict/simulate.h"

#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

std::string json_str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double json_num(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string report_label(const nlohmann::json& r) {
  std::string device = r.contains("device") ? json_str(r["device"], "name") : std::string();
  if (device.empty() && r.contains("host")) {
    device = json_str(r["host"], "cpu");
    if (r["host"].contains("cores"))
      device += ", " + std::to_string(r["host"]["cores"].get<int>()) + " threads";
  }
  return json_str(r, "kind") + ": " + device + " — " + json_str(r, "date");
}

std::string ms_text(double ms) {
  return io::format_ms(ms);
}

// One suite of a recorded report: its reference and problem, then a row per version.
void draw_recorded_suite(ViewContext& ctx, const nlohmann::json& r, const nlohmann::json& suite) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(json_str(suite, "name").c_str());
  ImGui::PopFont();
  // Wrapped, on its own line: the attention suites' references run to a paragraph.
  disabled_wrapped("reference: %s", json_str(suite, "reference").c_str());
  text_wrapped("%s", json_str(suite, "problem").c_str());
  double best = 1e-9;
  for (const auto& res : suite["results"]) best = std::max(best, json_num(res, "gflops"));
  const bool has_flops = best > 1e-6;
  if (!has_flops)
    for (const auto& res : suite["results"]) best = std::max(best, json_num(res, "gbps"));
  // The time model's prediction where the same device's counters recording has one.
  auto predicted = [&](const nlohmann::json& res) {
    return predicted_time_for(wb.counters_recorded, r, suite, res);
  };
  // The column only where the suite has a prediction: narrow windows keep their room.
  bool any_predicted = false;
  for (const auto& res : suite["results"]) any_predicted = any_predicted || predicted(res);
  // The bars and "% of ref" only where there is room: in a narrow window (or at 150-200 %) the
  // times, rates and verdicts come first.
  const bool bars = ImGui::GetContentRegionAvail().x >= 34 * em;
  if (ImGui::BeginTable(json_str(suite, "name").c_str(), (any_predicted ? 7 : 6) - 2 * !bars,
                        ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("version");
    ImGui::TableSetupColumn("median");
    if (any_predicted) ImGui::TableSetupColumn("predicted");
    // Tensor-core suites run at hundreds of TFLOP/s: six-digit GFLOP/s crowd narrow windows.
    const bool tera = has_flops && best >= 10'000;
    ImGui::TableSetupColumn(tera ? "TFLOP/s" : has_flops ? "GFLOP/s" : "GB/s");
    if (bars) ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthStretch);
    if (bars) ImGui::TableSetupColumn("% of ref");
    ImGui::TableSetupColumn("ok");  // verified against the reference: yes / NO
    ImGui::TableHeadersRow();
    for (const auto& res : suite["results"]) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d %s", res.value("version", 0), json_str(res, "name").c_str());
      if (ImGui::IsItemHovered() && res.contains("changed"))
        ImGui::SetTooltip("%s", json_str(res, "changed").c_str());
      // A version that did not verify or run has no time: a dash, not 0 µs.
      const bool timed = res.contains("median_ms") && res["median_ms"].is_number();
      ImGui::TableNextColumn();
      if (timed)
        ImGui::TextUnformatted(ms_text(json_num(res, "median_ms")).c_str());
      else
        ImGui::TextDisabled("—");
      const std::optional<TimedPrediction> pred = predicted(res);
      if (any_predicted) ImGui::TableNextColumn();
      if (pred) {
        const double measured = json_num(res, "median_ms");
        ImGui::Text("%s (%+.0f%%)", ms_text(pred->seconds * 1e3).c_str(),
                    measured > 0 ? 100 * (pred->seconds * 1e3 - measured) / measured : 0.0);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("time model, %s-bound: %s\n(predictions of %s)", pred->limiter.c_str(),
                            pred->summary.c_str(),
                            std::filesystem::path(pred->recording).filename().c_str());
      } else if (any_predicted) {
        ImGui::TextDisabled("—");
      }
      ImGui::TableNextColumn();
      const double v = has_flops ? json_num(res, "gflops") : json_num(res, "gbps");
      if (timed)
        ImGui::Text("%.1f", tera ? v / 1000 : v);
      else
        ImGui::TextDisabled("—");
      const bool ok = res.value("verified", false);
      if (bars) {
        ImGui::TableNextColumn();
        const ImVec2 c = ImGui::GetCursorScreenPos();
        const float w = std::max(ImGui::GetContentRegionAvail().x, em * 2);
        draw_share_bar(ImGui::GetWindowDrawList(), ImVec2(c.x, c.y + em * 0.2f),
                       ImVec2(c.x + w, c.y + em * 0.9f), v / best, p.bar_bg,
                       ok ? p.category[1] : p.error);
        ImGui::Dummy(ImVec2(w, em));
        ImGui::TableNextColumn();
        if (timed)
          ImGui::Text("%.0f%%", json_num(res, "pct_of_reference"));
        else
          ImGui::TextDisabled("—");
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ok ? "yes" : "NO");
      if (!ok && ImGui::IsItemHovered() && res.contains("note"))
        ImGui::SetTooltip("%s", json_str(res, "note").c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace

void draw_timings_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  if (!begin_panel("Timings", rect)) {
    end_panel();
    return;
  }
  // Two sections, switched by script commands like everything else a user does.
  const bool show_autotune = wb.autotune.show;
  for (int i = 0; i < 2; ++i) {
    const bool on = (i == 0) == show_autotune;
    if (i == 1) ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Button,
                          ImGui::GetStyleColorVec4(on ? ImGuiCol_ButtonActive : ImGuiCol_FrameBg));
    if (ImGui::Button(i == 0 ? "Autotune sweep" : "Recorded benchmarks") && !on)
      ctx.push(command_from(i == 0 ? "autotune show" : "autotune hide"));
    ImGui::PopStyleColor();
  }
  ImGui::Spacing();
  if (show_autotune) {
    draw_autotune_section(ctx, rect);
    end_panel();
    return;
  }
  if (wb.recorded.empty()) {
    text_wrapped("No recorded measurements found in assets/recorded/. %s",
                 wb.recorded_error.c_str());
    end_panel();
    return;
  }
  // Which report: a panel control (`control timings.report N`), kept in the session.
  const int chosen = std::clamp(ctx.state.controls.views.timings_report, 0,
                                static_cast<int>(wb.recorded.size()) - 1);
  const float em = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(std::min(rect.w - em * 2, em * 34));
  // The chosen report's whole label when the field holds it, else its kind and day (the list
  // and the tooltip say the rest).
  std::string preview = report_label(wb.recorded[size_t(chosen)].second);
  if (ImGui::CalcTextSize(preview.c_str()).x >
      ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - em)
    preview = json_str(wb.recorded[size_t(chosen)].second, "kind") + " \xC2\xB7 " +
              json_str(wb.recorded[size_t(chosen)].second, "date").substr(0, 10);
  if (ImGui::BeginCombo("##report", preview.c_str())) {
    for (size_t i = 0; i < wb.recorded.size(); ++i) {
      if (ImGui::Selectable(report_label(wb.recorded[i].second).c_str(), int(i) == chosen))
        push_control(ctx, "timings.report", std::to_string(i));
      note_widget("timings.report." + std::to_string(i));
    }
    ImGui::EndCombo();
  }
  note_widget("timings.report");
  const auto& [file, r] = wb.recorded[size_t(chosen)];
  disabled_wrapped(
      "recorded in %s%s%s", std::filesystem::path(file).filename().c_str(),
      r.contains("compiler") ? ", " : "",
      r.contains("compiler") ? (json_str(r, "compiler") + " " + json_str(r, "flags")).c_str() : "");
  if (ImGui::IsItemHovered() && r.contains("peaks"))
    ImGui::SetTooltip("peaks: %.1f GFLOP/s fp32, %.1f GB/s (%s)",
                      json_num(r["peaks"], "gflops_fp32"), json_num(r["peaks"], "gbps"),
                      json_str(r, "peaks_source").c_str());
  ImGui::BeginChild("suites", ImVec2(0, 0), false);
  for (const auto& suite : r["suites"]) draw_recorded_suite(ctx, r, suite);
  ImGui::EndChild();
  end_panel();
}

namespace {

// The CPU half: JIT-compile, verify, time, and the prediction beside the measurement.
void draw_cpu_run(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  const std::string key = wb.schedule_key();
  const CpuRunResult* r = wb.cpu_result();
  if (wb.cpu_job.running() && wb.cpu_job.key() == key) {
    job_progress_line(ctx, "Running…", wb.cpu_job.fraction(), wb.cpu_job.phase());
  } else if (auto held = wb.cpu_held.find(key); held != wb.cpu_held.end() && !r) {
    if (held_job_lines(ctx, held->second, "Run anyway")) ctx.push(command_from("run-cpu anyway"));
  } else if (!r) {
    if (ImGui::Button("Run on this CPU")) ctx.push(command_from("run-cpu"));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Compiles the generated C++ (C++ tab of the Schedule view), checks it against\n"
          "the interpreter on the same inputs, then times it (median of repeats).");
  }
  if (auto it = wb.cpu_errors.find(key); it != wb.cpu_errors.end() && !r) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("%s", it->second.c_str());
    ImGui::PopStyleColor();
  }
  if (!r) {
    return;
  }
  ImGui::Spacing();
  if (!r->verified) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped(
        "Not verified: relative error %.3g against the interpreter (tolerance %g). "
        "An unverified kernel is not timed.",
        r->rel_error, kVerifyTolerance);
    ImGui::PopStyleColor();
    return;
  }
  ImGui::Text("verified: relative error %.2g", r->rel_error);
  disabled_wrapped(
      "%s",
      r->cache_hit
          ? "compiled: cache hit"
          : ("compiled in " + std::to_string(r->compile_seconds).substr(0, 4) + " s").c_str());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r->compile_command.c_str());
  const double measured_s = r->median_ms / 1000.0;
  const double gflops = measured_s > 0 ? double(r->flops) / measured_s / 1e9 : 0.0;
  ImGui::Spacing();
  if (ImGui::BeginTable("mvp", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("k", ImGuiTableColumnFlags_WidthFixed);
    ImGui::TableSetupColumn("v", ImGuiTableColumnFlags_WidthStretch);
    const auto row = [](const char* k, const std::string& v) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", k);
      ImGui::TableNextColumn();
      text_wrapped("%s", v.c_str());
    };
    row("measured", ms_text(r->median_ms) + " median of " + std::to_string(r->repeats) + " (min " +
                        ms_text(r->min_ms) + ")");
    row("rate", std::to_string(gflops).substr(0, 6) + " GFLOP/s");
    row("this CPU's peaks", std::to_string(r->peak_gflops).substr(0, 6) + " GFLOP/s, " +
                                std::to_string(r->peak_gbps).substr(0, 5) + " GB/s");
    auto sim = wb.memory_cache.find(key + "\n@host");
    if (sim != wb.memory_cache.end()) {
      // The shared pipeline's roofline on the simulated bytes, with this CPU's measured
      // single-thread peaks: max(bytes / bandwidth, FLOPs / peak, serial multiply-adds × latency).
      const MemoryResult& sr = sim->second;
      const predict::Machine here =
          predict::with_measured_peaks(sr.machine_model, r->peak_gflops * 1e9, r->peak_gbps * 1e9,
                                       r->dependent_fma_ns * 1e-9, r->peaks_source);
      const schedule::Kernel* kern = wb.kernel();
      const predict::Roofline roof =
          predict::roofline(here, double(r->flops), sr.bytes, "fp32", "simd",
                            kern ? predict::reduction_chain(*kern) : predict::ReductionChain{});
      const double predicted_s = roof.seconds;
      row("predicted",
          ms_text(predicted_s * 1000) + " (bound by " +
              (roof.binding == "dependence" ? std::string("the serial sum") : roof.binding) + ")");
      if (ImGui::IsItemHovered()) {
        std::string tip = "predicted = the largest of these bounds (sim/predict/roofline):\n";
        for (const predict::RooflineBound& bd : roof.bounds)
          if (bd.known) tip += "  " + bd.term.to_string() + "\n";
        for (const std::string& n : roof.notes) tip += "  (" + n + ")\n";
        tip += "bytes: simulated traffic of this schedule on 'host'; peaks measured here\n(" +
               r->peaks_source + ")";
        ImGui::SetTooltip("%s", tip.c_str());
      }
      row("measured ÷ predicted",
          std::to_string(measured_s / std::max(predicted_s, 1e-12)).substr(0, 5) + "×");
    } else {
      row("predicted", "simulate this schedule on 'host' (Memory view) to predict");
    }
    ImGui::EndTable();
  }
}

// The GPU half: the current schedule through the GPU bench (NVRTC, verified, timed beside
// cuBLAS) where this build has CUDA; otherwise why not, and where the recorded H200 run is.
void draw_gpu_run(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Run on this GPU");
  ImGui::PopFont();
  ImGui::Separator();
  if (const std::string why = gpu_run_unavailable(); !why.empty()) {
    text_wrapped(
        "Not here: %s. The recorded H200 runs are in the list on the left "
        "(labelled with their device and date).",
        why.c_str());
    return;
  }
  const std::string key = wb.schedule_key();
  const GpuRunResult* r = wb.gpu_result();
  if (wb.gpu_job.running() && wb.gpu_job.key() == key) {
    job_progress_line(ctx, "Running on the GPU…", wb.gpu_job.fraction(), wb.gpu_job.phase());
  } else if (!r) {
    if (ImGui::Button("Run on this GPU")) ctx.push(command_from("run-gpu"));
    note_widget("timings.run-gpu");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Generates CUDA for this schedule (CUDA tab), compiles it with NVRTC, checks it\n"
          "against the CPU reference, then times it beside cuBLAS (median of 20 launches).");
  }
  if (auto it = wb.gpu_errors.find(key); it != wb.gpu_errors.end() && !r) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("%s", it->second.c_str());
    ImGui::PopStyleColor();
    text_wrapped("The recorded H200 runs are in the list on the left.");
  }
  if (!r) return;
  text_wrapped("on %s: %s", r->device.c_str(), r->verified ? "verified" : "NOT verified");
  if (r->rel_error)
    ImGui::TextDisabled("relative error %.2g; %d registers/thread", *r->rel_error, r->registers);
  if (r->median_ms) ImGui::Text("measured: %s median", ms_text(*r->median_ms).c_str());
  if (r->cublas_ms) {
    text_wrapped("%s: %s median", r->cublas_what.c_str(), ms_text(*r->cublas_ms).c_str());
    if (r->median_ms && *r->median_ms > 0)
      ImGui::Text("cuBLAS ÷ this schedule: %.2f (1 = as fast as cuBLAS)",
                  *r->cublas_ms / *r->median_ms);
  }
}

}  // namespace

void draw_timings_inspector(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  if (!begin_panel("Run on this CPU", rect)) {
    end_panel();
    return;
  }
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Run on this CPU");
  ImGui::PopFont();
  ImGui::Separator();
  const schedule::Kernel* k = wb.kernel();
  if (!k) {
    text_wrapped("No kernel: type a model in the left panel.");
    end_panel();
    return;
  }
  text_wrapped("Kernel %s: %s", k->name.c_str(), k->summary.c_str());
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  text_wrapped("steps: %s", wb.steps_text().empty() ? "(none)" : wb.steps_text().c_str());
  ImGui::PopStyleColor();
  draw_cpu_run(ctx);
  draw_baseline_timings(ctx);
  draw_gpu_run(ctx);
  end_panel();
}

}  // namespace tilescope::gui

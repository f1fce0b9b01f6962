// The Trace view (the Kernels view of issue #30): what the learner's framework really ran for each
// node of the model, from a PyTorch profiler trace (app/core/trace_doc.h) — measured share beside
// tilescope's predicted share, the operators and kernels of the picked node, and the fusions the
// framework missed.
#include "app/gui/views/views.h"
#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"
#include "sim/io/format.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// Microseconds in the project's one duration format (io::format_ms).
std::string time_text(double us) {
  return io::format_ms(us / 1000);
}

Command cmd(const std::string& line) {
  return command_from(line);
}

void no_trace(ViewContext& ctx) {
  const TraceDoc& t = ctx.state.trace;
  text_wrapped(
      "What does your framework run for this model? Record one forward pass with PyTorch's "
      "profiler and open the trace here: each node of the graph gets the operators and GPU "
      "kernels that ran for it (cuBLAS and cuDNN names explained), its share of the measured "
      "time beside tilescope's predicted share, and every element-wise step that ran as a kernel "
      "of its own after a GEMM or a convolution.");
  ImGui::Spacing();
  ImGui::PushFont(ctx.fonts.mono);
  ImGui::TextUnformatted(
      "with torch.profiler.profile(record_shapes=True) as prof:\n"
      "    model(x)\n"
      "prof.export_chrome_trace(\"trace.json\")");
  ImGui::PopFont();
  ImGui::Spacing();
  if (ImGui::Button("Open trace…")) ctx.push(cmd("files open-trace"));
  note_widget("trace.open");
  ImGui::SameLine();
  if (ImGui::Button("Recorded traces…")) ctx.push(cmd("files open-trace assets/recorded/traces"));
  note_widget("trace.recorded");
  if (!t.error.empty()) {
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("%s", t.error.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

void draw_trace_view(ViewContext& ctx, const Rect& rect) {
  if (!begin_panel("Trace", rect)) {
    end_panel();
    return;
  }
  const TraceDoc& t = ctx.state.trace;
  if (!t.trace || !t.mapping) {
    no_trace(ctx);
    end_panel();
    return;
  }
  const import::ProfilerTrace& trace = *t.trace;
  const import::TraceMapping& m = *t.mapping;
  const float em = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(std::filesystem::path(t.path).filename().c_str());
  ImGui::PopFont();
  // The button beside the name when it fits, else under it.
  const ImGuiStyle& style = ImGui::GetStyle();
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x <
      ImGui::CalcTextSize("Open another…").x + 2 * style.FramePadding.x + style.ItemSpacing.x)
    ImGui::NewLine();
  if (ImGui::SmallButton("Open another…")) ctx.push(cmd("files open-trace"));
  note_widget("trace.open");
  const std::string kernels =
      trace.gpu ? ", " + std::to_string(trace.kernels.size()) + " GPU kernels" : "";
  text_wrapped("%zu framework operators%s; %s %s, %.1f %% of it mapped to the model's nodes.",
               trace.ops.size(), kernels.c_str(), m.time_basis.c_str(),
               time_text(m.total_us).c_str(), 100 * m.mapped_time_share);
  text_wrapped(
      "Click a node to see what ran for it. Predicted: each node's roofline time on %s "
      "(FLOPs at peak, minimum bytes at the memory's bandwidth) as a share of all.",
      m.machine.c_str());
  // As the panel narrows (a small window, 200 % type) the table sheds what the inspector also
  // shows: first the "what ran" column, then the bars (the shares stay as numbers).
  const float width_em = rect.w / em;
  const bool what_ran = width_em >= 44, bars = width_em >= 30;
  const float bar_w = std::clamp(rect.w * 0.09f, em * 3, em * 6);
  float table_h = std::max(em * 8, rect.h - em * (m.fusions.empty() ? 7 : 12));
  if (!what_ran)  // rows of one line: no taller than they need, so the fusions below stay in view
    table_h = std::min(table_h, float(m.nodes.size() + 1) *
                                        (ImGui::GetTextLineHeight() + 2 * style.CellPadding.y) +
                                    style.CellPadding.y);
  if (!what_ran) disabled_wrapped("Click a node: what ran for it is in the inspector.");
  if (ImGui::BeginTable(
          "trace", what_ran ? 5 : 4,
          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY,
          ImVec2(0, table_h))) {
    ImGui::TableSetupScrollFreeze(0, 1);
    ImGui::TableSetupColumn("node");
    ImGui::TableSetupColumn("measured");
    ImGui::TableSetupColumn(bars ? "share of time" : "share");
    ImGui::TableSetupColumn(bars ? "predicted share" : "predicted");
    if (what_ran) ImGui::TableSetupColumn("what ran", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < m.nodes.size(); ++i) {
      const import::NodeTime& n = m.nodes[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string label = n.tensor + "##node" + std::to_string(i);
      if (ImGui::Selectable(label.c_str(), t.selected == int(i)))
        ctx.push(cmd("trace select " + std::to_string(i)));
      note_widget("trace.node." + std::to_string(i));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(n.trace_ops.empty() ? "–" : time_text(n.measured_us).c_str());
      ImGui::TableNextColumn();
      char pct[32];
      std::snprintf(pct, sizeof pct, "%.1f %%", 100 * n.measured_share);
      if (bars)
        share_bar_item(n.measured_share, ctx.palette.bar_bg, ctx.palette.category[0], bar_w,
                       n.trace_ops.empty() ? "" : pct);
      else
        ImGui::TextUnformatted(n.trace_ops.empty() ? "–" : pct);
      ImGui::TableNextColumn();
      std::snprintf(pct, sizeof pct, "%.1f %%", 100 * n.predicted_share);
      if (bars)
        share_bar_item(n.predicted_share, ctx.palette.bar_bg, ctx.palette.category[2], bar_w, pct);
      else
        ImGui::TextUnformatted(pct);
      if (!what_ran) continue;
      ImGui::TableNextColumn();
      std::string ran;
      for (int ti : n.trace_ops) {
        const import::TraceOp& op = trace.ops[size_t(ti)];
        ran += (ran.empty() ? "" : ", ") + op.name;
        if (trace.gpu && !op.kernels.empty())
          ran += " (" + std::to_string(op.kernels.size()) + " kernel" +
                 (op.kernels.size() > 1 ? "s" : "") + ")";
      }
      if (!n.shared_with.empty()) ran = "inside " + n.shared_with + "'s operator";
      if (ran.empty()) ran = "nothing mapped";
      disabled_wrapped("%s", ran.c_str());
    }
    ImGui::EndTable();
  }
  for (const import::FusionHint& f : m.fusions) {
    ImGui::Bullet();
    text_wrapped("Fusion: %s.", f.text.c_str());
  }
  for (const std::string& note : trace.notes) text_wrapped("Note: %s.", note.c_str());
  if (!m.unmapped_ops.empty()) {
    std::string names;
    for (int ti : m.unmapped_ops) names += (names.empty() ? "" : ", ") + trace.ops[size_t(ti)].name;
    text_wrapped("%zu operator%s matched no node of the model: %s.", m.unmapped_ops.size(),
                 m.unmapped_ops.size() == 1 ? "" : "s", names.c_str());
  }
  end_panel();
}

void draw_trace_inspector(ViewContext& ctx, const Rect& rect) {
  if (!begin_panel("TraceInspector", rect)) {
    end_panel();
    return;
  }
  const TraceDoc& t = ctx.state.trace;
  if (!t.mapping || t.selected < 0 || t.selected >= int(t.mapping->nodes.size())) {
    section_heading(ctx, "What ran");
    text_wrapped(
        "Pick a node in the table to see the framework operators and kernels that ran "
        "for it.");
    end_panel();
    return;
  }
  const import::ProfilerTrace& trace = *t.trace;
  const import::NodeTime& n = t.mapping->nodes[size_t(t.selected)];
  section_heading(ctx, n.tensor.c_str());
  ImGui::PushFont(ctx.fonts.mono);
  text_wrapped("%s", n.text.c_str());
  ImGui::PopFont();
  ImGui::Spacing();
  text_wrapped("measured %s (%.1f %% of %s); predicted share %.1f %%",
               time_text(n.measured_us).c_str(), 100 * n.measured_share,
               t.mapping->time_basis.c_str(), 100 * n.predicted_share);
  if (!n.shared_with.empty())
    text_wrapped("Ran inside the operator of '%s' (the framework's Linear adds the bias itself).",
                 n.shared_with.c_str());
  for (int ti : n.trace_ops) {
    const import::TraceOp& op = trace.ops[size_t(ti)];
    section_heading(ctx, op.name.c_str());
    ImGui::Text("%s on the CPU", time_text(op.dur_us).c_str());
    if (n.folded(ti))
      text_wrapped(
          "The exporter folded this operator into the node; the framework ran it on its "
          "own, after it.");
    if (!op.worker().empty()) {
      const import::KernelName e = import::explain_kernel(op.worker());
      text_wrapped("calls %s%s", op.worker().c_str(),
                   e.library.empty() ? "" : (" — " + e.library + ": " + e.what).c_str());
    }
    for (int k : op.kernels) {
      const import::TraceKernel& tk = trace.kernels[size_t(k)];
      const import::KernelName e = import::explain_kernel(tk.name);
      ImGui::Bullet();
      text_wrapped("%s%s%s, %s, grid %lld×%lld×%lld, block %lld",
                   e.library.empty() ? "" : e.library.c_str(), e.library.empty() ? "" : ": ",
                   e.library.empty() ? tk.name.c_str() : e.what.c_str(),
                   time_text(tk.dur_us).c_str(), (long long)tk.grid[0], (long long)tk.grid[1],
                   (long long)tk.grid[2], (long long)tk.block[0]);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tk.name.c_str());
    }
  }
  end_panel();
}

}  // namespace tilescope::gui

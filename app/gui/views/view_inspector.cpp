// The inspector panel: the selected op's kind, origin, tensors and costs; or the graph's summary.
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <algorithm>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// A two-column key/value row inside a table.
void row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", key);
  ImGui::TableNextColumn();
  text_wrapped("%s", value.c_str());
}

bool begin_kv_table(const char* id) {
  if (!ImGui::BeginTable(id, 2, ImGuiTableFlags_SizingStretchProp)) return false;
  ImGui::TableSetupColumn("key", ImGuiTableColumnFlags_WidthFixed,
                          ImGui::CalcTextSize("bytes written").x);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch);
  return true;
}

std::string count_text(int64_t v) {
  return format_thousands(v) + (v >= 1000 ? "  (" + format_si(static_cast<double>(v)) + ")" : "");
}

std::string bytes_text(int64_t v) {
  return format_thousands(v) + " B" + (v >= 1024 ? "  (" + format_bytes(v) + ")" : "");
}

// One tensor as a compact block: name, role, dtype, size; then shape, layout, strides.
void tensor_block(ViewContext& ctx, const graph::Graph& g, graph::TensorId id, const char* dir) {
  const graph::Tensor& t = g.tensor(id);
  ImGui::PushID(id);
  ImGui::TextDisabled("%s", dir);
  ImGui::SameLine();
  ImGui::PushFont(ctx.fonts.ui_bold);
  if (ImGui::SmallButton(t.name.c_str())) {
    Command c;
    c.kind = CommandKind::SelectTensor;
    c.text = t.name;
    ctx.push(c);
  }
  ImGui::PopFont();
  // Beside the name when it fits, else on its own line (wrapped): never cut at the panel's edge.
  const std::string info = std::string(graph::role_name(t.role)) + " \xC2\xB7 " +
                           graph::dtype_name(t.dtype) + " \xC2\xB7 " + format_bytes(t.bytes());
  ImGui::SameLine();
  if (ImGui::CalcTextSize(info.c_str()).x > ImGui::GetContentRegionAvail().x) ImGui::NewLine();
  disabled_wrapped("%s", info.c_str());
  ImGui::Indent();
  ImGui::PushFont(ctx.fonts.mono);
  text_wrapped("%s %s strides %s", graph::shape_to_string(t.shape).c_str(),
                     graph::layout_name(t.layout), format_int_list(t.strides).c_str());
  ImGui::PopFont();
  ImGui::Unindent();
  ImGui::PopID();
}

void source_line(const ViewContext& ctx, const graph::SourceLoc& loc) {
  if (loc.line <= 0) return;
  const std::string_view line = line_of(ctx.state.model.graph_text, loc.line);
  ImGui::TextDisabled("line %d:", loc.line);
  ImGui::SameLine();
  ImGui::PushFont(ctx.fonts.mono);
  text_wrapped("%.*s", static_cast<int>(line.size()), line.data());
  ImGui::PopFont();
}

void draw_op(ViewContext& ctx, const graph::Graph& g, graph::OpId id) {
  const graph::Op& op = g.op(id);
  const graph::OpCost cost = g.op_cost(id);
  const graph::OpCost total = g.total_cost();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(op.name.c_str());
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s op", graph::op_kind_name(op.kind));

  section_heading(ctx, "Origin");
  if (!op.origin.empty()) {
    ImGui::PushFont(ctx.fonts.mono);
    text_wrapped("%s", op.origin.c_str());
    ImGui::PopFont();
  }
  // The sequential form's origin is the layer's own line; show the line only when it adds news.
  const std::string_view src = line_of(ctx.state.model.graph_text, op.loc.line);
  if (src.find(op.origin) == std::string_view::npos || op.origin.empty()) source_line(ctx, op.loc);
  if (op.origin.empty() && op.loc.line <= 0) ImGui::TextDisabled("built in code (no source line)");

  // Which kernel of the current schedule runs this op, and what it is fused with (if anything).
  const schedule::Program* prog = ctx.state.workbench.program();
  if (prog && ctx.state.workbench.graph_text == ctx.state.model.graph_text) {
    for (const schedule::Kernel& k : prog->kernels) {
      if (std::find(k.op_names.begin(), k.op_names.end(), op.name) == k.op_names.end()) continue;
      section_heading(ctx, "Kernel");
      ImGui::PushFont(ctx.fonts.mono);
      text_wrapped("%s", k.name.c_str());
      ImGui::PopFont();
      std::string others;
      for (const std::string& n : k.op_names)
        if (n != op.name) others += (others.empty() ? "" : ", ") + n;
      ImGui::PushTextWrapPos(0.0f);
      if (others.empty()) {
        disabled_wrapped("Runs alone: its output goes to memory and the next kernel reads it.");
      } else {
        text_wrapped(
            "Fused with %s: one kernel, outlined in the graph; the tensors "
            "passed between them are not stored to memory.",
            others.c_str());
      }
      ImGui::PopTextWrapPos();
      break;
    }
  }

  section_heading(ctx, "Tensors");
  for (graph::TensorId t : op.inputs) tensor_block(ctx, g, t, "in ");
  for (graph::TensorId t : op.outputs) tensor_block(ctx, g, t, "out");

  section_heading(ctx, "Cost (minimum traffic)");
  if (begin_kv_table("cost")) {
    row("FLOPs", count_text(cost.flops));
    row("bytes read", bytes_text(cost.bytes_read));
    row("bytes written", bytes_text(cost.bytes_written));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g FLOP/byte", cost.intensity());
    row("intensity", buf);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("share");
    ImGui::TableNextColumn();
    const double share =
        total.flops > 0 ? static_cast<double>(cost.flops) / static_cast<double>(total.flops) : 0.0;
    const std::string label = format_percent(share) + " of FLOPs";
    share_bar_item(share, ctx.palette.bar_bg, category_colour(ctx.palette, op_category(op.kind)),
                   ImGui::GetContentRegionAvail().x * 0.35f, label.c_str());
    ImGui::EndTable();
  }
  ImGui::Spacing();
  ImGui::PushTextWrapPos(0.0f);
  disabled_wrapped(
      "A multiply-add counts 2 FLOPs. Bytes assume each input is read once and the output "
      "written once: the least any schedule can move. Intensity = FLOPs / bytes.");
  ImGui::PopTextWrapPos();
}

void draw_tensor(ViewContext& ctx, const graph::Graph& g, graph::TensorId id) {
  const graph::Tensor& t = g.tensor(id);
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(t.name.c_str());
  ImGui::PopFont();
  ImGui::SameLine();
  ImGui::TextDisabled("%s tensor", graph::role_name(t.role));
  section_heading(ctx, "Tensor");
  if (begin_kv_table("tensor")) {
    row("shape", graph::shape_to_string(t.shape));
    row("dtype", graph::dtype_name(t.dtype));
    row("layout", graph::layout_name(t.layout));
    row("strides", format_int_list(t.strides) + " elements");
    row("elements", count_text(t.numel()));
    row("size", bytes_text(t.bytes()));
    ImGui::EndTable();
  }
  source_line(ctx, t.loc);
  section_heading(ctx, "Connections");
  auto op_button = [&](graph::OpId op_id, const char* what) {
    const graph::Op& op = g.op(op_id);
    ImGui::TextDisabled("%s", what);
    ImGui::SameLine();
    ImGui::PushID(op_id);
    if (ImGui::SmallButton(op.name.c_str())) {
      Command c;
      c.kind = CommandKind::SelectOp;
      c.text = op.name;
      ctx.push(c);
    }
    ImGui::PopID();
    ImGui::SameLine();
    ImGui::TextDisabled("%s", graph::op_kind_name(op.kind));
  };
  if (t.producer >= 0)
    op_button(t.producer, "made by  ");
  else
    ImGui::TextDisabled("fed from outside the graph");
  const auto consumers = g.consumers(id);
  for (graph::OpId c : consumers) op_button(c, "read by  ");
  if (consumers.empty()) ImGui::TextDisabled("nobody reads it: a graph output");
}

void draw_summary(ViewContext& ctx, const graph::Graph& g) {
  const graph::OpCost total = g.total_cost();
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Whole graph");
  ImGui::PopFont();
  disabled_wrapped("Click an op or tensor in the graph to inspect it.");
  if (begin_kv_table("totals")) {
    row("ops", std::to_string(g.ops().size()));
    row("FLOPs", count_text(total.flops));
    row("bytes", bytes_text(total.bytes()));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g FLOP/byte", total.intensity());
    row("intensity", buf);
    ImGui::EndTable();
  }
  section_heading(ctx, "Where the FLOPs are");
  if (ImGui::BeginTable("ops", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
    ImGui::TableSetupColumn("op", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("FLOPs", ImGuiTableColumnFlags_WidthFixed,
                            ImGui::CalcTextSize("999 MFLOP").x);
    ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < g.ops().size(); ++i) {
      const graph::Op& op = g.ops()[i];
      const graph::OpCost cost = g.op_cost(static_cast<graph::OpId>(i));
      const double share = total.flops > 0
                               ? static_cast<double>(cost.flops) / static_cast<double>(total.flops)
                               : 0.0;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(static_cast<int>(i));
      if (ImGui::Selectable(op.name.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
        Command c;
        c.kind = CommandKind::SelectOp;
        c.text = op.name;
        ctx.push(c);
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(format_flops(cost.flops).c_str());
      ImGui::TableNextColumn();
      share_bar_item(share, ctx.palette.bar_bg, category_colour(ctx.palette, op_category(op.kind)),
                     ImGui::GetContentRegionAvail().x * 0.5f, format_percent(share).c_str());
    }
    ImGui::EndTable();
  }
}

}  // namespace

void draw_inspector_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  if (!begin_panel("Inspector", rect)) {
    end_panel();
    return;
  }
  const graph::Graph* g = state.graph();
  if (!g) {
    ImGui::PushFont(ctx.fonts.ui_bold);
    ImGui::TextUnformatted("Inspector");
    ImGui::PopFont();
    ImGui::TextDisabled("Nothing to inspect until the model parses.");
    end_panel();
    return;
  }
  if (state.selection.kind != Selection::Kind::None) {
    if (ImGui::SmallButton("< whole graph")) {
      Command c;
      c.kind = CommandKind::ClearSelection;
      ctx.push(c);
    }
    ImGui::Spacing();
  }
  if (state.selection.kind == Selection::Kind::Op) {
    if (auto id = g->find_op(state.selection.name)) draw_op(ctx, *g, *id);
  } else if (state.selection.kind == Selection::Kind::Tensor) {
    if (auto id = g->find_tensor(state.selection.name)) draw_tensor(ctx, *g, *id);
  } else {
    draw_summary(ctx, *g);
  }
  end_panel();
}

}  // namespace tilescope::gui

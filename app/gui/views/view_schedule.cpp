// The Schedule view: the step history (click to go back; applying after going back branches), the
// last step's explanation or refusal, and the current kernel as loop nest, C++ and CUDA. Its side
// panel (draw_schedule_inspector) holds the kernel list, the transformation controls and the
// occupancy calculator (occupancy_panel.cpp).
#include "app/gui/views/memory_views.h"
#include "app/gui/views/views.h"

#include "app/core/fuse_options.h"

#include "app/gui/widgets/code_view.h"
#include "app/gui/widgets/text_wrap.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/trace.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// Every control's tooltip: the step it applies, then one sentence of why one would.
void step_tip(const std::string& step, const char* why) {
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%s", step.c_str(), why);
}

}  // namespace

namespace {

void push_apply(ViewContext& ctx, const std::string& step) {
  Command c;
  c.kind = CommandKind::Apply;
  c.text = step;
  ctx.push(c);
}

void empty_state(const Workbench& wb, const Palette& p) {
  if (!wb.lower_error.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    text_wrapped("This model has no schedule yet: %s", wb.lower_error.c_str());
    ImGui::PopStyleColor();
  } else {
    text_wrapped("No model to schedule. Type a model in the left panel.");
  }
}

// The first n entries of the history as one schedule text ("a; b"), as baseline A keeps its steps.
std::string schedule_prefix(const Workbench& wb, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && i < wb.step_texts.size(); ++i)
    out += (i ? "; " : "") + wb.step_texts[i];
  return out;
}

CodeColours code_colours(const Palette& p) {
  return {p.text, p.category[2], p.category[5], p.subtext, p.subtext};
}

}  // namespace

void draw_schedule_view(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  if (!begin_panel("Schedule", rect)) {
    end_panel();
    return;
  }
  const schedule::Kernel* k = wb.kernel();
  if (!k) {
    empty_state(wb, p);
    end_panel();
    return;
  }
  const float em = ImGui::GetFontSize();
  const float list_w = std::clamp(rect.w * 0.3f, em * 12, em * 22);

  // [SECTION] History
  ImGui::BeginChild("history", ImVec2(list_w, 0), true);
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("History");
  ImGui::PopFont();
  ImGui::TextDisabled("click to go back · Ctrl+Z / Ctrl+Y");
  ImGui::Separator();
  const size_t cursor = wb.history->size();
  ImGui::PushFont(ctx.fonts.mono);
  for (size_t i = 0; i <= wb.step_texts.size(); ++i) {
    const std::string label = std::to_string(i) + "  " +
                              (i == 0 ? std::string("default lowering") : wb.step_texts[i - 1]);
    const bool undone = i > cursor;
    if (undone)
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    // Room on the right of each entry for its "A" button: pin this point as the baseline.
    const float pin_w = ImGui::CalcTextSize("A").x + ImGui::GetStyle().FramePadding.x * 2;
    if (ImGui::Selectable((label + "##h" + std::to_string(i)).c_str(), i == cursor,
                          ImGuiSelectableFlags_AllowItemOverlap,
                          ImVec2(ImGui::GetContentRegionAvail().x - pin_w - em * 0.3f, 0))) {
      ctx.push(command_from("goto-step " + std::to_string(i)));
    }
    if (undone) ImGui::PopStyleColor();
    const bool hovered = ImGui::IsItemHovered();
    ImGui::SameLine();
    const bool pinned = wb.baseline && !wb.baseline->recording && wb.baseline->step_count == i &&
                        schedule_prefix(wb, i) == wb.baseline->steps;
    if (pinned) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::ColorConvertU32ToFloat4(p.selection));
    if (ImGui::SmallButton(("A##pin" + std::to_string(i)).c_str()))
      ctx.push(command_from("baseline pin " + std::to_string(i)));
    if (pinned) ImGui::PopStyleColor();
    note_widget("schedule.pin." + std::to_string(i));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(pinned ? "Baseline A is this point; the Memory, Roofline and Timings "
                                 "views compare the current schedule against it"
                               : "Pin this point as baseline A: the Memory, Roofline and "
                                 "Timings views compare the current schedule against it");
    if (hovered && i > 0) {
      ImGui::PushFont(ctx.fonts.ui);
      ImGui::BeginTooltip();
      ImGui::PushTextWrapPos(em * 30);
      ImGui::TextUnformatted(wb.history->explanation(i - 1).c_str());
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
      ImGui::PopFont();
    }
  }
  ImGui::PopFont();
  if (cursor < wb.step_texts.size()) {
    ImGui::Spacing();
    text_wrapped("Greyed steps were undone: Ctrl+Y brings them back; a new step replaces them.");
  }
  ImGui::EndChild();
  ImGui::SameLine();

  // [SECTION] Explanation and code
  ImGui::BeginChild("code side", ImVec2(0, 0), false);
  if (wb.last) {
    const bool ok = wb.last->ok;
    ImGui::PushStyleColor(ImGuiCol_ChildBg,
                          ImGui::ColorConvertU32ToFloat4(ok ? p.stale_bg : p.error_bg));
    const float text_h = ImGui::CalcTextSize(wb.last->explanation.c_str(), nullptr, false,
                                             ImGui::GetContentRegionAvail().x - em)
                             .y;
    ImGui::BeginChild("explanation", ImVec2(0, std::min(text_h + em * 2.6f, rect.h * 0.35f)), true);
    ImGui::PushFont(ctx.fonts.ui_bold);
    if (!ok) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(p.error));
    ImGui::Text("%s %s", ok ? "Applied" : "Refused:", wb.last->step.c_str());
    if (!ok) ImGui::PopStyleColor();
    ImGui::PopFont();
    text_wrapped("%s", wb.last->explanation.c_str());
    ImGui::EndChild();
    ImGui::PopStyleColor();
  } else if (cursor > 0) {
    ImGui::TextDisabled("Step %zu: %s", cursor, wb.step_texts[cursor - 1].c_str());
    text_wrapped("%s", wb.history->explanation(cursor - 1).c_str());
  } else {
    text_wrapped(
        "%s — the default lowering: one serial loop per axis. Use the controls on "
        "the right to fuse, tile, reorder, stage and map it.",
        k->summary.c_str());
  }
  ImGui::Spacing();
  if (ImGui::BeginTabBar("code tabs")) {
    const CodeColours colours = code_colours(p);
    if (ImGui::BeginTabItem("Loop nest")) {
      draw_code("##nest", schedule::print_loop_nest(*k), ctx.fonts.mono, colours, ImVec2(0, 0));
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("C++")) {
      draw_code("##cpp", schedule::emit_cpp(*k), ctx.fonts.mono, colours, ImVec2(0, 0));
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("CUDA")) {
      const std::string launch =
          "launch: " + schedule::describe_launch(schedule::launch_config(*k));
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("%s", launch.c_str());
      ImGui::PopTextWrapPos();
      draw_code("##cuda", schedule::emit_cuda(*k), ctx.fonts.mono, colours, ImVec2(0, 0));
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
  end_panel();
}

// [SECTION] Controls (the side panel)

namespace {

// Draws the list of the program's kernels; a click makes another kernel the current one.
void draw_kernel_list(ViewContext& ctx, const schedule::Program& prog) {
  section_heading(ctx, "Kernels");
  for (size_t i = 0; i < prog.kernels.size(); ++i) {
    const schedule::Kernel& kk = prog.kernels[i];
    if (ImGui::Selectable((kk.name + "  " + kk.summary + "##k" + std::to_string(i)).c_str(),
                          static_cast<int>(i) == prog.current) &&
        !kk.op_names.empty() && static_cast<int>(i) != prog.current) {
      push_apply(ctx, "kernel(" + kk.op_names.front() + ")");
    }
  }
}

// Draws the fuse buttons: the legal fusions as buttons, the others disabled with the reason.
void draw_fuse_section(ViewContext& ctx, const Workbench& wb) {
  // Fuse: what this kernel can take in (its consumers, the chain of them, its producers), each
  // tried on the program first: the legal ones are buttons, the others say why not.
  section_heading(ctx, "Fuse");
  const std::string fuse_key = wb.schedule_key() + "\n@" + wb.machine_name;
  ViewCaches::FuseChoices& choices = ctx.caches.fuse;
  if (choices.key != fuse_key) {
    choices.options = fuse_options(wb);
    choices.key = fuse_key;
  }
  const std::vector<FuseOption>& fuse_cached = choices.options;
  if (fuse_cached.empty()) ImGui::TextDisabled("Nothing to fuse with this kernel.");
  for (const FuseOption& o : fuse_cached) {
    if (o.legal) {
      if (ImGui::Button(("Fuse " + o.label).c_str())) push_apply(ctx, o.step);
      note_widget(o.label.find(',') != std::string::npos ? std::string("schedule.fuse-chain")
                                                         : "schedule.fuse." + o.label);
      step_tip(o.step,
               "Runs these ops inside this kernel's loop nest: each intermediate result "
               "is used while it is in a register, instead of a round trip through "
               "memory and one more kernel launch.");
    } else {
      ImGui::BeginDisabled();
      ImGui::Button(("Fuse " + o.label).c_str());
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s\nnot legal here: %s", o.step.c_str(), o.reason.c_str());
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("%s", o.reason.c_str());
      ImGui::PopTextWrapPos();
    }
  }
}

// Draws one loop's row of the loops table: its name, extent, kind and step buttons.
void draw_loop_row(ViewContext& ctx, const schedule::Kernel* k, size_t i, int tile_log2,
                   int bind_kind) {
  const schedule::Loop& l = k->loops[i];
  ImGui::PushID(static_cast<int>(i));
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::PushFont(ctx.fonts.mono);
  ImGui::Text("%s", l.name.c_str());
  ImGui::PopFont();
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%lld", static_cast<long long>(l.extent));
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s loop", schedule::loop_kind_name(l.kind));
  if (l.kind != schedule::LoopKind::Serial) {
    ImGui::SameLine();
    ImGui::TextDisabled("%s", schedule::loop_kind_name(l.kind));
  }
  ImGui::TableNextColumn();
  const int f = 1 << tile_log2;
  const std::string tile = "tile(" + l.name + ", " + std::to_string(f) + ")";
  if (ImGui::SmallButton("tile")) push_apply(ctx, tile);
  step_tip(tile, l.extent <= f ? "The loop is not longer than the factor: this split changes "
                                 "nothing (choose a smaller factor with the slider)."
                               : "Splits the loop into an outer and an inner loop; moving "
                                 "loops between the two (up) keeps a tile of data in cache "
                                 "while it is reused.");
  ImGui::SameLine();
  const std::string up = i > 0 ? "reorder(" + l.name + ", " + k->loops[i - 1].name + ")" : "";
  if (i > 0 && ImGui::SmallButton("up")) push_apply(ctx, up);
  if (i > 0)
    step_tip(up,
             "Moves this loop one level out: the loop order decides which data stays "
             "in cache between iterations (and which index walks memory contiguously).");
  if (i > 0) ImGui::SameLine();
  const std::string vec = "vectorize(" + l.name + ")";
  if (ImGui::SmallButton("vec")) push_apply(ctx, vec);
  step_tip(vec,
           "Runs this innermost loop's iterations in SIMD lanes: one instruction does "
           "several multiply-adds, when the loop walks memory contiguously.");
  ImGui::SameLine();
  const std::string unr = "unroll(" + l.name + ")";
  if (ImGui::SmallButton("unr")) push_apply(ctx, unr);
  step_tip(unr,
           "Writes the loop's body out once per iteration: no loop counter or branch, "
           "and independent multiply-adds the core can overlap.");
  ImGui::SameLine();
  if (l.reduce) {
    // A reduction's iterations cannot run side by side as they are (parallel is refused);
    // split-K makes slices of them that can. The factor is the number of slices (lesson 11).
    const std::string split_k = "split_k(" + l.name + ", " + std::to_string(f) + ")";
    if (ImGui::SmallButton("split")) push_apply(ctx, split_k);
    note_widget("schedule.split-k." + l.name);
    step_tip(split_k,
             "Cuts this sum into slices (the factor) that run side by side and write partial "
             "results, then adds them in a second kernel: more blocks when the outputs alone "
             "are too few to fill the GPU. Apply it before tiling this kernel.");
  } else {
    const std::string par = "parallel(" + l.name + ")";
    if (ImGui::SmallButton("par")) push_apply(ctx, par);
    step_tip(par,
             "Spreads this loop's iterations over the CPU's cores: worth it on an outer "
             "loop with enough work per iteration.");
  }
  ImGui::SameLine();
  const std::string bind = "bind(" + l.name + ", " + kBindTargets[bind_kind] + ")";
  if (ImGui::SmallButton("bind")) push_apply(ctx, bind);
  step_tip(bind,
           "Maps this loop to GPU blocks or threads (the combo above): a GPU kernel "
           "needs its loops bound, or it runs as one thread in one block.");
  ImGui::PopID();
}

// Draws the tile factor and bind target controls, then the loops table.
void draw_loops_section(ViewContext& ctx, const schedule::Kernel* k, float em, int& tile_log2,
                        int& bind_kind) {
  section_heading(ctx, "Loops (outermost first)");
  ImGui::SetNextItemWidth(em * 8);
  if (ImGui::SliderInt("tile factor (log2)", &tile_log2, kMinTileLog2, kMaxTileLog2, ""))
    push_control(ctx, "schedule.tile-log2", std::to_string(tile_log2));
  ImGui::SameLine();
  ImGui::Text("= %d", 1 << tile_log2);
  ImGui::SetNextItemWidth(em * 8);
  if (ImGui::Combo("bind to", &bind_kind, kBindTargets, IM_ARRAYSIZE(kBindTargets)))
    push_control(ctx, "schedule.bind", kBindTargets[bind_kind]);
  if (ImGui::BeginTable("loops", 3, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
    for (size_t i = 0; i < k->loops.size(); ++i) {
      draw_loop_row(ctx, k, i, tile_log2, bind_kind);
    }
    ImGui::EndTable();
  }
}

// Draws the stage controls: which tensor, into which memory, at which loop, and the button.
void draw_stage_section(ViewContext& ctx, float em, const std::vector<const char*>& tensor_names,
                        const std::vector<const char*>& loop_names, int& stage_level) {
  const ScheduleControls& sc = ctx.state.controls.schedule;
  section_heading(ctx, "Stage a tile");
  // An index past the current kernel's tensors or loops (a kernel with fewer) shows its last.
  int stage_tensor = std::clamp(sc.stage_tensor, 0, std::max(0, int(tensor_names.size()) - 1));
  int stage_at = std::clamp(sc.stage_at, 0, std::max(0, int(loop_names.size()) - 1));
  ImGui::SetNextItemWidth(em * 7);
  if (ImGui::Combo("tensor##stage", &stage_tensor, tensor_names.data(), int(tensor_names.size())))
    push_control(ctx, "schedule.stage-tensor", std::to_string(stage_tensor));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 7);
  if (ImGui::Combo("in", &stage_level, kStageLevels, IM_ARRAYSIZE(kStageLevels)))
    push_control(ctx, "schedule.stage-level", kStageLevels[stage_level]);
  ImGui::SetNextItemWidth(em * 7);
  if (ImGui::Combo("at loop", &stage_at, loop_names.data(), int(loop_names.size())))
    push_control(ctx, "schedule.stage-at", std::to_string(stage_at));
  ImGui::SameLine();
  if (!tensor_names.empty() && !loop_names.empty()) {
    const std::string stage = std::string("stage(") + tensor_names[size_t(stage_tensor)] + ", " +
                              kStageLevels[stage_level] + ", at=" + loop_names[size_t(stage_at)] +
                              ")";
    if (ImGui::Button("Stage")) push_apply(ctx, stage);
    step_tip(stage,
             "Copies the tile this loop touches into a fast memory the program manages "
             "(shared memory on a GPU) once, so the inner loops read it from there.");
  }
}

// Draws the block order, layout and rewrite (im2col, online softmax) controls.
void draw_grid_layout_section(ViewContext& ctx, const schedule::Program& prog,
                              const schedule::Kernel* k, float em,
                              const std::vector<const char*>& tensor_names, int& group,
                              int& layout_kind) {
  const ScheduleControls& sc = ctx.state.controls.schedule;
  section_heading(ctx, "Grid order, layout, rewrites");
  if (ImGui::Button("row-major blocks")) push_apply(ctx, "block_order(row)");
  step_tip("block_order(row)", "GPU blocks start in row-major order, the hardware's default.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 5);
  if (ImGui::InputInt("##group", &group, 0))
    push_control(ctx, "schedule.group",
                 std::to_string(std::clamp(group, kMinBlockGroup, kMaxBlockGroup)));
  group = std::clamp(group, kMinBlockGroup, kMaxBlockGroup);
  ImGui::SameLine();
  const std::string grouped = "block_order(grouped, " + std::to_string(group) + ")";
  if (ImGui::Button("grouped")) push_apply(ctx, grouped);
  step_tip(grouped,
           "Blocks start in groups of rows, so the blocks resident at once share "
           "their tiles in L2 (fewer DRAM reads).");
  int layout_tensor = std::clamp(sc.layout_tensor, 0, std::max(0, int(tensor_names.size()) - 1));
  ImGui::SetNextItemWidth(em * 7);
  if (ImGui::Combo("tensor##layout", &layout_tensor, tensor_names.data(), int(tensor_names.size())))
    push_control(ctx, "schedule.layout-tensor", std::to_string(layout_tensor));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 7);
  // "transposed" is the column-major order of a matrix: the menu says both.
  const auto layout_label = [](int i) {
    return std::string_view(kLayoutKinds[i]) == "transposed" ? "transposed (column-major)"
                                                             : kLayoutKinds[i];
  };
  if (ImGui::BeginCombo("##layoutkind", layout_label(layout_kind))) {
    for (int i = 0; i < IM_ARRAYSIZE(kLayoutKinds); ++i) {
      if (ImGui::Selectable(layout_label(i), i == layout_kind))
        push_control(ctx, "schedule.layout", kLayoutKinds[i]);
      note_widget(std::string("schedule.layout.kind.") + kLayoutKinds[i]);
    }
    ImGui::EndCombo();
  }
  note_widget("schedule.layout.kind");
  ImGui::SameLine();
  if (!tensor_names.empty()) {
    const std::string layout = std::string("layout(") + tensor_names[size_t(layout_tensor)] + ", " +
                               kLayoutKinds[layout_kind] + ")";
    if (ImGui::Button("Layout")) push_apply(ctx, layout);
    note_widget("schedule.layout");
    step_tip(layout,
             "Stores the tensor in another order in memory, so the inner loop walks it "
             "contiguously (whole cache lines used).");
  }
  // The rewrites an op of this kernel offers, by the op's kind.
  for (graph::OpId id : k->ops) {
    if (!prog.graph) break;
    const graph::Op& op = prog.graph->op(id);
    if (op.kind == graph::OpKind::Conv2D) {
      const std::string step = "im2col(" + op.name + ")";
      if (ImGui::Button(step.c_str())) push_apply(ctx, step);
      step_tip(step,
               "Rewrites the convolution as one matrix multiplication over "
               "copied input patches: more bytes, but a GEMM's fast loops.");
    }
    if (op.kind == graph::OpKind::Softmax) {
      const std::string step = "online_softmax(" + op.name + ")";
      if (ImGui::Button(step.c_str())) push_apply(ctx, step);
      note_widget("schedule.online-softmax." + op.name);
      step_tip(step,
               "Finds each row's maximum and sum in one pass instead of two: when a larger "
               "score arrives, the sum so far is rescaled by exp(old max - new max). One read "
               "of the row fewer, and the step FlashAttention builds on.");
    }
  }
}

// The elementwise producers another kernel computes for a tensor this kernel reads: what
// compute_at could bring in (the transform says why one is refused).
std::vector<std::string> compute_at_producers(const schedule::Program& prog,
                                              const schedule::Kernel& k) {
  std::vector<std::string> out;
  for (const schedule::Kernel& other : prog.kernels) {
    if (&other == &k || other.op_names.size() != 1) continue;
    for (const schedule::KernelTensor& t : other.tensors) {
      if (t.role != schedule::TensorRole::Output) continue;
      for (const schedule::KernelTensor& mine : k.tensors)
        if (mine.id == t.id && mine.role != schedule::TensorRole::Output)
          out.push_back(other.op_names.front());
    }
  }
  return out;
}

// The free loop order, compute_at and pad: each a step from the learner's choices, refused with
// the transform's reason like every other control.
void draw_more_steps_section(ViewContext& ctx, const schedule::Program& prog,
                             const schedule::Kernel& k, float em) {
  const ScheduleControls& sc = ctx.state.controls.schedule;
  section_heading(ctx, "Reorder, compute at, pad");
  // Reorder: the loops in any order, typed (the current order until the learner types one).
  std::string current;
  for (const schedule::Loop& l : k.loops) current += (current.empty() ? "" : ", ") + l.name;
  bool known = !sc.reorder.empty();
  for (size_t a = 0, b = 0; known && a < sc.reorder.size(); a = b + 1) {
    b = sc.reorder.find(',', a);
    if (b == std::string::npos) b = sc.reorder.size();
    std::string name = sc.reorder.substr(a, b - a);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    known = k.find_loop(name) >= 0;
  }
  std::string order = known ? sc.reorder : current;
  ImGui::SetNextItemWidth(em * 11);
  if (ImGui::InputText("##reorder", &order)) push_control(ctx, "schedule.reorder", order);
  note_widget("schedule.reorder.text");
  ImGui::SameLine();
  const std::string reorder = "reorder(" + order + ")";
  if (ImGui::Button("Reorder")) push_apply(ctx, reorder);
  note_widget("schedule.reorder");
  step_tip(reorder,
           "Puts the loops in this order, outermost first (type the names): the order decides "
           "which data is reused while it is still in cache.");
  // compute_at: an elementwise producer computed inside this kernel, inline or per tile.
  const std::vector<std::string> producers = compute_at_producers(prog, k);
  if (!producers.empty()) {
    const int pi = std::clamp(sc.compute_producer, 0, int(producers.size()) - 1);
    std::vector<const char*> producer_names, at_names = {"inline"};
    for (const std::string& pr : producers) producer_names.push_back(pr.c_str());
    for (const schedule::Loop& l : k.loops) at_names.push_back(l.name.c_str());
    int chosen = pi, at = std::clamp(sc.compute_at, 0, int(at_names.size()) - 1);
    ImGui::SetNextItemWidth(em * 6);
    if (ImGui::Combo("##producer", &chosen, producer_names.data(), int(producer_names.size())))
      push_control(ctx, "schedule.compute-producer", std::to_string(chosen));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(em * 6);
    if (ImGui::Combo("at##compute", &at, at_names.data(), int(at_names.size())))
      push_control(ctx, "schedule.compute-at", std::to_string(at));
    note_widget("schedule.compute-at.loop");
    ImGui::SameLine();
    const std::string step = "compute_at(" + producers[size_t(pi)] + ", " + k.op_names.front() +
                             ", at=" + at_names[size_t(at)] + ")";
    if (ImGui::Button("Compute here")) push_apply(ctx, step);
    note_widget("schedule.compute-at");
    step_tip(step,
             "Computes the producer inside this kernel instead of in its own: inline recomputes "
             "it at every read (no round trip through memory); at a loop it is computed once "
             "per tile of that loop and kept.");
  }
  // pad: a tensor's (or a staged tile's) dimension made longer, so rows start in other sets or
  // banks.
  std::vector<std::string> targets;
  for (const schedule::KernelTensor& t : k.tensors) targets.push_back(t.name);
  for (const schedule::StageArea& a : schedule::stage_areas(k, schedule::TraceOptions{}))
    targets.push_back(a.buffer);
  std::vector<const char*> target_names;
  for (const std::string& t : targets) target_names.push_back(t.c_str());
  int target = std::clamp(sc.pad_target, 0, int(targets.size()) - 1);
  int dim = sc.pad_dim, amount = sc.pad_amount;
  ImGui::SetNextItemWidth(em * 6);
  if (ImGui::Combo("##padtarget", &target, target_names.data(), int(target_names.size())))
    push_control(ctx, "schedule.pad-target", std::to_string(target));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 3.5f);
  if (ImGui::InputInt("dim##pad", &dim, 0))
    push_control(ctx, "schedule.pad-dim", std::to_string(std::clamp(dim, 0, kMaxPadDim)));
  note_widget("schedule.pad.dim");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 3.5f);
  if (ImGui::InputInt("by##pad", &amount, 0))
    push_control(ctx, "schedule.pad-amount", std::to_string(std::clamp(amount, 1, kMaxPadAmount)));
  note_widget("schedule.pad.amount");
  ImGui::SameLine();
  const std::string pad = "pad(" + targets[size_t(target)] + ", " + std::to_string(sc.pad_dim) +
                          ", " + std::to_string(sc.pad_amount) + ")";
  if (ImGui::Button("Pad")) push_apply(ctx, pad);
  note_widget("schedule.pad");
  step_tip(pad,
           "Adds unused elements to the end of this dimension, so consecutive rows start in "
           "other cache sets (or shared-memory banks) and stop evicting each other.");
}

}  // namespace

void draw_schedule_inspector(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  if (!begin_panel("Schedule controls", rect)) {
    end_panel();
    return;
  }
  const schedule::Program* prog = wb.program();
  const schedule::Kernel* k = wb.kernel();
  if (!prog || !k) {
    empty_state(wb, ctx.palette);
    end_panel();
    return;
  }
  const float em = ImGui::GetFontSize();
  // The controls' choices (which factor, which tensor) live in AppState::controls: the widgets
  // edit copies and push `control` commands, and the buttons push the steps they build.
  const ScheduleControls& sc = ctx.state.controls.schedule;
  int tile_log2 = sc.tile_log2, bind_kind = sc.bind_target, stage_level = sc.stage_level,
      layout_kind = sc.layout_kind, group = sc.block_group;

  draw_kernel_list(ctx, *prog);
  draw_fuse_section(ctx, wb);

  draw_loops_section(ctx, k, em, tile_log2, bind_kind);

  std::vector<const char*> tensor_names, loop_names;
  for (const auto& t : k->tensors) tensor_names.push_back(t.name.c_str());
  for (const auto& l : k->loops) loop_names.push_back(l.name.c_str());
  draw_stage_section(ctx, em, tensor_names, loop_names, stage_level);

  draw_grid_layout_section(ctx, *prog, k, em, tensor_names, group, layout_kind);
  draw_more_steps_section(ctx, *prog, *k, em);
  ImGui::Spacing();
  ImGui::TextDisabled("Every control sends a step: apply \"...\" (replayable in scripts).");
  // Beside the grid controls: how many of this launch's blocks an SM holds at once.
  draw_occupancy_section(ctx);
  // The working set of one tile against each cache of the selected machine, recomputed from the
  // schedule alone, so it moves with the tile slider above.
  section_heading(ctx, ("Working set on " + ctx.state.workbench.machine_name).c_str());
  draw_working_set_meter(ctx);
  end_panel();
}

}  // namespace tilescope::gui

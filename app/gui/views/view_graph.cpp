// The graph canvas panel: the layered DAG with zoom (wheel), pan (drag), fit (F) and selection;
// fused kernels outlined; and the palette, which builds and edits the model by editing its text.
#include "app/gui/views/views.h"

#include "app/core/format.h"
#include "app/core/graph_edit.h"
#include "app/gui/widgets/graph_canvas.h"
#include "app/gui/widgets/text_mask.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

void centred_text(const Rect& rect, const char* line1, const char* line2, ImU32 col, ImU32 col2) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 s1 = ImGui::CalcTextSize(line1);
  const ImVec2 s2 = ImGui::CalcTextSize(line2);
  const float cy = rect.y + rect.h / 2;
  dl->AddText(ImVec2(rect.x + (rect.w - s1.x) / 2, cy - s1.y - 2), col, line1);
  dl->AddText(ImVec2(rect.x + (rect.w - s2.x) / 2, cy + 4), col2, line2);
}

void draw_grid(ImDrawList* dl, const Rect& rect, const CanvasView& view, const Palette& p) {
  float step = 32.0f * view.zoom;
  while (step < 12.0f) step *= 2;  // keep the dots apart when zoomed out
  const float ox = std::fmod(view.pan_x, step), oy = std::fmod(view.pan_y, step);
  for (float y = rect.y + oy; y < rect.y + rect.h; y += step)
    for (float x = rect.x + ox; x < rect.x + rect.w; x += step)
      dl->AddRectFilled(ImVec2(x, y), ImVec2(x + 1.5f, y + 1.5f), p.grid);
}

// A colour key for the categories on screen, along the bottom edge (wrapping upwards when the
// canvas is narrow). Returns the top of the legend and the x where its top row ends. More than two
// rows (large type on a small canvas: the projector theme at 200 % on a 1280x720 window) would
// cover the graph: the key is then left out and the nodes' tooltips name their kinds.
ImVec2 draw_legend(ImDrawList* dl, const Rect& rect, const GraphScene& scene, const Palette& p) {
  std::set<int> present;
  for (const SceneNode& n : scene.nodes) present.insert(static_cast<int>(n.category));
  const float lh = ImGui::GetTextLineHeight();
  const float left = rect.x + lh * 0.8f, right = rect.x + rect.w - lh * 0.8f;
  // Lay the entries out in rows first, then draw the rows bottom-up.
  std::vector<std::vector<int>> rows(1);
  float x = left;
  for (int c : present) {
    const float w = lh * 0.85f + ImGui::CalcTextSize(category_name(NodeCategory(c))).x + lh * 0.9f;
    if (x + w > right && !rows.back().empty()) {
      rows.emplace_back();
      x = left;
    }
    rows.back().push_back(c);
    x += w;
  }
  if (rows.size() > 2) return ImVec2(left, rect.y + rect.h - lh * 0.4f);
  float y = rect.y + rect.h - lh * 1.6f - (rows.size() - 1) * lh * 1.3f;
  const float top = y;
  float top_row_end = left;
  for (size_t r = 0; r < rows.size(); ++r, y += lh * 1.3f) {
    x = left;
    for (int c : rows[r]) {
      const char* name = category_name(static_cast<NodeCategory>(c));
      const ImU32 col = category_colour(p, static_cast<NodeCategory>(c));
      dl->AddRectFilled(ImVec2(x, y + lh * 0.2f), ImVec2(x + lh * 0.6f, y + lh * 0.8f), col, 2.0f);
      x += lh * 0.85f;
      dl->AddText(ImVec2(x, y), p.subtext, name);
      x += ImGui::CalcTextSize(name).x + lh * 0.9f;
    }
    if (r == 0) top_row_end = x;
  }
  return ImVec2(top_row_end, top);
}

// Presentation mode's colour key: one entry per line from `top`, on a plate, at the left edge.
void draw_legend_column(ImDrawList* dl, const Rect& rect, float top, const GraphScene& scene,
                        const Palette& p) {
  std::set<int> present;
  for (const SceneNode& n : scene.nodes) present.insert(static_cast<int>(n.category));
  const float lh = ImGui::GetTextLineHeight();
  float w = 0;
  for (int c : present) w = std::max(w, ImGui::CalcTextSize(category_name(NodeCategory(c))).x);
  const float x = rect.x + lh * 0.6f;
  const ImVec2 a(x, top), b(x + lh * 1.6f + w, top + lh * 0.4f + present.size() * lh * 1.3f);
  dl->AddRectFilled(a, b, (p.canvas_bg & ~IM_COL32_A_MASK) | (230u << IM_COL32_A_SHIFT), 4.0f);
  float y = top + lh * 0.2f;
  for (int c : present) {
    dl->AddRectFilled(ImVec2(x + lh * 0.3f, y + lh * 0.2f), ImVec2(x + lh * 0.9f, y + lh * 0.8f),
                      category_colour(p, static_cast<NodeCategory>(c)), 2.0f);
    dl->AddText(ImVec2(x + lh * 1.2f, y), p.subtext, category_name(NodeCategory(c)));
    y += lh * 1.3f;
  }
}

// [SECTION] Operands: the selection is A, Shift+clicked nodes are B and C

// The canvas node that shows tensor `name`: its source/output node, or the op that produces it.
int node_for_tensor(const GraphScene& scene, const graph::Graph& g, const std::string& name) {
  int i = scene.find(name, SceneNode::Kind::Source);
  if (i < 0) i = scene.find(name, SceneNode::Kind::Output);
  if (i >= 0) return i;
  const auto t = g.find_tensor(name);
  if (!t || g.tensor(*t).producer < 0) return -1;
  return scene.find(g.op(g.tensor(*t).producer).name, SceneNode::Kind::Op);
}

// The tensor a node stands for: an op node's output, or the tensor itself.
std::string node_tensor(const SceneNode& n, const graph::Graph& g) {
  if (n.kind == SceneNode::Kind::Op && n.op >= 0 && !g.op(n.op).outputs.empty())
    return g.tensor(g.op(n.op).outputs.front()).name;
  return n.name;
}

std::string selected_tensor(const AppState& state, const graph::Graph& g) {
  if (state.selection.kind == Selection::Kind::Tensor) return state.selection.name;
  if (state.selection.kind == Selection::Kind::Op) {
    if (const auto op = g.find_op(state.selection.name); op && !g.op(*op).outputs.empty())
      return g.tensor(g.op(*op).outputs.front()).name;
  }
  return {};
}

bool is_named(const ModelOutline& o, const std::string& name) {
  for (const NamedLine& l : o.lines)
    if (l.name == name) return true;
  return false;
}

// [SECTION] Fused kernels

// Outlines the ops of every kernel that holds more than one op (after fuse(...) in the schedule)
// with one rounded box and the kernel's name, so the learner sees which ops run as one kernel.
void draw_fused_groups(ImDrawList* dl, const AppState& state, const GraphScene& scene,
                       const CanvasTransform& xf, const Palette& p, bool fill) {
  const schedule::Program* prog = state.workbench.program();
  if (!prog || state.workbench.graph_text != state.model.graph_text) return;
  const float lh = ImGui::GetTextLineHeight();
  const ImU32 col = category_colour(p, NodeCategory::Contraction);
  for (const schedule::Kernel& k : prog->kernels) {
    if (k.op_names.size() < 2) continue;
    float x0 = 1e30f, y0 = 1e30f, x1 = -1e30f, y1 = -1e30f;
    for (const std::string& name : k.op_names) {
      const int i = scene.find(name, SceneNode::Kind::Op);
      if (i < 0) continue;
      const SceneNode& n = scene.nodes[size_t(i)];
      x0 = std::min(x0, n.x);
      y0 = std::min(y0, n.y);
      x1 = std::max(x1, n.x + n.w);
      y1 = std::max(y1, n.y + n.h);
    }
    if (x0 > x1) continue;
    const float m = 10.0f;
    const ImVec2 a = xf.to_screen(x0 - m, y0 - m), b = xf.to_screen(x1 + m, y1 + m);
    if (fill) {
      dl->AddRectFilled(a, b, (col & ~IM_COL32_A_MASK) | (28u << IM_COL32_A_SHIFT), 8.0f);
      continue;
    }
    // Dashed border: fused is a schedule decision drawn over the graph, not a node of it.
    const ImU32 line = col;
    const float dash = 7.0f, gap = 5.0f;
    auto dashed = [&](ImVec2 from, ImVec2 to) {
      const float len = std::hypot(to.x - from.x, to.y - from.y);
      for (float t = 0; t < len; t += dash + gap) {
        const float e = std::min(t + dash, len);
        dl->AddLine(ImVec2(from.x + (to.x - from.x) * t / len, from.y + (to.y - from.y) * t / len),
                    ImVec2(from.x + (to.x - from.x) * e / len, from.y + (to.y - from.y) * e / len),
                    line, 2.0f);
      }
    };
    dashed(a, ImVec2(b.x, a.y));
    dashed(ImVec2(b.x, a.y), b);
    dashed(b, ImVec2(a.x, b.y));
    dashed(ImVec2(a.x, b.y), a);
    const std::string label =
        "fused: " + std::to_string(k.op_names.size()) + " ops in one kernel (" + k.name + ")";
    const ImVec2 ts = ImGui::CalcTextSize(label.c_str());
    // Keep the label inside the canvas when the box reaches its right edge.
    const float clip_right = dl->GetClipRectMax().x - 6.0f;
    const ImVec2 at(
        std::max(std::min(a.x + 6.0f, clip_right - ts.x), dl->GetClipRectMin().x + 6.0f),
        a.y - ts.y - lh * 0.15f);
    dl->AddRectFilled(ImVec2(at.x - 3, at.y - 1), ImVec2(at.x + ts.x + 3, at.y + ts.y + 1),
                      p.label_bg, 3.0f);
    dl->AddText(at, line, label.c_str());
  }
}

// [SECTION] The palette

// The slots operands fill, in order: A (the selection), then B and C (Shift+click).
constexpr const char* kSlot[3] = {"A", "B", "C"};

// An InputText over a copy of a palette text control; pushes `control NAME TEXT` when edited.
// While the field has focus ImGui edits its own copy of the text, so the frame the command takes
// to reach the state is never seen.
template <size_t N>
void palette_text_field(ViewContext& ctx, const char* id, const char* hint, const char* control,
                        const std::string& value) {
  char buf[N + 1] = "";
  value.copy(buf, N);
  const TextMaskPause typed;  // a field shows what is typed, unmasked
  if (ImGui::InputTextWithHint(id, hint, buf, sizeof buf)) push_control(ctx, control, buf);
}

// The line a button would append, for its tooltip ("t3 = relu(y)"), from the same pattern.
std::string preview_line(const PaletteOp& op, const std::vector<std::string>& operands,
                         const std::string& args, const std::string& out) {
  std::string kw = args.empty() ? std::string(op.defaults) : args;
  std::string kwtext;
  for (size_t i = 0, j; i < kw.size(); i = j + 1) {
    j = kw.find_first_of(" ,", i);
    if (j == std::string::npos) j = kw.size();
    if (j > i) kwtext += ", " + kw.substr(i, j - i);
  }
  std::string e = out + " = ";
  for (const char* c = op.pattern; *c; ++c) {
    if (*c == '$' && c[1] >= '0' && c[1] <= '2' && size_t(c[1] - '0') < operands.size()) {
      e += operands[size_t(c[1] - '0')];
      ++c;
    } else if (*c == '$' && c[1] == 'k') {
      e += kwtext;
      ++c;
    } else {
      e.push_back(*c);
    }
  }
  return e;
}

// Draws the palette's title and its hide/show button; returns whether the palette is folded now.
bool draw_palette_header(ViewContext& ctx, float width, float lh) {
  const PaletteControls& form = ctx.state.controls.palette;
  // A header that folds the palette away (it covers the canvas's left edge). Folded at first, so
  // the first screen shows the whole graph; "show" opens it.
  const bool open = form.open;
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted("Palette");
  ImGui::PopFont();
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Builds the model by writing lines into the model text (left);\n"
        "every line is checked by the parser before it is kept.");
  // The button at the right edge, or just after the title when the type is large for the width.
  const float title_end = ImGui::GetItemRectMax().x - ImGui::GetWindowPos().x;
  const float button_w = ImGui::CalcTextSize(open ? "hide" : "show").x +
                         ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SameLine(std::max(title_end + lh * 0.5f,
                           width - button_w - ImGui::GetStyle().WindowPadding.x - lh * 0.2f));
  const bool toggled = ImGui::SmallButton(open ? "hide" : "show");
  if (toggled) push_control(ctx, "palette.open", open ? "off" : "on");
  return open == toggled;
}

// Draws the operand slots (A, B, C), the named tensors to pick from, and "clear".
void draw_palette_operands(ViewContext& ctx, float width, float lh,
                           const std::vector<std::string>& operands, bool all_named,
                           const std::string& a) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  const ModelOutline& outline = state.outline;
  // Which tensors the ops will read: the filled slots, then how to fill the next one.
  if (operands.empty()) ImGui::TextDisabled("A: click a node");
  for (size_t i = 0; i < operands.size() && i < 3; ++i) {
    if (i > 0) ImGui::SameLine(0.0f, lh * 0.7f);
    ImGui::TextDisabled("%s", kSlot[i]);
    ImGui::SameLine();
    ImGui::PushFont(ctx.fonts.mono);
    const bool named = is_named(outline, operands[i]);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(named ? p.text : p.error), "%s",
                       operands[i].c_str());
    ImGui::PopFont();
    if (!named && ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "This tensor is inside an expression and has no name in the text;\n"
          "the palette can only use named tensors.");
  }
  if (!operands.empty() && operands.size() < 3) {
    ImGui::SameLine(0.0f, lh * 0.7f);
    ImGui::TextDisabled("%s: Shift+click", kSlot[operands.size()]);
  }
  if (!all_named) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - lh);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(p.error),
                       "Red: a result inside an expression, with no name in the text. Pick a "
                       "named tensor, or split the line to name it.");
    ImGui::PopTextWrapPos();
  }
  // Every named tensor of the text as a button too: the only way to reach one the canvas does
  // not show yet (a model that only declares tensors has no graph).
  ImGui::TextDisabled("pick");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Click a name to make it the next operand (as Shift+click on the canvas).");
  for (const std::string& name : named_tensors(outline)) {
    ImGui::SameLine();
    const float w = ImGui::CalcTextSize(name.c_str()).x + ImGui::GetStyle().FramePadding.x * 2;
    if (ImGui::GetCursorScreenPos().x + w >
        ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x)
      ImGui::NewLine();
    ImGui::PushID(name.c_str());
    if (ImGui::SmallButton(name.c_str())) ctx.push(command_from("palette pick " + name));
    ImGui::PopID();
  }
  if (!state.palette_picks.empty() || !a.empty()) {
    ImGui::SameLine();
    if (ImGui::SmallButton("clear")) ctx.push(command_from("palette unpick"));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Start the operands over: A, B and C.");
  }
}

// Draws the op buttons, flowing in rows, and the field of their arguments.
void draw_palette_ops(ViewContext& ctx, float width, float lh,
                      const std::vector<std::string>& operands, bool all_named) {
  const AppState& state = ctx.state;
  const PaletteControls& form = state.controls.palette;
  // The op buttons, flowing in rows; disabled until they have their operands.
  const std::string fresh = fresh_tensor_name(state.model.text);
  const std::string& args = form.args;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  int arity_shown = -1;
  for (const PaletteOp& op : palette_ops()) {
    if (op.arity != arity_shown) {
      arity_shown = op.arity;
      ImGui::TextDisabled("%s", op.arity == 1   ? "on A"
                                : op.arity == 2 ? "on A and B"
                                                : "on A, B and C");
    } else {
      const float w = ImGui::CalcTextSize(op.label).x + ImGui::GetStyle().FramePadding.x * 2;
      ImGui::SameLine();
      if (ImGui::GetCursorScreenPos().x + w > right) ImGui::NewLine();
    }
    const bool ready = static_cast<int>(operands.size()) >= op.arity && all_named;
    ImGui::BeginDisabled(!ready);
    ImGui::PushID(op.name);
    const bool pressed = ImGui::Button(op.label);
    ImGui::PopID();
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
      const std::vector<std::string> use(
          operands.begin(), operands.begin() + std::min<size_t>(operands.size(), size_t(op.arity)));
      std::string tip = std::string(op.help) + "\n";
      tip += ready ? "adds:  " +
                         preview_line(op, use, std::strstr(op.pattern, "$k") ? args : "", fresh)
                   : std::string("select ") + (op.arity == 1   ? "a named tensor (A)"
                                               : op.arity == 2 ? "A, then Shift+click B"
                                                               : "A, then Shift+click B and C");
      ImGui::SetTooltip("%s", tip.c_str());
    }
    if (pressed) {
      std::string cmd = std::string("palette add ") + op.name;
      for (int i = 0; i < op.arity; ++i) cmd += " " + operands[size_t(i)];
      if (std::strstr(op.pattern, "$k")) {
        std::string kw = args;
        std::replace(kw.begin(), kw.end(), ',', ' ');
        if (kw.find_first_not_of(' ') != std::string::npos) cmd += " " + kw;
      }
      ctx.push(command_from(cmd));
    }
  }
  ImGui::SetNextItemWidth(width - lh * 1.0f);
  palette_text_field<kPaletteFieldBytes>(ctx, "##args", "arguments, e.g. padding=1 stride=2",
                                         "palette.args", form.args);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("key=value arguments for conv2d, pooling, softmax, sum, mean");
}

// Draws the form that adds a new input or weight (name, shape, dtype).
void draw_palette_new_tensor(ViewContext& ctx, float width, float lh) {
  const PaletteControls& form = ctx.state.controls.palette;
  // New inputs and weights: a small form (name, shape, dtype).
  ImGui::Separator();
  ImGui::TextDisabled("new tensor");
  ImGui::SetNextItemWidth(lh * 3.2f);
  palette_text_field<kPaletteNameBytes>(ctx, "##name", "name", "palette.name", form.name);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(width - lh * 4.6f);
  palette_text_field<kPaletteFieldBytes>(ctx, "##dims", "shape, e.g. 64,128", "palette.dims",
                                         form.dims);
  ImGui::SetNextItemWidth(lh * 3.2f);
  int dtype = form.dtype;
  if (ImGui::Combo("##dtype", &dtype, kPaletteDtypes, IM_ARRAYSIZE(kPaletteDtypes)))
    push_control(ctx, "palette.dtype", kPaletteDtypes[dtype]);
  const bool can_add = !form.name.empty() && !form.dims.empty();
  ImGui::BeginDisabled(!can_add);
  for (int w = 0; w < 2; ++w) {
    ImGui::SameLine();
    if (ImGui::Button(w ? "+ weight" : "+ input")) {
      std::string dims(form.dims);
      std::replace(dims.begin(), dims.end(), ' ', ',');
      std::string cmd = std::string("palette ") + (w ? "weight " : "input ") + form.name + " " +
                        dims + (form.dtype ? std::string(" ") + kPaletteDtypes[form.dtype] : "");
      ctx.push(command_from(cmd));
    }
  }
  ImGui::EndDisabled();
}

void draw_palette(ViewContext& ctx, const Rect& rect, float top, const graph::Graph* g) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  const float lh = ImGui::GetTextLineHeight();
  const ModelOutline& outline = state.outline;  // of this text: update_state ran this frame

  // Operands: A is the selection, B and C the Shift+clicked nodes; each must be named in the text.
  std::vector<std::string> operands;
  const std::string a = g ? selected_tensor(state, *g) : std::string();
  if (!a.empty()) operands.push_back(a);
  for (const std::string& pick : state.palette_picks)
    if (pick != a && is_named(outline, pick)) operands.push_back(pick);
  bool all_named = true;
  for (const std::string& o : operands) all_named = all_named && is_named(outline, o);

  // fit_view leaves this width; at least the header's (title and its button), whatever the type.
  const float header_w =
      ImGui::CalcTextSize("Palette").x * 1.1f + ImGui::CalcTextSize("hide").x + lh * 2.2f;
  const float width = std::max(header_w, std::min(lh * (kPaletteEm - 0.5f), rect.w * 0.42f));
  ImGui::SetCursorScreenPos(ImVec2(rect.x + lh * 0.5f, top));
  const ImU32 bg = (p.canvas_bg & ~IM_COL32_A_MASK) | (235u << IM_COL32_A_SHIFT);
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImGui::ColorConvertU32ToFloat4(bg));
  ImGui::PushStyleColor(ImGuiCol_Border, ImGui::ColorConvertU32ToFloat4(p.node_border));
  ImGui::PushStyleVar(ImGuiStyleVar_ChildRounding, 6.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(lh * 0.5f, lh * 0.4f));
  ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(lh * 0.3f, lh * 0.3f));
  // ImGui 1.86 children cannot fit their height to the content: use last frame's content height,
  // kept in the panel window's ImGui storage (a measurement of the drawing, not app state).
  float& content_h =
      *ImGui::GetStateStorage()->GetFloatRef(ImGui::GetID("##palette height"), lh * 20.0f);
  const float max_h = rect.y + rect.h - top - lh * 3.0f;
  ImGui::BeginChild("##palette", ImVec2(width, std::max(lh * 1.5f, std::min(content_h, max_h))),
                    true);
  // Every way out of the palette: remember its content height for the next frame, close the
  // child, undo the styles pushed above.
  const auto end_palette = [&] {
    content_h = ImGui::GetCursorPosY() + ImGui::GetStyle().WindowPadding.y -
                ImGui::GetStyle().ItemSpacing.y;
    ImGui::EndChild();
    ImGui::PopStyleVar(3);
    ImGui::PopStyleColor(2);
  };
  // Folded now (closed and not opened, or being closed): nothing more to draw.
  if (draw_palette_header(ctx, width, lh)) {
    end_palette();
    return;
  }

  if (!outline.expressions) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - lh);
    disabled_wrapped(
        "This model is an nn.Sequential list; the palette edits models written "
        "as expressions (x: [..], y = relu(x)). Edit the text on the left.");
    ImGui::PopTextWrapPos();
    end_palette();
    return;
  }

  draw_palette_operands(ctx, width, lh, operands, all_named, a);

  draw_palette_ops(ctx, width, lh, operands, all_named);

  draw_palette_new_tensor(ctx, width, lh);

  // Delete the selected tensor's line (refused, with the reason, when something uses it).
  if (!a.empty() && is_named(outline, a)) {
    const std::string label = "delete " + a;
    if (ImGui::Button(label.c_str())) ctx.push(command_from("palette delete " + a));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Removes the line that defines %s, if no other line uses it.", a.c_str());
  }

  if (!state.palette_note.empty()) {
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + width - lh);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(state.palette_note_ok ? p.ok : p.error), "%s",
                       state.palette_note.c_str());
    ImGui::PopTextWrapPos();
  }
  end_palette();
}

// Badges A, B, C on the operand nodes, so the canvas shows what the palette will read.
void draw_operand_badges(ImDrawList* dl, const AppState& state, const GraphScene& scene,
                         const graph::Graph& g, const CanvasTransform& xf, const Palette& p) {
  std::vector<std::string> operands;
  const std::string a = selected_tensor(state, g);
  if (!a.empty()) operands.push_back(a);
  for (const std::string& pick : state.palette_picks)
    if (pick != a) operands.push_back(pick);
  for (size_t i = 0; i < operands.size() && i < 3; ++i) {
    const int n = node_for_tensor(scene, g, operands[i]);
    if (n < 0) continue;
    const SceneNode& node = scene.nodes[size_t(n)];
    const ImVec2 tl = xf.to_screen(node.x, node.y),
                 br = xf.to_screen(node.x + node.w, node.y + node.h);
    if (i > 0)
      dl->AddRect(ImVec2(tl.x - 3, tl.y - 3), ImVec2(br.x + 3, br.y + 3), p.selection, 6.0f, 0,
                  2.0f);
    const float r = ImGui::GetTextLineHeight() * 0.55f;
    const ImVec2 c(tl.x, tl.y);
    dl->AddCircleFilled(c, r, p.selection);
    const ImVec2 ts = ImGui::CalcTextSize(kSlot[i]);
    dl->AddText(ImVec2(c.x - ts.x / 2, c.y - ts.y / 2), p.canvas_bg, kSlot[i]);
  }
}

// Pushes the commands of the canvas's input: a drag pans, a click selects (Shift+click picks a
// palette operand), the wheel zooms about the mouse, F fits.
void push_canvas_input(ViewContext& ctx, const Rect& rect, const GraphScene& scene, bool hovered,
                       int under_mouse) {
  const AppState& state = ctx.state;
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActive()) {
    for (int button = 0; button < 3; ++button) {
      if (ImGui::IsMouseDragging(button, 2.0f) && (io.MouseDelta.x != 0 || io.MouseDelta.y != 0)) {
        Command c;
        c.kind = CommandKind::Pan;
        c.a = io.MouseDelta.x;
        c.b = io.MouseDelta.y;
        ctx.push(c);
        break;
      }
    }
  }
  // A click is a press and release without a drag.
  if (hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f).x == 0.0f &&
      ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 0.0f).y == 0.0f) {
    Command c;
    if (under_mouse >= 0 && io.KeyShift) {
      // Shift+click picks the palette's next operand (B, then C) and keeps the selection (A).
      c = command_from("palette pick " +
                       node_tensor(scene.nodes[size_t(under_mouse)], *state.graph()));
    } else if (under_mouse < 0) {
      c.kind = CommandKind::ClearSelection;
    } else {
      const SceneNode& n = scene.nodes[size_t(under_mouse)];
      c.kind = n.kind == SceneNode::Kind::Op ? CommandKind::SelectOp : CommandKind::SelectTensor;
      c.text = n.name;
    }
    ctx.push(c);
  }
  if (hovered && io.MouseWheel != 0.0f) {
    Command c;
    c.kind = CommandKind::Zoom;
    c.a = std::pow(1.15, io.MouseWheel);
    c.c = io.MousePos.x - rect.x;
    c.d = io.MousePos.y - rect.y;
    c.anchored = true;
    ctx.push(c);
  }
  // ImGui 1.86 indexes keys by the backend's codes; GLFW's letter keys are their ASCII capitals.
  if (!io.WantTextInput && ImGui::IsKeyPressed('F', false)) {
    Command c;
    c.kind = CommandKind::Fit;
    ctx.push(c);
  }
}

// The canvas's style: the palette, the fonts, and the hovered and selected nodes.
CanvasStyle canvas_style(ViewContext& ctx, const GraphScene& scene, int under_mouse) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  CanvasStyle style;
  style.palette = &p;
  style.fonts = &ctx.fonts;
  style.hovered = under_mouse;
  if (state.selection.kind == Selection::Kind::Op) {
    style.selected = scene.find(state.selection.name, SceneNode::Kind::Op);
  } else if (state.selection.kind == Selection::Kind::Tensor) {
    style.selected = scene.find(state.selection.name, SceneNode::Kind::Source);
    if (style.selected < 0)
      style.selected = scene.find(state.selection.name, SceneNode::Kind::Output);
  }
  return style;
}

// Draws the title band: the title, the graph's totals, and the stale-graph banner on an error.
void draw_title_overlay(ViewContext& ctx, ImDrawList* dl, const Rect& rect, float lh,
                        const GraphScene& scene, const graph::Graph* g, ImU32 band) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  const float pad = lh * 0.8f;
  const graph::OpCost total = g->total_cost();
  dl->AddRectFilled(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + pad * 1.2f + lh),
                    band);
  ImGui::PushFont(ctx.fonts.ui_bold);
  dl->AddText(ImVec2(rect.x + pad, rect.y + pad * 0.6f), p.text, "Graph");
  const float title_w = ImGui::CalcTextSize("Graph").x;
  ImGui::PopFont();
  const std::string summary = std::to_string(g->ops().size()) + " ops \xC2\xB7 " +
                              format_flops(total.flops) + " \xC2\xB7 " +
                              format_bytes(total.bytes()) + " moved at minimum";
  // A very long graph (thousands of ops sharing one input) is laid out cheaply; say so.
  const std::string title_line =
      summary +
      (scene.simplified ? " \xC2\xB7 large graph: long edges straight, layers not reordered" : "");
  dl->AddText(ImVec2(rect.x + pad + title_w + lh * 0.6f, rect.y + pad * 0.6f), p.subtext,
              title_line.c_str());
  if (state.model.error) {
    const char* msg = "Showing the last graph that parsed: the text has an error.";
    const ImVec2 s = ImGui::CalcTextSize(msg);
    const ImVec2 a(rect.x + (rect.w - s.x) / 2 - lh * 0.6f, rect.y + pad * 0.6f + lh * 1.5f);
    dl->AddRectFilled(a, ImVec2(a.x + s.x + lh * 1.2f, a.y + s.y + lh * 0.6f), p.stale_bg, 4.0f);
    dl->AddRect(a, ImVec2(a.x + s.x + lh * 1.2f, a.y + s.y + lh * 0.6f), p.error, 4.0f);
    dl->AddText(ImVec2(a.x + lh * 0.6f, a.y + lh * 0.3f), p.text, msg);
  }
}

// Draws the colour key and the hint line along the bottom edge, over a band sized to fit them.
void draw_legend_and_hint(ViewContext& ctx, ImDrawList* dl, const Rect& rect, float lh,
                          const GraphScene& scene, ImU32 band) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  const float pad = lh * 0.8f;
  dl->ChannelsSplit(2);  // 1: legend and hint text; 0: their band, sized once they are placed
  dl->ChannelsSetCurrent(1);
  const ImVec2 legend = draw_legend(dl, rect, scene, p);
  char hint[96];
  std::snprintf(hint, sizeof hint, "wheel: zoom \xC2\xB7 drag: pan \xC2\xB7 F: fit \xC2\xB7 %.0f%%",
                state.view.zoom * 100.0f);
  // On a narrow canvas the keys go (their tooltips stay) and the zoom alone is said.
  if (ImGui::CalcTextSize(hint).x > rect.w * 0.6f)
    std::snprintf(hint, sizeof hint, "F: fit \xC2\xB7 %.0f%%", state.view.zoom * 100.0f);
  const ImVec2 hs = ImGui::CalcTextSize(hint);
  const float hint_x = rect.x + rect.w - hs.x - pad;
  const bool no_legend = legend.y >= rect.y + rect.h - lh * 0.5f;
  const bool single_row = legend.y >= rect.y + rect.h - lh * 1.7f;
  const float hint_y = no_legend                          ? rect.y + rect.h - lh * 1.6f
                       : single_row && hint_x >= legend.x ? legend.y
                                                          : legend.y - lh * 1.3f;
  dl->AddText(ImVec2(hint_x, hint_y), p.subtext, hint);
  dl->ChannelsSetCurrent(0);
  dl->AddRectFilled(ImVec2(rect.x, std::min(hint_y, legend.y) - lh * 0.4f),
                    ImVec2(rect.x + rect.w, rect.y + rect.h), band);
  dl->ChannelsMerge();
}

}  // namespace

void draw_graph_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  const Palette& p = ctx.palette;
  if (!begin_panel("Graph", rect, false)) {
    end_panel();
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + rect.h), p.canvas_bg);
  const float lh = ImGui::GetTextLineHeight();
  const float pad = lh * 0.8f;

  if (!state.scene) {
    // Empty state first: nothing parsed yet, or the first parse failed.
    if (state.model.error) {
      centred_text(rect, "No graph: the model has an error.", "See the message under the editor.",
                   p.error, p.subtext);
    } else {
      centred_text(rect, "No graph yet.",
                   "Type a model in the left panel, or build one with the palette.", p.text,
                   p.subtext);
    }
    draw_palette(ctx, rect, rect.y + lh * 0.8f, nullptr);
    end_panel();
    return;
  }
  const GraphScene& scene = *state.scene;
  draw_grid(dl, rect, state.view, p);

  // Input: one invisible button over the whole canvas takes clicks, drags and the wheel.
  ImGui::SetCursorScreenPos(ImVec2(rect.x, rect.y));
  ImGui::InvisibleButton("##canvas", ImVec2(std::max(rect.w, 1.0f), std::max(rect.h, 1.0f)),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  CanvasTransform xf;
  xf.origin = ImVec2(rect.x + state.view.pan_x, rect.y + state.view.pan_y);
  xf.zoom = state.view.zoom;
  const ImVec2 world = xf.to_world(io.MousePos);
  const int under_mouse = hovered ? hit_test(scene, world.x, world.y) : -1;
  push_canvas_input(ctx, rect, scene, hovered, under_mouse);

  const CanvasStyle style = canvas_style(ctx, scene, under_mouse);
  dl->PushClipRect(ImVec2(rect.x, rect.y), ImVec2(rect.x + rect.w, rect.y + rect.h), true);
  draw_fused_groups(dl, state, scene, xf, p, true);
  draw_graph_scene(dl, scene, xf, style);
  draw_fused_groups(dl, state, scene, xf, p, false);
  draw_operand_badges(dl, state, scene, *state.graph(), xf, p);

  // Overlays: title and totals (top), stale-graph banner, legend and hints (bottom).
  const graph::Graph* g = state.graph();
  // Translucent bands behind the overlays keep them readable when the graph is panned under them.
  const ImU32 band = (p.canvas_bg & ~IM_COL32_A_MASK) | (215u << IM_COL32_A_SHIFT);
  draw_title_overlay(ctx, dl, rect, lh, scene, g, band);
  if (state.presentation) {
    // Presentation: the legend is a column under the title on the left (fit_view keeps the graph
    // clear of it), and no hint line — the corner indicator says the keys. The whole height is
    // then the graph's, and nothing covers the output node.
    draw_legend_column(dl, rect, rect.y + pad * 1.2f + lh * (state.model.error ? 3.4f : 1.4f),
                       scene, p);
    dl->PopClipRect();
    end_panel();
    return;
  }
  draw_legend_and_hint(ctx, dl, rect, lh, scene, band);
  dl->PopClipRect();

  if (under_mouse >= 0) {
    const SceneNode& n = scene.nodes[size_t(under_mouse)];
    ImGui::SetTooltip("%s (%s)\nclick to inspect \xC2\xB7 Shift+click: palette operand B/C",
                      n.title.c_str(), n.kind_label.c_str());
  }
  // Below the title band, and below the stale-graph banner when it shows.
  draw_palette(ctx, rect, rect.y + pad * 1.2f + lh * (state.model.error ? 3.4f : 1.4f), g);
  end_panel();
}

}  // namespace tilescope::gui

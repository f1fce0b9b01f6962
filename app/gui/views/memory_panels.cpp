// The Memory view's explanations drawn with ImGui: clickable numbers and the analytic formula
// popup, the working-set meter, and the set × way grids of small caches.
#include "app/gui/views/memory_views.h"

#include "app/core/format.h"
#include "app/core/memory_model.h"
#include "app/gui/widgets/bars.h"
#include "app/gui/widgets/text_wrap.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

ImVec4 colour4(ImU32 c) {
  return ImGui::ColorConvertU32ToFloat4(c);
}

void bold(ViewContext& ctx, const std::string& text) {
  ImGui::PushFont(ctx.fonts.ui_bold);
  ImGui::TextUnformatted(text.c_str());
  ImGui::PopFont();
}

std::string format_value(double v) {
  if (std::abs(v) < 9e15 && v == std::floor(v)) return format_thousands(int64_t(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string format_difference(double simulated, double analytic) {
  const double d = relative_difference(simulated, analytic);
  if (std::isinf(d)) return "simulated 0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", d * 100.0);
  return buf;
}

// What a symbol of the analytic model stands for, in a learner's words.
std::string symbol_meaning(const std::string& sym, const std::string& level) {
  const auto inside = [&](size_t open) {
    const size_t close = sym.rfind(')');
    return open == std::string::npos || close == std::string::npos || close <= open
               ? std::string()
               : sym.substr(open + 1, close - open - 1);
  };
  if (sym.rfind("D_", 0) == 0) {
    const size_t open = sym.find('(');
    const std::string tensor = sym.substr(2, open - 2), loops = inside(open);
    return "distinct " + level + " lines of " + tensor + " touched while " +
           (loops == "stmt" ? std::string("one statement runs")
                            : "loops " + loops + " run once (outer loops fixed)");
  }
  if (sym.rfind("n_", 0) == 0) return "iterations of loop " + sym.substr(2);
  if (sym.rfind("share_", 0) == 0)
    return "share of the tensor's lines in cache sets that overflow at loop " +
           inside(sym.find('('));
  if (sym.rfind("misses_", 0) == 0) return "lines of " + sym.substr(7) + " missed";
  if (sym == "line") return "bytes per cache line";
  if (sym.rfind("misses(", 0) == 0) return "lines " + inside(sym.find('(')) + " missed";
  if (sym.rfind("writebacks(", 0) == 0) return "dirty lines written back";
  return {};
}

// How the model judged a tensor's reuse at a level: which loop its lines survive.
std::string reuse_sentence(const predict::TensorTraffic& t, const std::string& level,
                           const schedule::Kernel* k) {
  if (t.reuse_depth == 0)
    return "Everything the loop nest touches fits in " + level + ": only first touches of " +
           t.name + " miss.";
  if (!k || size_t(t.reuse_depth) > k->loops.size()) return {};
  const size_t p = size_t(t.reuse_depth);
  const std::string inner = p == k->loops.size() ? "one iteration of the innermost loop"
                                                 : "one run of loops " + k->loops[p].name + "..";
  return "Reuse: what " + inner + " touches fits in " + level + ", so " + t.name +
         "'s lines are reused from one iteration of loop " + k->loops[p - 1].name +
         " to the next; further out the terms above count how often they are fetched again.";
}

}  // namespace

ImU32 tensor_colour(int graph_id) {
  // Okabe-Ito (distinguishable under common colour-vision deficiencies), black left out.
  static constexpr ImU32 kColours[] = {
      IM_COL32(0xE6, 0x9F, 0x00, 255), IM_COL32(0x56, 0xB4, 0xE9, 255),
      IM_COL32(0x00, 0x9E, 0x73, 255), IM_COL32(0xF0, 0xE4, 0x42, 255),
      IM_COL32(0x00, 0x72, 0xB2, 255), IM_COL32(0xD5, 0x5E, 0x00, 255),
      IM_COL32(0xCC, 0x79, 0xA7, 255)};
  if (graph_id < 0) return IM_COL32(0x99, 0x99, 0x99, 255);
  return kColours[size_t(graph_id) % (sizeof kColours / sizeof kColours[0])];
}

// [SECTION] Clickable numbers and the formula popup

void formula_link(ViewContext& ctx, const std::string& text, const std::string& target) {
  const ImVec2 pos = ImGui::GetCursorScreenPos();
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  ImGui::PushID(target.c_str());
  const bool clicked = ImGui::InvisibleButton("##formula", size);
  ImGui::PopID();
  const bool hovered = ImGui::IsItemHovered();
  const bool open = ctx.state.workbench.memory_formula == target;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (open) dl->AddRectFilled(pos, ImVec2(pos.x + size.x, pos.y + size.y), ctx.palette.bar_bg);
  dl->AddText(pos, ctx.palette.selection, text.c_str());
  // A dotted underline says "clickable"; solid while hovered.
  const float y = pos.y + size.y;
  for (float x = pos.x; x < pos.x + size.x; x += hovered ? size.x : 3.0f)
    dl->AddLine(ImVec2(x, y),
                ImVec2(hovered ? pos.x + size.x : std::min(x + 1.5f, pos.x + size.x), y),
                ctx.palette.selection, 1.0f);
  if (hovered) {
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    ImGui::SetTooltip("Why this number? Click for the analytic model's formula.");
  }
  if (clicked) ctx.push(command_from("memory formula " + (open ? std::string("off") : target)));
}

void draw_formula_popup(ViewContext& ctx, const Rect& rect) {
  const Workbench& wb = ctx.state.workbench;
  if (wb.memory_formula.empty()) return;
  const MemoryResult* r = wb.memory_result();
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  ImGui::SetNextWindowPos(ImVec2(rect.x + rect.w * 0.5f, rect.y + em * 3), ImGuiCond_Appearing,
                          ImVec2(0.5f, 0.0f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(em * 24, 0), ImVec2(em * 42, rect.h));
  bool open = true;
  const ImGuiWindowFlags flags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                                 ImGuiWindowFlags_NoSavedSettings;
  if (ImGui::Begin("Why this number?###memory-formula", &open, flags)) {
    ImGui::PushTextWrapPos(em * 40);
    if (!r) {
      ImGui::TextDisabled("Waiting for the simulation of this schedule…");
    } else {
      FormulaView v;
      std::string error;
      try {
        v = memory_formula(*r, wb.memory_formula);
      } catch (const std::invalid_argument& e) {
        error = e.what();
      }
      if (!error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, colour4(p.error));
        text_wrapped("%s", error.c_str());
        ImGui::PopStyleColor();
      } else {
        bold(ctx, v.title + " (" + r->kernel + " on " + r->machine + ")");
        if (ImGui::BeginTable("formula-values", 4,
                              ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
          ImGui::TableSetupColumn("");
          ImGui::TableSetupColumn("simulated");
          ImGui::TableSetupColumn("analytic model");
          ImGui::TableSetupColumn("difference");
          ImGui::TableHeadersRow();
          for (const FormulaRow& row : v.rows) {
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.what.c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(format_value(row.simulated).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(row.analytic ? format_value(row.analytic->value).c_str() : "—");
            ImGui::TableNextColumn();
            if (row.analytic)
              ImGui::TextUnformatted(format_difference(row.simulated, row.analytic->value).c_str());
          }
          ImGui::EndTable();
        }
        const std::string level = wb.memory_formula.substr(0, wb.memory_formula.find(' '));
        for (const FormulaRow& row : v.rows) {
          if (!row.analytic) {
            if (!row.missing.empty()) ImGui::TextDisabled("%s", row.missing.c_str());
            continue;
          }
          ImGui::Spacing();
          ImGui::PushFont(ctx.fonts.mono);
          text_wrapped("%s", row.analytic->to_string().c_str());
          ImGui::PopFont();
          if (!row.analytic->symbols.empty() &&
              ImGui::BeginTable(("symbols" + row.what).c_str(), 3,
                                ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
            ImGui::TableSetupColumn("symbol", ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed);
            ImGui::TableSetupColumn("meaning", ImGuiTableColumnFlags_WidthStretch);
            ImGui::TableHeadersRow();
            for (const auto& [sym, value] : row.analytic->symbols) {
              ImGui::TableNextRow();
              ImGui::TableNextColumn();
              ImGui::PushFont(ctx.fonts.mono);
              ImGui::TextUnformatted(sym.c_str());
              ImGui::PopFont();
              ImGui::TableNextColumn();
              ImGui::TextUnformatted(format_value(value).c_str());
              ImGui::TableNextColumn();
              text_wrapped("%s", symbol_meaning(sym, level).c_str());
            }
            ImGui::EndTable();
          }
        }
        // The tensor's reuse decision, when the popup is about one tensor at a cache level.
        const size_t space = wb.memory_formula.find(' ');
        if (r->analytic && space != std::string::npos) {
          const std::string tensor = wb.memory_formula.substr(space + 1);
          for (const predict::LevelTraffic& lt : r->analytic->levels) {
            if (lt.name != level) continue;
            for (const predict::TensorTraffic& t : lt.tensors)
              if (t.name == tensor)
                text_wrapped("%s", reuse_sentence(t, level, wb.kernel()).c_str());
          }
        }
        if (!v.not_covered.empty()) {
          ImGui::PushStyleColor(ImGuiCol_Text, colour4(p.error));
          text_wrapped("The analytic model does not cover this kernel: %s",
                             v.not_covered.c_str());
          ImGui::PopStyleColor();
        }
        if (!v.notes.empty()) {
          ImGui::Spacing();
          ImGui::TextDisabled("Where the model approximates this kernel:");
          for (const std::string& n : v.notes) ImGui::BulletText("%s", n.c_str());
        }
        ImGui::Spacing();
        if (v.not_covered.empty())
          disabled_wrapped(
              "The model assumes LRU and judges each level on its own; the simulation replays "
              "every access, so the two can differ (inclusion, write-backs from above, "
              "conflicts).");
      }
    }
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Close")) open = false;
  }
  ImGui::End();
  if (!open) ctx.push(command_from("memory formula off"));
}

// [SECTION] Working-set meter

void draw_working_set_meter(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  const schedule::Kernel* k = wb.kernel();
  if (!k || !wb.machine) {
    ImGui::TextDisabled("No kernel or machine yet.");
    return;
  }
  const std::vector<WorkingSet> sets = working_sets(*k);
  const size_t td = tile_depth(*k);
  const WorkingSet& ws = sets[td];
  const memory::HierarchyConfig h = wb.machine->hierarchy();
  std::string loops;
  for (size_t l = td; l < k->loops.size(); ++l)
    loops += (loops.empty() ? "" : ", ") + k->loops[l].name;
  for (const memory::CacheConfig& c : h.levels) {
    const double f = c.size_bytes ? double(ws.bytes) / double(c.size_bytes) : 0.0;
    const bool fits = ws.bytes <= int64_t(c.size_bytes);
    char ratio[48];
    if (fits)
      std::snprintf(ratio, sizeof ratio, "fits (%.0f%% full)", f * 100.0);
    else
      std::snprintf(ratio, sizeof ratio, "%.1f× too big", f);
    const std::string label =
        c.name + " (" + format_bytes(int64_t(c.size_bytes)) + "): " + std::string(ratio);
    share_bar_item(std::min(f, 1.0), p.bar_bg, fits ? p.ok : p.error, em * 4, label.c_str());
  }
  std::string tiles;
  for (const TensorTile& t : ws.tiles) {
    std::string dims;
    for (int64_t e : t.extents) dims += (dims.empty() ? "" : "×") + std::to_string(e);
    tiles += (tiles.empty() ? "" : ", ") + t.name + " " + dims + " (" + format_bytes(t.bytes) + ")";
  }
  ImGui::PushTextWrapPos(0.0f);
  if (td == 0)
    disabled_wrapped("Not tiled: the working set is all %s the loop nest touches: %s.",
                        format_bytes(ws.bytes).c_str(), tiles.c_str());
  else
    disabled_wrapped(
        "One tile = one run of loops %s (outer loops fixed). It touches %s: %s. Element bytes "
        "of the tiles of every tensor read or written; the accumulator is not counted.",
        loops.c_str(), format_bytes(ws.bytes).c_str(), tiles.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::TreeNode("Working set of every loop depth")) {
    if (ImGui::BeginTable("depths", 2 + int(h.levels.size()),
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupColumn("one run of");
      ImGui::TableSetupColumn("bytes");
      for (const memory::CacheConfig& c : h.levels) ImGui::TableSetupColumn(c.name.c_str());
      ImGui::TableHeadersRow();
      for (const WorkingSet& s : sets) {
        ImGui::TableNextRow();
        if (s.depth == td) ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, p.bar_bg);
        ImGui::TableNextColumn();
        ImGui::PushFont(ctx.fonts.mono);
        const std::string what =
            (s.loop.empty() ? "(one iteration)" : s.loop + "..") + (s.depth == td ? "  tile" : "");
        ImGui::TextUnformatted(what.c_str());
        ImGui::PopFont();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_bytes(s.bytes).c_str());
        for (const memory::CacheConfig& c : h.levels) {
          ImGui::TableNextColumn();
          const bool fits = s.bytes <= int64_t(c.size_bytes);
          ImGui::PushStyleColor(ImGuiCol_Text, colour4(fits ? p.ok : p.error));
          ImGui::TextUnformatted(fits ? "fits" : "over");
          ImGui::PopStyleColor();
        }
      }
      ImGui::EndTable();
    }
    ImGui::PushTextWrapPos(0.0f);
    disabled_wrapped("Capacity only: associativity can still evict a tile that fits.");
    ImGui::PopTextWrapPos();
    ImGui::TreePop();
  }
}

// [SECTION] Set × way grids

ImVec2 draw_cache_grids(ViewContext& ctx, const MemoryResult& r, ImVec2 origin, float width,
                        float height) {
  return draw_cache_grids(ctx, r.grids, r.tensor_names, origin, width, height,
                          "The caches as the simulation left them, before the final write-back. "
                          "Hover a cell for its line. Age inside a set is not shown here: the end "
                          "state keeps only each set's most recently used way (the Tiles view "
                          "shows every line's age at each step).");
}

ImVec2 draw_cache_grids(ViewContext& ctx, const std::vector<CacheGrid>& grids,
                        const std::vector<std::string>& tensor_names, ImVec2 origin, float width,
                        float height, const char* note) {
  const Palette& p = ctx.palette;
  const float em = ImGui::GetFontSize();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  if (grids.empty()) return ImVec2(0, 0);
  float x = origin.x, row_y = origin.y, row_h = 0, used_w = 0;
  std::vector<int> owners;  // tensors with a line somewhere, for the legend
  // The oldest line drawn: ages shade from full colour (just touched) to pale (the oldest).
  uint64_t oldest = 1;
  for (const CacheGrid& g : grids)
    for (const CacheCell& c : g.cells)
      if (c.valid && c.age != CacheCell::kNoAge) oldest = std::max(oldest, c.age);
  for (const CacheGrid& g : grids) {
    std::string title =
        g.name + ": " + std::to_string(g.sets) + " sets × " + std::to_string(g.ways) + " ways";
    if (ImGui::CalcTextSize(title.c_str()).x > width)  // a narrow column: the short form
      title = g.name + ": " + std::to_string(g.sets) + "×" + std::to_string(g.ways);
    const float cell_h =
        std::clamp((height - em * 1.3f) / float(std::max<uint64_t>(g.sets, 1)), 3.0f, em * 1.2f);
    const float label_w = ImGui::CalcTextSize("set 63").x + em * 0.4f;
    // Ways as wide as reads well, narrower when the column is narrow (the ways stay whole).
    const float cell_w =
        std::clamp((width - label_w) / float(std::max<uint64_t>(g.ways, 1)), em * 0.5f,
                   std::max(em * 1.4f, cell_h * 1.6f));
    const float grid_w =
        std::max(label_w + cell_w * float(g.ways), ImGui::CalcTextSize(title.c_str()).x);
    if (x > origin.x && x + grid_w > origin.x + width) {  // no room beside: start a new row
      x = origin.x;
      row_y += row_h + em;
      row_h = 0;
    }
    const float top = row_y + em * 1.3f;
    dl->AddText(ctx.fonts.ui_bold, ctx.fonts.px, ImVec2(x, row_y), p.text, title.c_str());
    const bool label_every = cell_h >= em * 0.9f;
    for (uint64_t s = 0; s < g.sets; ++s) {
      const float y = top + float(s) * cell_h;
      if (label_every || s % 8 == 0) {
        const std::string sl = "set " + std::to_string(s);
        dl->AddText(ImVec2(x, y + (cell_h - em) * 0.5f), p.subtext, sl.c_str());
      }
      for (uint64_t w = 0; w < g.ways; ++w) {
        const CacheCell& c = g.at(s, w);
        const ImVec2 a(x + label_w + float(w) * cell_w + 1, y + 1);
        const ImVec2 b(a.x + cell_w - 2, a.y + cell_h - 2);
        const float corner = std::min(cell_w, cell_h) * 0.55f;
        if (c.valid) {
          ImU32 fill = tensor_colour(c.tensor);
          if (c.age != CacheCell::kNoAge) {
            // Log-scaled: a line untouched for 10× longer is one step paler.
            const double f = std::log1p(double(c.age)) / std::log1p(double(oldest));
            fill = (fill & 0x00FFFFFFu) | (ImU32(255 - 175 * std::clamp(f, 0.0, 1.0)) << 24);
          }
          dl->AddRectFilled(a, b, fill, 2.0f);
          if (std::find(owners.begin(), owners.end(), int(c.tensor)) == owners.end())
            owners.push_back(c.tensor);
          // Dirty: a dark corner triangle (written since it was filled, not yet in memory).
          if (c.dirty_sectors)
            dl->AddTriangleFilled(ImVec2(b.x - corner, a.y), ImVec2(b.x, a.y),
                                  ImVec2(b.x, a.y + corner), IM_COL32(0, 0, 0, 200));
          if (c.mru) dl->AddRect(a, b, p.text, 2.0f, 0, 2.0f * p.line_scale);
        } else {
          dl->AddRect(a, b, p.node_border, 2.0f);
        }
        if (ImGui::IsMouseHoveringRect(a, b) && ImGui::IsWindowHovered()) {
          if (c.valid) {
            char addr[96];
            std::snprintf(addr, sizeof addr, "line address 0x%" PRIx64 " (line %" PRIu64 ")",
                          c.line * g.line_bytes, c.line);
            const std::string owner = c.tensor < 0 ? "(unlabelled access)"
                                      : size_t(c.tensor) < tensor_names.size()
                                          ? tensor_names[size_t(c.tensor)]
                                          : "tensor " + std::to_string(c.tensor);
            const std::string age = c.age == CacheCell::kNoAge
                                        ? std::string()
                                        : "\nlast used by the core " +
                                              format_thousands(int64_t(c.age)) + " accesses ago";
            ImGui::SetTooltip("%s set %" PRIu64 ", way %" PRIu64 "\n%s\nbrought in by %s\n%s%s%s",
                              g.name.c_str(), s, w, addr, owner.c_str(),
                              c.dirty_sectors ? "dirty: written, not yet back in memory"
                                              : "clean: same as memory",
                              c.mru ? "\nthe set's most recently used way" : "", age.c_str());
          } else {
            ImGui::SetTooltip("%s set %" PRIu64 ", way %" PRIu64 "\nempty (invalid)",
                              g.name.c_str(), s, w);
          }
        }
      }
    }
    row_h = std::max(row_h, em * 1.3f + cell_h * float(g.sets));
    used_w = std::max(used_w, x + grid_w - origin.x);
    x += grid_w + em * 1.5f;
  }
  // Legend, wrapped to `width`: owners, then the marks.
  float ly = row_y + row_h + em * 0.6f, lx = origin.x;
  const auto place = [&](float w) {  // next item's x, wrapping to a new line when it won't fit
    if (lx > origin.x && lx + w > origin.x + width) {
      lx = origin.x;
      ly += em * 1.3f;
    }
    const float at = lx;
    lx += w + em;
    return at;
  };
  std::sort(owners.begin(), owners.end());
  for (int t : owners) {
    const std::string name = t < 0                             ? "(unlabelled)"
                             : size_t(t) < tensor_names.size() ? tensor_names[size_t(t)]
                                                               : "tensor " + std::to_string(t);
    const float at = place(em + ImGui::CalcTextSize(name.c_str()).x);
    dl->AddRectFilled(ImVec2(at, ly + em * 0.2f), ImVec2(at + em * 0.8f, ly + em), tensor_colour(t),
                      2.0f);
    dl->AddText(ImVec2(at + em, ly), p.text, name.c_str());
  }
  lx = origin.x;
  ly += em * 1.3f;
  float at = place(em * 1.5f + ImGui::CalcTextSize("dirty").x);
  dl->AddRectFilled(ImVec2(at, ly + em * 0.1f), ImVec2(at + em * 1.2f, ly + em * 0.9f), p.bar_bg,
                    2.0f);
  dl->AddTriangleFilled(ImVec2(at + em * 0.75f, ly + em * 0.1f),
                        ImVec2(at + em * 1.2f, ly + em * 0.1f),
                        ImVec2(at + em * 1.2f, ly + em * 0.55f), IM_COL32(0, 0, 0, 200));
  dl->AddText(ImVec2(at + em * 1.5f, ly), p.subtext, "dirty");
  const char* mru = "most recently used in its set";
  at = place(em * 1.5f + ImGui::CalcTextSize(mru).x);
  dl->AddRect(ImVec2(at, ly + em * 0.1f), ImVec2(at + em * 1.2f, ly + em * 0.9f), p.text, 2.0f, 0,
              2.0f * p.line_scale);
  dl->AddText(ImVec2(at + em * 1.5f, ly), p.subtext, mru);
  at = place(em * 1.5f + ImGui::CalcTextSize("empty").x);
  dl->AddRect(ImVec2(at, ly + em * 0.1f), ImVec2(at + em * 1.2f, ly + em * 0.9f), p.node_border,
              2.0f);
  dl->AddText(ImVec2(at + em * 1.5f, ly), p.subtext, "empty");
  ly += em * 1.5f;
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(origin.x, ly), p.subtext, note,
              nullptr, width);
  ly += ImGui::CalcTextSize(note, nullptr, false, width).y;
  return ImVec2(std::max(used_w, width), ly - origin.y);
}

}  // namespace tilescope::gui

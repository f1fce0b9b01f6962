// The status bar: the File menu (Open / Save model and session files, recent files), which model
// is open, whether it parses, the last command's message, and the theme and UI scale menu.
#include "app/gui/views/views.h"

#include "app/core/exports.h"

#include <imgui.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// A menu entry that pushes `command` when clicked, with a tooltip saying what it does and why.
void menu_item(ViewContext& ctx, const char* label, const std::string& command, const char* why,
               const char* widget, bool enabled = true) {
  if (!enabled) ImGui::BeginDisabled();
  if (ImGui::Selectable(label)) ctx.push(command_from(command));
  if (!enabled) ImGui::EndDisabled();
  note_widget(widget);
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", why);
}

// File > Export: the tables of the view on screen, and the view as a picture; a table that has
// nothing yet is greyed with the reason.
void draw_export_items(ViewContext& ctx) {
  const AppState& state = ctx.state;
  const ViewTab tab = state.workbench.tab;
  const auto shows = [&](const std::string& name) {
    if (name == "view" || name == "baseline") return true;
    if (name == "memory-levels" || name == "memory-tensors" || name == "measured")
      return tab == ViewTab::Memory || tab == ViewTab::Roofline;
    if (name == "counters") return tab == ViewTab::Tiles;
    if (name == "autotune" || name == "timings") return tab == ViewTab::Timings;
    if (name == "grade") return tab == ViewTab::Lessons;
    return false;
  };
  // A submenu: the File menu keeps its height (and its entries their places) in every view.
  const bool open = ImGui::BeginMenu("Export");
  note_widget("file.export");
  if (!open) return;
  ImGui::TextDisabled("from the %s view", view_tab_title(tab));
  for (const ExportEntry& e : export_entries()) {
    if (!shows(e.name)) continue;
    std::string why;
    const bool ready = std::string(e.name) == "view" || std::string(e.name) == "grade" ||
                       export_ready(state, e.name, why);
    if (!ready && std::string(e.name) == "baseline" && !state.workbench.baseline) continue;
    menu_item(ctx, (std::string(e.what) + "…").c_str(), std::string("files export ") + e.name,
              ready ? "Choose where to write it (the same rows as the JSON the CLI prints)."
                    : why.c_str(),
              ("file.export." + std::string(e.name)).c_str(), ready);
  }
  ImGui::EndMenu();
}

void draw_file_menu(ViewContext& ctx) {
  const AppState& state = ctx.state;
  const bool has_path = !state.model.path.empty();
  menu_item(ctx, "Open model…", "files open-model",
            "Open a .model file into the editor (the graph and schedule follow it).",
            "file.open-model");
  if (has_path)
    menu_item(ctx, "Save model", "save-model",
              ("Write the editor's text back to " + state.model.path + ".").c_str(),
              "file.save-model");
  menu_item(ctx, "Save model as…", "files save-model",
            "Write the editor's text to a new .model file (the built-in example has none).",
            "file.save-model-as");
  if (state.replaced_model)
    menu_item(ctx, "Restore the previous model", "files restore-model",
              "Bring back the model text, file and schedule steps the last Open model replaced "
              "(the current one is kept the same way).",
              "file.restore-model");
  ImGui::Separator();
  menu_item(ctx, "Open session…", "files open-session",
            "Open a session file: a model, its steps, the machine, the view and the lesson "
            "position, as a teacher handed it out. Your theme and recent files stay.",
            "file.open-session");
  menu_item(ctx, "Save session as…", "files save-session",
            "Save this model, its steps, machine, view and lesson position to a file to hand "
            "out; Open session… on another computer brings it back.",
            "file.save-session");
  draw_export_items(ctx);
  ImGui::Separator();
  menu_item(ctx, "Open trace…", "files open-trace",
            "Open a PyTorch profiler trace (torch.profiler … export_chrome_trace) of this model: "
            "the Trace view shows what ran for each node.",
            "file.open-trace");
  if (state.autosave_paused && !state.session_path.empty())
    menu_item(ctx, "Keep this as my session", "save-session",
              "Started with --model: your saved session was left as it was. This makes the "
              "current work the session that is autosaved and restored next time.",
              "file.keep-session");
  if (!state.recent_files.empty()) {
    ImGui::Separator();
    ImGui::TextDisabled("Recent files");
    int i = 0;
    for (const std::string& path : state.recent_files) {
      const std::string name = std::filesystem::path(path).filename().string();
      const std::string label = name + "##recent" + std::to_string(i);
      menu_item(ctx, label.c_str(), "drop " + path,
                (path + "\n(a .json opens as a session, anything else as a model)").c_str(),
                ("file.recent." + std::to_string(i)).c_str());
      ++i;
    }
  }
}

void draw_view_menu(ViewContext& ctx) {
  const AppState& state = ctx.state;
  ImGui::TextDisabled("Theme");
  const struct {
    Theme theme;
    const char* why;
  } themes[] = {
      {Theme::Light, "Light background, 16 px type: for a desk."},
      {Theme::Dark, "Dark background: for a dim room or tired eyes."},
      {Theme::Projector,
       "Black on white, 22 px type, thick lines: for the back row of a lecture room."},
  };
  for (const auto& t : themes) {
    const std::string label =
        std::string(state.theme == t.theme ? "\xE2\x97\x8F " : "   ") + theme_name(t.theme);
    if (ImGui::Selectable(label.c_str()))
      ctx.push(command_from(std::string("theme ") + theme_name(t.theme)));
    note_widget(std::string("theme.") + theme_name(t.theme));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", t.why);
  }
  ImGui::Separator();
  ImGui::TextDisabled("UI scale (type re-rasterised at the size)");
  for (const float scale : {0.75f, 1.0f, 1.25f, 1.5f, 2.0f}) {
    char label[32];
    std::snprintf(label, sizeof label, "%s%.0f%%",
                  state.ui_scale == scale ? "\xE2\x97\x8F " : "   ", scale * 100);
    if (ImGui::Selectable(label)) {
      char cmd[32];
      std::snprintf(cmd, sizeof cmd, "ui-scale %g", scale);
      ctx.push(command_from(cmd));
    }
    char widget[32];
    std::snprintf(widget, sizeof widget, "scale.%.0f", scale * 100);
    note_widget(widget);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "All type and widgets at %.0f%% of the theme's size: larger for a "
          "projector or a high-resolution screen.",
          scale * 100);
  }
}

}  // namespace

void draw_status_bar_view(ViewContext& ctx, const Rect& rect) {
  const AppState& state = ctx.state;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(ImGui::GetFontSize() * 0.6f, (rect.h - ImGui::GetFontSize()) / 2));
  const bool open = begin_panel("Status bar", rect);
  ImGui::PopStyleVar();
  if (!open) {
    end_panel();
    return;
  }
  // Small buttons: the bar is one line of text high.
  ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(ImGui::GetFontSize() * 0.3f, 0));
  if (ImGui::SmallButton("File")) ImGui::OpenPopup("file-menu");
  note_widget("status.file");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("Open and save model files and sessions; recent files.");
  if (ImGui::BeginPopup("file-menu")) {
    draw_file_menu(ctx);
    ImGui::EndPopup();
  }
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.0f);
  const ModelDoc& doc = state.model;
  ImGui::TextUnformatted(doc.path.empty() ? "built-in example" : doc.path.c_str());
  ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
  if (doc.error) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    if (doc.error->line > 0) {
      ImGui::Text("parse error at line %d, col %d", doc.error->line, doc.error->col);
    } else {
      ImGui::TextUnformatted("parse error");
    }
    ImGui::PopStyleColor();
  } else if (const graph::Graph* g = state.graph()) {
    ImGui::Text("%zu ops, %zu tensors", g->ops().size(), g->tensors().size());
  } else {
    ImGui::TextDisabled("no model");
  }
  if (!state.status_message.empty()) {
    ImGui::SameLine(0, ImGui::GetFontSize() * 1.5f);
    if (state.status_is_error) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    }
    ImGui::TextUnformatted(state.status_message.c_str());
    if (state.status_is_error) ImGui::PopStyleColor();
  }
  if (state.presentation) {
    // Presentation: the right end says where the class is ("step 3 of 7") and how to move and
    // leave, in bold; the status bar is the one strip no view draws into, so it covers nothing.
    const std::string where = presentation_indicator(state);
    ImGui::PushFont(ctx.fonts.ui_bold);
    const float iw = ImGui::CalcTextSize(where.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetCursorPosX(), rect.w - iw - ImGui::GetFontSize() * 0.6f));
    ImGui::TextUnformatted(where.c_str());
    ImGui::PopFont();
    note_widget("presentation.indicator");
    ImGui::PopStyleVar();
    end_panel();
    return;
  }
  char right[96];
  // A UI scale the window cannot hold is said as held (type_scale_for), with the size it holds.
  const bool held = state.type_scale() < state.content_scale * state.ui_scale - 1e-3f;
  std::snprintf(right, sizeof right, held ? "theme: %s \xC2\xB7 %.0f%% (held at %.0f px: window)"
                                          : "theme: %s \xC2\xB7 %.0f%%",
                theme_name(state.theme), state.ui_scale * 100, state.font_px());
  const float w = ImGui::CalcTextSize(right).x + ImGui::GetStyle().FramePadding.x * 2;
  ImGui::SameLine(std::max(ImGui::GetCursorPosX(), rect.w - w - ImGui::GetFontSize() * 0.6f));
  if (ImGui::SmallButton(right)) ImGui::OpenPopup("view-menu");
  note_widget("status.theme");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Switch the theme (light, dark, projector) and the UI scale; both are "
        "remembered with the session.");
  if (ImGui::BeginPopup("view-menu")) {
    draw_view_menu(ctx);
    ImGui::EndPopup();
  }
  ImGui::PopStyleVar();
  end_panel();
}

}  // namespace tilescope::gui

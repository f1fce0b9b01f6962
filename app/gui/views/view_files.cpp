// The in-app file browser (ImGui 1.86 has no file dialog, and no Debian package offers one): the
// listed folder's entries, Up, a path field, and Open / Save; every choice is a `files` command.
#include "app/core/files.h"
#include "app/gui/views/views.h"
#include "app/gui/widgets/text_mask.h"
#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

const char* browser_title(FileBrowser::Mode mode) {
  switch (mode) {
    case FileBrowser::Mode::OpenModel:
      return "Open a model file";
    case FileBrowser::Mode::SaveModel:
      return "Save the model as";
    case FileBrowser::Mode::OpenSession:
      return "Open a session file";
    case FileBrowser::Mode::SaveSession:
      return "Save the session as (a file to hand out)";
    case FileBrowser::Mode::SaveGrade:
      return "Save your grade as (.csv, or .json)";
    case FileBrowser::Mode::OpenTrace:
      return "Open a PyTorch profiler trace (.json)";
    case FileBrowser::Mode::Export:
      return "Export as (.csv or .json for a table, .png for the view)";
    case FileBrowser::Mode::SaveMachine:
      return "Save the edited machine as (.machine), then use it";
    case FileBrowser::Mode::Closed:
      break;
  }
  return "";
}

void push_files(ViewContext& ctx, const std::string& args) {
  Command c;
  c.kind = CommandKind::Files;
  c.text = args;
  ctx.push(std::move(c));
}

}  // namespace

void draw_file_browser(ViewContext& ctx, const Rect& window) {
  const FileBrowser& b = ctx.state.files;
  if (b.mode == FileBrowser::Mode::Closed) return;
  // The listing is read again when the folder or the mode changes, or after a second (a file
  // saved from elsewhere shows up), not every frame.
  ViewCaches::FolderListing& listing = ctx.caches.folder;
  if (listing.dir != b.dir || listing.mode != b.mode || ctx.state.now - listing.listed_at > 1.0) {
    listing.entries = list_folder(b.dir, browser_extensions(b.mode), listing.error);
    listing.dir = b.dir;
    listing.mode = b.mode;
    listing.listed_at = ctx.state.now;
  }
  const std::vector<FolderEntry>& entries = listing.entries;
  const std::string& list_error = listing.error;
  const float em = ImGui::GetFontSize();
  const float w = std::min(window.w - em * 2, em * 40), h = std::min(window.h - em * 2, em * 30);
  ImGui::SetNextWindowPos(ImVec2(window.x + (window.w - w) / 2, window.y + (window.h - h) / 2));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::SetNextWindowFocus();
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
  bool open = true;
  if (ImGui::Begin(browser_title(b.mode), &open, flags)) {
    if (ImGui::Button("Up")) push_files(ctx, "cd ..");
    note_widget("files.up");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The folder above this one.");
    ImGui::SameLine();
    text_wrapped("%s", b.dir.c_str());
    const bool saving = browser_saves(b.mode);
    const float footer = ImGui::GetFrameHeightWithSpacing() * 2 + em * 0.5f;
    ImGui::BeginChild("entries", ImVec2(0, -footer), true);
    if (!list_error.empty()) text_wrapped("%s", list_error.c_str());
    for (const FolderEntry& e : entries) {
      const std::string label =
          (e.folder ? "\xE2\x96\xB8 " : "   ") + e.name + (e.folder ? "/" : "");
      const bool chosen = !e.folder && b.name == e.name;
      if (ImGui::Selectable(label.c_str(), chosen, ImGuiSelectableFlags_AllowDoubleClick)) {
        if (e.folder) {
          push_files(ctx, "cd " + e.name);
        } else {
          push_files(ctx, "name " + e.name);
          if (ImGui::IsMouseDoubleClicked(0)) push_files(ctx, "ok");
        }
      }
      note_widget("files.entry." + e.name);
    }
    if (entries.empty() && list_error.empty())
      ImGui::TextDisabled(saving ? "No files of this kind here yet: type a name below."
                                 : "No files of this kind in this folder.");
    ImGui::EndChild();
    std::string name = b.name;
    ImGui::SetNextItemWidth(-em * 10);
    const TextMaskPause typed;  // a field shows what is typed, unmasked
    const bool enter = ImGui::InputTextWithHint("##path", "a file name, or a path", &name,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    note_widget("files.path");
    if (ImGui::IsItemEdited()) push_files(ctx, "name " + name);
    ImGui::SameLine();
    const bool ok = ImGui::Button(saving ? "Save" : "Open");
    note_widget("files.ok");
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) push_files(ctx, "close");
    note_widget("files.cancel");
    if (enter || ok) push_files(ctx, "ok");
    ImGui::TextDisabled("%s", browser_target(b).c_str());
  }
  ImGui::End();
  if (!open) push_files(ctx, "close");
}

void draw_open_choice(ViewContext& ctx, const Rect& window) {
  if (!ctx.state.pending_open) return;
  const PendingOpen& p = *ctx.state.pending_open;
  const float em = ImGui::GetFontSize();
  const float w = std::min(window.w - em * 2, em * 34);
  ImGui::SetNextWindowPos(ImVec2(window.x + window.w / 2, window.y + window.h / 2),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(w, 0));
  ImGui::SetNextWindowFocus();
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_AlwaysAutoResize;
  bool open = true;
  if (ImGui::Begin("Open this model?", &open, flags)) {
    ImGui::PushTextWrapPos(w - em);
    text_wrapped("%s", p.path.c_str());
    const size_t n = p.trial.steps;
    if (n > 0) {
      const std::string steps = std::to_string(n) + (n == 1 ? " step" : " steps");
      text_wrapped("Your schedule has %s.", steps.c_str());
      if (!p.parse_error.empty())
        text_wrapped("The new model does not parse, so none can be replayed yet: %s",
                           p.parse_error.c_str());
      else if (p.trial.apply == n)
        text_wrapped("All %s apply to the new model.", steps.c_str());
      else
        text_wrapped("Replayed on the new model, %zu of them would apply; %s, and every "
                           "step after it would be dropped.",
                           p.trial.apply, p.trial.refused.c_str());
    }
    if (p.text_edited)
      text_wrapped("The editor holds your unsaved edits. They are kept: File menu, "
                         "Restore the previous model, brings them back.");
    ImGui::PopTextWrapPos();
    ImGui::Spacing();
    if (n > 0) {
      if (ImGui::Button("Replay the steps")) push_files(ctx, "open-choice replay");
      note_widget("open-choice.replay");
      ImGui::SameLine();
    }
    if (ImGui::Button(n > 0 ? "Open without steps" : "Open")) push_files(ctx, "open-choice drop");
    note_widget("open-choice.drop");
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) push_files(ctx, "open-choice cancel");
    note_widget("open-choice.cancel");
  }
  ImGui::End();
  if (!open) push_files(ctx, "open-choice cancel");
}

}  // namespace tilescope::gui

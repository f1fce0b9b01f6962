// The machine editor in the Memory view's side panel (core/machine_edit.h): a copy of the
// machine's file, field by field in its sections; each edit is parsed by the machine-file parser,
// whose message says what is wrong and where; "Save as… and use" writes the copy and makes it the
// machine. Presets are read-only: what is edited is always a copy.
#include "app/gui/views/memory_views.h"

#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <string>
#include <vector>

namespace tilescope::gui {

using namespace tilescope::core;

namespace {

// The keys whose values are words from a short list: a menu instead of typing.
const std::vector<const char*>* choices_for(const std::string& key) {
  static const std::vector<const char*> replacement = {"lru", "fifo", "random", "plru"};
  static const std::vector<const char*> write = {"back", "through"};
  static const std::vector<const char*> yes_no = {"yes", "no"};
  static const std::vector<const char*> inclusion = {"inclusive", "non-inclusive"};
  if (key == "replacement") return &replacement;
  if (key == "write") return &write;
  if (key == "write_allocate") return &yes_no;
  if (key == "inclusion") return &inclusion;
  return nullptr;
}

void push_edit(ViewContext& ctx, const MachineField& f, const std::string& value) {
  Command c;
  c.kind = CommandKind::MachineEdit;
  c.text = "set " + f.section + " " + f.key + " " + value;
  ctx.push(std::move(c));
}

}  // namespace

void draw_machine_editor(ViewContext& ctx) {
  const Workbench& wb = ctx.state.workbench;
  if (!wb.machine_draft) {
    if (ImGui::SmallButton("Edit a copy…")) ctx.push(command_from("machine-edit start"));
    note_widget("machine-edit.start");
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Change this machine's levels (size, line, ways, policies, bandwidth, latency) in a "
          "copy; the preset itself stays as it is. Save the copy to simulate on it.");
    return;
  }
  const MachineDraft& d = *wb.machine_draft;
  const float em = ImGui::GetFontSize();
  ImGui::PushFont(ctx.fonts.ui_bold);
  text_wrapped("Editing a copy of %s", d.based_on.c_str());
  ImGui::PopFont();
  if (d.machine) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.ok));
    text_wrapped("The parser accepts it: %zu cache levels and %s.", d.machine->levels.size(),
                 d.machine->memory.name.c_str());
  } else {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::ColorConvertU32ToFloat4(ctx.palette.error));
    text_wrapped("%s", d.error.c_str());
  }
  ImGui::PopStyleColor();
  note_widget("machine-edit.status");
  // The buttons above the fields: a long machine file scrolls, and Save stays in reach.
  if (!d.machine) ImGui::BeginDisabled();
  if (ImGui::Button("Save as… and use")) ctx.push(command_from("files save-machine"));
  if (!d.machine) ImGui::EndDisabled();
  note_widget("machine-edit.save");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip(d.machine ? "Write the copy as a .machine file and simulate on it."
                                : "The copy does not parse: fix the value the message names.");
  ImGui::SameLine();
  if (ImGui::Button("Cancel")) ctx.push(command_from("machine-edit cancel"));
  note_widget("machine-edit.cancel");
  std::string section;
  for (const MachineField& f : d.fields) {
    // The header's long descriptions and the per-SM limits are edited in the file; the levels
    // and main memory are what this editor is for.
    if (f.section == "machine" && f.key != "name") continue;
    if (f.section != section) {
      section = f.section;
      ImGui::Spacing();
      ImGui::TextDisabled("%s", section == "machine" ? "machine" : ("[" + section + "]").c_str());
    }
    ImGui::PushID(f.line);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(f.key.c_str());
    ImGui::SameLine(em * 7.5f);
    ImGui::SetNextItemWidth(std::max(em * 6, ImGui::GetContentRegionAvail().x));
    const std::string widget = "machine-edit.field." + f.section + "." + f.key;
    if (const std::vector<const char*>* options = choices_for(f.key)) {
      if (ImGui::BeginCombo("##v", f.value.c_str())) {
        for (const char* o : *options) {
          if (ImGui::Selectable(o, f.value == o)) push_edit(ctx, f, o);
          note_widget(widget + "." + o);
        }
        ImGui::EndCombo();
      }
    } else {
      std::string value = f.value;
      // Sent when the field is left or Enter is pressed: a half-typed "2 Ki" is not an error.
      ImGui::InputText("##v", &value, ImGuiInputTextFlags_EnterReturnsTrue);
      if (ImGui::IsItemDeactivatedAfterEdit() && value != f.value) push_edit(ctx, f, value);
    }
    note_widget(widget);
    if (!f.comment.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.comment.c_str());
    ImGui::PopID();
  }
}

}  // namespace tilescope::gui

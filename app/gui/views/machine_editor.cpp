// The machine editor in the Memory view's side panel (core/machine_edit.h): a copy of the
// machine's file, field by field in its sections; each edit is parsed by the machine-file parser,
// whose message says what is wrong and where; "Save as… and use" writes the copy and makes it the
// machine. Presets are read-only: what is edited is always a copy.
#include "app/gui/views/memory_views.h"

#include "app/gui/widgets/text_wrap.h"

#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
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

void push_edit(ViewContext& ctx, const std::string& section, const std::string& key,
               const std::string& value) {
  Command c;
  c.kind = CommandKind::MachineEdit;
  c.text = "set " + section + " " + key + " " + value;
  ctx.push(std::move(c));
}

// The "Add a field" row: a section, one of the keys it lacks, a value, Add. What is being typed
// is kept in the view caches until Add (a draft of one line; the copy itself is the workbench's).
void draw_add_field(ViewContext& ctx, const MachineDraft& d) {
  std::string& section = ctx.caches.machine_add.section;
  std::string& key = ctx.caches.machine_add.key;
  std::string& value = ctx.caches.machine_add.value;
  const float em = ImGui::GetFontSize();
  const std::vector<MachineSection> sections = machine_sections(d);
  bool known = false;
  for (const MachineSection& s : sections) known |= s.name == section;
  if (!known) section = "machine";
  const std::vector<predict::MachineKey> keys = machine_missing_keys(d, section);
  const predict::MachineKey* chosen = nullptr;
  for (const predict::MachineKey& k : keys)
    if (key == k.key) chosen = &k;
  if (!chosen)
    key = keys.empty() ? "" : keys.front().key, chosen = keys.empty() ? nullptr : &keys.front();

  ImGui::Spacing();
  ImGui::TextDisabled("Add a field the copy does not have");
  ImGui::SetNextItemWidth(em * 6);
  if (ImGui::BeginCombo("##add-section", section.c_str())) {
    for (const MachineSection& s : sections) {
      if (ImGui::Selectable(s.name.c_str(), s.name == section)) section = s.name, key.clear();
      note_widget("machine-edit.add.section." + s.name);
    }
    ImGui::EndCombo();
  }
  note_widget("machine-edit.add.section");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(em * 9);
  ImGui::BeginDisabled(keys.empty());
  if (ImGui::BeginCombo("##add-key", keys.empty() ? "(all present)" : key.c_str())) {
    for (const predict::MachineKey& k : keys) {
      if (ImGui::Selectable(k.key, key == k.key)) key = k.key;
      note_widget(std::string("machine-edit.add.key.") + k.key);
    }
    ImGui::EndCombo();
  }
  ImGui::EndDisabled();
  note_widget("machine-edit.add.key");
  ImGui::SetNextItemWidth(std::max(em * 6, ImGui::GetContentRegionAvail().x - em * 4));
  ImGui::InputTextWithHint("##add-value", chosen ? chosen->example : "", &value);
  note_widget("machine-edit.add.value");
  if (ImGui::IsItemHovered() && chosen)
    ImGui::SetTooltip("The value of %s in [%s], e.g. %s", chosen->key, section.c_str(),
                      chosen->example);
  ImGui::SameLine();
  ImGui::BeginDisabled(!chosen || value.empty());
  if (ImGui::Button("Add")) {
    push_edit(ctx, section, key, value);
    value.clear();
  }
  ImGui::EndDisabled();
  note_widget("machine-edit.add.button");
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
  draw_add_field(ctx, d);
  // The keys' column: as wide as the longest key (smem_reserved_per_block), at least 7.5 em.
  float key_w = em * 7.5f;  // from the window's left, as SameLine takes it
  for (const MachineField& f : d.fields)
    key_w =
        std::max(key_w, ImGui::GetCursorPosX() + ImGui::CalcTextSize(f.key.c_str()).x + em * 0.6f);
  std::string section;
  for (const MachineField& f : d.fields) {
    if (f.section != section) {
      section = f.section;
      ImGui::Spacing();
      ImGui::TextDisabled("%s", section == "machine" ? "machine" : ("[" + section + "]").c_str());
    }
    ImGui::PushID(f.line);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(f.key.c_str());
    ImGui::SameLine(key_w);
    ImGui::SetNextItemWidth(std::max(em * 6, ImGui::GetContentRegionAvail().x));
    const std::string widget = "machine-edit.field." + f.section + "." + f.key;
    if (const std::vector<const char*>* options = choices_for(f.key)) {
      if (ImGui::BeginCombo("##v", f.value.c_str())) {
        for (const char* o : *options) {
          if (ImGui::Selectable(o, f.value == o)) push_edit(ctx, f.section, f.key, o);
          note_widget(widget + "." + o);
        }
        ImGui::EndCombo();
      }
    } else {
      std::string value = f.value;
      // Sent when the field is left or Enter is pressed: a half-typed "2 Ki" is not an error.
      ImGui::InputText("##v", &value, ImGuiInputTextFlags_EnterReturnsTrue);
      if (ImGui::IsItemDeactivatedAfterEdit() && value != f.value)
        push_edit(ctx, f.section, f.key, value);
    }
    note_widget(widget);
    if (!f.comment.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.comment.c_str());
    ImGui::PopID();
  }
}

}  // namespace tilescope::gui

// The machine editor (issue #32): a copy of the current machine's file, edited field by field in
// the app — each field one `key = value` line of a section ([level L1], [memory DRAM], the header)
// — and parsed after every edit by the machine-file parser itself, whose message (with its line)
// is what the learner reads when a value is refused. Saved as a .machine file, the copy becomes
// the machine, and the simulation re-runs. Presets are never written: the editor works on a copy.
//
// Pure C++ (no ImGui): `machine-edit` commands drive it (workbench_machine_edit.cpp); tests need
// no display.
#pragma once

#include "sim/predict/machine.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::core {

struct MachineField {
  std::string section;  // "machine" for the header, else the section's name ("L1", "DRAM")
  std::string kind;     // "machine" for the header, else the section's kind ("level", "memory")
  std::string key, value;
  std::string comment;  // what follows '#' on the line, kept when the value changes
  int line = 0;         // 1-based line in the text
};

struct MachineDraft {
  std::string based_on;  // the machine it copies (its name)
  std::string file;      // the file it was read from
  std::string text;      // the file text as edited
  std::vector<MachineField> fields;
  std::optional<predict::Machine> machine;  // the parse, when it succeeds
  std::string error;                        // the parser's message, when it does not
};

// The fields of a machine file's text, in order (comment and blank lines left out).
std::vector<MachineField> machine_fields(const std::string& text);

// Sets `key` of `section` to `value` in the text: the line's value is replaced (its comment
// kept), or a line is added at the end of the section. Returns "" or why not (no such section; a
// value with a line break or '#').
std::string set_machine_field(std::string& text, const std::string& section, const std::string& key,
                              const std::string& value);

// The sections of the draft in order (the header "machine" first), with their kinds.
struct MachineSection {
  std::string name, kind;
};
std::vector<MachineSection> machine_sections(const MachineDraft& d);

// The keys the parser accepts in `section` that the draft's section does not have yet, with an
// example value each (the editor's "Add a field" menu). The header offers "cores" or "sms" only
// when it has neither.
std::vector<predict::MachineKey> machine_missing_keys(const MachineDraft& d,
                                                      const std::string& section);

// Parses the draft's text again: its fields, and its machine or the parser's message.
void reparse_draft(MachineDraft& d);

// The state JSON's "machine_edit": what it copies, whether it parses (or the message), its fields.
nlohmann::json machine_draft_json(const MachineDraft& d);

// The draft's name for a saved copy: "tiny-edited.machine".
std::string machine_draft_file_name(const MachineDraft& d);

}  // namespace tilescope::core

// The machine editor's text model: fields of a machine file, edited line by line (machine_edit.h).
#include "app/core/machine_edit.h"

#include <algorithm>
#include <sstream>

namespace tilescope::core {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// "[level L1]" → "L1"; "[sm]" → "sm"; a header line is in section "machine".
std::string section_name(const std::string& header) {
  std::string inside = trim(header.substr(1, header.find(']') - 1));
  const size_t space = inside.find(' ');
  return space == std::string::npos ? inside : trim(inside.substr(space + 1));
}

// "[level L1]" → "level"; "[sm]" → "sm".
std::string section_kind(const std::string& header) {
  std::string inside = trim(header.substr(1, header.find(']') - 1));
  return inside.substr(0, inside.find(' '));
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

}  // namespace

std::vector<MachineField> machine_fields(const std::string& text) {
  std::vector<MachineField> out;
  std::string section = "machine", kind = "machine";
  int n = 0;
  for (const std::string& raw : split_lines(text)) {
    ++n;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = section_name(line);
      kind = section_kind(line);
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    MachineField f;
    f.section = section;
    f.kind = kind;
    f.key = trim(line.substr(0, eq));
    std::string value = line.substr(eq + 1);
    if (const size_t hash = value.find('#'); hash != std::string::npos) {
      f.comment = trim(value.substr(hash + 1));
      value = value.substr(0, hash);
    }
    f.value = trim(value);
    f.line = n;
    out.push_back(std::move(f));
  }
  return out;
}

std::string set_machine_field(std::string& text, const std::string& section, const std::string& key,
                              const std::string& value) {
  if (value.find_first_of("\n\r#") != std::string::npos)
    return "machine-edit: a value is one line, without '#'";
  std::vector<std::string> lines = split_lines(text);
  std::string current = "machine";
  int section_end = -1;  // the last line of `section` (its last field), where a new key goes
  bool seen = section == "machine";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = trim(lines[i]);
    if (!line.empty() && line[0] == '[') {
      current = section_name(line);
      if (current == section) seen = true, section_end = int(i);
      continue;
    }
    if (current != section) continue;
    if (!line.empty() && line[0] != '#') section_end = int(i);
    const size_t eq = line.find('=');
    if (eq == std::string::npos || line[0] == '#' || trim(line.substr(0, eq)) != key) continue;
    // Keep the comment, aligned as it was when the new value is no longer than the old.
    const size_t hash = lines[i].find('#', lines[i].find('='));
    const std::string comment = hash == std::string::npos ? "" : lines[i].substr(hash);
    std::string rebuilt = key + " = " + value;
    if (!comment.empty()) {
      const size_t col = hash;
      rebuilt += rebuilt.size() + 1 < col ? std::string(col - rebuilt.size(), ' ') : "  ";
      rebuilt += comment;
    }
    lines[i] = rebuilt;
    text.clear();
    for (const std::string& l : lines) text += l + "\n";
    return {};
  }
  if (!seen) return "machine-edit: the machine has no section '" + section + "'";
  lines.insert(lines.begin() + (section_end + 1), key + " = " + value);
  text.clear();
  for (const std::string& l : lines) text += l + "\n";
  return {};
}

void reparse_draft(MachineDraft& d) {
  d.fields = machine_fields(d.text);
  d.machine.reset();
  d.error.clear();
  try {
    d.machine = predict::parse_machine(d.text, "the edited copy");
  } catch (const std::exception& e) {
    d.error = e.what();
  }
}

std::vector<MachineSection> machine_sections(const MachineDraft& d) {
  std::vector<MachineSection> out = {{"machine", "machine"}};
  for (const std::string& raw : split_lines(d.text))
    if (const std::string line = trim(raw); !line.empty() && line[0] == '[')
      out.push_back({section_name(line), section_kind(line)});
  return out;
}

std::vector<predict::MachineKey> machine_missing_keys(const MachineDraft& d,
                                                      const std::string& section) {
  std::string kind;
  for (const MachineSection& s : machine_sections(d))
    if (s.name == section) kind = s.kind;
  std::vector<std::string> present;
  for (const MachineField& f : d.fields)
    if (f.section == section) present.push_back(f.key);
  const auto has = [&](const std::string& k) {
    return std::find(present.begin(), present.end(), k) != present.end();
  };
  std::vector<predict::MachineKey> out;
  for (const predict::MachineKey& k : predict::machine_section_keys(kind)) {
    // 'caches = host' swaps the levels for this computer's: not a field one adds to a copy.
    if (has(k.key) || k.key == std::string("caches")) continue;
    // A machine counts cores or SMs, not both.
    if ((k.key == std::string("cores") || k.key == std::string("sms")) &&
        (has("cores") || has("sms")))
      continue;
    out.push_back(k);
  }
  return out;
}

nlohmann::json machine_draft_json(const MachineDraft& d) {
  nlohmann::json fields = nlohmann::json::object();
  for (const MachineField& f : d.fields) fields[f.section + "." + f.key] = f.value;
  nlohmann::json j = {
      {"based_on", d.based_on}, {"valid", d.machine.has_value()}, {"fields", fields}};
  if (!d.error.empty()) j["error"] = d.error;
  return j;
}

std::string machine_draft_file_name(const MachineDraft& d) {
  return (d.machine ? d.machine->name : d.based_on) + "-edited.machine";
}

}  // namespace tilescope::core

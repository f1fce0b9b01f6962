// The workbench's machine editor (machine_edit.h): a copy of the current machine's file, edited,
// checked by the parser, saved and made the machine.
#include "app/core/workbench.h"

#include "app/core/session.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tilescope::core {

namespace {

std::string start_draft(Workbench& wb) {
  if (!wb.machine) return "machine-edit: no machine is loaded to copy";
  const std::string& file = wb.machine->source;
  std::error_code ec;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec))
    return "machine-edit: " + wb.machine->name + " came from " +
           (file.empty() ? std::string("no file") : "'" + file + "'") + ", which cannot be copied";
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return "machine-edit: cannot read '" + file + "'";
  MachineDraft d;
  d.based_on = wb.machine->name;
  d.file = file;
  d.text = text.str();
  reparse_draft(d);
  wb.machine_draft = std::move(d);
  return {};
}

}  // namespace

std::string workbench_machine_edit(Workbench& wb, const std::string& args) {
  std::istringstream in(args);
  std::string verb;
  in >> verb;
  if (verb == "start") return start_draft(wb);
  if (verb == "cancel") {
    wb.machine_draft.reset();
    return {};
  }
  if (!wb.machine_draft) return "machine-edit " + verb + ": no copy is open (machine-edit start)";
  MachineDraft& d = *wb.machine_draft;
  if (verb == "set") {
    std::string section, key;
    in >> section >> key;
    std::string value;
    std::getline(in, value);
    const size_t a = value.find_first_not_of(' ');
    value = a == std::string::npos ? "" : value.substr(a);
    if (section.empty() || key.empty() || value.empty())
      return "machine-edit set: expected SECTION KEY VALUE (machine-edit set L1 size 2 KiB)";
    if (std::string e = set_machine_field(d.text, section, key, value); !e.empty()) return e;
    reparse_draft(d);
    return {};
  }
  if (verb == "save") {
    std::string path;
    std::getline(in, path);
    const size_t a = path.find_first_not_of(' ');
    path = a == std::string::npos ? "" : path.substr(a);
    if (path.empty()) return "machine-edit save: needs a file path";
    if (!d.machine) return "machine-edit save: the copy does not parse: " + d.error;
    if (std::string e = write_file_atomically(d.text, path, "machine"); !e.empty()) return e;
    // The saved file is the machine now: the schedule is checked against it and the Memory view
    // simulates on it (a new key).
    if (std::string e = workbench_set_machine(wb, path); !e.empty()) return e;
    wb.machine_draft.reset();
    return {};
  }
  return "machine-edit: expected start, set SECTION KEY VALUE, cancel or save PATH, got '" + verb +
         "'";
}

}  // namespace tilescope::core

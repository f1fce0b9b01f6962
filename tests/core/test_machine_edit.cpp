// The machine editor (issue #32) without a display: a machine file's fields, a field set in place
// (its comment kept) or added, a value the parser refuses with its message and line, and a saved
// copy that becomes the machine — the preset untouched.
#include "app/core/commands.h"
#include "app/core/machine_edit.h"
#include "app/core/workbench.h"
#include "build_paths.h"
#include "tests/core/workbench_fixtures.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

using namespace tilescope::core;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const MachineField* field(const std::vector<MachineField>& fields, const std::string& section,
                          const std::string& key) {
  for (const MachineField& f : fields)
    if (f.section == section && f.key == key) return &f;
  return nullptr;
}

const char* kText =
    "name = toy\nkind = cpu\n\n[level L1]\nsize = 1 KiB   # 16 lines\nline = 64 B\nways = 2\n"
    "\n[memory DRAM]\nsize = 1 GiB\n";

}  // namespace

TEST_CASE("a machine file's fields, set in place or added to their section") {
  const std::vector<MachineField> fields = machine_fields(kText);
  REQUIRE(fields.size() == 6);
  const MachineField* size = field(fields, "L1", "size");
  REQUIRE(size);
  CHECK(size->value == "1 KiB");
  CHECK(size->comment == "16 lines");
  CHECK(size->line == 5);
  CHECK(field(fields, "machine", "kind")->value == "cpu");
  CHECK(field(fields, "DRAM", "size")->value == "1 GiB");

  std::string text = kText;
  REQUIRE(set_machine_field(text, "L1", "size", "2 KiB") == "");
  CHECK(text.find("size = 2 KiB   # 16 lines\n") != std::string::npos);
  REQUIRE(set_machine_field(text, "L1", "replacement", "fifo") == "");
  const std::vector<MachineField> after = machine_fields(text);
  CHECK(field(after, "L1", "replacement")->value == "fifo");
  CHECK(field(after, "L1", "replacement")->line == 8);  // after the section's last field
  CHECK(field(after, "DRAM", "size")->value == "1 GiB");
  CHECK(set_machine_field(text, "L3", "size", "1 MiB").find("no section 'L3'") !=
        std::string::npos);
  CHECK(set_machine_field(text, "L1", "ways", "4 # eight").find("without '#'") !=
        std::string::npos);
}

TEST_CASE("the keys a section lacks: what the editor's Add a field offers") {
  MachineDraft d;
  d.text = kText;
  reparse_draft(d);
  REQUIRE(d.machine);
  const auto names = [](const std::vector<tilescope::predict::MachineKey>& keys) {
    std::string s;
    for (const auto& k : keys) s += std::string(s.empty() ? "" : ",") + k.key;
    return s;
  };
  // [level L1] has size, line and ways: the other eleven level keys, in the parser's order.
  CHECK(names(machine_missing_keys(d, "L1")) ==
        "sector,replacement,write,write_allocate,writebacks,inclusion,seed,bandwidth,latency,"
        "strided_line,shared_by");
  CHECK(names(machine_missing_keys(d, "DRAM")) == "bandwidth,latency,strided_line");
  // The header has name and kind; neither cores nor sms, so both are offered.
  const std::string header = names(machine_missing_keys(d, "machine"));
  CHECK(header.rfind("description,cores,sms,clock,fma_units,", 0) == 0);  // not caches = host
  CHECK(machine_missing_keys(d, "L9").empty());
  REQUIRE(machine_sections(d).size() == 3);
  CHECK(machine_sections(d)[1].name == "L1");
  CHECK(machine_sections(d)[1].kind == "level");
  CHECK(machine_sections(d)[2].kind == "memory");
  // Each example value is one the parser accepts: added to its section, the copy still parses.
  for (const auto& [section, kind] : {std::pair("L1", "level"), std::pair("DRAM", "memory")})
    for (const auto& k : tilescope::predict::machine_section_keys(kind)) {
      if (k.key == std::string("size") || k.key == std::string("line") ||
          k.key == std::string("ways"))
        continue;
      MachineDraft e = d;
      REQUIRE(set_machine_field(e.text, section, k.key, k.example) == "");
      reparse_draft(e);
      CAPTURE(k.key);
      CHECK(e.error == "");
    }
  // The parser's own message lists the same keys.
  MachineDraft bad = d;
  REQUIRE(set_machine_field(bad.text, "DRAM", "colour", "red") == "");
  reparse_draft(bad);
  CHECK(bad.error.find("(expected size, bandwidth, latency or strided_line)") != std::string::npos);
}

TEST_CASE("machine-edit: refused with the parser's message, saved, and then the machine") {
  AppState state = test::state_for("x: [16]\ny = relu(x)\n");
  REQUIRE(test::run(state, "machine tiny") == "");
  Workbench& wb = state.workbench;
  const std::string preset = wb.machine->source;
  const std::string before = read_file(preset);
  CHECK(test::run(state, "machine-edit set L1 ways 4").find("no copy is open") !=
        std::string::npos);
  REQUIRE(test::run(state, "machine-edit start") == "");
  REQUIRE(wb.machine_draft);
  CHECK(wb.machine_draft->machine);
  CHECK(wb.machine_draft->based_on == "tiny");
  // tiny's L1: 1 KiB of 64-byte lines is 16 lines, which 3 ways cannot divide into sets.
  REQUIRE(test::run(state, "machine-edit set L1 ways 3") == "");
  CHECK_FALSE(wb.machine_draft->machine);
  const std::string& error = wb.machine_draft->error;
  CHECK(error.find("the edited copy:") == 0);
  CHECK(error.find("L1") != std::string::npos);
  CHECK(error.find("3 ways") != std::string::npos);
  const std::string path = tilescope::test::scratch_dir().string() + "/tiny-2k.machine";
  CHECK(test::run(state, "machine-edit save " + path).find("does not parse") != std::string::npos);
  // 2 KiB, 4 ways: 32 lines in 8 sets.
  REQUIRE(test::run(state, "machine-edit set L1 ways 4") == "");
  REQUIRE(test::run(state, "machine-edit set L1 size 2 KiB") == "");
  REQUIRE(wb.machine_draft->machine);
  CHECK(wb.machine_draft->machine->levels[0].size_bytes == 2048);
  REQUIRE(test::run(state, "machine-edit save " + path) == "");
  CHECK_FALSE(wb.machine_draft);
  CHECK(wb.machine_name == path);
  CHECK(wb.machine->levels[0].size_bytes == 2048);
  CHECK(wb.machine->levels[0].ways == 4);
  CHECK(read_file(path).find("size = 2 KiB") != std::string::npos);
  CHECK(read_file(preset) == before);  // the preset is never written
  // The Memory view simulates on the saved copy.
  REQUIRE(test::run(state, "simulate") == "");
  test::wait_jobs(state);
  REQUIRE(wb.memory_result());
  CHECK(wb.memory_result()->levels[0].size_bytes == 2048);
  CHECK_THROWS_AS(parse_command("machine-edit frobnicate"), CommandError);
}

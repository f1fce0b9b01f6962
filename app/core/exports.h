// Exports (issue #32): every table a view shows, as CSV (or JSON), and the centre view as a PNG —
// from the views' Export menus, the `export` command and the CLI. A table is built once from what
// the view draws, then written either way, so the CSV and the JSON of a table hold the same rows.
//
// Pure C++ (no ImGui): the PNG is only requested here (AppState::requests); the app writes it
// after the frame renders.
#pragma once

#include "app/core/app_state.h"
#include "app/core/baseline.h"
#include "app/core/counters_compare.h"
#include "app/core/tile_grid.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tilescope::core {

// [SECTION] Tables

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>>
      rows;  // one value (number, string, bool or null) a column
};

// CSV as spreadsheets read it: a header row, commas, fields with a comma, quote or newline quoted
// (quotes doubled); numbers printed exactly (integers whole, others to 17 significant digits);
// null as an empty field.
std::string table_csv(const Table& t);
// [{column: value, ...}, ...]: the same rows.
nlohmann::json table_json(const Table& t);

// Memory view: each level (closest first, main memory last) and each tensor at each level.
Table memory_levels_table(const MemoryResult& r);
Table memory_tensors_table(const MemoryResult& r);
// Baseline A against B (baseline.h).
Table comparison_table(const Comparison& c);
// Counters over time (tile_grid.h): a row per frame of the Tiles walk.
Table counters_over_time_table(const CountersOverTime& r);
// The Timings view's autotune sweep, a row per point.
Table autotune_table(const AutotuneGrid& g);
// A recorded benchmark report (the Timings view's list), a row per version of every suite.
Table timings_table(const nlohmann::json& report);
// The Memory view's predicted-vs-measured rows for one recorded run.
Table measured_table(const std::vector<CounterLevelRow>& rows);
// Every run of a counters recording: measured_table's rows, each after its run's index and label
// (`tilescope-cli bench --show FILE --csv`).
Table measured_report_table(const kernels::CounterReport& report);

// [SECTION] What can be exported

struct ExportEntry {
  const char* name;  // the `export` command's word
  const char* what;  // the menu's label
};
// memory-levels, memory-tensors, baseline, counters, autotune, timings, measured, grade, view.
const std::vector<ExportEntry>& export_entries();
// "memory-levels, memory-tensors, …": the names, for messages.
std::string export_names();
// The default file name for `name` ("memory-levels.csv", "view-memory.png").
std::string export_default_name(const AppState& state, const std::string& name);

// Whether the table `name` has something to export now, without building it (the Export menu
// greys an entry with `why`).
bool export_ready(const AppState& state, const std::string& name, std::string& why);
// The table `name` as the app shows it now, or nullopt with `why` ("nothing simulated yet").
std::optional<Table> export_table(const AppState& state, const std::string& name, std::string& why);

// Writes `name` to `path`: a table as CSV (JSON when the path ends in .json), or "view" as a PNG
// of the centre view (requested: written after this frame). The grade is files.h's
// save_grade_file (the lesson progress it reads lives with the files).
// Returns "" or why not; the notice says what was written.
std::string export_to_file(AppState& state, const std::string& name, const std::string& path);

}  // namespace tilescope::core

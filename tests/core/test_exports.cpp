// Exports (issue #32) without a display: CSV quoting, the Memory tables against hand counts on a
// cache that holds everything, every table written as CSV and as JSON holding the same rows, the
// `export` and `files export` commands, and their refusals.
#include "app/core/commands.h"
#include "app/core/exports.h"
#include "app/core/files.h"
#include "tests/core/workbench_fixtures.h"
#include "tests/support/run_command.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tilescope::core;

namespace {

// x: [32, 128], W: [64, 128]; y = x @ W.T (one MatMul kernel).
constexpr uint64_t M = 32, N = 64, K = 128;
const char* kModel = "x: [32, 128]\nW: [64, 128] weight\ny = x @ W.T\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fields of one CSV line: quoted fields may hold commas and doubled quotes (no newlines in
// the tables compared here).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// Every cell of the CSV equals the JSON's value for its row and column.
void check_csv_matches_json(const std::string& csv, const nlohmann::json& json) {
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> columns = fields(line);
  size_t row = 0;
  while (std::getline(in, line)) {
    REQUIRE(row < json.size());
    const std::vector<std::string> cells = fields(line);
    REQUIRE(cells.size() == columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      CAPTURE(columns[c]);
      const nlohmann::json& v = json[row][columns[c]];
      if (v.is_string())
        CHECK(cells[c] == v.get<std::string>());
      else if (v.is_boolean())
        CHECK(cells[c] == (v.get<bool>() ? "true" : "false"));
      else if (v.is_null())
        CHECK(cells[c].empty());
      else
        CHECK(std::stod(cells[c]) == v.get<double>());
    }
    ++row;
  }
  CHECK(row == json.size());
}

// Writes table `name` through the `export` command as CSV and as JSON, checks the two hold the
// same rows, and returns the JSON's rows.
nlohmann::json export_both(AppState& state, const std::string& name) {
  CAPTURE(name);
  const std::string dir = tilescope::test::scratch_dir().string();
  const std::string csv = dir + "/" + name + ".csv", json = dir + "/" + name + ".json";
  REQUIRE(test::run(state, "export " + name + " " + csv) == "");
  REQUIRE(test::run(state, "export " + name + " " + json) == "");
  CHECK(state.notice.find("exported " + name) != std::string::npos);
  const nlohmann::json rows = nlohmann::json::parse(read_file(json));
  check_csv_matches_json(read_file(csv), rows);
  return rows;
}

}  // namespace

TEST_CASE("CSV quotes what spreadsheets need quoted and prints numbers exactly") {
  const Table t{{"name", "value"},
                {{"x,y", 1}, {"say \"hi\"", 2.5}, {nullptr, true}, {"line\nbreak", 0.1}}};
  CHECK(table_csv(t) ==
        "name,value\n\"x,y\",1\n\"say \"\"hi\"\"\",2.5\n,true\n\"line\nbreak\","
        "0.10000000000000001\n");
  const nlohmann::json j = table_json(t);
  REQUIRE(j.size() == 4);
  CHECK(j[0]["name"] == "x,y");
  CHECK(j[2]["name"].is_null());
}

TEST_CASE("the Memory tables hold the simulation's counts, as CSV and as JSON alike") {
  AppState state = test::state_on_big_cache(kModel);
  std::string why;
  CHECK_FALSE(export_table(state, "memory-levels", why));
  CHECK(why.find("not simulated yet") != std::string::npos);
  REQUIRE(test::run(state, "simulate") == "");
  test::wait_jobs(state);
  const Table levels = *export_table(state, "memory-levels", why);
  REQUIRE(levels.rows.size() == 2);
  // One big cache: x, W read once, y's lines fetched (write-allocate) and written back once.
  const uint64_t x = M * K * 4, w = N * K * 4, y = M * N * 4;
  CHECK(levels.rows[1][0] == "DRAM");
  CHECK(levels.rows[1][6].get<uint64_t>() == x + w + y);              // read_bytes
  CHECK(levels.rows[1][7].get<uint64_t>() == y);                      // write_bytes
  CHECK(levels.rows[0][2].get<uint64_t>() == 2 * M * N * K + M * N);  // L1 accesses
  const Table tensors = *export_table(state, "memory-tensors", why);
  bool saw_w = false;
  for (const auto& row : tensors.rows)
    if (row[0] == "W" && row[1] == "DRAM") saw_w = row[5].get<uint64_t>() == w;
  CHECK(saw_w);

  // Written through the command, as CSV and as JSON: the same rows.
  for (const char* name : {"memory-levels", "memory-tensors"}) export_both(state, name);
  // Baseline and autotune too, once there is one.
  REQUIRE(test::run(state, "baseline pin") == "");
  REQUIRE(test::run(state, "apply \"tile(i, 8)\"") == "");
  REQUIRE(test::run(state, "simulate") == "");
  REQUIRE(test::run(state, "autotune sim") == "");
  test::wait_jobs(state);
  for (const char* name : {"baseline", "autotune"}) CHECK(export_both(state, name).size() > 3);

  // The menu's cheap answer agrees with building each table, here and on a fresh state.
  AppState fresh = test::state_on_big_cache(kModel);
  for (AppState* s : {&state, &fresh})
    for (const char* name : {"memory-levels", "memory-tensors", "baseline", "counters", "autotune",
                             "timings", "measured", "no-such-table"}) {
      std::string why_ready, why_table;
      CAPTURE(name);
      CHECK(export_ready(*s, name, why_ready) == export_table(*s, name, why_table).has_value());
      CHECK(why_ready == why_table);
    }
}

TEST_CASE("the recorded timings and predicted-vs-measured tables: CSV and JSON hold the same rows") {
  AppState state = test::state_for(kModel);
  workbench_load_recorded(state.workbench, "assets/recorded");  // tests run from the source tree
  REQUIRE_FALSE(state.workbench.recorded.empty());
  REQUIRE(test::run(state, "machine h200") == "");
  for (const char* name : {"timings", "measured"}) CHECK(export_both(state, name).size() >= 3);
  // The timings rows are the shown report's versions, in its order.
  const nlohmann::json& report = state.workbench.recorded.front().second;
  const nlohmann::json rows =
      nlohmann::json::parse(read_file(tilescope::test::scratch_dir().string() + "/timings.json"));
  CHECK(rows[0]["suite"] == report["suites"][0]["name"]);
  CHECK(rows[0]["median_ms"] == report["suites"][0]["results"][0]["median_ms"]);
}

TEST_CASE("export commands: the browser, the view's picture, and refusals") {
  AppState state = test::state_for(kModel);
  const std::string dir = tilescope::test::scratch_dir().string();
  CHECK_THROWS_AS(parse_command("export everything /tmp/x.csv"), CommandError);
  CHECK_THROWS_AS(parse_command("export memory-levels"), CommandError);
  CHECK(command_to_string(parse_command("export counters /tmp/c.csv")) ==
        "export counters /tmp/c.csv");
  // Nothing to export yet: said, and no file written.
  const std::string none = dir + "/none.csv";
  CHECK(test::run(state, "export baseline " + none).find("no baseline is pinned") !=
        std::string::npos);
  CHECK_FALSE(std::ifstream(none).good());
  // File > Export opens the browser in save mode with the table's name filled in.
  REQUIRE(test::run(state, "files export timings " + dir) == "");
  CHECK(state.files.mode == FileBrowser::Mode::Export);
  CHECK(state.files.name == "timings.csv");
  CHECK(state.files.dir == dir);
  CHECK(test::run(state, "files export nothing").find("unknown table") != std::string::npos);
  // The view's picture is requested for the app to write after the frame.
  REQUIRE(test::run(state, "view roofline") == "");
  REQUIRE(test::run(state, "files export view " + dir) == "");
  CHECK(state.files.name == "view-roofline.png");
  REQUIRE(test::run(state, "files ok") == "");
  CHECK(state.requests.view_png_path == dir + "/view-roofline.png");
  CHECK(state.files.mode == FileBrowser::Mode::Closed);
}

// `tilescope-cli simulate --csv` (issue #32): the Memory view's tables as CSV hold the numbers the
// same run prints as JSON; `bench --show --csv` the recorded reports' numbers.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tilescope::test::run_command_split;

std::string cli(const std::string& args) {
  const auto r = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' " + args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) f.push_back(cell);
    rows.push_back(f);
  }
  return rows;
}

}  // namespace

TEST_CASE("simulate --csv levels and tensors hold the numbers of simulate --json") {
  const std::string args = "simulate default --machine tiny --apply 'tile(i, j, 8, 8)' --no-reuse";
  const nlohmann::json report = nlohmann::json::parse(cli(args + " --json"))["report"];
  const auto levels = csv_rows(cli(args + " --csv levels"));
  REQUIRE(levels.size() == report["levels"].size() + 1);
  CHECK(levels[0][0] == "level");
  for (size_t i = 0; i < report["levels"].size(); ++i) {
    const nlohmann::json& l = report["levels"][i];
    CAPTURE(l["name"]);
    CHECK(levels[i + 1][0] == l["name"].get<std::string>());
    CHECK(std::stoull(levels[i + 1][2]) == l["total"]["accesses"].get<uint64_t>());
    CHECK(std::stoull(levels[i + 1][3]) == l["total"]["hits"].get<uint64_t>());
    CHECK(std::stoull(levels[i + 1][6]) == l["total"]["read_bytes"].get<uint64_t>());
    CHECK(std::stoull(levels[i + 1][7]) == l["total"]["write_bytes"].get<uint64_t>());
  }
  // Tensors: each (tensor, level) row is the JSON's tensor row at that level.
  size_t matched = 0;
  for (const auto& row : csv_rows(cli(args + " --csv tensors"))) {
    for (const nlohmann::json& l : report["levels"])
      for (const nlohmann::json& t : l["tensors"])
        if (row[0] == t["name"].get<std::string>() && row[1] == l["name"].get<std::string>()) {
          CHECK(std::stoull(row[2]) == t["accesses"].get<uint64_t>());
          CHECK(std::stoull(row[5]) == t["read_bytes"].get<uint64_t>());
          ++matched;
        }
  }
  CHECK(matched == 9);  // x, W, matmul0 at L1, L2, DRAM
  const auto bad = run_command_split(std::string("'") + TILESCOPE_CLI_PATH +
                                     "' simulate default --machine tiny --csv everything");
  CHECK(bad.code == 1);
  CHECK(bad.err.find("--csv expects levels or tensors") != std::string::npos);
}

TEST_CASE("bench --show --csv: a timing report's versions and a counters recording's runs") {
  // The timings: one row per version of every suite, as the report's JSON has them.
  const std::string timings = "assets/recorded/gpu-h200-2026-12-02.json";
  std::ifstream tin(timings);
  const nlohmann::json report = nlohmann::json::parse(tin);
  const auto rows = csv_rows(cli("bench --show " + timings + " --csv"));
  REQUIRE(rows.size() > 1);
  CHECK(rows[0][0] == "suite");
  CHECK(rows[0][3] == "median_ms");
  size_t row = 1;
  for (const nlohmann::json& suite : report["suites"])
    for (const nlohmann::json& r : suite["results"]) {
      REQUIRE(row < rows.size());
      CHECK(rows[row][0] == suite["name"].get<std::string>());
      CHECK(std::stoi(rows[row][1]) == r["version"].get<int>());
      CHECK(std::stod(rows[row][3]) == r["median_ms"].get<double>());
      ++row;
    }
  CHECK(row == rows.size());

  // The counters recording: every run's DRAM row holds its measured bytes read + written.
  const std::string counters = "assets/recorded/gpu-h200-counters-2026-12-02.json";
  std::ifstream cin(counters);
  const nlohmann::json rec = nlohmann::json::parse(cin);
  size_t dram_rows = 0;
  for (const auto& r : csv_rows(cli("bench --show " + counters + " --csv"))) {
    if (r.size() < 5 || r[2] != "DRAM") continue;
    const nlohmann::json& m = rec["runs"][std::stoul(r[0])]["measured"];
    CHECK(std::stod(r[4]) ==
          m["dram_read_bytes"].get<double>() + m["dram_write_bytes"].get<double>());
    ++dram_rows;
  }
  size_t completed = 0;
  for (const nlohmann::json& r : rec["runs"]) completed += r.contains("error") ? 0 : 1;
  CHECK(dram_rows == completed);

  const auto alone = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' bench --csv");
  CHECK(alone.code == 1);
  CHECK(alone.err.find("--csv goes with --show") != std::string::npos);
}

TEST_CASE(
    "simulate --over-time on a GPU follows the GPU mode's wave; an unbound kernel is refused") {
  const std::string model =
      tilescope::test::write_scratch_file("over_time_gpu.model",
                                          "x: [64, 64]\nW: [64, 64] weight\ny = x @ W.T\n")
          .string();
  const std::string steps =
      "tile(i, 8); tile(j, 32); reorder(i.o, j.o, i.i, j.i, k); bind(i.o, block.y); "
      "bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)";
  const auto rows = csv_rows(
      cli("simulate '" + model + "' --machine minigpu --apply '" + steps + "' --over-time"));
  REQUIRE(rows.size() > 3);
  CHECK(rows[0][3] == "L1_accesses");
  // Frame 0 is the wave's start (block 0's wave is the first: nothing before it); the accesses
  // so far grow by each frame's L1 window (every global access reaches L1 first).
  CHECK(rows[1][2] == "0");
  for (size_t r = 2; r < rows.size(); ++r)
    CHECK(std::stoull(rows[r][2]) >= std::stoull(rows[r - 1][2]) + std::stoull(rows[r][3]));
  // Following block 9 (the second wave): frame 0 then holds the first wave's accesses.
  const auto second = csv_rows(cli("simulate '" + model + "' --machine minigpu --apply '" + steps +
                                   "' --over-time --follow 9"));
  CHECK(std::stoull(second[1][2]) > 0);
  const auto unbound = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' simulate '" +
                                         model + "' --machine minigpu --over-time");
  CHECK(unbound.code == 1);
  CHECK(unbound.err.find("GPU tiles") != std::string::npos);
}

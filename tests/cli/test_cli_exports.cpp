// `tilescope-cli simulate --csv` (issue #32): the Memory view's tables as CSV hold the numbers the
// same run prints as JSON.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <nlohmann/json.hpp>

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

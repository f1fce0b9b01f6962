// `tilescope-cli simulate --baseline` (issue #32): A's and B's numbers in the comparison equal
// what two separate `simulate` runs of each schedule report, and Δ is their difference; with
// --baseline-recorded, A's are the recording's own numbers.
#include <doctest/doctest.h>
#include "build_paths.h"

#include "tests/support/run_command.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

using tilescope::test::run_command_split;

nlohmann::json cli_json(const std::string& args) {
  const auto r = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' " + args);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

// Main memory's bytes (read + written) in a plain `simulate --json` report.
double dram_bytes(const nlohmann::json& j) {
  const nlohmann::json& level = j["report"]["levels"].back()["total"];
  return level["read_bytes"].get<double>() + level["write_bytes"].get<double>();
}

}  // namespace

TEST_CASE("simulate --baseline prints A and B as two separate runs give them, and the change") {
  const std::string model =
      tilescope::test::write_scratch_file("baseline.model",
                                          "x: [32, 256]\nW: [64, 256] weight\ny = x @ W.T\n")
          .string();
  const std::string steps = "tile(i, j, 8, 8)";
  const double a = dram_bytes(cli_json("simulate '" + model + "' --machine tiny --json"));
  const double b = dram_bytes(
      cli_json("simulate '" + model + "' --machine tiny --apply '" + steps + "' --json"));
  const nlohmann::json c = cli_json("simulate '" + model + "' --machine tiny --apply '" + steps +
                                    "' --baseline '' --json")["comparison"];
  const nlohmann::json& dram = c["levels"].back();
  CHECK(dram["level"] == "DRAM");
  CHECK(dram["a"].get<double>() == a);
  CHECK(dram["b"].get<double>() == b);
  CHECK(dram["delta"].get<double>() == b - a);
  CHECK(c["a"] == "matmul0, the default lowering");
  CHECK(c["b"] == "matmul0, " + steps);
  CHECK(c["notes"].empty());

  // The text table, and a baseline the machine refuses named as A's.
  const auto text = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' simulate '" +
                                      model + "' --machine tiny --baseline '" + steps + "'");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("B against baseline A") != std::string::npos);
  CHECK(text.out.find("per tensor") != std::string::npos);
  const auto bad = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' simulate '" +
                                     model + "' --machine tiny --baseline 'tile(q, 8)'");
  CHECK(bad.code == 1);
  CHECK(bad.err.find("schedule A on machine tiny") != std::string::npos);
}

TEST_CASE("simulate --baseline-recorded: A is a recorded run's measured counters, B a plain run") {
  const std::string model =
      tilescope::test::write_scratch_file("baseline_rec.model",
                                          "x: [32, 256]\nW: [64, 256] weight\ny = x @ W.T\n")
          .string();
  const std::string recording = "assets/recorded/gpu-h200-counters-2026-12-02.json";
  std::ifstream in(recording);
  const nlohmann::json run = nlohmann::json::parse(in)["runs"][1];
  const double recorded_dram = run["measured"]["dram_read_bytes"].get<double>() +
                               run["measured"]["dram_write_bytes"].get<double>();
  const double b = dram_bytes(cli_json("simulate '" + model + "' --machine h200 --json"));
  const nlohmann::json c = cli_json("simulate '" + model + "' --machine h200 --baseline-recorded " +
                                    recording + " --recorded-run 1 --json")["comparison"];
  // Main memory's bytes (then its bytes per FLOP: the recorded GEMM is another size).
  REQUIRE(c["levels"].size() == 3);
  const nlohmann::json& dram = c["levels"][1];
  CHECK(dram["what"] == "bytes");
  CHECK(c["levels"][2]["what"] == "bytes/FLOP");
  CHECK(dram["a"].get<double>() == recorded_dram);
  CHECK(dram["b"].get<double>() == b);
  CHECK(c["a"].get<std::string>().find("recorded " + run["suite"].get<std::string>()) == 0);
  CHECK(c["tensors"].empty());
  CHECK(c["time"]["a"].get<double>() ==
        doctest::Approx(run["measured"]["time_ns"].get<double>() * 1e-9));

  // A run the recording does not have, and a file that is not a recording.
  const auto bad = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' simulate '" +
                                     model + "' --machine h200 --baseline-recorded " + recording +
                                     " --recorded-run 4000");
  CHECK(bad.code == 1);
  CHECK(bad.err.find("--recorded-run 4000") != std::string::npos);
  const auto missing = run_command_split(std::string("'") + TILESCOPE_CLI_PATH + "' simulate '" +
                                         model + "' --baseline-recorded no-such.json");
  CHECK(missing.code == 1);
  CHECK(missing.err.find("no-such.json") != std::string::npos);
}

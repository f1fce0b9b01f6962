// End-to-end tests of `tilescope-cli graph`: runs the built binary on model files and checks its
// exit status, its table order and its located errors.
#include "build_paths.h"
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include "tests/support/run_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using RunResult = tilescope::test::SplitResult;

fs::path write_model(const std::string& name, const std::string& text) {
  return tilescope::test::write_scratch_file(name, text);
}

// Runs tilescope-cli with `args` (already shell-quoted), optionally feeding `stdin_file`.
RunResult run_cli(const std::string& args, const std::string& stdin_file = {}) {
  const tilescope::test::SplitResult r = tilescope::test::run_command_split(
      std::string("'") + TILESCOPE_CLI_PATH + "' " + args, stdin_file);
  return r;
}

// The op names of the table's rows, in printed order: the lines between the header and the
// blank line before the totals.
std::vector<std::string> table_kinds(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> kinds;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("op ", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty()) break;
    std::istringstream cols(line);
    std::string name, kind;
    cols >> name >> kind;
    kinds.push_back(kind);
  }
  return kinds;
}

const char* kCnn =
    "input [1, 3, 224, 224]\n"
    "Conv2d(3, 16, kernel_size=3, stride=1, padding=1)\n"
    "ReLU()\n"
    "MaxPool2d(kernel_size=2, stride=2)\n"
    "Flatten()\n"
    "Linear(in_features=16*112*112, out_features=10)\n";

}  // namespace

TEST_CASE("graph: the CNN example lists Conv2D then MatMul first, with separators and totals") {
  fs::path model = write_model("cnn.model", kCnn);
  RunResult r = run_cli("graph '" + model.string() + "'");
  CAPTURE(r.out);
  CAPTURE(r.err);
  REQUIRE(r.code == 0);
  std::vector<std::string> kinds = table_kinds(r.out);
  REQUIRE(kinds.size() == 7);
  CHECK(kinds[0] == "Conv2D");
  CHECK(kinds[1] == "MatMul");
  // 2*16*224*224*3*3*3 and 2*10*(16*112*112), with thousands separators.
  CHECK(r.out.find("43,352,064") != std::string::npos);
  CHECK(r.out.find("4,014,080") != std::string::npos);
  CHECK(r.out.find("total:") != std::string::npos);
  CHECK(r.out.find("multiply-add counts 2") != std::string::npos);
}

TEST_CASE("graph --json: rows sorted by FLOPs and totals that add up") {
  fs::path model = write_model("cnn_json.model", kCnn);
  RunResult r = run_cli("graph --json '" + model.string() + "'");
  REQUIRE(r.code == 0);
  nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& ops = j.at("ops");
  REQUIRE(ops.size() == 7);
  CHECK(ops[0].at("kind") == "Conv2D");
  CHECK(ops[0].at("flops").get<int64_t>() == int64_t{2} * 16 * 224 * 224 * 3 * 3 * 3);
  int64_t sum = 0;
  double shares = 0.0;
  for (size_t i = 0; i < ops.size(); ++i) {
    sum += ops[i].at("flops").get<int64_t>();
    shares += ops[i].at("flop_share").get<double>();
    if (i > 0) CHECK(ops[i - 1].at("flops").get<int64_t>() >= ops[i].at("flops").get<int64_t>());
  }
  CHECK(j.at("totals").at("flops").get<int64_t>() == sum);
  CHECK(shares == doctest::Approx(1.0));
  // Parameters: conv 16*3*3*3 + 16, linear 10*200704 + 10.
  CHECK(j.at("totals").at("parameters").get<int64_t>() == 16 * 3 * 3 * 3 + 16 + 10 * 200704 + 10);
}

TEST_CASE("graph reads standard input with '-'") {
  fs::path model = write_model("stdin.model",
                               "x: [64, 1024]\nW: [512, 1024] weight\n"
                               "b: [512] weight\ny = relu(x @ W.T + b)\n");
  RunResult r = run_cli("graph -", model.string());
  REQUIRE(r.code == 0);
  std::vector<std::string> kinds = table_kinds(r.out);
  REQUIRE(kinds.size() == 3);
  CHECK(kinds[0] == "MatMul");
  CHECK(r.out.find("67,108,864") != std::string::npos);  // 2 * 64 * 512 * 1024
}

TEST_CASE("graph --train adds the loss, backward ops and SGD updates") {
  fs::path model = write_model("train.model",
                               "x: [8, 16]\nW: [4, 16] weight\nb: [4] weight\n"
                               "y = relu(x @ W.T + b)\n");
  RunResult forward = run_cli("graph --json '" + model.string() + "'");
  RunResult train = run_cli("graph --json --train --loss mse --lr 0.1 '" + model.string() + "'");
  CAPTURE(train.err);
  REQUIRE(forward.code == 0);
  REQUIRE(train.code == 0);
  nlohmann::json f = nlohmann::json::parse(forward.out);
  nlohmann::json t = nlohmann::json::parse(train.out);
  CHECK(t.at("training") == true);
  CHECK(t.at("ops").size() > f.at("ops").size());
  int updates = 0;
  for (const auto& op : t.at("ops")) updates += op.at("kind") == "SGDUpdate" ? 1 : 0;
  CHECK(updates == 2);  // one per weight: W and b
}

TEST_CASE("graph: malformed models exit 1 with line:col on stderr") {
  struct Bad {
    const char* name;
    const char* text;
    const char* where;
  };
  const Bad cases[] = {
      {"unknown_layer.model", "input [1, 3, 8, 8]\nConv2D(3, 16, 3)\n", "unknown_layer.model:2:1:"},
      {"shape.model", "x: [64, 1024]\nW: [512, 1024] weight\ny = relu(x @ W)\n",
       "shape.model:3:12:"},
      {"lex.model", "x: [4]\ny = x $ 2\n", "lex.model:2:7:"},
      {"features.model",
       "input [1, 3, 224, 224]\nConv2d(3, 16, kernel_size=3, padding=1)\nMaxPool2d(4)\n"
       "Flatten()\nLinear(16*112*112, 10)\n",
       "features.model:5:8:"},
  };
  for (const Bad& bad : cases) {
    CAPTURE(bad.name);
    fs::path model = write_model(bad.name, bad.text);
    RunResult r = run_cli("graph '" + model.string() + "'");
    CAPTURE(r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(bad.where) != std::string::npos);
    CHECK(r.err.find("error:") != std::string::npos);
    CHECK(r.out.empty());
  }
  RunResult missing =
      run_cli("graph '" + (tilescope::test::scratch_dir() / "absent.model").string() + "'");
  CHECK(missing.code == 1);
  CHECK(missing.err.find("absent.model") != std::string::npos);
}

// The simulator's speed work (issue #33) must not move a single number: every counter of five
// simulations — CPU and GPU machines, 3C and reuse on and off, a shared-memory schedule, a
// convolution with padding checks — equals what the simulator printed before that work
// (tests/predict/recorded/simulate-*.json, each with its command line), field by field.
#include <doctest/doctest.h>
#include "build_paths.h"

#include <nlohmann/json.hpp>
#include "tests/support/run_command.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The first place where `got` and `want` differ, as a JSON path ("" when equal).
std::string first_difference(const json& got, const json& want, const std::string& path) {
  if (got.type() != want.type()) return path + " (type)";
  if (want.is_object()) {
    for (const auto& [key, value] : want.items()) {
      if (!got.contains(key)) return path + "/" + key + " (missing)";
      if (std::string d = first_difference(got[key], value, path + "/" + key); !d.empty()) return d;
    }
    if (got.size() != want.size()) return path + " (extra keys)";
    return "";
  }
  if (want.is_array()) {
    if (got.size() != want.size()) return path + " (length)";
    for (size_t i = 0; i < want.size(); ++i)
      if (std::string d = first_difference(got[i], want[i], path + "/" + std::to_string(i));
          !d.empty())
        return d;
    return "";
  }
  return got == want ? "" : path + ": " + got.dump() + " instead of " + want.dump();
}

}  // namespace

TEST_CASE("simulate: every counter equals the recording made before the speed work") {
  const fs::path dir = fs::path(TILESCOPE_SOURCE_DIR) / "tests/predict/recorded";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("simulate-", 0) != 0) continue;
    ++files;
    std::ifstream in(entry.path());
    const json want = json::parse(in);
    const std::string args = want.at("args").get<std::string>();
    CAPTURE(name);
    CAPTURE(args);
    // From the source tree, as recorded: a model path in `args` is relative to it.
    const auto r =
        tilescope::test::run_command_split("cd '" + std::string(TILESCOPE_SOURCE_DIR) + "' && " +
                                           TILESCOPE_CLI_PATH + " simulate " + args + " --json");
    REQUIRE(r.code == 0);
    const json got = json::parse(r.out);
    // The recording holds no host-dependent machine: every number is the same on any computer.
    CHECK(first_difference(got.at("trace"), want.at("trace"), "trace") == "");
    CHECK(first_difference(got.at("report"), want.at("report"), "report") == "");
    // The check itself can fail: one changed counter is found and named.
    json changed = want.at("report");
    json& misses = changed["levels"][0]["total"]["misses"];
    misses = misses.get<uint64_t>() + 1;
    CHECK(first_difference(got.at("report"), changed, "report").find("misses") !=
          std::string::npos);
  }
  CHECK(files == 5);
}

// Kernels in rooms (issue #27): every numbered CUDA kernel lives in its family's folder
// (kernels/cuda/sgemm/05_2d_blocktiling.cuh), numbered 1, 2, 3, … without gaps (version 0 is the
// library the bench checks it against), opens with "<family> version N —" and names the bench
// command that runs it.
#include <doctest/doctest.h>
#include "tests/support/source_tree.h"

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

// Each family's folder and the bench suite its versions run in.
const std::map<std::string, std::string> kFamilySuite = {
    {"sgemm", "sgemm"}, {"hgemm", "hgemm"}, {"conv", "conv2d"}, {"attention", "attention"}};

// What is wrong with the numbered kernels of `tree` (path → text), one line each.
std::vector<std::string> kernel_room_problems(const std::map<std::string, std::string>& tree) {
  std::vector<std::string> out;
  const std::regex loose(R"(^kernels/cuda/(sgemm|hgemm|conv|attention)_\d\d_.*\.cuh$)");
  const std::regex in_room(R"(^kernels/cuda/([a-z0-9]+)/(\d\d)_[a-z0-9_]+\.cuh$)");
  const std::regex version_line(R"(version (\d+) —)");
  std::map<std::string, std::set<int>> numbers;
  for (const auto& [path, text] : tree) {
    if (std::regex_match(path, loose)) {
      out.push_back(path + ": a numbered kernel outside its family's folder");
      continue;
    }
    std::smatch m;
    if (!std::regex_match(path, m, in_room)) continue;
    const std::string family = m[1], where = path + ":1: ";
    const int number = std::stoi(m[2]);
    const auto suite = kFamilySuite.find(family);
    if (suite == kFamilySuite.end()) {
      out.push_back(path + ": kernels/cuda/" + family +
                    "/ is not a kernel family (sgemm, hgemm, conv, attention)");
      continue;
    }
    numbers[family].insert(number);
    const std::string first_line = text.substr(0, text.find('\n'));
    std::smatch v;
    if (!std::regex_search(first_line, v, version_line) || std::stoi(v[1]) != number)
      out.push_back(where + "the first line does not say \"version " + std::to_string(number) +
                    " —\"");
    if (text.find("// Run: tilescope-gpu-bench --suite " + suite->second + " ") ==
        std::string::npos)
      out.push_back(path + ": no \"// Run: tilescope-gpu-bench --suite " + suite->second +
                    "\" line");
  }
  for (const auto& [family, set] : numbers) {
    int expect = 1;
    for (int n : set) {
      if (n != expect) {
        out.push_back("kernels/cuda/" + family + "/: version " + std::to_string(expect) +
                      " is missing (versions are numbered from 1 without gaps)");
        break;
      }
      ++expect;
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += x + "\n";
  return s;
}

}  // namespace

TEST_CASE("kernel rooms: the tree's numbered CUDA kernels are in their families' folders") {
  const auto tree = tilescope::test::read_source_tree(
      [](const std::filesystem::path& p) { return p.extension() == ".cuh"; });
  const std::vector<std::string> problems = kernel_room_problems(tree);
  INFO(joined(problems));
  CHECK(problems.empty());
  int numbered = 0;
  for (const auto& [path, text] : tree)
    numbered += path.find("/sgemm/") != std::string::npos ? 1 : 0;
  CHECK(numbered == 10);  // SGEMM versions 1–10 (11 is version 9's tile sweep, no new file)
}

TEST_CASE("kernel rooms: a loose kernel, a wrong first line, a missing run line and a gap fail") {
  const std::string good =
      "// SGEMM version 1 — naive.\n// Run: tilescope-gpu-bench --suite sgemm (this is version "
      "1).\n";
  const std::vector<std::string> v = kernel_room_problems({
      {"kernels/cuda/sgemm_04_loose.cuh", good},
      {"kernels/cuda/sgemm/01_naive.cuh", good},
      {"kernels/cuda/sgemm/03_gap.cuh",
       "// SGEMM version 2 — off by one.\n// Run: tilescope-gpu-bench --suite sgemm (v3).\n"},
      {"kernels/cuda/conv/01_im2col.cuh", "// Conv2D version 1 — im2col.\n"},
      {"kernels/cuda/fft/01_radix2.cuh", good},
  });
  INFO(joined(v));
  REQUIRE(v.size() == 5);
  CHECK(v[0] ==
        "kernels/cuda/conv/01_im2col.cuh: no \"// Run: tilescope-gpu-bench --suite conv2d\" line");
  CHECK(v[1] ==
        "kernels/cuda/fft/01_radix2.cuh: kernels/cuda/fft/ is not a kernel family (sgemm, hgemm, "
        "conv, attention)");
  CHECK(v[2] == "kernels/cuda/sgemm/03_gap.cuh:1: the first line does not say \"version 3 —\"");
  CHECK(v[3] == "kernels/cuda/sgemm_04_loose.cuh: a numbered kernel outside its family's folder");
  CHECK(v[4] ==
        "kernels/cuda/sgemm/: version 2 is missing (versions are numbered from 1 without gaps)");
}

// End-to-end tests of `tilescope-cli autotune`: the sweep of a small GEMM prints one row per grid
// point (the points counted by hand from the tile sizes), the best points are the fastest rows,
// the rank line's Spearman rho matches one computed here from the same times, and a bad loop
// name, tile list, model or step fails with a message that says what and where.
#include "build_paths.h"
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include "tests/support/run_command.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tilescope::test::SplitResult;

// y[16, 16] = x[16, 16] @ W[16, 16]: one kernel, loops i, j (the output) and k (16 each).
const char* kGemm = "x: [16, 16]\nW: [16, 16] weight\ny = x @ W\n";

SplitResult run_cli(const std::string& args) {
  return tilescope::test::run_command_split("timeout 300 '" + std::string(TILESCOPE_CLI_PATH) +
                                            "' " + args);
}

std::string gemm_file() {
  return "'" + tilescope::test::write_scratch_file("gemm16.model", kGemm).string() + "'";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The table's rows: the lines that start with a step.
std::vector<std::string> point_rows(const std::string& out) {
  std::istringstream in(out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  tile(", 0) == 0) rows.push_back(line);
  return rows;
}

// Spearman's rho from its definition: Pearson's correlation of the ranks, ties sharing the mean
// of the ranks they span (a plain O(n²) count, not the code under test).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ranks = [](const std::vector<double>& v) {
    std::vector<double> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      double below = 0, equal = 0;
      for (double x : v) {
        below += x < v[i];
        equal += x == v[i];
      }
      r[i] = below + (equal + 1) / 2;  // 1-based, ties averaged
    }
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = double(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n;
  const double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

}  // namespace

TEST_CASE("autotune: one row per grid point, in order, and the best predicted point") {
  // Tile sizes are the powers of two from 4 up to the extent: 4, 8, 16 on each 16-long loop,
  // so 3 × 3 = 9 points, i's size varying slowest.
  const SplitResult r = run_cli("autotune " + gemm_file() + " --tile i,j --machine tiny");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  const std::vector<std::string> rows = point_rows(r.out);
  REQUIRE(rows.size() == 9);
  size_t n = 0;
  for (int ti : {4, 8, 16})
    for (int tj : {4, 8, 16}) {
      const std::string step = "tile(i, j, " + std::to_string(ti) + ", " + std::to_string(tj) + ")";
      CHECK(rows[n++].rfind("  " + step + " ", 0) == 0);
    }
  // Every point of a 16³ GEMM on tiny (a CPU machine) goes through the analytic model.
  for (const std::string& row : rows) CHECK(has(row, "(analytic model)"));
  CHECK(has(r.out, "sweep: tile(i, j, Ti, Tj) with Ti in 4, 8, 16 and Tj in 4, 8, 16: 9 points"));
  CHECK(has(r.out, "best predicted: tile(i, j, "));
  CHECK(has(r.out, "rank agreement: not computed"));

  // --max-per-axis 2 keeps both ends of each axis: 4 and 16, so 4 points.
  const SplitResult two =
      run_cli("autotune " + gemm_file() + " --tile i,j --machine tiny --max-per-axis 2");
  CHECK(two.code == 0);
  const std::vector<std::string> corners = point_rows(two.out);
  REQUIRE(corners.size() == 4);
  CHECK(corners[1].rfind("  tile(i, j, 4, 16) ", 0) == 0);
  CHECK(corners[2].rfind("  tile(i, j, 16, 4) ", 0) == 0);
}

TEST_CASE("autotune --measure: measured beside predicted, the bests, and the rank line") {
  const SplitResult r = run_cli("autotune " + gemm_file() + " --tile i,j --machine tiny --measure");
  INFO(r.out, r.err);
  REQUIRE(r.code == 0);
  const std::vector<std::string> rows = point_rows(r.out);
  REQUIRE(rows.size() == 9);
  for (const std::string& row : rows) CHECK(has(row, "verified, median of 5"));
  CHECK(has(r.out, "best measured:  tile(i, j, "));
  CHECK(has(r.out, "rank agreement: Spearman's rho "));
  CHECK(has(r.out, " over 9 points timed by both"));

  // The JSON holds the exact times: the bests are the fastest points, and the reported rho is
  // the rank correlation of the two columns.
  const SplitResult j =
      run_cli("autotune " + gemm_file() + " --tile i,j --machine tiny --measure --json");
  INFO(j.out, j.err);
  REQUIRE(j.code == 0);
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  REQUIRE(doc["points"].size() == 9);
  std::vector<double> predicted, measured;
  std::string fastest_predicted, fastest_measured;
  double best_p = 1e300, best_m = 1e300;
  for (const nlohmann::json& p : doc["points"]) {
    REQUIRE(p["predicted"]["ok"].get<bool>());
    REQUIRE(p["measured"]["ok"].get<bool>());
    const double tp = p["predicted"]["seconds"], tm = p["measured"]["seconds"];
    predicted.push_back(tp);
    measured.push_back(tm);
    // The first of equal times wins, as in the sweep.
    if (tp < best_p) {
      best_p = tp;
      fastest_predicted = p["step"].get<std::string>();
    }
    if (tm < best_m) {
      best_m = tm;
      fastest_measured = p["step"].get<std::string>();
    }
  }
  CHECK(doc["best_predicted"]["step"] == fastest_predicted);
  CHECK(doc["best_measured"]["step"] == fastest_measured);
  const nlohmann::json& rank = doc["rank_agreement"];
  CHECK(rank["method"] == "spearman");
  CHECK(rank["points"] == 9);
  const double rho = spearman(predicted, measured);
  if (std::isnan(rho))
    CHECK(rank["rho"].is_null());  // one column all equal: undefined, and said so
  else
    CHECK(rank["rho"].get<double>() == doctest::Approx(rho).epsilon(1e-12));
}

TEST_CASE("autotune: an unknown loop fails and names the kernel's loops") {
  const SplitResult r = run_cli("autotune " + gemm_file() + " --tile i,q --machine tiny");
  CHECK(r.code == 1);
  CHECK(r.out.empty());
  CHECK(has(r.err, "autotune: kernel matmul0 has no loop named 'q'"));
  CHECK(has(r.err, "its loops are i (16), j (16), k (16)"));
}

TEST_CASE("autotune: a bad tile list, model or step fails saying what and where") {
  for (const char* tile : {"i", "i,j,k", "i,", ",j"}) {
    const SplitResult r =
        run_cli("autotune " + gemm_file() + " --tile '" + tile + "' --machine tiny");
    CAPTURE(tile);
    CHECK(r.code == 1);
    CHECK(has(r.err, "--tile takes the two loops to sweep"));
    CHECK(has(r.err, std::string("got '") + tile + "'"));
  }
  const SplitResult same = run_cli("autotune " + gemm_file() + " --tile j,j --machine tiny");
  CHECK(same.code == 1);
  CHECK(has(same.err, "the two loops must differ"));

  // The model's error at its line and column: line 3, column 9 is the 'Q' of "y = x @ Q".
  const std::string bad = tilescope::test::write_scratch_file(
                              "bad.model", "x: [16, 16]\nW: [16, 16] weight\ny = x @ Q\n")
                              .string();
  const SplitResult model = run_cli("autotune '" + bad + "' --tile i,j --machine tiny");
  CHECK(model.code == 1);
  CHECK(has(model.err, bad + ":3:9: error: unknown tensor 'Q'"));

  // A step the schedule refuses, at its column in --apply ("tile(q" starts at column 13).
  const SplitResult step =
      run_cli("autotune " + gemm_file() + " --tile i,j --apply 'tile(i, 4); tile(q, 4)'");
  CHECK(step.code == 1);
  CHECK(has(step.err, "autotune: --apply:1:13: tile(q, 4) refused"));
}

// Baselines (issue #32) without a display: the comparison table against hand-built results, the
// `baseline` commands on a kernel whose traffic is a closed form (one cache that holds it all),
// pinning a history point through the baseline's own job, refusals, and a session round trip.
#include "app/core/baseline.h"
#include "app/core/commands.h"
#include "app/core/session.h"
#include "tests/core/workbench_fixtures.h"

#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

using namespace tilescope::core;
namespace memory = tilescope::memory;

namespace {

// x: [32, 128], W: [64, 128], b: [64]; y = relu(x @ W.T + b).
constexpr uint64_t M = 32, N = 64, K = 128;
const char* kModel = "x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n";

memory::Counters counters(uint64_t accesses, uint64_t misses, uint64_t read, uint64_t written) {
  memory::Counters c;
  c.accesses = accesses;
  c.hits = accesses - misses;
  c.misses = misses;
  c.read_bytes = read;
  c.write_bytes = written;
  return c;
}

// One cache level and main memory, with tensors "x" (id 0) and "t" (id 1) at each.
MemoryResult result(const std::string& machine, const std::vector<std::string>& tensors,
                    uint64_t l1_misses, uint64_t dram_bytes, double seconds) {
  MemoryResult r;
  r.machine = machine;
  r.tensor_names = tensors;
  LevelResult l1{"L1", 1024, 0, counters(400, l1_misses, 0, 0), {}};
  LevelResult dram{"DRAM", 0, 0, counters(l1_misses, 0, dram_bytes, 0), {}};
  l1.by_tensor.push_back({});  // unlabelled
  dram.by_tensor.push_back({});
  for (size_t t = 0; t < tensors.size(); ++t) {
    l1.by_tensor.push_back(counters(200, l1_misses / 2, 0, 0));
    dram.by_tensor.push_back(counters(l1_misses / 2, 0, dram_bytes / 2, 0));
  }
  r.levels = {l1, dram};
  r.roofline.seconds = seconds;
  r.roofline.binding = "DRAM";
  return r;
}

const CompareRow& row(const std::vector<CompareRow>& rows, const std::string& level,
                      const std::string& what, const std::string& tensor = "") {
  for (const CompareRow& r : rows)
    if (r.level == level && r.what == what && r.tensor == tensor) return r;
  FAIL("no row " << level << " " << what << " " << tensor);
  return rows.front();
}

}  // namespace

TEST_CASE("the comparison puts A beside B per level, per tensor and in time") {
  const MemoryResult a = result("tiny", {"x", "t"}, 100, 6400, 2e-3);
  const MemoryResult b = result("tiny", {"x", "u"}, 50, 3200, 1e-3);
  const Comparison c = compare_results(a, b, "A", "B");
  CHECK(c.notes.empty());
  // L1: 100 → 50 misses of 400 accesses (hit rate 75 % → 87.5 %); DRAM 6400 → 3200 bytes.
  CHECK(row(c.levels, "L1", "misses").a == 100);
  CHECK(row(c.levels, "L1", "misses").b == 50);
  CHECK(row(c.levels, "L1", "misses").relative() == doctest::Approx(-0.5));
  CHECK(row(c.levels, "L1", "hit rate").delta() == doctest::Approx(0.125));
  CHECK(change_text(row(c.levels, "L1", "hit rate")) == "+12.50 pts");
  CHECK(row(c.levels, "DRAM", "bytes").delta() == -3200);
  CHECK(relative_text(row(c.levels, "DRAM", "bytes")) == "\u221250.0 %");
  CHECK(c.levels.size() == 3);
  // Tensors by name: x in both; u only in B ("new"), t only in A (B's 0).
  CHECK(row(c.tensors, "DRAM", "bytes", "x").a == 3200);
  CHECK(row(c.tensors, "DRAM", "bytes", "x").b == 1600);
  CHECK(relative_text(row(c.tensors, "DRAM", "bytes", "u")) == "new");
  CHECK(std::isinf(row(c.tensors, "DRAM", "bytes", "u").relative()));
  CHECK(row(c.tensors, "L1", "misses", "t").b == 0);
  CHECK(row(c.tensors, "L1", "misses", "t").a == 50);
  REQUIRE(c.time);
  CHECK(c.time->a == 2e-3);
  CHECK(c.time->relative() == doctest::Approx(-0.5));
  // JSON: null for an infinite change, numbers otherwise.
  const nlohmann::json j = comparison_json(c);
  CHECK(j["levels"].size() == 3);
  bool saw_new = false;
  for (const auto& t : j["tensors"])
    if (t["tensor"] == "u" && t["what"] == "bytes") saw_new = t["relative"].is_null();
  CHECK(saw_new);
  CHECK(comparison_text(c).find("t @ DRAM") != std::string::npos);

  // Different machines: said, and a level only one of them has is named.
  MemoryResult other = b;
  other.machine = "h200";
  other.levels[0].name = "L2";
  const Comparison d = compare_results(a, other, "A", "B");
  REQUIRE(d.notes.size() == 3);
  CHECK(d.notes[0].find("A ran on tiny and B on h200") != std::string::npos);
  CHECK(d.notes[1] == "L2 is only in B's machine");
  CHECK(d.notes[2] == "L1 is only in A's machine");
  CHECK(d.levels.size() == 1);  // main memory, matched as the last level of each
}

TEST_CASE("baseline pin, a step, and the change in DRAM bytes is the fused-in bias") {
  AppState state = test::state_on_big_cache(kModel);
  Workbench& wb = state.workbench;
  REQUIRE(test::run(state, "simulate") == "");
  test::wait_jobs(state);
  REQUIRE(test::run(state, "baseline pin") == "");
  // The current schedule was simulated already: A is ready at once, from the Memory cache.
  REQUIRE(wb.baseline);
  CHECK(wb.baseline->result);
  CHECK(wb.baseline->label == "the default lowering");
  CHECK_FALSE(wb.baseline_job.running());

  REQUIRE(test::run(state, "apply \"fuse(matmul0, add0, relu0)\"") == "");
  REQUIRE(test::run(state, "simulate") == "");
  test::wait_jobs(state);
  const std::optional<Comparison> c = workbench_comparison(wb);
  REQUIRE(c);
  // Everything stays in the one big cache: each tensor read once, each output line fetched
  // (write-allocate) and written back once. A = the MatMul alone (x, W, its output matmul0);
  // B = the fused kernel (x, W, b, y): the change is b's bytes, N × 4.
  const uint64_t x = M * K * 4, w = N * K * 4, b = N * 4, y = M * N * 4;
  const CompareRow& dram = row(c->levels, "DRAM", "bytes");
  CHECK(dram.a == double(x + w + 2 * y));
  CHECK(dram.b == double(x + w + b + 2 * y));
  CHECK(dram.delta() == double(b));
  CHECK(row(c->tensors, "DRAM", "bytes", "matmul0").b == 0);
  CHECK(row(c->tensors, "DRAM", "bytes", "matmul0").a == double(2 * y));
  CHECK(row(c->tensors, "DRAM", "bytes", "b").a == 0);
  CHECK(c->b_label == "B: 1 step: fuse(matmul0, add0, relu0)");
  CHECK(baseline_state_json(wb)["comparison"]["levels"].size() == 3);

  // Entry 0 pinned from step 1: not the current schedule, so the baseline's own job runs it.
  wb.baseline.reset();
  REQUIRE(test::run(state, "baseline pin 0") == "");
  REQUIRE(wb.baseline);
  CHECK(wb.baseline->step_count == 0);
  test::wait_jobs(state);
  REQUIRE(wb.baseline->result);
  CHECK(wb.baseline->result->dram_bytes() == x + w + 2 * y);
  CHECK(wb.history->size() == 1);  // B stays where it was

  // Refusals, and clear.
  CHECK(test::run(state, "baseline pin 5").find("there are only 1 steps") != std::string::npos);
  CHECK_THROWS_AS(parse_command("baseline pin 1.5"), CommandError);
  CHECK_THROWS_AS(parse_command("baseline keep"), CommandError);
  CHECK(command_to_string(parse_command("baseline pin 2")) == "baseline pin 2");
  REQUIRE(test::run(state, "baseline clear") == "");
  CHECK_FALSE(wb.baseline);
  CHECK(baseline_state_json(wb).is_null());
  CHECK(test::run(state, "baseline run-cpu") == "baseline run-cpu: no baseline is pinned");
}

TEST_CASE("A pinned while its simulation runs, then a step at once: A's own job finishes it") {
  AppState state = test::state_on_big_cache(kModel);
  Workbench& wb = state.workbench;
  REQUIRE(test::run(state, "simulate") == "");
  REQUIRE(test::run(state, "baseline pin") == "");  // left to the Memory job, still running
  REQUIRE(test::run(state, "apply \"tile(i, 8)\"") == "");
  REQUIRE(test::run(state, "simulate") == "");  // the Memory job moves on to B
  test::wait_jobs(state);
  REQUIRE(wb.baseline->result);
  CHECK(wb.baseline->result->dram_bytes() == (M * K + N * K + 2 * M * N) * 4);
  CHECK(workbench_comparison(wb));
}

TEST_CASE("a session keeps baseline A and simulates it again on restore") {
  AppState state = test::state_for(kModel);
  REQUIRE(test::run(state, "machine tiny") == "");
  REQUIRE(test::run(state, "apply \"tile(i, 8)\"") == "");
  REQUIRE(test::run(state, "baseline pin") == "");
  test::wait_jobs(state);
  REQUIRE(state.workbench.baseline->result);
  const uint64_t bytes = state.workbench.baseline->result->dram_bytes();
  REQUIRE(test::run(state, "apply \"tile(j, 8)\"") == "");
  const nlohmann::json saved = session_to_json(state);
  CHECK(saved["baseline"]["steps"] == "tile(i, 8)");

  AppState restored = test::state_for(kModel);
  CHECK(session_from_json(restored, saved) == "");
  REQUIRE(restored.workbench.baseline);
  CHECK(restored.workbench.baseline->steps == "tile(i, 8)");
  CHECK(restored.workbench.baseline->machine == "tiny");
  CHECK(restored.workbench.history->size() == 2);
  test::wait_jobs(restored);
  REQUIRE(restored.workbench.baseline->result);
  CHECK(restored.workbench.baseline->result->dram_bytes() == bytes);

  // A baseline field of the wrong shape is named and skipped; the rest is restored.
  nlohmann::json bad = saved;
  bad["baseline"] = {{"steps", 3}};
  AppState again = test::state_for(kModel);
  CHECK(session_from_json(again, bad).find("baseline is not an object") != std::string::npos);
  CHECK_FALSE(again.workbench.baseline);
  CHECK(again.workbench.history->size() == 2);
}

namespace {

// A recorded run with the counters named, as a recording's JSON holds them.
tilescope::kernels::CounterRun recorded_run(std::map<std::string, double> measured) {
  tilescope::kernels::CounterRun run;
  run.suite = "sgemm";
  run.version = 3;
  run.name = "smem_tiled";
  run.m = run.n = run.k = 256;
  run.measured = std::move(measured);
  return run;
}

// L1, L2 and DRAM, as a GPU machine's result has them.
MemoryResult three_levels(const std::string& machine) {
  MemoryResult r;
  r.machine = machine;
  r.levels = {{"L1", 1024, 0, counters(1000, 300, 4000, 0), {}},
              {"L2", 4096, 0, counters(300, 100, 9600, 640), {}},
              {"DRAM", 0, 0, counters(100, 0, 6400, 640), {}}};
  r.roofline.seconds = 2e-6;
  r.roofline.binding = "DRAM";
  return r;
}

}  // namespace

TEST_CASE("a recorded run against B: ncu's L2 sectors and DRAM bytes, cachegrind's misses") {
  const MemoryResult b = three_levels("h200");
  // ncu: L2 sectors × 32 B against B's L2 bytes; DRAM bytes; its time beside B's bound.
  const auto ncu = recorded_run({{"l1_load_sectors", 999},
                                 {"l2_read_sectors", 250},
                                 {"l2_write_sectors", 50},
                                 {"dram_read_bytes", 5000},
                                 {"dram_write_bytes", 1000},
                                 {"time_ns", 4000}});
  const Comparison c = compare_recording(ncu, "ncu", "NVIDIA H200", b, "A", "B");
  REQUIRE(c.levels.size() == 2);  // L1 is not compared: sectors against bytes asked for
  CHECK(row(c.levels, "L2", "bytes").a == 32 * 300);
  CHECK(row(c.levels, "L2", "bytes").b == 9600 + 640);
  CHECK(row(c.levels, "DRAM", "bytes").a == 6000);
  CHECK(row(c.levels, "DRAM", "bytes").b == 7040);
  REQUIRE(c.time);
  CHECK(c.time->a == doctest::Approx(4e-6));
  CHECK(c.time->b == 2e-6);
  CHECK(c.time_label == "A measured, B bound");
  CHECK(c.tensors.empty());
  CHECK(c.notes.front() ==
        "A was measured by Nsight Compute on NVIDIA H200; B is simulated on h200");
  CHECK(c.notes.size() == 3);  // B states no FLOPs: no size note
  CHECK(comparison_json(c)["time"]["label"] == "A measured, B bound");
  CHECK(comparison_text(c).find("per tensor") == std::string::npos);

  // Without a time or L2 counters: no time row, and the missing counter is no row.
  const Comparison d =
      compare_recording(recorded_run({{"dram_read_bytes", 10}, {"dram_write_bytes", 0}}), "ncu",
                        "a GPU", b, "A", "B");
  CHECK(d.levels.size() == 1);
  CHECK_FALSE(d.time);
  CHECK(comparison_json(d)["time"].is_null());

  // cachegrind: D1 against B's first cache, LL against its last, in misses.
  const Comparison g = compare_recording(recorded_run({{"d1_misses", 280}, {"ll_misses", 120}}),
                                         "cachegrind", "this CPU", b, "A", "B");
  REQUIRE(g.levels.size() == 2);
  CHECK(row(g.levels, "L1", "misses").a == 280);
  CHECK(row(g.levels, "L1", "misses").b == 300);
  CHECK(row(g.levels, "L2", "misses").a == 120);
  CHECK(row(g.levels, "L2", "misses").b == 100);
  CHECK_FALSE(g.time);
  // B's kernel does other FLOPs than A's 2·256³: said.
  MemoryResult small = b;
  small.flops = 1000;
  const Comparison sized = compare_recording(ncu, "ncu", "NVIDIA H200", small, "A", "B");
  CHECK(sized.notes.size() == 4);
  CHECK(sized.notes[1].find("the problems differ in size: A's GEMM does 33.6 MFLOP") == 0);
  // … and main memory's bytes per FLOP stand beside the bytes: 6000 / 2·256³ against 7040 / 1000.
  REQUIRE(sized.levels.size() == 3);
  CHECK(row(sized.levels, "DRAM", "bytes/FLOP").a ==
        doctest::Approx(6000.0 / (2.0 * 256 * 256 * 256)));
  CHECK(row(sized.levels, "DRAM", "bytes/FLOP").b == doctest::Approx(7.04));
  CHECK(value_text(row(sized.levels, "DRAM", "bytes/FLOP"), 7.04) == "7.04");
  // cachegrind's: the last cache's misses per FLOP, 120 / 2·256³ against 100 / 1000.
  const Comparison gsized =
      compare_recording(recorded_run({{"d1_misses", 280}, {"ll_misses", 120}}), "cachegrind",
                        "this CPU", small, "A", "B");
  CHECK(row(gsized.levels, "L2", "misses/FLOP").b == doctest::Approx(0.1));
  CHECK(row(gsized.levels, "L2", "misses/FLOP").a ==
        doctest::Approx(120.0 / (2.0 * 256 * 256 * 256)));

  // The Roofline view's point: 2·256³ FLOPs, 6000 B, 4 µs.
  const std::optional<RecordedPoint> p = recorded_point(ncu);
  REQUIRE(p);
  CHECK(p->flops == 2.0 * 256 * 256 * 256);
  CHECK(p->dram_bytes == 6000);
  CHECK(p->seconds == doctest::Approx(4e-6));
  CHECK_FALSE(recorded_point(recorded_run({{"d1_misses", 1}})));
}

TEST_CASE("baseline pin-recorded: a recorded H200 run is A, kept in the session") {
  AppState state = test::state_for(kModel);
  Workbench& wb = state.workbench;
  workbench_load_recorded(wb, "assets/recorded");  // tests run from the source tree
  REQUIRE(test::run(state, "machine h200") == "");
  const auto* rec = counters_for_machine_kind(wb.counters_recorded, "gpu", "h200");
  REQUIRE(rec);
  CHECK(rec->first.find("h200") != std::string::npos);
  // The recording's run 2, read from its JSON here, not through the report's loader.
  std::ifstream in(rec->first);
  const nlohmann::json doc = nlohmann::json::parse(in);
  const nlohmann::json& run = doc["runs"][2];
  const double dram = run["measured"]["dram_read_bytes"].get<double>() +
                      run["measured"]["dram_write_bytes"].get<double>();
  const double l2 = 32 * (run["measured"]["l2_read_sectors"].get<double>() +
                          run["measured"]["l2_write_sectors"].get<double>());

  REQUIRE(test::run(state, "baseline pin-recorded 2") == "");
  REQUIRE(wb.baseline);
  REQUIRE(wb.baseline->recording);
  CHECK(wb.baseline->ready());
  CHECK(wb.baseline->label.find("recorded " + run["suite"].get<std::string>() + " ") == 0);
  CHECK(baseline_state_json(wb)["recording"]["run"] == 2);
  CHECK(baseline_state_json(wb)["dram_bytes"] == dram);
  REQUIRE(test::run(state, "simulate") == "");
  test::wait_jobs(state);
  const std::optional<Comparison> c = workbench_comparison(wb);
  REQUIRE(c);
  const std::string memory = wb.memory_result()->levels.back().name;  // "HBM3e"
  CHECK(row(c->levels, memory, "bytes").a == dram);
  CHECK(row(c->levels, memory, "bytes").b == double(wb.memory_result()->dram_bytes()));
  CHECK(row(c->levels, "L2", "bytes").a == l2);
  REQUIRE(c->time);
  CHECK(c->time->a == doctest::Approx(run["measured"]["time_ns"].get<double>() * 1e-9));
  CHECK(test::run(state, "baseline run-cpu").find("A is a recording") != std::string::npos);
  CHECK(command_to_string(parse_command("baseline pin-recorded 4")) == "baseline pin-recorded 4");
  CHECK_THROWS_AS(parse_command("baseline pin-recorded"), CommandError);
  CHECK(test::run(state, "baseline pin-recorded 999").find("runs (0 to") != std::string::npos);
  CHECK(wb.baseline->recording->run == 2);  // a refused pin keeps A

  // The session keeps the file and the run; a restore pins it again.
  const nlohmann::json saved = session_to_json(state);
  CHECK(saved["baseline"]["recording"]["run"] == 2);
  AppState restored = test::state_for(kModel);
  workbench_load_recorded(restored.workbench, "assets/recorded");
  CHECK(session_from_json(restored, saved) == "");
  REQUIRE(restored.workbench.baseline);
  REQUIRE(restored.workbench.baseline->recording);
  CHECK(restored.workbench.baseline->recording->run == 2);
  CHECK(restored.workbench.baseline->label == wb.baseline->label);

  // A recording that is gone by the next start: said; the rest of the session is restored.
  nlohmann::json gone = saved;
  gone["baseline"]["recording"]["file"] = "assets/recorded/no-such-counters.json";
  AppState again = test::state_for(kModel);
  workbench_load_recorded(again.workbench, "assets/recorded");
  CHECK(session_from_json(again, gone)
            .find("baseline A was not restored: baseline: no counters "
                  "recording 'assets/recorded/no-such-counters.json'") != std::string::npos);
  CHECK_FALSE(again.workbench.baseline);
  CHECK(again.workbench.machine_name == "h200");

  // No recording loaded: said, and nothing pinned.
  AppState bare = test::state_for(kModel);
  CHECK(test::run(bare, "baseline pin-recorded 0").find("no cachegrind counters recording") !=
        std::string::npos);
  CHECK_FALSE(bare.workbench.baseline);
}

// Rules of the workbench (issue #7) without a display: view and schedule commands, the history
// (undo, redo, go back, branch), refusals kept as state, result caches invalidated by schedule,
// machine and model changes, and the background jobs' numbers checked against hand counts.
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/session.h"
#include "app/core/workbench.h"
#include "build_paths.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "sim/predict/machine.h"
#include "kernels/cpu/schedule_twin.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/lower.h"
#include "tests/core/workbench_fixtures.h"
#include "tests/support/run_command.h"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>

using namespace tilescope::core;
namespace schedule = tilescope::schedule;
namespace predict = tilescope::predict;
namespace pipeline = tilescope::pipeline;
namespace kernels = tilescope::kernels;

namespace {

// M=32 rows, K=128 features in, N=64 out: small enough that every job finishes in a moment.
constexpr int64_t M = 32, N = 64, K = 128;
const char* kSmallModel =
    "x: [32, 128]\nW: [64, 128] weight\nb: [64] weight\ny = relu(x @ W.T + b)\n";

AppState small_state() {
  return test::state_for(kSmallModel);
}
using test::big_cache_machine;
using test::run;
using test::wait_jobs;

}  // namespace

// [SECTION] Commands

TEST_CASE("workbench commands round-trip through their script form") {
  for (const char* line :
       {"view schedule", "view timings", "apply \"tile(i, 16)\"", "undo", "redo", "goto-step 2",
        "machine h200", "simulate", "run-cpu", "cancel", "wait-jobs", "tiles play", "tiles seek 3",
        "tiles speed 12", "tiles record", "key 3", "present", "present on", "fullscreen"}) {
    CAPTURE(line);
    CHECK(command_to_string(parse_command(line)) == line);
  }
  CHECK(parse_command("apply tile(i, 16); tile(j, 8)").text == "tile(i, 16); tile(j, 8)");
  CHECK_THROWS_WITH_AS(parse_command("view plot"), doctest::Contains("roofline"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("apply"), doctest::Contains("needs a step"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("tiles jump"), doctest::Contains("play, pause"), CommandError);
}

TEST_CASE("the view command switches the centre view and the click-node rule follows it") {
  AppState state = small_state();
  CHECK(state.workbench.tab == ViewTab::Graph);
  for (ViewTab t : kAllViewTabs) {
    CHECK(run(state, std::string("view ") + view_tab_name(t)) == "");
    CHECK(state.workbench.tab == t);
  }
  CHECK(run(state, "click-node add0").find("no graph is on screen") != std::string::npos);
}

// [SECTION] History

TEST_CASE("going back and applying a step branches: the undone steps are dropped") {
  AppState state = small_state();
  CHECK(run(state, "apply \"fuse(matmul0, add0, relu0)\"") == "");
  CHECK(run(state, "apply tile(i, 16); tile(j, 8)") == "");
  const Workbench& wb = state.workbench;
  REQUIRE(wb.history->size() == 3);
  CHECK(wb.step_texts ==
        std::vector<std::string>{"fuse(matmul0, add0, relu0)", "tile(i, 16)", "tile(j, 8)"});
  CHECK(run(state, "goto-step 1") == "");
  CHECK(wb.history->size() == 1);
  CHECK(wb.step_texts.size() == 3);  // still redo-able
  CHECK(run(state, "redo") == "");
  CHECK(wb.history->size() == 2);
  CHECK(run(state, "undo") == "");
  CHECK(run(state, "apply \"tile(k, 2)\"") == "");  // the branch
  CHECK(wb.step_texts == std::vector<std::string>{"fuse(matmul0, add0, relu0)", "tile(k, 2)"});
  CHECK(run(state, "redo") == "redo: nothing to redo");
  CHECK(run(state, "goto-step 0") == "");
  CHECK(wb.history->size() == 0);
  CHECK(run(state, "goto-step 5").find("only 2 steps") != std::string::npos);
}

TEST_CASE("a refused step is kept as state with its explanation; the schedule is unchanged") {
  AppState state = small_state();
  CHECK(run(state, "apply \"tile(i, 16)\"") == "");
  const std::string before = state.workbench.steps_text();
  CHECK(run(state, "apply \"tile(k, 2048)\"") == "");  // not an error: a refusal to show
  REQUIRE(state.workbench.last);
  CHECK_FALSE(state.workbench.last->ok);
  CHECK(state.workbench.last->step == "tile(k, 2048)");
  CHECK_FALSE(state.workbench.last->explanation.empty());
  CHECK(state.workbench.steps_text() == before);
  // Text that is not a step at all is a command error naming the problem.
  CHECK(run(state, "apply \"tile(k 2)\"").find("apply:") == 0);
}

TEST_CASE("an edit to the model keeps the steps that still apply") {
  AppState state = small_state();
  CHECK(run(state, "apply fuse(matmul0, add0, relu0); tile(i, 16)") == "");
  CHECK(run(state, "replace-line 1 x: [64, 128]") == "");
  update_state(state);
  CHECK(state.workbench.history->size() == 2);
  CHECK(state.workbench.kernel()->name == state.workbench.program()->kernels[0].name);
}

// [SECTION] Jobs and caches

TEST_CASE("main-memory traffic of a fused small matmul equals the hand count with a big cache") {
  AppState state = small_state();
  REQUIRE(run(state, "apply \"fuse(matmul0, add0, relu0)\"") == "");
  tilescope::core::JobProgress progress;
  const MemoryResult r =
      simulate_kernel(*state.workbench.kernel(), *state.graph(), big_cache_machine(), progress);
  // Reads: x, W, b once each, and y's lines once (4-byte writes do not cover a 64-byte line, so
  // write-allocate fetches them); writes: y's dirty lines once when the results reach memory.
  const uint64_t x = M * K * 4, w = N * K * 4, b = N * 4, y = M * N * 4;
  REQUIRE(r.levels.size() == 2);
  CHECK(r.levels[1].total.read_bytes == x + w + b + y);
  CHECK(r.levels[1].total.write_bytes == y);
  CHECK(r.levels[0].total.capacity == 0);
  CHECK(r.flops == 2 * M * N * K + 2 * M * N);  // MAC = 2 FLOPs; add and ReLU 1 per element
  CHECK(progress.fraction == 1.0);
}

TEST_CASE("memory results are cached per (schedule, machine) and invalidated by either") {
  AppState state = small_state();
  REQUIRE(run(state, "machine tiny") == "");
  REQUIRE(run(state, "simulate") == "");
  wait_jobs(state);
  REQUIRE(state.workbench.memory_result());
  CHECK(state.workbench.memory_result()->machine == "tiny");
  CHECK(run(state, "apply \"tile(i, 16)\"") == "");
  CHECK(state.workbench.memory_result() == nullptr);  // new schedule: not simulated yet
  CHECK(run(state, "undo") == "");
  CHECK(state.workbench.memory_result() != nullptr);  // back: the cached result again
  CHECK(run(state, "machine h200") == "");
  CHECK(state.workbench.memory_result() == nullptr);  // new machine
  CHECK(run(state, "replace-line 1 x: [16, 128]") == "");
  update_state(state);
  CHECK(run(state, "machine tiny") == "");
  CHECK(state.workbench.memory_result() == nullptr);  // new model
}

TEST_CASE("a cancelled simulation leaves no result and says it was cancelled") {
  AppState state;
  state.model.text = "x: [256, 1024]\nW: [1024, 1024] weight\ny = x @ W.T\n";
  REQUIRE(reparse_model(state));
  update_state(state);
  REQUIRE(run(state, "machine tiny") == "");
  // About 5·10^8 accesses: held for a learner's say-so (sizing), so start it with anyway.
  REQUIRE(run(state, "simulate anyway") == "");
  REQUIRE(run(state, "cancel") == "");
  wait_jobs(state);
  CHECK(state.workbench.memory_result() == nullptr);
  REQUIRE(state.workbench.memory_errors.count(state.workbench.memory_key()) == 1);
  CHECK(state.workbench.memory_errors.at(state.workbench.memory_key()) == "cancelled");
}

TEST_CASE("tiles frames count every element access: x and W M*N*K times, b and y M*N times") {
  AppState state = small_state();
  REQUIRE(run(state, "apply fuse(matmul0, add0, relu0); tile(i, 8)") == "");
  JobProgress progress;
  const TilesResult t = record_tiles(*state.workbench.kernel(), progress);
  REQUIRE(t.frames.size() >= 2);
  CHECK(std::accumulate(t.frames.front().begin(), t.frames.front().end(), uint64_t{0}) == 0);
  uint64_t total = 0;
  for (uint32_t v : t.frames.back()) total += v;
  CHECK(total == uint64_t(2 * M * N * K + 2 * M * N));
  // Frames are cumulative: counts never go down.
  bool monotone = true;
  for (size_t f = 1; f < t.frames.size(); ++f)
    for (size_t i = 0; i < t.frames[f].size(); ++i)
      monotone = monotone && t.frames[f][i] >= t.frames[f - 1][i];
  CHECK(monotone);
}

TEST_CASE("tiles: a staged tile is a grid of its own, beside the tensor it copies") {
  // A (16×32) @ B (32×16), k split by 8, A's 1×8 slice staged in a scratchpad at each k.o: the
  // copy runs i·j·k.o = 16·16·4 = 1024 times, reading 8 elements of A and writing 8 of the tile;
  // the statement then reads A from the tile 16·16·32 = 8192 times. So the tile's 8 elements see
  // 8192 writes + 8192 reads, A 8192 reads (all by the copies), B 8192 reads as before.
  AppState state = test::state_for("A: [16, 32]\nB: [32, 16]\nC = A @ B\n");
  REQUIRE(run(state, "apply tile(k, 8); stage(A, scratchpad, at=k.o)") == "");
  JobProgress progress;
  const TilesResult t = record_tiles(*state.workbench.kernel(), progress);
  REQUIRE(t.grids.size() == 4);
  auto total = [&](const TileGrid& g) {
    uint64_t n = 0;
    for (size_t i = 0; i < size_t(g.bin_rows) * size_t(g.bin_cols); ++i)
      n += t.frames.back()[g.offset + i];
    return n;
  };
  CHECK(t.grids[0].name == "A");
  CHECK(t.grids[0].staged_from.empty());
  const TileGrid& tile = t.grids[1];  // right after A
  CHECK(tile.staged_from == "A");
  CHECK(tile.level == "scratchpad");
  CHECK(tile.rows * tile.cols == 8);
  CHECK(total(tile) == 8192 + 8192);
  CHECK(total(t.grids[0]) == 8192);
  CHECK(t.grids[2].name == "B");
  CHECK(total(t.grids[2]) == 8192);
  // The tile is coloured against its own peak: 16384 accesses over 8 elements.
  CHECK(tile.peak_per_element == doctest::Approx(2048.0));
  CHECK(t.peak_per_element < tile.peak_per_element);
}

TEST_CASE("one pipeline: the workbench, the CLI, the lesson checker and the CPU twin agree") {
  // The same model, steps and machine through sim/pipeline.h directly and through every front end
  // that enters by it: the program (loop nest, generated code), every level's counters and the
  // predicted time must agree exactly (CPU and GPU mode).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"tiny", "fuse(matmul0, add0, relu0); tile(i, 8); tile(k, 32)"},
      {"h200",
       "fuse(matmul0, add0, relu0); tile(i, 16); tile(j, 16); reorder(i.o, j.o, i.i, j.i, k); "
       "bind(i.o, block.y); "
       "bind(j.o, block.x); bind(i.i, thread.y); bind(j.i, thread.x)"}};
  const std::filesystem::path dir = std::filesystem::path("build") / "test-scratch";
  std::filesystem::create_directories(dir);
  const std::filesystem::path model_file = dir / "pipeline.model";
  std::ofstream(model_file) << kSmallModel;
  for (const auto& [machine, steps] : cases) {
    CAPTURE(machine);
    // The workbench (what the Memory view shows).
    AppState state = small_state();
    REQUIRE(run(state, "machine " + machine) == "");
    REQUIRE(run(state, "apply " + steps) == "");
    REQUIRE(state.workbench.machine);
    JobProgress progress;
    const MemoryResult gui = simulate_kernel(*state.workbench.kernel(), *state.workbench.program()->graph,
                                             *state.workbench.machine, progress);
    // The CLI.
    const tilescope::test::SplitResult cli = tilescope::test::run_command_split(
        std::string(TILESCOPE_CLI_PATH) + " simulate " + model_file.string() + " --machine " +
        machine + " --apply \"" + steps + "\" --json");
    INFO(cli.err);
    REQUIRE(cli.code == 0);
    const nlohmann::json j = nlohmann::json::parse(cli.out);
    // The lesson checker.
    const std::string lesson_text =
        "---\ntitle: t\nlevel: beginner\nminutes: 1\n---\n# t\n\n```model id=m\n" +
        std::string(kSmallModel) + "```\n\n```steps id=s model=m\n" + steps +
        "\n```\n\n```check model=m machine=" + machine + "\ndram_bytes(s) > 0\n```\n";
    tilescope::lesson::LessonSession lesson(tilescope::lesson::parse_lesson(lesson_text, "t.md"));
    const tilescope::lesson::SimResult& checked = lesson.simulate("s", machine);
    // The pipeline itself, from a file as the CLI reads it.
    const pipeline::Study study = pipeline::study(pipeline::read_model(model_file.string()), steps,
                                                  predict::load_machine(machine));
    const predict::KernelRun direct = pipeline::simulate(study);

    // One program: the same loop nest and code everywhere.
    const std::string nest = schedule::print_loop_nest(study.kernel());
    CHECK(schedule::print_loop_nest(*state.workbench.kernel()) == nest);
    CHECK(j["kernel"]["loop_nest"].get<std::string>() == nest);
    const tilescope::lesson::LessonProgram* lp = lesson.program("s");
    REQUIRE(lp);
    CHECK(schedule::print_loop_nest(lp->program.kernels.at(size_t(lp->program.current))) == nest);
    if (machine == "tiny") {
      // The CPU twin JIT-compiles what generate_schedule emits (steps legal on the default target).
      const kernels::GeneratedSchedule twin = kernels::generate_schedule(kSmallModel, steps);
      CHECK(twin.loop_nest == nest);
      CHECK(twin.source == schedule::emit_cpp(study.kernel()));
    }
    REQUIRE(direct.simulated());
    CHECK(direct.dram_bytes() == gui.dram_bytes());
    CHECK(direct.roofline.seconds == doctest::Approx(gui.roofline.seconds));

    const nlohmann::json& levels = j["report"]["levels"];
    REQUIRE(levels.size() == gui.levels.size());
    REQUIRE(checked.levels.size() == gui.levels.size());
    for (size_t l = 0; l < gui.levels.size(); ++l) {
      CAPTURE(gui.levels[l].name);
      const tilescope::memory::Counters& g = gui.levels[l].total;
      CHECK(levels[l]["total"]["misses"].get<uint64_t>() == g.misses);
      CHECK(levels[l]["total"]["read_bytes"].get<uint64_t>() == g.read_bytes);
      CHECK(levels[l]["total"]["write_bytes"].get<uint64_t>() == g.write_bytes);
      CHECK(checked.levels[l].misses == g.misses);
      CHECK(checked.levels[l].read_bytes == g.read_bytes);
      CHECK(checked.levels[l].write_bytes == g.write_bytes);
      CHECK(direct.hierarchy->counters(int(l)).misses == g.misses);
      CHECK(direct.hierarchy->counters(int(l)).read_bytes == g.read_bytes);
    }
    CHECK(gui.dram_bytes() > 0);
    CHECK(j["roofline_simulated"]["seconds"].get<double>() ==
          doctest::Approx(gui.roofline.seconds));
    CHECK(j["roofline_simulated"]["binding"].get<std::string>() == gui.roofline.binding);
  }
}

TEST_CASE("changing the machine re-checks the history: kept whole, the illegal step named") {
  AppState state = small_state();
  REQUIRE(run(state, "machine h200") == "");
  const std::string steps =
      "fuse(matmul0, add0, relu0); tile(i, 16); tile(j, 16); tile(k, 32); "
      "reorder(i.o, j.o, k.o, i.i, j.i, k.i); bind(i.o, block.y); bind(j.o, block.x); "
      "bind(i.i, thread.y); bind(j.i, thread.x); stage(x, shared, at=k.o)";
  REQUIRE(run(state, "apply " + steps) == "");
  Workbench& wb = state.workbench;
  REQUIRE(wb.history->size() == 10);
  CHECK(wb.machine_refusal.empty());
  // tiny is a CPU machine without shared memory: the stage (step 10) cannot run there.
  REQUIRE(run(state, "machine tiny") == "");
  CHECK(wb.history->size() == 10);  // nothing lost
  CHECK(wb.machine_refusal_step == 9);
  CHECK(wb.machine_refusal.find("step 10 stage(x, shared, at=k.o)") != std::string::npos);
  CHECK(wb.machine_refusal.find("no shared memory") != std::string::npos);
  CHECK(workbench_simulate(wb).find("not legal on tiny") != std::string::npos);
  // New steps are checked against tiny now.
  CHECK(run(state, "apply stage(W, shared, at=k.o)") == "");
  REQUIRE(wb.last);
  CHECK_FALSE(wb.last->ok);
  // Undoing the stage makes the schedule legal on tiny; redo brings the note back.
  REQUIRE(run(state, "undo") == "");
  CHECK(wb.machine_refusal.empty());
  REQUIRE(run(state, "redo") == "");
  CHECK_FALSE(wb.machine_refusal.empty());
  REQUIRE(run(state, "machine h200") == "");
  CHECK(wb.machine_refusal.empty());
}

TEST_CASE("the generated C++ of a tiled kernel runs on this CPU, verified and timed") {
  AppState state = small_state();
  REQUIRE(run(state, "apply fuse(matmul0, add0, relu0); tile(i, 8); tile(k, 32)") == "");
  JobProgress progress;
  const CpuRunResult r =
      run_kernel_on_cpu(*state.workbench.kernel(), 2 * M * N * K + 2 * M * N, progress);
  CHECK(r.verified);
  CHECK(r.rel_error < kVerifyTolerance);
  CHECK(r.median_ms > 0);
  CHECK(r.repeats >= 3);
  CHECK(r.peak_gflops > 0);
}

// [SECTION] Presentation and sessions

TEST_CASE("presentation mode gives the centre view the whole window above the status bar") {
  AppState state = small_state();
  const PanelLayout normal = state.panels();
  CHECK(run(state, "present") == "");
  CHECK(state.presentation);
  const PanelLayout p = state.panels();
  CHECK(p.graph.x == 0);
  CHECK(p.graph.y == 0);
  CHECK(p.graph.w == doctest::Approx(state.window_w));
  CHECK(p.graph.h == doctest::Approx(normal.status_bar.y));
  CHECK(p.model_text.w == 0);
  CHECK(p.inspector.w == 0);
  CHECK(run(state, "present off") == "");
  CHECK_FALSE(state.presentation);
}

TEST_CASE("a session restores the model text, the steps, the machine and the view") {
  AppState state = small_state();
  REQUIRE(run(state, "apply fuse(matmul0, add0, relu0); tile(i, 16)") == "");
  REQUIRE(run(state, "machine tiny") == "");
  REQUIRE(run(state, "view memory") == "");
  const nlohmann::json j = session_to_json(state);
  AppState restored;
  CHECK(session_from_json(restored, j) == "");
  CHECK(restored.model.text == kSmallModel);
  CHECK(restored.workbench.steps_text() == "fuse(matmul0, add0, relu0); tile(i, 16)");
  CHECK(restored.workbench.machine_name == "tiny");
  CHECK(restored.workbench.tab == ViewTab::Memory);
  CHECK(session_from_json(restored, nlohmann::json{{"schema", "other"}}).find("not a") !=
        std::string::npos);
}

// [SECTION] Sizing jobs before they start (issue #17: huge shapes)

namespace {

// Sets TILESCOPE_MEMORY_LIMIT for the scope, so a budget does not depend on this machine.
struct MemoryLimit {
  explicit MemoryLimit(const char* v) { setenv("TILESCOPE_MEMORY_LIMIT", v, 1); }
  ~MemoryLimit() { unsetenv("TILESCOPE_MEMORY_LIMIT"); }
};

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a job too large for memory is refused at once, saying what it needs") {
  const MemoryLimit limit("1G");
  // x is 10^10 floats: 40 GB on its own; every job needs at least its buffers.
  AppState state = test::state_for("x: [100000, 100000]\ny = relu(x)\n");
  REQUIRE(run(state, "machine tiny").empty());
  const double took = seconds_of([&] {
    CHECK(run(state, "simulate exactly").empty());
    CHECK(run(state, "run-cpu").empty());
    CHECK(run(state, "tiles record").empty());
  });
  CHECK(took < 1.0);
  CHECK_FALSE(state.workbench.busy());
  // Every access, with its per-line 3C tables, cannot fit.
  const HeldJob& sim = state.workbench.memory_held.at(state.workbench.memory_key());
  CHECK(sim.refused);
  CHECK(sim.message.find("would need about") != std::string::npos);
  CHECK(sim.message.find("more than the 1 GiB available (TILESCOPE_MEMORY_LIMIT=1G)") !=
        std::string::npos);
  // Two buffers of 10^10 floats (x and y) and the interpreter's copy: 4 · 4·10^10 B = 149 GiB.
  const HeldJob& cpu = state.workbench.cpu_held.at(state.workbench.schedule_key());
  CHECK(cpu.refused);
  CHECK(cpu.message.find("149 GiB") != std::string::npos);
  // The walk holds bounded bins, so it fits; at 2·10^10 accesses it is long, and held.
  const HeldJob& tiles = state.workbench.tiles_held.at(state.workbench.tiles_key_now());
  CHECK_FALSE(tiles.refused);
  CHECK(tiles.message.find("20.0 billion accesses") != std::string::npos);
  // "anyway" does not override a refusal: it cannot fit.
  CHECK(run(state, "simulate anyway").empty());
  CHECK_FALSE(state.workbench.busy());
}

TEST_CASE("a kernel past about a second of simulation is sampled, and says so") {
  const MemoryLimit limit("1G");
  // 10^10 elements read and written once: 2·10^10 accesses. A sample needs no per-line tables.
  AppState state = test::state_for("x: [100000, 100000]\ny = relu(x)\n");
  REQUIRE(run(state, "machine tiny").empty());
  CHECK(run(state, "simulate").empty());
  CHECK(state.workbench.memory_held.count(state.workbench.memory_key()) == 0);
  wait_jobs(state);
  const MemoryResult* r = state.workbench.memory_result();
  REQUIRE(r);
  REQUIRE(r->sampled);
  CHECK(r->sampled->units > 0);
  CHECK(r->sampled->measured > 0);
  CHECK(r->sampled->measured < r->sampled->units);
  CHECK(r->exact_seconds > kLongJobSeconds);
  // Hand count: x read once (4·10^10 B), y's lines filled on their write miss (tiny allocates on
  // a write: another 4·10^10 B read) and written back (4·10^10 B) — the estimate within its own
  // error bar of that.
  const double dram = 3 * 4e10;
  CHECK(std::abs(double(r->dram_bytes()) - dram) <= r->sampled->dram_bytes_error + 1e-6 * dram);
}

TEST_CASE("a long job waits for 'anyway', with the analytic model's answer beside it") {
  const MemoryLimit limit("8G");
  // 1024 × 1024 × 1024 GEMM: 2·1024³ loads and 1024² stores of y (the accumulator is a
  // register), about 65 s at the simulator's 33 M accesses/s with the 3C split.
  AppState state = test::state_for("x: [1024, 1024]\nW: [1024, 1024] weight\ny = x @ W.T\n");
  REQUIRE(run(state, "machine tiny").empty());
  const pipeline::WalkSize s = pipeline::size_walk(
      pipeline::Walk::Simulation, *state.workbench.kernel(), &*state.workbench.machine);
  CHECK(s.accesses == 2.0 * 1024 * 1024 * 1024 + 1024 * 1024);
  CHECK(s.seconds == doctest::Approx(s.accesses / 33e6));  // 3C split alone: 33 M/s
  CHECK(s.seconds > kLongJobSeconds);
  // Past about a second the view starts from a sample; every access is asked for.
  CHECK(run(state, "simulate exactly").empty());
  CHECK_FALSE(state.workbench.busy());
  const HeldJob& held = state.workbench.memory_held.at(state.workbench.memory_key());
  CHECK_FALSE(held.refused);
  CHECK(held.message.find("Simulating matmul0 on tiny makes about") == 0);
  CHECK_FALSE(held.analytic.empty());  // tiny is a CPU machine: the analytic model answers
  CHECK(run(state, "simulate anyway").empty());
  CHECK(state.workbench.memory_job.running());
  CHECK(state.workbench.memory_held.count(state.workbench.memory_key()) == 0);
  CHECK(run(state, "cancel").empty());
  test::wait_jobs(state);
  CHECK(state.workbench.memory_errors.at(state.workbench.memory_key()) == "cancelled");
}

TEST_CASE("one sizing function: a program's walk sums its kernels; --verify's memory by hand") {
  // Unfused x @ W.T + b: a MatMul kernel (2·M·N·K loads, M·N stores) and an Add kernel
  // (2·M·N loads, M·N stores), M = 16, N = 8, K = 32.
  const pipeline::Study s = pipeline::study({"x: [16, 32]\nW: [8, 32] weight\nb: [8] weight\n"
                                             "y = x @ W.T + b\n", "<test>"},
                                            "", predict::load_machine("tiny"));
  REQUIRE(s.program().kernels.size() == 2);
  const double mm = 2.0 * 16 * 8 * 32 + 16 * 8, add = 2.0 * 16 * 8 + 16 * 8;
  const pipeline::WalkSize prog =
      pipeline::size_walk(pipeline::Walk::Simulation, s.program(), &s.machine);
  CHECK(prog.accesses == mm + add);
  CHECK(prog.formula.empty());
  CHECK(prog.seconds == doctest::Approx(prog.accesses / prog.rate));
  // The interpreter's program memory is --verify's: feeds (x, W, b: 512 + 256 + 8 elements) in
  // double and float, every tensor's double result (x, W, b, the product 128, y 128: 1032), the
  // produced ones in float (256), and the widest kernel's buffers twice in float (the MatMul's
  // x, W and product: 512 + 256 + 128 = 896).
  const double fed = 512 + 256 + 8, all = fed + 128 + 128;
  const pipeline::WalkSize verify =
      pipeline::size_walk(pipeline::Walk::Interpreter, s.program(), nullptr);
  CHECK(verify.bytes == uint64_t(fed * 12 + all * 8 + (all - fed) * 4 + 896 * 4 * 2));
  CHECK(verify.rate == predict::kInterpreterRate);
  // A simulation is sized against a machine's hierarchy: none given is a programming error.
  CHECK_THROWS_AS(pipeline::size_walk(pipeline::Walk::Simulation, s.kernel(), nullptr),
                  std::invalid_argument);
}

TEST_CASE("'anyway' round-trips through the script form; anything else is refused") {
  for (const char* line : {"simulate anyway", "run-cpu anyway", "tiles record anyway"}) {
    CAPTURE(line);
    CHECK(command_to_string(parse_command(line)) == line);
  }
  CHECK_THROWS_WITH_AS(parse_command("simulate now"), doctest::Contains("'anyway'"), CommandError);
  CHECK_THROWS_WITH_AS(parse_command("tiles record twice"), doctest::Contains("'anyway'"),
                       CommandError);
}

TEST_CASE("recorded reports load newest first, whatever their file names, and none is dropped") {
  // Two real reports rewritten with dates that run against the file names' order, and one with
  // no date at all: the loader must order by the reports' own dates, the undated one last.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tilescope_recorded_order";
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto copy_with_date = [&](const char* source, const std::string& name, const char* date) {
    nlohmann::json report = nlohmann::json::parse(std::ifstream(source));
    if (date) {
      report["date"] = date;
    } else {
      report.erase("date");
    }
    std::ofstream(dir / name) << report.dump(2);
  };
  copy_with_date("assets/recorded/gpu-h200-2026-11-29.json", "a-oldest.json",
                 "2026-11-01T00:00:00Z");
  copy_with_date("assets/recorded/gpu-h200-2026-11-29.json", "b-undated.json", nullptr);
  copy_with_date("assets/recorded/cpu-2026-11-29-xeon2-dev-quiet.json", "c-newest.json",
                 "2026-12-24T00:00:00Z");
  Workbench wb;
  workbench_load_recorded(wb, dir.string());
  CHECK(wb.recorded_error.empty());
  REQUIRE(wb.recorded.size() == 3);
  CHECK(fs::path(wb.recorded[0].first).filename() == "c-newest.json");
  CHECK(fs::path(wb.recorded[1].first).filename() == "a-oldest.json");
  CHECK(fs::path(wb.recorded[2].first).filename() == "b-undated.json");
  fs::remove_all(dir);
}

TEST_CASE("tensors named after keywords and macros compile, run and verify on this CPU") {
  // Issue #25: a legal model with tensors named INFINITY or NAN (macros of <cmath>) generated
  // C++ that did not compile. The generated names are mangled (INFINITY_, class_), the model's
  // names stay in the comments.
  AppState state = test::state_for(
      "INFINITY: [8, 8]\nNAN: [8, 8] weight\nclass: [8] weight\nM_PI = INFINITY @ NAN.T\n"
      "linux = M_PI + class\nEOF = relu(linux)\n");
  REQUIRE(run(state, "apply fuse(matmul0, add0, relu0)").empty());
  REQUIRE(run(state, "run-cpu").empty());
  wait_jobs(state);
  const auto error = state.workbench.cpu_errors.find(state.workbench.schedule_key());
  INFO((error == state.workbench.cpu_errors.end() ? std::string() : error->second));
  const CpuRunResult* r = state.workbench.cpu_result();
  REQUIRE(r != nullptr);
  CHECK(r->verified);
}

TEST_CASE("the Memory view's whole-schedule total: fusing add and ReLU halves DRAM bytes on tiny") {
  // Issue #26 (lesson 2): one kernel at a time, the unfused add and the fused kernel both read
  // 48.2 KiB, so "fusion halves the bytes" never showed. Hand count (lesson 2's): X is 64 × 64
  // fp32 = 16 KiB, bias 256 B; nothing fits tiny's 8 KiB L2. Fused, DRAM sees X read, Y fetched
  // (write-allocate) and Y written back, and the bias: 3 · 16384 + 256 = 49,408 B. Unfused, the
  // temporary T is fetched, written back and read again on top: 6 · 16384 + 256 = 98,560 B.
  AppState state = test::state_for("X: [64, 64]\nbias: [64] weight\nY = relu(X + bias)\n");
  REQUIRE(run(state, "machine tiny").empty());
  // The current schedule simulated: its whole-program total.
  const auto program_total = [&] {
    REQUIRE(run(state, "simulate").empty());
    wait_jobs(state);
    const MemoryResult* r = state.workbench.memory_result();
    REQUIRE(r != nullptr);
    REQUIRE(r->program);
    return *r->program;
  };
  const auto unfused = program_total();
  CHECK(unfused.kernels == 2);
  CHECK(unfused.dram_bytes() == 6 * 16384 + 256);
  REQUIRE(run(state, "apply fuse(add0, relu0)").empty());
  const auto fused = program_total();
  CHECK(fused.kernels == 1);
  CHECK(fused.dram_bytes() == 3 * 16384 + 256);
}

// The workbench's state: which centre view is showing, the schedule history of the current model
// (apply / undo / redo / go back and branch), the chosen machine, and the results of the two
// background jobs — the memory-hierarchy simulation of the current kernel and its real run on
// this CPU — cached by (model, schedule, machine) so they are recomputed only when one changes.
//
// Pure C++ (no ImGui): tests drive it through commands without a display.
#pragma once

#include "app/core/autotune.h"
#include "app/core/counters_compare.h"
#include "app/core/gpu_run.h"
#include "app/core/jobs.h"
#include "app/core/machine_edit.h"
#include "app/core/memory_grid.h"
#include "app/core/tile_grid.h"
#include "app/core/tiles_gpu.h"
#include "app/core/verify_tolerance.h"
#include "sim/graph/graph.h"
#include "sim/memory/hierarchy.h"
#include "sim/pipeline.h"
#include "sim/predict/analytic.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"
#include "sim/predict/work_size.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// [SECTION] Centre views

// Lessons (key 7) is the lesson catalogue; the six before it are the workbench's views.
enum class ViewTab { Graph, Schedule, Tiles, Memory, Roofline, Timings, Lessons, Trace };
inline constexpr ViewTab kAllViewTabs[] = {
    ViewTab::Graph,    ViewTab::Schedule, ViewTab::Tiles,   ViewTab::Memory,
    ViewTab::Roofline, ViewTab::Timings,  ViewTab::Lessons, ViewTab::Trace};
const char* view_tab_name(ViewTab);   // "graph", "schedule", ...
const char* view_tab_title(ViewTab);  // "Graph", "Schedule", ...
std::optional<ViewTab> view_tab_from_name(std::string_view);

// [SECTION] Results of the background jobs

struct LevelResult {
  std::string name;
  uint64_t size_bytes = 0;
  double bandwidth = 0;  // bytes/s from the machine file, 0 when not stated
  memory::Counters total;
  std::vector<memory::Counters> by_tensor;  // index = graph tensor id + 1 (0 = unlabelled)
};

// Every kernel of the schedule run in turn through one hierarchy (its outputs written back): the
// figure a fusion changes. One kernel at a time, the unfused add and the fused kernel read the same
// bytes; the program's total halves (issue #26, lesson 2).
struct ProgramTotal {
  size_t kernels = 0;
  std::vector<LevelResult> levels;  // as MemoryResult::levels, summed over the program
  double flops = 0;
  uint64_t dram_bytes() const;
};

struct MemoryResult {
  std::string machine;
  bool gpu = false;
  std::string kernel;  // kernel name the trace came from
  std::string steps;   // the schedule steps it was simulated after
  size_t step_count = 0;
  std::string graph_text;                 // the model it belongs to
  std::vector<LevelResult> levels;        // cache levels, closest first, then main memory (last)
  std::vector<std::string> tensor_names;  // by graph tensor id
  schedule::TraceSummary summary;
  uint64_t trace_accesses = 0;
  double seconds = 0;     // wall time of the simulation
  int64_t flops = 0;      // the kernel's FLOPs (graph cost table)
  double peak_flops = 0;  // machine fp32 peak, FLOP/s (simt or simd), 0 when not stated
  // The analytic model's prediction for the same kernel and hierarchy (CPU kernels), or why it
  // does not cover this kernel; and the end state of the levels small enough to draw way by way.
  std::optional<predict::AnalyticResult> analytic;
  std::string analytic_error;
  std::vector<CacheGrid> grids;
  // From the shared pipeline (sim/predict/simulate.h): the machine simulated on, the bytes each level
  // served, the predicted time on them with its binding bound, and the analytic model's.
  predict::Machine machine_model;
  predict::LevelBytes bytes;
  predict::Roofline roofline;
  std::optional<predict::Roofline> analytic_roofline;
  // The whole schedule's total (when it has more than one kernel and is small enough: see
  // kMaxProgramTotalAccesses), or why it is not given.
  std::optional<ProgramTotal> program;
  std::string program_note;
  // A sampled run (predict/sampling.h): the counters above are estimates; this says how sure.
  std::optional<predict::SampleInfo> sampled;
  double exact_seconds = 0;  // what the exact run would take, about (when sampled)
  uint64_t dram_bytes() const;
  double intensity() const;  // FLOP per main-memory byte
};

// The most accesses the whole schedule's total may take (one kernel's are sized by the job itself).
inline constexpr double kMaxProgramTotalAccesses = 5e7;

// Fills r.program (or r.program_note) with `p` run kernel after kernel through one hierarchy.
void total_program(MemoryResult& r, const schedule::Program& p, const predict::Machine& m,
                   JobProgress& progress);

struct CpuRunResult {
  std::string kernel;
  std::string compile_command;
  double compile_seconds = 0;
  bool cache_hit = false;
  double rel_error = 0;  // generated kernel vs the interpreter on the same inputs
  bool verified = false;
  double median_ms = 0, min_ms = 0;
  int repeats = 0;
  int64_t flops = 0;
  double peak_gflops = 0, peak_gbps = 0;  // measured here (harness::measure_peaks quick)
  double dependent_fma_ns = 0;            // one multiply-add of a serial chain, measured here
  std::string peaks_source;
};

// A schedule's key in the caches: its model text, its steps and its current kernel.
std::string schedule_key_of(const std::string& graph_text, const std::string& steps_text,
                            int current_kernel);

// [SECTION] Sizing jobs before they start

// A background job is sized by the pipeline before it starts (pipeline::size_walk, no walk):
// accesses it makes, seconds at the typical rate, memory it holds against what this computer has.
// Jobs estimated to take longer than this wait for the learner's "anyway" (the view shows the
// estimate and, where it applies, the analytic model's answer, which needs no walk).
inline constexpr double kLongJobSeconds = 10;

// A job that was not started: too large to fit (refused: no "anyway"), or long (held until the
// learner asks). `analytic` holds the analytic model's answer lines when it covers the kernel.
struct HeldJob {
  bool refused = false;
  std::string message;
  std::vector<std::string> analytic;
};
// Decides whether a sized job may start: nullopt when it may, else what the learner is told (and
// the hold recorded). `what` names the work ("Simulating matmul0 on tiny").
std::optional<HeldJob> hold_for(const pipeline::WalkSize& s, const std::string& what,
                                bool anyway);

// [SECTION] Workbench

struct StepOutcome {
  std::string step;  // the text applied
  bool ok = false;
  std::string explanation;  // why it helps, or why it was refused
};

struct Workbench {
  ViewTab tab = ViewTab::Graph;

  // Schedule of the current graph. `history` is empty when the graph could not be lowered
  // (lower_error says why) or there is no graph.
  std::optional<schedule::History> history;
  std::vector<std::string> step_texts;  // every entry, including undone ones (redo-able)
  std::string lower_error;
  std::optional<StepOutcome> last;  // the last apply's outcome (a refusal stays until the next)
  int graph_generation = -1;
  std::string graph_text;

  // Machine for the memory simulation and the roofline.
  std::string machine_name = "host";
  std::optional<predict::Machine> machine;
  std::string machine_error;
  // The machine is the schedule's target (predict::target_for): when it changes under a history,
  // the history is kept and re-checked, and the first step the new machine refuses is named here
  // ("" = every step is legal on it). The Memory view shows it; simulating refuses until the step
  // is undone or another machine is chosen.
  std::string machine_refusal;
  size_t machine_refusal_step = 0;            // its index (0-based) in the history
  std::vector<std::string> machines_fitting;  // presets every step is legal on (with a refusal)

  // Results, cached by key; the job slots.
  std::map<std::string, MemoryResult> memory_cache;
  std::map<std::string, std::string> memory_errors;  // key → why the simulation failed
  std::map<std::string, CpuRunResult> cpu_cache;
  std::map<std::string, std::string> cpu_errors;
  // "Run on this GPU" (gpu_run.h): answers and reasons by schedule key.
  std::map<std::string, GpuRunResult> gpu_cache;
  std::map<std::string, std::string> gpu_errors;
  Job<MemoryResult> memory_job;
  Job<CpuRunResult> cpu_job;
  Job<GpuRunResult> gpu_job;
  // Jobs sized before they start and not started (see HeldJob), by the same keys as the caches.
  std::map<std::string, HeldJob> memory_held, cpu_held, tiles_held;
  std::set<std::string> memory_exact;  // memory keys the learner asked to simulate exactly
  // Baseline A (baseline.h): a schedule pinned to compare the current one (B) against. Its result
  // comes from the Memory cache when the schedule was simulated there, else from its own job.
  struct Baseline {
    std::string label;  // "A: step 2 (tile(i, 32))", what the views call it
    std::string steps;  // its schedule text, as the history prints it
    size_t step_count = 0;
    std::string machine;       // the machine it is simulated on (kept when B's changes)
    std::string schedule_key;  // its key in cpu_cache
    std::string key;           // its key in memory_cache
    std::optional<schedule::Program> program;       // what is simulated and run for it
    std::optional<predict::Machine> machine_model;  // what it is simulated on
    std::optional<MemoryResult> result;
    std::string error;  // why it could not be simulated
    // A recorded run instead of a schedule (baseline pin-recorded): steps, program and result
    // stay empty, and the comparison is compare_recording's.
    struct Recording {
      std::string file;    // the recording, as loaded into counters_recorded
      size_t run = 0;      // its index there
      std::string tool;    // "ncu" or "cachegrind"
      std::string device;  // what it was measured on ("NVIDIA H200")
      kernels::CounterRun data;
    };
    std::optional<Recording> recording;
    bool ready() const { return result || recording; }
  };
  std::optional<Baseline> baseline;
  Job<MemoryResult> baseline_job;
  // The machine editor's copy (machine_edit.h), while it is open.
  std::optional<MachineDraft> machine_draft;
  std::string memory_formula;  // "L1 B": the Memory view's "why this number" popup; "" = closed
  // How long the current (schedule, machine) waited for its Memory numbers: from the frame its key
  // first appeared (a step, an undo, a machine picked) to the frame its result arrived (0 when
  // it was cached). seconds < 0 while it waits. Set by workbench_track_memory_wait().
  struct MemoryWait {
    std::string key;
    double since = 0, seconds = -1;
  } memory_wait;

  // Tiles animation: the recorded frames of the current schedule and the playback position.
  std::optional<TilesResult> tiles;
  std::string tiles_key, tiles_error;
  Job<TilesResult> tiles_job;
  double tiles_frame = 0;  // fractional while playing
  bool tiles_playing = false;
  double tiles_speed = 8;  // frames per second
  double tiles_last_time = -1;
  // GPU mode (tiles_gpu.h): one wave seen from a picked block (launch index) and warp; its own
  // recording, keyed by the machine, the schedule and the pick. Playback shares the frame above.
  bool tiles_gpu = false;
  int64_t tiles_block = 0;
  int tiles_warp = 0;
  std::optional<GpuTilesResult> gpu_tiles;
  std::string gpu_tiles_key, gpu_tiles_error;
  Job<GpuTilesResult> gpu_tiles_job;
  std::string gpu_tiles_key_now() const {
    return memory_key() + "\n#block " + std::to_string(tiles_block) + " warp " +
           std::to_string(tiles_warp);
  }
  // The walk's key: the schedule and the machine (a CPU machine's hierarchy counts along).
  std::string tiles_key_now() const { return memory_key(); }
  // Frames of what the Tiles view plays now (the walk's, or the GPU wave's).
  size_t tiles_frame_count() const;

  // Recorded benchmark reports (assets/recorded/*.json), loaded once, newest first.
  bool recorded_loaded = false;
  std::vector<std::pair<std::string, nlohmann::json>> recorded;  // (file, report)
  std::string recorded_error;
  // Hardware-counter recordings among them (ncu, cachegrind): the Memory view's predicted vs
  // measured table (counters_compare.h).
  CountersRecordings counters_recorded;

  // Autotune: tile-size sweeps of the current kernel, predicted and measured (autotune.h).
  AutotuneState autotune;

  const schedule::Program* program() const { return history ? &history->current() : nullptr; }
  const schedule::Kernel* kernel() const;
  std::string steps_text() const { return history ? history->to_text() : std::string(); }
  // The step texts up to the history's cursor (the applied steps, not the undone ones).
  std::vector<std::string> applied_steps() const {
    const size_t n = history ? std::min(history->size(), step_texts.size()) : 0;
    return {step_texts.begin(), step_texts.begin() + static_cast<long>(n)};
  }
  bool busy() const {
    return memory_job.running() || cpu_job.running() || gpu_job.running() || tiles_job.running() ||
           gpu_tiles_job.running() || baseline_job.running() || autotune.busy();
  }

  // Cache keys: the model text, the steps up to the cursor and (memory) the machine.
  std::string schedule_key() const;
  std::string memory_key() const { return schedule_key() + "\n@" + machine_name; }
  const MemoryResult* memory_result() const;
  // The result the memory views draw: the current one, else (while it is computed) the last one
  // finished, so the screen keeps the previous numbers instead of going blank between steps.
  std::string last_memory_key;
  const MemoryResult* previous_memory_result() const;
  const MemoryResult* memory_result_shown() const {
    const MemoryResult* r = memory_result();
    return r ? r : previous_memory_result();
  }
  const CpuRunResult* cpu_result() const;
  const GpuRunResult* gpu_result() const;
};

// Forgets the schedule: no history, no steps (undone ones included), no last outcome; the next
// graph is lowered fresh instead of having the old steps replayed on it.
void workbench_clear_schedule(Workbench& wb);

// Applies `steps` in order until one is refused; returns how many applied (wb.last says why the
// next did not).
size_t workbench_replay(Workbench& wb, const std::vector<std::string>& steps);

// Lowers a new graph and replays as many of the previous steps as still apply.
void workbench_set_graph(Workbench& wb, std::shared_ptr<const graph::Graph> graph,
                         const std::string& text, int generation);

// What replaying the history's applied steps on another graph would do, without doing it (File ▸
// Open model asks before it replays): the replay stops at the first step the new graph or the
// machine refuses, and every step after it is dropped with it.
struct ReplayTrial {
  size_t steps = 0;      // the applied steps of the current history
  size_t apply = 0;      // how many of them, from the first, apply to the new graph
  std::string refused;   // the first that does not: "step 3 'fuse add0 relu0': why" ("" = none)
};
ReplayTrial workbench_trial_replay(const Workbench& wb,
                                   const std::shared_ptr<const graph::Graph>& graph);

// Applies step text (one or more steps). Returns "" when every step applied; on a refusal the
// program stays at the last good step and `last` holds the refusal. Errors in the text itself
// (unparseable) come back as the message.
std::string workbench_apply(Workbench& wb, std::string_view text);
bool workbench_undo(Workbench& wb);
bool workbench_redo(Workbench& wb);
// Moves the cursor to entry n (0 = the default lowering) by undo/redo.
std::string workbench_go_to(Workbench& wb, size_t n);
// Loads a machine and makes it the schedule's target; re-checks the history (machine_refusal).
std::string workbench_set_machine(Workbench& wb, const std::string& name);
// `machine-edit start | set SECTION KEY VALUE | cancel | save PATH` (machine_edit.h; in
// workbench_machine_edit.cpp): start copies the current machine's file; set edits one field and
// parses the copy again; save writes it (refused while it does not parse) and makes it the
// machine, so the simulation re-runs. Returns "" or why not.
std::string workbench_machine_edit(Workbench& wb, const std::string& args);
// The legality target of the current machine (schedule::Target's defaults while none is loaded).
schedule::Target workbench_target(const Workbench& wb);

// Starts the background jobs for the current kernel (no-op when the result is cached or running).
// Each is sized first: one that cannot fit in memory is refused (held, refused), one longer than
// kLongJobSeconds is held until called again with `anyway`.
std::string workbench_simulate(Workbench& wb, bool anyway = false);
// A kernel whose trace would take over a second is simulated from a sample
// (predict::kExactAccessLimit); this asks for every access instead (held like any long job).
std::string workbench_simulate_exactly(Workbench& wb);
std::string workbench_run_cpu(Workbench& wb, bool anyway = false);
// Runs the current schedule on this computer's GPU through the GPU bench (gpu_run.h); refused
// with the reason in a build without CUDA.
std::string workbench_run_gpu(Workbench& wb);
void workbench_cancel(Workbench& wb);
// Starts recording the Tiles frames for the current schedule (no-op when current or running);
// sized first as the jobs above.
std::string workbench_record_tiles(Workbench& wb, bool anyway = false);
// tiles play | pause | step | back | seek N | speed X | gpu on|off | block N | warp N
std::string workbench_tiles_control(Workbench& wb, const std::string& verb, double value);
// Starts recording the GPU mode's wave for the current pick (no-op when current or running).
std::string workbench_record_gpu_tiles(Workbench& wb, bool anyway = false);
// Advances a playing animation to time `now` (seconds).
void workbench_tick(Workbench& wb, double now);
// Called once per frame: takes finished jobs' results into the caches.
void workbench_poll(Workbench& wb);
// Once per frame, after workbench_poll: notes when the memory key changed and when its result came.
void workbench_track_memory_wait(Workbench& wb, double now);
void workbench_load_recorded(Workbench& wb, const std::string& dir);

// The work itself, callable without a thread (tests use them directly).
MemoryResult simulate_kernel(const schedule::Kernel& k, const graph::Graph& g,
                             const predict::Machine& m, JobProgress& progress, bool sample = false);
// Each level's counters of a simulated hierarchy, closest first, then main memory.
std::vector<LevelResult> level_results(const memory::Hierarchy& h);
// What the Memory job computes for a schedule: its current kernel (sampled when `sample`), then
// the whole schedule's total; `steps`, `count` and `text` label it (MemoryResult::steps, ...).
MemoryResult simulate_schedule(const schedule::Program& program, const predict::Machine& m,
                               const std::string& steps, size_t count, const std::string& text,
                               bool sample, double exact_seconds, JobProgress& progress);
CpuRunResult run_kernel_on_cpu(const schedule::Kernel& k, int64_t flops, JobProgress& progress);

}  // namespace tilescope::core

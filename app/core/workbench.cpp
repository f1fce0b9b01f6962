// The workbench: schedule history, machine choice, and the simulation / CPU-run jobs with caches.
#include "app/core/workbench.h"

#include "kernels/cpu/bench_report.h"
#include "kernels/cpu/harness.h"
#include "kernels/cpu/jit.h"
#include "kernels/gpu_counters.h"
#include "sim/io/format.h"
#include "app/core/format.h"
#include "sim/model/run.h"
#include "sim/model/work_size.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/interpreter.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace_size.h"
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tilescope::core {

// [SECTION] Views

const char* view_tab_name(ViewTab t) {
  switch (t) {
    case ViewTab::Graph:
      return "graph";
    case ViewTab::Schedule:
      return "schedule";
    case ViewTab::Tiles:
      return "tiles";
    case ViewTab::Memory:
      return "memory";
    case ViewTab::Roofline:
      return "roofline";
    case ViewTab::Timings:
      return "timings";
    case ViewTab::Lessons:
      return "lessons";
  }
  return "graph";
}

const char* view_tab_title(ViewTab t) {
  switch (t) {
    case ViewTab::Graph:
      return "Graph";
    case ViewTab::Schedule:
      return "Schedule";
    case ViewTab::Tiles:
      return "Tiles";
    case ViewTab::Memory:
      return "Memory";
    case ViewTab::Roofline:
      return "Roofline";
    case ViewTab::Timings:
      return "Timings";
    case ViewTab::Lessons:
      return "Lessons";
  }
  return "Graph";
}

std::optional<ViewTab> view_tab_from_name(std::string_view name) {
  for (ViewTab t : kAllViewTabs)
    if (name == view_tab_name(t)) return t;
  return std::nullopt;
}

// [SECTION] Results

uint64_t ProgramTotal::dram_bytes() const {
  if (levels.empty()) return 0;
  const memory::Counters& c = levels.back().total;
  return c.read_bytes + c.write_bytes;
}

uint64_t MemoryResult::dram_bytes() const {
  if (levels.empty()) return 0;
  const memory::Counters& c = levels.back().total;
  return c.read_bytes + c.write_bytes;
}

double MemoryResult::intensity() const {
  const uint64_t b = dram_bytes();
  return b ? static_cast<double>(flops) / static_cast<double>(b) : 0.0;
}

// [SECTION] Workbench state

const schedule::Kernel* Workbench::kernel() const {
  const schedule::Program* p = program();
  if (!p || p->kernels.empty()) return nullptr;
  const int i = std::clamp(p->current, 0, static_cast<int>(p->kernels.size()) - 1);
  return &p->kernels[static_cast<size_t>(i)];
}

std::string Workbench::schedule_key() const {
  const schedule::Program* p = program();
  return graph_text + "\n--\n" + steps_text() + "\n#" + std::to_string(p ? p->current : -1);
}

const MemoryResult* Workbench::memory_result() const {
  auto it = memory_cache.find(memory_key());
  return it == memory_cache.end() ? nullptr : &it->second;
}

const MemoryResult* Workbench::previous_memory_result() const {
  auto it = memory_cache.find(last_memory_key);
  return it == memory_cache.end() ? nullptr : &it->second;
}

const CpuRunResult* Workbench::cpu_result() const {
  auto it = cpu_cache.find(schedule_key());
  return it == cpu_cache.end() ? nullptr : &it->second;
}

const GpuRunResult* Workbench::gpu_result() const {
  auto it = gpu_cache.find(schedule_key());
  return it == gpu_cache.end() ? nullptr : &it->second;
}

void workbench_set_graph(Workbench& wb, std::shared_ptr<const graph::Graph> graph,
                         const std::string& text, int generation) {
  if (generation == wb.graph_generation) return;
  wb.graph_generation = generation;
  wb.graph_text = text;
  const std::vector<std::string> old_steps = wb.applied_steps();
  workbench_clear_schedule(wb);
  wb.lower_error.clear();
  if (!graph) return;
  if (!wb.machine) workbench_set_machine(wb, wb.machine_name);  // its target checks the steps
  try {
    wb.history.emplace(pipeline::lower(graph, workbench_target(wb)));
  } catch (const std::exception& e) {
    wb.lower_error = e.what();
    return;
  }
  // The steps that still apply to the edited model are kept, so editing a number does not throw
  // the learner's schedule away; the first that no longer applies is reported.
  workbench_replay(wb, old_steps);
}

void workbench_clear_schedule(Workbench& wb) {
  wb.history.reset();
  wb.step_texts.clear();
  wb.last.reset();
}

size_t workbench_replay(Workbench& wb, const std::vector<std::string>& steps) {
  size_t applied = 0;
  for (const std::string& s : steps) {
    if (!workbench_apply(wb, s).empty() || (wb.last && !wb.last->ok)) break;
    ++applied;
  }
  return applied;
}

ReplayTrial workbench_trial_replay(const Workbench& wb,
                                   const std::shared_ptr<const graph::Graph>& graph) {
  ReplayTrial t;
  const std::vector<std::string> steps = wb.applied_steps();
  t.steps = steps.size();
  if (t.steps == 0) return t;
  std::optional<schedule::History> trial;
  try {
    trial.emplace(pipeline::lower(graph, workbench_target(wb)));
  } catch (const std::exception& e) {
    t.refused = std::string("the new model has no schedule: ") + e.what();
    return t;
  }
  for (size_t i = 0; i < t.steps; ++i) {
    std::string why;
    try {
      for (const schedule::TransformStep& step : schedule::parse_steps(steps[i])) {
        const schedule::StepResult r = trial->apply(step);
        if (!r.ok) why = r.explanation.empty() ? "refused" : r.explanation;
        if (!r.ok) break;
      }
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!why.empty()) {
      t.refused = "step " + std::to_string(i + 1) + " '" + steps[i] + "': " + why;
      return t;
    }
    ++t.apply;
  }
  return t;
}

namespace {

// Names the first step of the history the current machine refuses, or clears the note.
void recheck_machine(Workbench& wb) {
  wb.machine_refusal.clear();
  wb.machines_fitting.clear();
  if (!wb.history || !wb.machine) return;
  if (std::optional<schedule::StepRefusal> r = wb.history->first_refused(workbench_target(wb))) {
    wb.machine_refusal_step = r->index;
    wb.machine_refusal = "step " + std::to_string(r->index + 1) + " " + r->step +
                         " is not legal on " + wb.machine->name + ": " + r->message +
                         " Undo it, or choose a machine it fits.";
    // The fix the view offers beside "undo": the presets on which every step is legal (a
    // shared-memory stage fits the GPUs, not a CPU without a scratchpad).
    for (const std::string& name : model::preset_names()) {
      try {
        if (!wb.history->first_refused(model::target_for(model::load_machine(name))))
          wb.machines_fitting.push_back(name);
      } catch (const std::exception&) {
        // A preset that does not load (host detection failed) is simply not offered.
      }
    }
  }
}

}  // namespace

schedule::Target workbench_target(const Workbench& wb) {
  return wb.machine ? model::target_for(*wb.machine) : schedule::Target{};
}

std::string workbench_apply(Workbench& wb, std::string_view text) {
  if (!wb.history) {
    return wb.lower_error.empty() ? "apply: there is no model to schedule"
                                  : "apply: the model has no schedule: " + wb.lower_error;
  }
  std::vector<schedule::TransformStep> steps;
  try {
    steps = schedule::parse_steps(text);
  } catch (const std::exception& e) {
    return std::string("apply: ") + e.what();
  }
  if (steps.empty()) return "apply: no step given";
  for (const schedule::TransformStep& step : steps) {
    schedule::StepResult r;
    try {
      r = wb.history->apply(step);
    } catch (const std::exception& e) {
      r.ok = false;
      r.explanation = e.what();
    }
    wb.last = StepOutcome{step.to_string(), r.ok, r.explanation};
    if (!r.ok) return {};
    // History drops undone entries when a step is applied after an undo: a new branch.
    wb.step_texts.resize(wb.history->size() - 1);
    wb.step_texts.push_back(step.to_string());
  }
  if (!wb.machine_refusal.empty()) recheck_machine(wb);
  return {};
}

bool workbench_undo(Workbench& wb) {
  if (!wb.history || !wb.history->undo()) return false;
  wb.last.reset();
  if (!wb.machine_refusal.empty()) recheck_machine(wb);
  return true;
}

bool workbench_redo(Workbench& wb) {
  if (!wb.history || !wb.history->redo()) return false;
  wb.last.reset();
  recheck_machine(wb);  // a redone step was checked against the machine of its time
  return true;
}

std::string workbench_go_to(Workbench& wb, size_t n) {
  if (!wb.history) return "goto-step: there is no schedule";
  if (n > wb.step_texts.size()) {
    return "goto-step: there are only " + std::to_string(wb.step_texts.size()) + " steps";
  }
  while (wb.history->size() > n && wb.history->undo()) {
  }
  while (wb.history->size() < n && wb.history->redo()) {
  }
  wb.last.reset();
  recheck_machine(wb);
  return {};
}

std::string workbench_set_machine(Workbench& wb, const std::string& name) {
  try {
    model::Machine m = model::load_machine(name);
    wb.machine = std::move(m);
    wb.machine_name = name;
    wb.machine_error.clear();
  } catch (const std::exception& e) {
    wb.machine_error = name + ": " + e.what();
    return "machine: " + std::string(e.what());
  }
  // New steps are checked against this machine; the history is kept and re-checked.
  if (wb.history) wb.history->set_target(workbench_target(wb));
  recheck_machine(wb);
  return {};
}

// [SECTION] Memory simulation

namespace {

// Forwards the trace to the pipeline's sink, reports progress per outermost-loop step and stops the
// trace (by throwing) when the user cancels.
class ProgressSink final : public memory::AccessSink {
 public:
  ProgressSink(memory::AccessSink& next, JobProgress& p, double steps)
      : m_h(next), m_p(p), m_steps(std::max(steps, 1.0)) {}
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    if (m_p.cancel) throw JobCancelled();
    m_h.access_batch(a, n);
  }
  void step_boundary(uint64_t step) override {
    m_p.fraction = std::min(0.99, static_cast<double>(step + 1) / m_steps);
    m_h.step_boundary(step);
  }

 private:
  memory::AccessSink& m_h;
  JobProgress& m_p;
  double m_steps;
};

}  // namespace

// [SECTION] Sizing jobs before they start

JobSize size_simulation(const schedule::Kernel& k, const model::Machine& m) {
  JobSize s;
  const schedule::TraceSize t = schedule::estimate_trace_size(k);
  s.accesses = t.accesses;
  s.formula = t.formula;
  // simulate_kernel classifies misses (3C) and keeps no reuse histogram.
  s.seconds = t.accesses / model::typical_simulation_rate(true, false);
  s.bytes = model::simulation_bytes(k, m.hierarchy(), true, false);
  s.budget = model::memory_budget();
  return s;
}

JobSize size_cpu_run(const schedule::Kernel& k) {
  JobSize s;
  const schedule::TraceSize t = schedule::estimate_trace_size(k);
  s.accesses = t.accesses;
  s.formula = t.formula;
  // The interpreter's walk dominates: the compiled kernel and its timing take far less.
  s.seconds = t.accesses / model::kInterpreterRate;
  s.bytes = 2 * model::kernel_buffer_bytes(k);  // the buffers and the interpreter's copy
  s.budget = model::memory_budget();
  return s;
}

JobSize size_tiles_walk(const schedule::Kernel& k) {
  JobSize s;
  const schedule::TraceSize t = schedule::estimate_trace_size(k);
  s.accesses = t.accesses;
  s.formula = t.formula;
  // The walk alone, counting into bins: about the rate of a plain simulation.
  s.seconds = t.accesses / model::kSimulationRatePlain;
  s.bytes = 64ull << 20;  // bins and frames are bounded (kTileBins, kMaxTileFrames)
  s.budget = model::memory_budget();
  return s;
}

namespace {

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e12)
    std::snprintf(buf, sizeof buf, "%.1f trillion", n / 1e12);
  else if (n >= 1e9)
    std::snprintf(buf, sizeof buf, "%.1f billion", n / 1e9);
  else if (n >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f million", n / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f", n);
  return buf;
}

std::string duration_text(double seconds) {
  char buf[48];
  if (seconds >= 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.0f days", seconds / 86400);
  else if (seconds >= 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.0f hours", seconds / 3600);
  else if (seconds >= 120)
    std::snprintf(buf, sizeof buf, "%.0f minutes", seconds / 60);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", std::ceil(seconds));
  return buf;
}

// Decides whether a sized job may start: "" when it may, else what the learner is told (and the
// hold recorded). `what` names the work ("simulating kernel matmul0 on tiny").
std::optional<HeldJob> hold_for(const JobSize& s, const std::string& what, bool anyway) {
  HeldJob h;
  if (!s.fits()) {
    h.refused = true;
    h.message = what + " would need about " + io::format_bytes(double(s.bytes)) +
                " of memory, more than the " + io::format_bytes(double(s.budget.bytes)) +
                " available (" + s.budget.source +
                "). Make the model smaller: the same schedule shows the same pattern at a "
                "smaller size.";
    return h;
  }
  if (anyway || s.seconds <= kLongJobSeconds) return std::nullopt;
  h.message = what + " makes about " + count_text(s.accesses) + " accesses (" + s.formula +
              "): about " + duration_text(s.seconds) +
              " at this simulator's typical rate. Run it anyway, or make the model smaller "
              "(the same schedule shows the same pattern at a smaller size).";
  return h;
}

}  // namespace

namespace {

// Each level's counters, closest first, then main memory.
std::vector<LevelResult> level_results(const memory::Hierarchy& h) {
  std::vector<LevelResult> out;
  for (int level = 0; level <= h.level_count(); ++level) {
    LevelResult lr;
    if (level < h.level_count()) {
      const memory::CacheConfig& c = h.config().levels[static_cast<size_t>(level)];
      lr.name = c.name;
      lr.size_bytes = c.size_bytes;
      lr.bandwidth = c.bandwidth_bytes_per_s;
    } else {
      lr.name = h.config().memory.name;
      lr.size_bytes = h.config().memory.size_bytes;
      lr.bandwidth = h.config().memory.bandwidth_bytes_per_s;
    }
    lr.total = h.counters(level);
    lr.by_tensor = h.counters_by_tensor(level);
    out.push_back(std::move(lr));
  }
  return out;
}

}  // namespace

void total_program(MemoryResult& r, const schedule::Program& p, const model::Machine& m,
                   JobProgress& progress) {
  r.program.reset();
  r.program_note.clear();
  if (p.kernels.size() < 2) {  // the kernel is the program: its own figures are the total
    r.program = ProgramTotal{1, r.levels, double(r.flops)};
    return;
  }
  double accesses = 0;
  for (const schedule::Kernel& k : p.kernels) accesses += schedule::estimate_trace_size(k).accesses;
  if (accesses > kMaxProgramTotalAccesses) {
    r.program_note = "the whole schedule's total is not simulated: its " +
                     std::to_string(p.kernels.size()) + " kernels make about " +
                     format_si(accesses) + " accesses";
    return;
  }
  progress.set_phase("the whole schedule");
  model::RunOptions o;
  o.wrap = [&](memory::AccessSink& next) {
    return std::make_unique<memory::CancelSink<JobCancelled>>(next, progress.cancel);
  };
  const model::ProgramRun run = model::run_program(p, m, o);
  ProgramTotal t;
  t.kernels = p.kernels.size();
  t.levels = level_results(*run.hierarchy);
  t.flops = run.flops;
  r.program = std::move(t);
}

MemoryResult simulate_kernel(const schedule::Kernel& k, const graph::Graph& g,
                             const model::Machine& m, JobProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  MemoryResult r;
  model::RunOptions o;
  o.classify_misses = true;
  // Progress counts iterations of the outermost loop (the trace's default step loop).
  const double steps = k.loops.empty() ? 1.0 : static_cast<double>(k.loops.front().extent);
  o.wrap = [&](memory::AccessSink& next) {
    return std::make_unique<ProgressSink>(next, progress, steps);
  };
  // The set × way grids before the final write-back, so dirty lines still show as dirty.
  o.before_write_back = [&](const memory::Hierarchy& h) {
    for (int level = 0; level < h.level_count(); ++level)
      if (std::optional<CacheGrid> grid = snapshot_cache_grid(h, level))
        r.grids.push_back(std::move(*grid));
  };
  o.phase = [&](const std::string& phase) { progress.set_phase(phase); };
  model::KernelRun run = model::run_kernel(k, g, m, o);
  const memory::Hierarchy& h = *run.hierarchy;
  r.machine = m.name;
  r.machine_model = m;
  r.gpu = run.gpu;
  r.kernel = k.name;
  r.tensor_names = run.tensor_names;
  r.summary = run.summary;
  r.levels = level_results(h);
  r.trace_accesses = h.trace_accesses();
  r.flops = static_cast<int64_t>(run.flops);
  r.peak_flops = model::fp32_peak(m);
  r.bytes = run.bytes;
  r.roofline = run.roofline;
  r.analytic = std::move(run.analytic);
  r.analytic_roofline = std::move(run.analytic_roofline);
  r.analytic_error = run.analytic_error;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.fraction = 1.0;
  return r;
}

std::string workbench_simulate(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "simulate: there is no kernel to simulate";
  if (!wb.machine) {
    if (std::string e = workbench_set_machine(wb, wb.machine_name); !e.empty()) return e;
  }
  if (!wb.machine_refusal.empty()) return "simulate: " + wb.machine_refusal;
  const std::string key = wb.memory_key();
  if (wb.memory_cache.count(key)) return {};
  if (wb.memory_job.running() && wb.memory_job.key() == key) return {};
  wb.memory_errors.erase(key);
  if (std::optional<HeldJob> held =
          hold_for(size_simulation(*k, *wb.machine),
                   "Simulating " + k->name + " on " + wb.machine_name, anyway)) {
    // The analytic model answers without a walk (CPU loop nests): show it while the learner
    // decides.
    if (!wb.machine->kind.empty() && wb.machine->kind != "gpu") {
      try {
        const model::AnalyticResult a = model::analyze_kernel(*k, wb.machine->hierarchy());
        held->analytic.push_back(a.accesses.to_string());
        for (const auto& level : a.levels) held->analytic.push_back(level.misses.to_string());
        held->analytic.push_back(a.memory_read_bytes.to_string());
        held->analytic.push_back(a.memory_write_bytes.to_string());
      } catch (const std::exception&) {
        // not covered: the view says the analytic model has no answer here
      }
    }
    wb.memory_held[key] = *held;
    return {};
  }
  wb.memory_held.erase(key);
  auto graph = wb.program()->graph;
  wb.memory_job.start(key, [kernel = *k, program = *wb.program(), graph, machine = *wb.machine,
                            steps = wb.steps_text(), count = wb.history->size(),
                            text = wb.graph_text](JobProgress& p) {
    MemoryResult r = simulate_kernel(kernel, *graph, machine, p);
    total_program(r, program, machine, p);
    r.steps = steps;
    r.step_count = count;
    r.graph_text = text;
    return r;
  });
  return {};
}

// [SECTION] Running on this CPU

CpuRunResult run_kernel_on_cpu(const schedule::Kernel& k, int64_t flops, JobProgress& progress) {
  CpuRunResult r;
  r.kernel = k.name;
  r.flops = flops;
  progress.set_phase("compiling the generated C++");
  const kernels::JitResult jit = kernels::jit_compile(schedule::emit_cpp(k));
  r.compile_command = jit.command;
  r.compile_seconds = jit.compile_seconds;
  r.cache_hit = jit.cache_hit;
  if (!jit.ok) throw std::runtime_error(jit.error + "\n" + jit.compiler_output);
  progress.fraction = 0.2;
  if (progress.cancel) throw JobCancelled();

  // Inputs: the harness's deterministic values; outputs poisoned so an unwritten element shows.
  std::vector<std::vector<float>> buffers;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const schedule::KernelTensor& t = k.tensors[i];
    std::vector<float> b(static_cast<size_t>(std::max<int64_t>(t.alloc_elems(), 1)));
    if (t.role == schedule::TensorRole::Input)
      kernels::fill_uniform(b.data(), b.size(), 17u + static_cast<unsigned>(i));
    else
      kernels::poison(b.data(), b.size());
    buffers.push_back(std::move(b));
  }
  progress.set_phase("running the reference interpreter");
  std::vector<std::vector<float>> reference = buffers;
  schedule::run_kernel(k, reference);
  progress.fraction = 0.4;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("verifying");
  std::vector<float*> args;
  for (auto& b : buffers) args.push_back(b.data());
  const kernels::JitKernelFn fn = jit.module->kernel();
  fn(args.data());
  r.rel_error = 0;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    if (k.tensors[i].role != schedule::TensorRole::Output) continue;
    r.rel_error = std::max(
        r.rel_error,
        kernels::relative_error(buffers[i].data(), reference[i].data(), buffers[i].size()));
  }
  r.verified = r.rel_error <= kVerifyTolerance;
  if (!r.verified) return r;  // an unverified kernel is not timed
  progress.fraction = 0.5;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("timing (median of repeats)");
  kernels::TimingOptions to;
  to.repeats = 10;
  to.max_seconds = 3.0;
  const kernels::Timing t = kernels::time_runs([&](int) { fn(args.data()); }, to);
  r.median_ms = t.median_ms;
  r.min_ms = t.min_ms;
  r.repeats = t.repeats;
  progress.fraction = 0.8;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("measuring this CPU's peaks");
  const kernels::Peaks peaks = kernels::measure_peaks(true);
  r.peak_gflops = peaks.gflops_fp32;
  r.peak_gbps = peaks.gbps;
  r.dependent_fma_ns = peaks.dependent_fma_ns;
  r.peaks_source = peaks.source;
  progress.fraction = 1.0;
  return r;
}

std::string workbench_run_cpu(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "run-cpu: there is no kernel to run";
  const std::string key = wb.schedule_key();
  if (wb.cpu_cache.count(key)) return {};
  if (wb.cpu_job.running() && wb.cpu_job.key() == key) return {};
  wb.cpu_errors.erase(key);
  if (std::optional<HeldJob> held =
          hold_for(size_cpu_run(*k), "Checking " + k->name + " against the interpreter", anyway)) {
    wb.cpu_held[key] = *held;
    return {};
  }
  wb.cpu_held.erase(key);
  const auto flops = static_cast<int64_t>(model::kernel_flops(*k, *wb.program()->graph));
  wb.cpu_job.start(
      key, [kernel = *k, flops](JobProgress& p) { return run_kernel_on_cpu(kernel, flops, p); });
  return {};
}

std::string workbench_run_gpu(Workbench& wb) {
  if (!wb.kernel()) return "run-gpu: there is no kernel to run";
  if (std::string why = gpu_run_unavailable(); !why.empty()) return "run-gpu: " + why;
  const std::string key = wb.schedule_key();
  if (wb.gpu_cache.count(key)) return {};
  if (wb.gpu_job.running() && wb.gpu_job.key() == key) return {};
  wb.gpu_errors.erase(key);
  wb.gpu_job.start(key, [text = wb.graph_text, steps = wb.steps_text()](JobProgress& p) {
    return run_schedule_on_gpu(text, steps, 20, p);
  });
  return {};
}

void workbench_cancel(Workbench& wb) {
  wb.memory_job.cancel();
  wb.cpu_job.cancel();
  wb.gpu_job.cancel();
  wb.tiles_job.cancel();
  wb.gpu_tiles_job.cancel();
  autotune_cancel(wb.autotune);
}

void workbench_poll(Workbench& wb) {
  autotune_poll(wb.autotune);
  std::optional<MemoryResult> mem;
  std::string error;
  if (wb.memory_job.poll(mem, error)) {
    if (mem) {
      wb.memory_cache[wb.memory_job.key()] = std::move(*mem);
      wb.last_memory_key = wb.memory_job.key();
    } else
      wb.memory_errors[wb.memory_job.key()] = error;
  }
  std::optional<TilesResult> tiles;
  if (wb.tiles_job.poll(tiles, error) && wb.tiles_job.key() == wb.tiles_key) {
    wb.tiles = std::move(tiles);
    wb.tiles_error = error;
  }
  std::optional<GpuTilesResult> gpu_tiles;
  if (wb.gpu_tiles_job.poll(gpu_tiles, error) && wb.gpu_tiles_job.key() == wb.gpu_tiles_key) {
    wb.gpu_tiles = std::move(gpu_tiles);
    wb.gpu_tiles_error = error;
    // A new pick opens where the picked block starts (the wave's earlier blocks may run first).
    if (wb.gpu_tiles) wb.tiles_frame = double(wb.gpu_tiles->first_block_frame);
  }
  std::optional<CpuRunResult> run;
  if (wb.cpu_job.poll(run, error)) {
    if (run)
      wb.cpu_cache[wb.cpu_job.key()] = std::move(*run);
    else
      wb.cpu_errors[wb.cpu_job.key()] = error;
  }
  std::optional<GpuRunResult> gpu;
  if (wb.gpu_job.poll(gpu, error)) {
    if (gpu)
      wb.gpu_cache[wb.gpu_job.key()] = std::move(*gpu);
    else
      wb.gpu_errors[wb.gpu_job.key()] = error;
  }
}

// [SECTION] Tiles animation

std::vector<TileGrid> make_tile_grids(const schedule::Kernel& k, const schedule::TraceLayout& layout,
                                      const schedule::TraceOptions& options,
                                      std::vector<TileGridSpan>& spans) {
  std::vector<TileGrid> grids;
  spans.clear();
  size_t bins = 0;
  const std::vector<schedule::StageArea> areas = schedule::stage_areas(k, options);
  // Each tensor, then the staged copies of it (beside it in the view).
  struct Entry {
    int tensor = -1, area = -1;
  };
  std::vector<Entry> entries;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    entries.push_back({int(i), -1});
    for (size_t a = 0; a < areas.size(); ++a)
      if (areas[a].tensor == int(i) && areas[a].bytes > 0) entries.push_back({int(i), int(a)});
  }
  for (const Entry& e : entries) {
    const schedule::KernelTensor& t = k.tensors[size_t(e.tensor)];
    const schedule::StageArea* area = e.area >= 0 ? &areas[size_t(e.area)] : nullptr;
    TileGrid g;
    g.name = area ? area->buffer : t.name;
    g.output = !area && t.role == schedule::TensorRole::Output;
    if (area) {
      g.staged_from = t.name;
      g.level = schedule::mem_level_name(area->level);
    }
    // The area holds one buffer, or two when double-buffered (drawn one below the other).
    const int64_t elems = area ? std::max<int64_t>(int64_t(area->bytes / 4), 1)
                               : std::max<int64_t>(t.alloc_elems(), 1);
    // Memory order: a row is one pitch of the fastest-varying dim (the second-smallest stride).
    std::vector<int64_t> strides = area ? area->strides : t.strides;
    std::sort(strides.begin(), strides.end());
    g.cols = strides.size() >= 2 ? std::max<int64_t>(strides[1], 1) : elems;
    g.rows = (elems + g.cols - 1) / g.cols;
    g.bin_rows = static_cast<int>(std::min<int64_t>(g.rows, kTileBins));
    g.bin_cols = static_cast<int>(std::min<int64_t>(g.cols, kTileBins));
    g.offset = bins;
    bins += g.bins();
    std::vector<int64_t> rows_in(size_t(g.bin_rows), 0), cols_in(size_t(g.bin_cols), 0);
    for (int64_t r = 0; r < g.rows; ++r) ++rows_in[size_t(r * g.bin_rows / g.rows)];
    for (int64_t c = 0; c < g.cols; ++c) ++cols_in[size_t(c * g.bin_cols / g.cols)];
    for (int r = 0; r < g.bin_rows; ++r)
      for (int c = 0; c < g.bin_cols; ++c)
        g.inv_elems.push_back(
            1.0 / double(std::max<int64_t>(1, rows_in[size_t(r)] * cols_in[size_t(c)])));
    grids.push_back(g);
    const uint64_t base = area ? area->addr : layout.tensor_base[size_t(e.tensor)];
    spans.push_back({base, base + uint64_t(elems) * 4,
                     area ? area->space : memory::AddressSpace::Global});
  }
  return grids;
}

namespace {

// Counts accesses per bin of each kernel tensor and snapshots the counts at step boundaries.
class TileSink final : public memory::AccessSink {
 public:
  TileSink(TilesResult& r, const schedule::TraceLayout& layout, const schedule::Kernel& k,
           uint64_t every, uint64_t expected_steps, JobProgress& p)
      : m_r(r),
        m_every(std::max<uint64_t>(every, 1)),
        m_expected(std::max<uint64_t>(expected_steps, 1)),
        m_p(p) {
    std::vector<TileGridSpan> spans;
    m_r.grids = make_tile_grids(k, layout, schedule::TraceOptions{}, spans);
    size_t bins = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      m_ranges.push_back({spans[i].begin, spans[i].end});
      m_spaces.push_back(spans[i].space);
      bins += m_r.grids[i].bins();
    }
    m_counts.assign(bins, 0);
    m_tile.assign(m_r.grids.size(), TileBox{});
    m_last_tile = m_tile;
  }
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    if (m_p.cancel) throw JobCancelled();
    for (size_t i = 0; i < n; ++i) count(a[i]);
  }
  void step_boundary(uint64_t step) override {
    m_step = step;
    // The step that just ended is the current tile until the next one ends.
    m_last_tile = m_tile;
    m_tile.assign(m_tile.size(), TileBox{});
    if (step % m_every == 0 && step > 0) {
      snapshot(step);
      m_p.fraction = std::min(0.99, double(step) / double(m_expected));
    }
  }
  void finish(uint64_t steps) {
    if (std::any_of(m_tile.begin(), m_tile.end(), [](const TileBox& b) { return !b.empty(); }))
      m_last_tile = m_tile;
    snapshot(steps);
    m_r.steps = steps;
  }
  uint64_t last_step() const { return m_step; }

 private:
  void count(const memory::Access& a) {
    for (size_t t = 0; t < m_ranges.size(); ++t) {
      if (a.space != m_spaces[t] || a.addr < m_ranges[t].first || a.addr >= m_ranges[t].second)
        continue;
      const TileGrid& g = m_r.grids[t];
      // A GPU sector covers several elements: count each element it holds.
      const uint64_t first = (a.addr - m_ranges[t].first) / 4;
      const uint64_t last =
          std::min<uint64_t>(first + std::max<uint32_t>(a.size, 4) / 4, uint64_t(g.rows * g.cols));
      for (uint64_t e = first; e < last; ++e) {
        const auto [br, bc] = g.bin_of(e);
        ++m_counts[g.offset + br * size_t(g.bin_cols) + bc];
        TileBox& b = m_tile[t];
        if (b.empty()) {
          b = {int(br), int(bc), int(br), int(bc)};
        } else {
          b.r0 = std::min(b.r0, int(br)), b.r1 = std::max(b.r1, int(br));
          b.c0 = std::min(b.c0, int(bc)), b.c1 = std::max(b.c1, int(bc));
        }
      }
      return;
    }
  }
  void snapshot(uint64_t step) {
    if (m_r.frames.size() >= size_t(kMaxTileFrames) + 1) return;
    m_r.frames.push_back(m_counts);
    m_r.frame_step.push_back(step);
    m_r.frame_tiles.push_back(m_last_tile);
  }

  TilesResult& m_r;
  uint64_t m_every;
  uint64_t m_expected;
  JobProgress& m_p;
  std::vector<std::pair<uint64_t, uint64_t>> m_ranges;  // per grid: its bytes
  std::vector<memory::AddressSpace> m_spaces;            // per grid: shared tiles or global
  std::vector<uint32_t> m_counts;
  std::vector<TileBox> m_tile, m_last_tile;  // per grid: this step's bins, the last step's
  uint64_t m_step = 0;
};

}  // namespace

TilesResult record_tiles(const schedule::Kernel& k, JobProgress& progress) {
  TilesResult r;
  r.kernel = k.name;
  // The step loop: the deepest loop whose iterations (the product of the extents down to it)
  // stay under a few thousand, so the animation moves tile by tile, not element by element.
  double iterations = 1;
  for (const schedule::Loop& l : k.loops) {
    if (iterations * double(l.extent) > 4096 && !r.step_loop.empty()) break;
    iterations *= double(l.extent);
    r.step_loop = l.name;
  }
  const uint64_t expected = uint64_t(std::max(iterations, 1.0));
  schedule::TraceOptions to;
  to.step_loop = r.step_loop;
  const schedule::TraceLayout layout = schedule::trace_layout(k, to);
  TileSink sink(r, layout, k, (expected + kMaxTileFrames - 1) / kMaxTileFrames, expected, progress);
  r.frames.push_back(std::vector<uint32_t>());  // frame 0: nothing touched yet (filled below)
  r.frame_step.push_back(0);
  r.frame_tiles.emplace_back();  // frame 0: no tile yet (sized below)
  const schedule::TraceSummary s = schedule::trace_kernel(k, sink, to);
  sink.finish(s.steps);
  for (TileGrid& g : r.grids)
    for (size_t i = 0; i < g.inv_elems.size(); ++i) {
      double& peak = g.staged_from.empty() ? r.peak_per_element : g.peak_per_element;
      peak = std::max(peak, r.frames.back()[g.offset + i] * g.inv_elems[i]);
    }
  size_t bins = 0;
  for (const TileGrid& g : r.grids) bins += size_t(g.bin_rows) * size_t(g.bin_cols);
  r.frames[0].assign(bins, 0);
  r.frame_tiles[0].assign(r.grids.size(), TileBox{});
  progress.fraction = 1.0;
  return r;
}

std::string workbench_record_tiles(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "tiles: there is no kernel";
  const std::string key = wb.schedule_key();
  if (wb.tiles_key == key && (wb.tiles || !wb.tiles_error.empty())) return {};
  if (wb.tiles_job.running() && wb.tiles_job.key() == key) return {};
  if (std::optional<HeldJob> held =
          hold_for(size_tiles_walk(*k), "Walking the loop nest of " + k->name, anyway)) {
    wb.tiles_held[key] = *held;
    return {};
  }
  wb.tiles_held.erase(key);
  wb.tiles.reset();
  wb.tiles_error.clear();
  wb.tiles_key = key;
  wb.tiles_frame = 0;
  wb.tiles_job.start(key, [kernel = *k](JobProgress& p) { return record_tiles(kernel, p); });
  return {};
}

size_t Workbench::tiles_frame_count() const {
  if (tiles_gpu) return gpu_tiles ? gpu_tiles->frames.size() : 0;
  return tiles ? tiles->frames.size() : 0;
}

std::string workbench_record_gpu_tiles(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "tiles: there is no kernel";
  if (!wb.machine) return "tiles: no machine is loaded";
  const std::string key = wb.gpu_tiles_key_now();
  if (wb.gpu_tiles_key == key && (wb.gpu_tiles || !wb.gpu_tiles_error.empty())) return {};
  if (wb.gpu_tiles_job.running() && wb.gpu_tiles_job.key() == key) return {};
  // The walk up to the picked wave is at most the whole GPU trace: sized as the loop-nest walk.
  if (std::optional<HeldJob> held =
          hold_for(size_tiles_walk(*k), "Walking " + k->name + " on the GPU", anyway)) {
    wb.tiles_held[key] = *held;
    return {};
  }
  wb.tiles_held.erase(key);
  wb.gpu_tiles.reset();
  wb.gpu_tiles_error.clear();
  wb.gpu_tiles_key = key;
  wb.tiles_frame = 0;
  wb.gpu_tiles_job.start(key, [kernel = *k, machine = *wb.machine, block = wb.tiles_block,
                               warp = wb.tiles_warp](JobProgress& p) {
    return record_gpu_tiles(kernel, machine, block, warp, p);
  });
  return {};
}

std::string workbench_tiles_control(Workbench& wb, const std::string& verb, double value) {
  const double last = std::max(0.0, double(wb.tiles_frame_count()) - 1);
  if (verb == "gpu") {
    wb.tiles_gpu = value != 0;
    wb.tiles_playing = false;
    wb.tiles_frame = 0;
    return {};
  }
  if (verb == "block" || verb == "warp") {
    // The range is checked by the recording (which says what it is); a new pick starts the
    // wave from its first frame.
    if (value < 0 || value != std::floor(value) || value > 1e9)
      return "tiles " + verb + ": expected a whole number >= 0";
    if (verb == "block") {
      wb.tiles_block = int64_t(value);
      // Keep the warp when the new block has it (every block has the same threads).
    } else {
      wb.tiles_warp = int(value);
    }
    wb.tiles_gpu = true;
    wb.tiles_playing = false;
    wb.tiles_frame = 0;
    return {};
  }
  if (verb == "play") {
    wb.tiles_playing = true;
    wb.tiles_last_time = -1;
    if (wb.tiles_frame >= last) wb.tiles_frame = 0;
  } else if (verb == "pause") {
    wb.tiles_playing = false;
  } else if (verb == "step") {
    wb.tiles_playing = false;
    wb.tiles_frame = std::min(last, std::floor(wb.tiles_frame) + 1);
  } else if (verb == "back") {
    wb.tiles_playing = false;
    wb.tiles_frame = std::max(0.0, std::ceil(wb.tiles_frame) - 1);
  } else if (verb == "seek") {
    wb.tiles_frame = std::clamp(value, 0.0, last);
  } else if (verb == "speed") {
    if (value <= 0 || value > 1000) return "tiles speed: expected 0 < frames per second <= 1000";
    wb.tiles_speed = value;
  } else {
    return "tiles: expected play, pause, step, back, seek N, speed X, gpu on|off, block N or "
           "warp N, got '" + verb + "'";
  }
  return {};
}

void workbench_tick(Workbench& wb, double now) {
  if (!wb.tiles_playing || wb.tiles_frame_count() == 0) {
    wb.tiles_last_time = now;
    return;
  }
  if (wb.tiles_last_time >= 0) wb.tiles_frame += (now - wb.tiles_last_time) * wb.tiles_speed;
  wb.tiles_last_time = now;
  const double last = double(wb.tiles_frame_count() - 1);
  if (wb.tiles_frame >= last) {
    wb.tiles_frame = last;
    wb.tiles_playing = false;
  }
}

void workbench_load_recorded(Workbench& wb, const std::string& dir) {
  wb.recorded_loaded = true;
  wb.recorded.clear();
  wb.counters_recorded.clear();
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  if (ec) {
    wb.recorded_error = "cannot list '" + dir + "': " + ec.message();
    return;
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    // Hardware-counter recordings (tilescope-counters/1) are not timing reports: the Memory
    // view's predicted-vs-measured table reads them.
    if (const io::TextInput in = io::read_text_input(f, io::kMaxRecordingBytes, "a recording");
        in.ok && kernels::is_counters_document(io::parse_json(in.text).value)) {
      try {
        wb.counters_recorded.emplace_back(f, kernels::load_counters_report(f));
      } catch (const std::exception& e) {
        wb.recorded_error += std::string(e.what()) + "\n";
      }
      continue;
    }
    try {
      wb.recorded.emplace_back(f, kernels::read_bench_report(f));
    } catch (const std::exception& e) {
      wb.recorded_error += std::string(e.what()) + "\n";
    }
  }
  // Newest first (ISO dates compare as text; undated reports last, by file name), so the Timings
  // view opens on the latest recording and the older ones stay a click away.
  std::stable_sort(wb.recorded.begin(), wb.recorded.end(), [](const auto& x, const auto& y) {
    return x.second.value("date", std::string()) > y.second.value("date", std::string());
  });
}

}  // namespace tilescope::core

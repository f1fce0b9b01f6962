// The workbench's Memory simulation: the current kernel (and the whole schedule) traced through
// the chosen machine as a cancellable job, with its result cached per schedule and machine.
#include "app/core/workbench.h"

#include "app/core/format.h"
#include "sim/io/format.h"
#include "sim/predict/analytic.h"
#include "sim/predict/sampling.h"
#include "sim/predict/simulate.h"

#include <algorithm>
#include <chrono>

namespace tilescope::core {

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

void total_program(MemoryResult& r, const schedule::Program& p, const predict::Machine& m,
                   JobProgress& progress) {
  r.program.reset();
  r.program_note.clear();
  if (p.kernels.size() < 2) {  // the kernel is the program: its own figures are the total
    r.program = ProgramTotal{1, r.levels, double(r.flops)};
    return;
  }
  const double accesses = pipeline::size_walk(pipeline::Walk::Simulation, p, &m).accesses;
  if (accesses > kMaxProgramTotalAccesses) {
    r.program_note = "the whole schedule's total is not simulated: its " +
                     std::to_string(p.kernels.size()) + " kernels make about " +
                     format_si(accesses) + " accesses";
    return;
  }
  progress.set_phase("the whole schedule");
  predict::RunOptions o;
  o.wrap = [&](memory::AccessSink& next) {
    return std::make_unique<memory::CancelSink<JobCancelled>>(next, progress.cancel);
  };
  const predict::ProgramRun run = predict::run_program(p, m, o);
  ProgramTotal t;
  t.kernels = p.kernels.size();
  t.levels = level_results(*run.hierarchy);
  t.flops = run.flops;
  r.program = std::move(t);
}

MemoryResult simulate_kernel(const schedule::Kernel& k, const graph::Graph& g,
                             const predict::Machine& m, JobProgress& progress, bool sample) {
  const auto t0 = std::chrono::steady_clock::now();
  MemoryResult r;
  predict::RunOptions o;
  o.classify_misses = true;
  o.sample = sample;
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
  // The counters so far, as the trace streams through: each level's hit rate, then main memory.
  o.watch = [&](const memory::Hierarchy& h) {
    std::vector<std::string> lines = {"So far, " + format_si(double(h.trace_accesses())) +
                                      " trace accesses:"};
    for (int level = 0; level < h.level_count(); ++level) {
      const memory::Counters c = h.counters(level);
      lines.push_back(h.config().levels[size_t(level)].name + " hit rate " +
                      format_percent(c.hit_rate()) + " of " + format_si(double(c.accesses)) +
                      " accesses");
    }
    const memory::Counters d = h.counters(h.level_count());
    lines.push_back(h.config().memory.name + " read " + io::format_bytes(double(d.read_bytes)) +
                    ", written " + io::format_bytes(double(d.write_bytes)));
    progress.set_partial(std::move(lines));
  };
  predict::KernelRun run = predict::simulate_kernel(k, g, m, o);
  progress.set_partial({});
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
  r.peak_flops = predict::fp32_peak(m);
  r.bytes = run.bytes;
  r.roofline = run.roofline;
  r.analytic = std::move(run.analytic);
  r.analytic_roofline = std::move(run.analytic_roofline);
  r.analytic_error = run.analytic_error;
  r.sampled = run.sampled;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  progress.fraction = 1.0;
  return r;
}

MemoryResult simulate_schedule(const schedule::Program& program, const predict::Machine& machine,
                               const std::string& steps, size_t count, const std::string& text,
                               bool sample, double exact_seconds, JobProgress& p) {
  const schedule::Kernel& kernel = program.kernels.at(size_t(program.current));
  MemoryResult r = simulate_kernel(kernel, *program.graph, machine, p, sample);
  if (sample) r.exact_seconds = exact_seconds;
  // The kernel's numbers first, while the whole schedule's total runs after it.
  if (program.kernels.size() > 1) {
    const LevelResult& d = r.levels.back();
    p.set_partial({kernel.name + " done: " + io::format_bytes(double(r.dram_bytes())) + " at " +
                       d.name + " (read " + io::format_bytes(double(d.total.read_bytes)) +
                       ", written " + io::format_bytes(double(d.total.write_bytes)) + ")",
                   "now the whole schedule, " + std::to_string(program.kernels.size()) +
                       " kernels one after another"});
  }
  total_program(r, program, machine, p);
  r.steps = steps;
  r.step_count = count;
  r.graph_text = text;
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
  // Past about a second of simulation the view starts from a sample (a second's walk, with its
  // error bar) unless the learner asked for every access.
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Simulation, *k, &*wb.machine);
  const bool sample = predict::sampled_by_default(size.accesses) && !wb.memory_exact.count(key);
  std::optional<HeldJob> held;
  if (!sample) held = hold_for(size, "Simulating " + k->name + " on " + wb.machine_name, anyway);
  if (held) {
    // The analytic model answers without a walk (CPU loop nests): show it while the learner
    // decides.
    if (!wb.machine->kind.empty() && wb.machine->kind != "gpu") {
      try {
        const predict::AnalyticResult a = predict::analyze_kernel(*k, wb.machine->hierarchy());
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
  wb.memory_job.start(key, [program = *wb.program(), machine = *wb.machine, steps = wb.steps_text(),
                            count = wb.history->size(), text = wb.graph_text, sample,
                            exact_s = size.seconds](JobProgress& p) {
    return simulate_schedule(program, machine, steps, count, text, sample, exact_s, p);
  });
  return {};
}

std::string workbench_simulate_exactly(Workbench& wb) {
  if (!wb.kernel()) return "simulate: there is no kernel to simulate";
  const std::string key = wb.memory_key();
  wb.memory_exact.insert(key);
  // The sampled result steps aside for the exact one (kept on screen until it is ready).
  if (auto it = wb.memory_cache.find(key); it != wb.memory_cache.end() && it->second.sampled) {
    const std::string kept = key + "\n#sampled";
    wb.memory_cache[kept] = std::move(it->second);
    wb.memory_cache.erase(key);
    wb.last_memory_key = kept;
  }
  return workbench_simulate(wb, false);
}

void workbench_track_memory_wait(Workbench& wb, double now) {
  Workbench::MemoryWait& w = wb.memory_wait;
  if (!wb.kernel()) return;
  const std::string key = wb.memory_key();
  if (key != w.key) w = {key, now, -1};
  if (w.seconds < 0 && wb.memory_cache.count(key)) w.seconds = now - w.since;
}

}  // namespace tilescope::core

// The workbench: the schedule's history on the chosen machine, its views and results. Its jobs
// live beside it, one file each: workbench_jobs.cpp (sizing and holding long work),
// workbench_simulate.cpp (Memory), workbench_cpu_run.cpp (the CPU and GPU runs),
// workbench_tiles.cpp (the Tiles walk and playback; the walk itself is tile_grid.cpp) and
// workbench_recorded.cpp (recordings).
#include "app/core/workbench.h"

#include "sim/io/format.h"
#include "app/core/format.h"
#include "sim/predict/simulate.h"
#include "sim/pipeline.h"

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
    case ViewTab::Trace:
      return "trace";
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
    case ViewTab::Trace:
      return "Trace";
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

std::string schedule_key_of(const std::string& graph_text, const std::string& steps_text,
                            int current_kernel) {
  return graph_text + "\n--\n" + steps_text + "\n#" + std::to_string(current_kernel);
}

std::string Workbench::schedule_key() const {
  const schedule::Program* p = program();
  return schedule_key_of(graph_text, steps_text(), p ? p->current : -1);
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
    for (const std::string& name : predict::preset_names()) {
      try {
        if (!wb.history->first_refused(predict::target_for(predict::load_machine(name))))
          wb.machines_fitting.push_back(name);
      } catch (const std::exception&) {
        // A preset that does not load (host detection failed) is simply not offered.
      }
    }
  }
}

}  // namespace

schedule::Target workbench_target(const Workbench& wb) {
  return pipeline::target(wb.machine ? &*wb.machine : nullptr);
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
    predict::Machine m = predict::load_machine(name);
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

}  // namespace tilescope::core

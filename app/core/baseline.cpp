// Baselines: a pinned schedule (A) beside the current one (B), per level, per tensor and in time.
#include "app/core/baseline.h"

#include "app/core/format.h"
#include "sim/io/format.h"
#include "sim/pipeline.h"
#include "sim/predict/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>

namespace tilescope::core {

// [SECTION] The comparison

double CompareRow::relative() const {
  if (a == 0) return b == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (b - a) / a;
}

std::string relative_text(const CompareRow& r) {
  const double rel = r.relative();
  if (std::isinf(rel)) return "new";
  if (rel == 0) return "0 %";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%.1f %%", rel > 0 ? "+" : "\u2212", std::abs(100 * rel));
  return buf;
}

namespace {

const LevelResult* find_level(const MemoryResult& r, const std::string& name) {
  for (const LevelResult& l : r.levels)
    if (l.name == name) return &l;
  return nullptr;
}

// A tensor's counters at a level by name (by_tensor is indexed by graph tensor id + 1).
memory::Counters tensor_counters(const MemoryResult& r, const LevelResult& l,
                                 const std::string& tensor) {
  for (size_t id = 0; id < r.tensor_names.size(); ++id)
    if (r.tensor_names[id] == tensor && id + 1 < l.by_tensor.size()) return l.by_tensor[id + 1];
  return {};
}

// The tensors with traffic at some level, in r's order.
std::vector<std::string> tensors_with_traffic(const MemoryResult& r) {
  std::vector<std::string> out;
  for (size_t id = 0; id < r.tensor_names.size(); ++id)
    for (const LevelResult& l : r.levels)
      if (id + 1 < l.by_tensor.size() && l.by_tensor[id + 1].accesses > 0) {
        out.push_back(r.tensor_names[id]);
        break;
      }
  return out;
}

// A's level for B's level `i`: main memory is each one's last level, whatever its name; a cache
// is matched by name (nullptr when A's machine has none of that name).
const LevelResult* level_of_a(const MemoryResult& a, const MemoryResult& b, size_t i) {
  if (i + 1 == b.levels.size()) return a.levels.empty() ? nullptr : &a.levels.back();
  return find_level(a, b.levels[i].name);
}

uint64_t level_bytes(const memory::Counters& c) {
  return c.read_bytes + c.write_bytes;
}

}  // namespace

Comparison compare_results(const MemoryResult& a, const MemoryResult& b, std::string a_label,
                           std::string b_label) {
  Comparison c;
  c.a_label = std::move(a_label);
  c.b_label = std::move(b_label);
  if (a.machine != b.machine)
    c.notes.push_back("A ran on " + a.machine + " and B on " + b.machine +
                      ": levels are matched by name");
  if (a.sampled || b.sampled)
    c.notes.push_back(std::string(a.sampled && b.sampled ? "A and B are"
                                  : a.sampled            ? "A is"
                                                         : "B is") +
                      " sampled: the numbers are estimates with an error bar");
  // The levels, in B's order; main memory (the last) by bytes, the caches by misses and hit rate.
  for (size_t i = 0; i < b.levels.size(); ++i) {
    const LevelResult& lb = b.levels[i];
    const bool memory = i + 1 == b.levels.size();
    const LevelResult* la = level_of_a(a, b, i);
    if (!la) {
      c.notes.push_back(lb.name + " is only in B's machine");
      continue;
    }
    if (memory) {
      c.levels.push_back(
          {lb.name, "", "bytes", double(level_bytes(la->total)), double(level_bytes(lb.total))});
    } else {
      c.levels.push_back(
          {lb.name, "", "misses", double(la->total.misses), double(lb.total.misses)});
      c.levels.push_back({lb.name, "", "hit rate", la->total.hit_rate(), lb.total.hit_rate()});
    }
  }
  for (size_t i = 0; i + 1 < a.levels.size(); ++i)
    if (!find_level(b, a.levels[i].name))
      c.notes.push_back(a.levels[i].name + " is only in A's machine");
  // The tensors, by name: B's, then those only A touched (a fusion removes an intermediate).
  std::vector<std::string> names = tensors_with_traffic(b);
  for (const std::string& t : tensors_with_traffic(a))
    if (std::find(names.begin(), names.end(), t) == names.end()) names.push_back(t);
  for (const std::string& t : names) {
    for (size_t i = 0; i < b.levels.size(); ++i) {
      const LevelResult& lb = b.levels[i];
      const bool memory = i + 1 == b.levels.size();
      const LevelResult* la = level_of_a(a, b, i);
      if (!la) continue;
      const memory::Counters ca = tensor_counters(a, *la, t), cb = tensor_counters(b, lb, t);
      if (memory)
        c.tensors.push_back(
            {lb.name, t, "bytes", double(level_bytes(ca)), double(level_bytes(cb))});
      else
        c.tensors.push_back({lb.name, t, "misses", double(ca.misses), double(cb.misses)});
    }
  }
  c.time = CompareRow{"time", "", "seconds", a.roofline.seconds, b.roofline.seconds};
  c.a_binding = a.roofline.binding;
  c.b_binding = b.roofline.binding;
  return c;
}

namespace {

// The sum of a run's measured counters `keys`; nullopt when one is missing.
std::optional<double> measured_sum(const kernels::CounterRun& run,
                                   std::initializer_list<const char*> keys) {
  double s = 0;
  for (const char* k : keys) {
    const auto it = run.measured.find(k);
    if (it == run.measured.end()) return std::nullopt;
    s += it->second;
  }
  return s;
}

}  // namespace

Comparison compare_recording(const kernels::CounterRun& run, const std::string& tool,
                             const std::string& device, const MemoryResult& b, std::string a_label,
                             std::string b_label) {
  Comparison c;
  c.a_label = std::move(a_label);
  c.b_label = std::move(b_label);
  const bool cachegrind = tool == "cachegrind";
  c.notes.push_back("A was measured by " +
                    std::string(cachegrind ? "cachegrind" : "Nsight Compute") + " on " + device +
                    "; B is simulated on " + b.machine);
  // The recordings are GEMMs (2·M·N·K FLOPs): a different size is said, since bytes scale with it.
  const double a_flops = 2.0 * run.m * run.n * run.k;
  const bool sizes_differ =
      a_flops > 0 && b.flops > 0 && std::abs(a_flops - double(b.flops)) > 0.01 * a_flops;
  if (sizes_differ)
    c.notes.push_back("the problems differ in size: A's GEMM does " + format_si(a_flops) +
                      "FLOP, B's kernel " + format_si(double(b.flops)) +
                      "FLOP; the rows per FLOP compare them");
  if (b.sampled) c.notes.push_back("B is sampled: its numbers are estimates with an error bar");
  const size_t caches = b.levels.empty() ? 0 : b.levels.size() - 1;
  if (cachegrind) {
    // cachegrind simulates two data caches: the first level and the last before memory.
    if (caches > 0) {
      const LevelResult& first = b.levels.front();
      const LevelResult& last = b.levels[caches - 1];
      if (const auto d1 = measured_sum(run, {"d1_misses"}))
        c.levels.push_back({first.name, "", "misses", *d1, double(first.total.misses)});
      if (const auto ll = measured_sum(run, {"ll_misses"})) {
        c.levels.push_back({last.name, "", "misses", *ll, double(last.total.misses)});
        if (sizes_differ)
          c.levels.push_back({last.name, "", "misses/FLOP", *ll / a_flops,
                              double(last.total.misses) / double(b.flops)});
      }
      c.notes.push_back("cachegrind's D1 is matched with B's " + first.name +
                        " and its LL with B's " + last.name);
    }
  } else {
    if (const auto l2 = measured_sum(run, {"l2_read_sectors", "l2_write_sectors"})) {
      if (const LevelResult* lb = caches > 0 ? find_level(b, "L2") : nullptr;
          lb && lb != &b.levels.back())
        c.levels.push_back({"L2", "", "bytes", 32 * *l2, double(level_bytes(lb->total))});
      else
        c.notes.push_back("L2 is only in A's recording");
    }
    if (const auto dram = measured_sum(run, {"dram_read_bytes", "dram_write_bytes"});
        dram && !b.levels.empty()) {
      const double b_bytes = double(level_bytes(b.levels.back().total));
      c.levels.push_back({b.levels.back().name, "", "bytes", *dram, b_bytes});
      if (sizes_differ)
        c.levels.push_back(
            {b.levels.back().name, "", "bytes/FLOP", *dram / a_flops, b_bytes / double(b.flops)});
    }
    c.notes.push_back(
        "L2 bytes are ncu's 32-byte sectors read and written; L1 is not compared (ncu counts "
        "sectors, the simulation the bytes each thread asks for)");
  }
  c.notes.push_back("a recording has no per-tensor counts");
  if (const auto ns = measured_sum(run, {"time_ns"})) {
    c.time = CompareRow{"time", "", "seconds", *ns * 1e-9, b.roofline.seconds};
    c.time_label = "A measured, B bound";
    c.a_binding = "measurement";
    c.b_binding = b.roofline.binding;
  }
  return c;
}

std::optional<RecordedPoint> recorded_point(const kernels::CounterRun& run) {
  const auto dram = measured_sum(run, {"dram_read_bytes", "dram_write_bytes"});
  const auto ns = measured_sum(run, {"time_ns"});
  if (!dram || !ns || *dram <= 0 || *ns <= 0 || run.m <= 0) return std::nullopt;
  return RecordedPoint{2.0 * run.m * run.n * run.k, *dram, *ns * 1e-9};
}

nlohmann::json comparison_json(const Comparison& c) {
  const auto row = [](const CompareRow& r) {
    nlohmann::json j = {
        {"level", r.level}, {"what", r.what}, {"a", r.a}, {"b", r.b}, {"delta", r.delta()}};
    if (!r.tensor.empty()) j["tensor"] = r.tensor;
    const double rel = r.relative();
    j["relative"] = std::isinf(rel) ? nlohmann::json(nullptr) : nlohmann::json(rel);
    return j;
  };
  nlohmann::json j = {{"a", c.a_label}, {"b", c.b_label}, {"notes", c.notes}};
  j["levels"] = nlohmann::json::array();
  for (const CompareRow& r : c.levels) j["levels"].push_back(row(r));
  j["tensors"] = nlohmann::json::array();
  for (const CompareRow& r : c.tensors) j["tensors"].push_back(row(r));
  if (c.time) {
    j["time"] = row(*c.time);
    j["time"]["label"] = c.time_label;
    j["time"]["a_binding"] = c.a_binding;
    j["time"]["b_binding"] = c.b_binding;
  } else {
    j["time"] = nullptr;
  }
  return j;
}

std::string value_text(const CompareRow& r, double v) {
  if (r.what == "bytes") return io::format_bytes(v);
  if (r.what == "hit rate") return format_percent(v);
  if (r.what == "seconds") return io::format_ms(v * 1e3);
  if (r.what == "bytes/FLOP" || r.what == "misses/FLOP") {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
  }
  return format_thousands(int64_t(std::llround(v)));
}

std::string change_text(const CompareRow& r) {
  if (r.what != "hit rate") return relative_text(r);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%.2f pts", r.delta() < 0 ? "\u2212" : "+",
                std::abs(100 * r.delta()));
  return buf;
}

std::string comparison_text(const Comparison& c) {
  std::ostringstream o;
  o << "A: " << c.a_label << "\nB: " << c.b_label << "\n";
  for (const std::string& n : c.notes) o << "  (" << n << ")\n";
  const auto print_line = [&](const std::string& name, const std::string& what,
                              const std::string& a, const std::string& b,
                              const std::string& change) {
    o << "  " << io::pad_right(name, 22) << " " << io::pad_right(what, 9) << " "
      << io::pad_left(a, 16) << " " << io::pad_left(b, 16) << " " << io::pad_left(change, 12)
      << "\n";
  };
  const auto print = [&](const CompareRow& r, const std::string& name) {
    print_line(name, r.what, value_text(r, r.a), value_text(r, r.b), change_text(r));
  };
  print_line("level", "", "A", "B", "change");
  for (const CompareRow& r : c.levels) print(r, r.level);
  if (c.time) print(*c.time, c.time_label);
  if (c.tensors.empty()) return o.str();
  o << "\nper tensor\n";
  for (const CompareRow& r : c.tensors) print(r, r.tensor + " @ " + r.level);
  return o.str();
}

// [SECTION] Pinning in the workbench

namespace {

std::string default_label(const std::string& steps, size_t count) {
  if (count == 0) return "the default lowering";
  std::string s = steps.size() > 48 ? steps.substr(0, 45) + "..." : steps;
  return std::to_string(count) + (count == 1 ? " step: " : " steps: ") + s;
}

// Starts A's simulation (or finds it done in the Memory cache).
void start_baseline(Workbench& wb) {
  Workbench::Baseline& a = *wb.baseline;
  const predict::Machine& machine = *a.machine_model;
  if (auto it = wb.memory_cache.find(a.key); it != wb.memory_cache.end()) {
    a.result = it->second;
    return;
  }
  // The Memory job is on it already (A is the schedule being simulated): baseline_poll copies it.
  if (wb.memory_job.running() && wb.memory_job.key() == a.key) return;
  const schedule::Kernel& k = a.program->kernels.at(size_t(a.program->current));
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Simulation, k, &machine);
  const bool sample = predict::sampled_by_default(size.accesses);
  if (!sample) {
    if (std::optional<HeldJob> held = hold_for(size, "Simulating baseline A", false)) {
      a.error = held->message;
      return;
    }
  }
  wb.baseline_job.start(
      a.key, [program = *a.program, machine, steps = a.steps, count = a.step_count,
              text = wb.graph_text, sample, exact_s = size.seconds](JobProgress& p) {
        return simulate_schedule(program, machine, steps, count, text, sample, exact_s, p);
      });
}

}  // namespace

std::string workbench_pin_baseline(Workbench& wb, const std::string& steps,
                                   const std::string& machine_name, std::string label) {
  if (!wb.history) return "baseline: there is no schedule to pin";
  std::optional<predict::Machine> machine;
  if (machine_name == wb.machine_name && wb.machine) {
    machine = *wb.machine;
  } else {
    try {
      machine = predict::load_machine(machine_name);
    } catch (const std::exception& e) {
      return "baseline: machine " + machine_name + ": " + e.what();
    }
  }
  std::optional<schedule::History> h;
  try {
    h.emplace(schedule::History::replay(wb.history->initial(), steps, pipeline::target(&*machine)));
  } catch (const std::exception& e) {
    return std::string("baseline: ") + e.what();
  }
  wb.baseline_job.cancel();
  Workbench::Baseline a;
  a.steps = h->to_text();
  a.step_count = h->size();
  a.label = label.empty() ? default_label(a.steps, a.step_count) : std::move(label);
  a.machine = machine_name;
  a.program = h->current();
  a.machine_model = *machine;
  a.schedule_key = schedule_key_of(wb.graph_text, a.steps, a.program->current);
  a.key = a.schedule_key + "\n@" + machine_name;
  wb.baseline = std::move(a);
  start_baseline(wb);
  return {};
}

std::string workbench_pin_recorded(Workbench& wb, const std::string& file, size_t run,
                                   const std::string& machine_name) {
  // By path, else by file name (a session saved in another working directory).
  auto rec = std::find_if(wb.counters_recorded.begin(), wb.counters_recorded.end(),
                          [&](const auto& r) { return r.first == file; });
  if (rec == wb.counters_recorded.end())
    rec =
        std::find_if(wb.counters_recorded.begin(), wb.counters_recorded.end(), [&](const auto& r) {
          return std::filesystem::path(r.first).filename() ==
                 std::filesystem::path(file).filename();
        });
  if (rec == wb.counters_recorded.end())
    return "baseline: no counters recording '" + file + "' is loaded";
  const kernels::CounterReport& report = rec->second;
  if (run >= report.runs.size())
    return "baseline pin-recorded: the recording has " + std::to_string(report.runs.size()) +
           " runs (0 to " + std::to_string(report.runs.size() - 1) + "), not " +
           std::to_string(run);
  const kernels::CounterRun& r = report.runs[run];
  if (r.error)
    return "baseline pin-recorded: run " + std::to_string(run) + " did not complete: " + *r.error;
  wb.baseline_job.cancel();
  Workbench::Baseline a;
  Workbench::Baseline::Recording rc;
  rc.file = file;
  rc.run = run;
  rc.tool = report.tool;
  rc.device = report.device.is_object() ? report.device.value("name", "") : "";
  if (rc.device.empty()) rc.device = report.tool == "cachegrind" ? "this CPU" : "a GPU";
  rc.data = r;
  a.label = "recorded " + counter_run_label(r) + " (" + rc.tool + ", " + rc.device + ")";
  a.machine = machine_name;
  a.recording = std::move(rc);
  wb.baseline = std::move(a);
  return {};
}

std::string workbench_baseline(Workbench& wb, const std::string& verb, double n) {
  if (verb == "pin-recorded") {
    const std::string kind = wb.machine ? wb.machine->kind : "cpu";
    const auto* rec =
        counters_for_machine_kind(wb.counters_recorded, kind, wb.machine ? wb.machine->name : "");
    if (!rec)
      return "baseline pin-recorded: no " +
             std::string(kind == "gpu" ? "Nsight Compute" : "cachegrind") +
             " counters recording for machine " + wb.machine_name + " in assets/recorded/";
    return workbench_pin_recorded(wb, rec->first, size_t(std::max(0.0, n)), wb.machine_name);
  }
  if (verb == "clear") {
    wb.baseline_job.cancel();
    wb.baseline.reset();
    return {};
  }
  if (verb == "run-cpu") {
    if (!wb.baseline) return "baseline run-cpu: no baseline is pinned";
    const Workbench::Baseline& a = *wb.baseline;
    if (a.recording)
      return "baseline run-cpu: A is a recording (measured on " + a.recording->device +
             "), not a schedule to run";
    if (wb.cpu_cache.count(a.schedule_key)) return {};
    if (wb.cpu_job.running()) return "baseline run-cpu: a CPU run is going; wait for it";
    wb.cpu_errors.erase(a.schedule_key);
    const schedule::Kernel& k = a.program->kernels.at(size_t(a.program->current));
    const auto flops = static_cast<int64_t>(predict::kernel_flops(k, *a.program->graph));
    wb.cpu_job.start(a.schedule_key, [kernel = k, flops](JobProgress& p) {
      return run_kernel_on_cpu(kernel, flops, p);
    });
    return {};
  }
  if (!wb.history) return "baseline: there is no schedule to pin";
  const size_t cursor = wb.history->size();
  const size_t entry = n < 0 ? cursor : size_t(n);
  if (entry > wb.step_texts.size())
    return "baseline pin: there are only " + std::to_string(wb.step_texts.size()) +
           " steps (entries 0 to " + std::to_string(wb.step_texts.size()) + ")";
  std::string steps;
  for (size_t i = 0; i < entry; ++i) steps += (i ? "; " : "") + wb.step_texts[i];
  return workbench_pin_baseline(wb, steps, wb.machine_name, {});
}

void baseline_poll(Workbench& wb) {
  std::optional<MemoryResult> r;
  std::string error;
  const bool done = wb.baseline_job.poll(r, error);
  if (!wb.baseline || wb.baseline->ready()) return;
  Workbench::Baseline& a = *wb.baseline;
  if (done && wb.baseline_job.key() == a.key) {
    if (r) {
      wb.memory_cache[a.key] = *r;
      a.result = std::move(r);
    } else {
      a.error = error;
    }
    return;
  }
  if (auto it = wb.memory_cache.find(a.key); it != wb.memory_cache.end()) {
    a.result = it->second;
    return;
  }
  // A was left to the Memory job, which then moved on to another schedule (a step applied right
  // after pinning): A's own job takes it up.
  const bool memory_on_it = wb.memory_job.running() && wb.memory_job.key() == a.key;
  if (a.error.empty() && !wb.baseline_job.running() && !memory_on_it) start_baseline(wb);
}

std::optional<Comparison> workbench_comparison(const Workbench& wb) {
  if (!wb.baseline || !wb.baseline->ready()) return std::nullopt;
  const MemoryResult* b = wb.memory_result();
  if (!b) return std::nullopt;
  const size_t count = wb.history ? wb.history->size() : 0;
  std::string a_label = "A: " + wb.baseline->label;
  std::string b_label = "B: " + default_label(wb.steps_text(), count);
  if (const auto& rc = wb.baseline->recording)
    return compare_recording(rc->data, rc->tool, rc->device, *b, std::move(a_label),
                             std::move(b_label));
  return compare_results(*wb.baseline->result, *b, std::move(a_label), std::move(b_label));
}

nlohmann::json baseline_state_json(const Workbench& wb) {
  if (!wb.baseline) return nullptr;
  const Workbench::Baseline& a = *wb.baseline;
  nlohmann::json j = {{"label", a.label},
                      {"steps", a.steps},
                      {"step_count", a.step_count},
                      {"machine", a.machine},
                      {"ready", a.ready()}};
  if (!a.error.empty()) j["error"] = a.error;
  if (a.result) j["dram_bytes"] = a.result->dram_bytes();
  if (a.recording) {
    j["recording"] = {{"file", a.recording->file},
                      {"run", a.recording->run},
                      {"tool", a.recording->tool},
                      {"device", a.recording->device}};
    if (const auto d = measured_sum(a.recording->data, {"dram_read_bytes", "dram_write_bytes"}))
      j["dram_bytes"] = *d;
  }
  if (std::optional<Comparison> c = workbench_comparison(wb)) j["comparison"] = comparison_json(*c);
  if (auto it = wb.cpu_cache.find(a.schedule_key); it != wb.cpu_cache.end())
    j["cpu_median_ms"] = it->second.median_ms;
  return j;
}

}  // namespace tilescope::core

// `tilescope-cli simulate`: runs an address trace through a machine's memory hierarchy and prints
// per-level and per-tensor tables (or JSON). Two trace sources: a Dinero din file (--trace), or a
// model file whose current kernel, after the --apply steps, is walked by the schedule room's trace
// walker (GPU mode on GPU machines); the latter also prints the analytic model's prediction beside
// the simulated counts and the roofline time with its binding level.
#include "commands.h"
#include "work_limits.h"

#include "app/core/baseline.h"
#include "app/core/exports.h"
#include "app/core/tile_grid.h"
#include "app/core/tiles_gpu.h"

#include "sim/io/input.h"
#include "sim/memory/din.h"
#include "sim/memory/hierarchy.h"
#include "sim/memory/report.h"
#include "sim/memory/tensor_regions.h"
#include "sim/pipeline.h"
#include "sim/predict/access_pattern.h"
#include "sim/predict/analytic.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

struct SimulateFlags {
  std::string file;   // model file (with --apply)
  std::string apply;  // schedule steps
  std::string trace;
  std::string machine = "tiny";
  bool json = false;
  bool no_3c = false;
  bool no_reuse = false;
  bool write_back_all = false;
  int threads = 0;  // RunOptions::threads
  // Beyond this many accesses the simulation is refused before it starts (the estimate is
  // instant, a run of 10^10 accesses takes hours); --max-accesses raises it.
  double max_accesses = 5e8;
  // Sampled simulation (predict/sampling.h): "auto" samples a kernel estimated above
  // kExactAccessLimit accesses, "on" always, "off" never (the exact run, --max-accesses applies).
  std::string sample = "auto";
  double sample_budget = predict::kSampleBudget;
  std::vector<std::string> tensors;
  std::string follow;  // "BLOCK[:WARP]": the Tiles view's GPU mode as text (one wave)
  // --baseline STEPS: the schedule A that --apply's schedule (B) is compared against.
  std::string baseline;
  bool has_baseline = false;
  // --baseline-recorded FILE --recorded-run N: A is run N of a counters recording instead.
  std::string baseline_recorded;
  int recorded_run = 0;
  bool over_time = false;  // counters over time as CSV (the Tiles view's plot)
  std::string csv;         // "levels" or "tensors": that table as CSV instead of the report
};

// A trace source streams its accesses into the sink and returns how many it produced.
using TraceSource = std::function<uint64_t(memory::AccessSink&)>;

int simulate(const SimulateFlags& f, const std::string& trace_label, const TraceSource& source,
             const std::vector<std::string>& tensor_names) {
  predict::Machine machine = predict::load_machine(f.machine);
  predict::RunOptions options;
  options.classify_misses = !f.no_3c;
  options.reuse_distance = !f.no_reuse;
  options.threads = f.threads;
  // A raw trace's end is not a kernel's end: dirty lines stay cached unless asked.
  options.write_back_all = f.write_back_all;
  predict::TraceRun run;
  {
    // A din file's length is known only when it ends: progress shows the count and rate.
    Progress progress("simulate: " + trace_label, 0);
    options.wrap = [&](memory::AccessSink& next) {
      return std::make_unique<ProgressSink>(next, progress);
    };
    run = predict::run_trace(machine, source, options);
  }
  const memory::Hierarchy& hierarchy = *run.hierarchy;
  const uint64_t n = run.accesses;

  memory::ReportOptions ro;
  ro.tensor_names = tensor_names;
  if (f.json) {
    nlohmann::json j;
    j["machine"] = {{"name", machine.name}, {"source", machine.source}, {"notes", machine.notes}};
    j["trace"] = {{"source", trace_label}, {"accesses", n}};
    j["write_back_all"] = f.write_back_all;
    j["report"] = memory::report_json(hierarchy, ro);
    std::cout << j.dump(2) << "\n";
  } else {
    for (const std::string& note : machine.notes) std::cout << "machine " << note << "\n";
    std::cout << "machine " << machine.name << " (" << machine.source << "), trace " << trace_label
              << ": " << n << " accesses"
              << (f.write_back_all ? ", dirty lines written back at the end" : "") << "\n\n"
              << memory::format_report(hierarchy, ro);
  }
  return 0;
}

std::string pct(double sim, double model) {
  if (sim == 0) return model == 0 ? "0%" : "n/a";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100.0 * (model - sim) / sim);
  return b;
}

std::string num(double v) {
  char b[48];
  if (v == std::floor(v) && std::abs(v) < 1e15)
    std::snprintf(b, sizeof b, "%.0f", v);
  else
    std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

nlohmann::json term_json(const predict::Term& t) {
  nlohmann::json sym = nlohmann::json::object();
  for (const auto& [k, v] : t.symbols) sym[k] = v;
  return {{"name", t.name}, {"value", t.value}, {"formula", t.formula}, {"symbols", sym}};
}

nlohmann::json roofline_json(const predict::Roofline& r) {
  nlohmann::json b = nlohmann::json::array();
  for (const auto& x : r.bounds)
    b.push_back({{"name", x.name},
                 {"seconds", x.seconds},
                 {"known", x.known},
                 {"term", term_json(x.term)}});
  return {{"bounds", b}, {"binding", r.binding}, {"seconds", r.seconds}, {"notes", r.notes}};
}

std::string roofline_text(const predict::Roofline& r) {
  std::ostringstream o;
  for (const auto& b : r.bounds) {
    if (!b.known) continue;
    o << "  " << b.term.to_string() << " s" << (b.name == r.binding ? "   <- binding" : "") << "\n";
  }
  for (const auto& n : r.notes) o << "  (" << n << ")\n";
  o << "  predicted time: " << r.summary() << "\n";
  return o.str();
}

// Model file → lowered program → steps applied → the current kernel traced through the machine.
// --follow BLOCK[:WARP]: one wave of a GPU kernel seen from a block and a warp (core/tiles_gpu.h,
// what the Tiles view's GPU mode draws): the wave, what the block's SM's L1 and the L2 hold at
// its start and end, the warp's instructions in the block's first step and over the wave.
int follow_warp(const SimulateFlags& f, const schedule::Kernel& k, const predict::Machine& machine) {
  int64_t block = 0;
  int warp = 0;
  if (!f.follow.empty()) {
    const size_t colon = f.follow.find(':');
    char* end = nullptr;
    const std::string b = f.follow.substr(0, colon);
    block = std::strtoll(b.c_str(), &end, 10);
    bool ok = !b.empty() && end && *end == 0;
    if (colon != std::string::npos) {
      const std::string w = f.follow.substr(colon + 1);
      warp = int(std::strtol(w.c_str(), &end, 10));
      ok = ok && !w.empty() && end && *end == 0;
    }
    if (!ok) {
      std::cerr << "simulate: --follow expects BLOCK or BLOCK:WARP (whole numbers), got '"
                << f.follow << "'\n";
      return 1;
    }
  }
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Tiles, k, nullptr);
  if (size.accesses > f.max_accesses) {
    std::cerr << "simulate: refused: kernel " << k.name << " makes about "
              << format_count(size.accesses) << " accesses, more than --max-accesses "
              << num(f.max_accesses) << "\n";
    return 1;
  }
  core::JobProgress progress;
  const core::GpuTilesResult r = core::record_gpu_tiles(k, machine, block, warp, progress);
  if (f.over_time) {  // the GPU mode's counters over time along the wave, as CSV
    std::cout << core::table_csv(core::counters_over_time_table(r));
    return 0;
  }
  std::printf("machine %s, kernel %s: grid %lldx%lldx%lld = %lld blocks, %d warps each; up to %lld "
              "at once (one per SM): %lld wave%s\n",
              machine.name.c_str(), k.name.c_str(), static_cast<long long>(r.grid[0]),
              static_cast<long long>(r.grid[1]), static_cast<long long>(r.grid[2]),
              static_cast<long long>(r.blocks), r.warps_per_block,
              static_cast<long long>(r.resident), static_cast<long long>(r.waves),
              r.waves == 1 ? "" : "s");
  std::printf("block %lld runs in wave %lld on SM %lld; following its warp %d\n",
              static_cast<long long>(r.block), static_cast<long long>(r.wave + 1),
              static_cast<long long>(r.sm), r.warp);
  std::printf("steps: %s\n",
              !r.blocks_in_turn ? "every block of the wave, one iteration of its serial loop"
              : r.step_loop.empty()
                  ? "one block at a time (its body has no serial loop)"
                  : ("one iteration of loop " + r.step_loop + " of one block at a time").c_str());
  const auto share = [&](const std::vector<uint8_t>& level, const core::TileGrid& g) {
    double held = 0, all = 0;
    for (size_t i = 0; i < g.bins(); ++i) {
      held += level[g.offset + i] / 255.0 / g.inv_elems[i];
      all += 1.0 / g.inv_elems[i];
    }
    return 100.0 * held / std::max(all, 1.0);
  };
  std::printf("\nshare of each tensor held   %-22s %-22s\n", "at the wave's start",
              "at its end");
  for (const core::TileGrid& g : r.grids) {
    if (!g.staged_from.empty()) continue;  // a block's own shared tile is in no cache
    std::printf("  %-10s %-5s %20.1f %% %20.1f %%\n", g.name.c_str(), r.l1_name.c_str(),
                share(r.frames.front().l1, g),
                share(r.frames.back().l1, g));
    std::printf("  %-10s %-5s %20.1f %% %20.1f %%\n", "", r.l2_name.c_str(),
                share(r.frames.front().l2, g),
                share(r.frames.back().l2, g));
  }
  std::printf("  (%s: SM %lld's own; %s: every SM's)\n", r.l1_name.c_str(),
              static_cast<long long>(r.sm), r.l2_name.c_str());
  const core::GpuTilesFrame& first = r.frames[r.first_block_frame];
  std::printf("\nwarp %d in block %lld's first step (frame %zu):\n", r.warp,
              static_cast<long long>(r.block), r.first_block_frame);
  for (const core::WarpPattern& pt : core::warp_patterns(first))
    std::printf("  %d x %s\n", pt.count, core::describe_warp_access(r, *pt.first).c_str());
  if (first.warp_more > 0)
    std::printf("  (and %u more instructions in that step, not listed)\n", first.warp_more);
  std::printf("over the wave: %llu global instructions moved %llu sectors; %llu would hold the "
              "bytes their lanes asked for (%.2fx)\n",
              static_cast<unsigned long long>(r.warp_global),
              static_cast<unsigned long long>(r.warp_sectors),
              static_cast<unsigned long long>(r.warp_ideal_sectors),
              double(r.warp_sectors) / double(std::max<uint64_t>(r.warp_ideal_sectors, 1)));
  return 0;
}

// The analytic model's account of kernel k, printed under a refusal so the learner still has an
// answer without a simulation (CPU loop nests only).
void print_analytic_instead(const schedule::Kernel& k, const predict::Machine& machine, bool gpu) {
  if (gpu) {
    std::cerr << "  (the analytic model covers CPU loop nests only)\n";
  } else {
    try {
      const predict::AnalyticResult a = predict::analyze_kernel(k, machine.hierarchy());
      std::cerr << "  " << a.accesses.to_string() << "\n";
      for (const auto& lv : a.levels) std::cerr << "  " << lv.misses.to_string() << "\n";
      std::cerr << "  " << a.memory_read_bytes.to_string() << "\n";
    } catch (const std::invalid_argument& e) {
      std::cerr << "  (the analytic model cannot size it either: " << e.what() << ")\n";
    }
  }
}

// Size first: a trace walk cannot be interrupted with an answer half way, so say how big it is
// before starting, and refuse what would not finish or would not fit. Returns false (having said
// why) when the simulation is refused.
bool simulation_fits(const SimulateFlags& f, const schedule::Kernel& k,
                     const predict::Machine& machine, const memory::HierarchyOptions& options,
                     const pipeline::WalkSize& size) {
  const bool gpu = machine.kind == "gpu";
  const double rate = size.rate;
  const uint64_t need = size.bytes;
  const MemoryBudget& budget = size.budget;
  if (need > budget.bytes) {
    std::cerr << "simulate: refused: simulating kernel " << k.name << " on " << machine.name
              << " needs about " << format_bytes_exact(need) << " of memory, more than the "
              << format_bytes_exact(budget.bytes) << " available (" << budget.source
              << "). --no-3c and --no-reuse drop the per-line tables; a smaller model "
                 "shows the same pattern.\n";
    return false;
  }
  if (size.accesses > f.max_accesses) {
    std::cerr << "simulate: refused: kernel " << k.name << " makes about "
              << format_count(size.accesses) << " accesses (" << size.formula << " = "
              << num(size.accesses) << "), more than --max-accesses " << num(f.max_accesses)
              << "; at about " << format_count(rate) << " accesses/s that is about "
              << num(std::ceil(size.accesses / rate)) << " s.\n"
              << "  Run it anyway with --max-accesses " << num(std::ceil(size.accesses))
              << (options.classify_misses || options.reuse_distance
                      ? " (--no-3c --no-reuse run faster)"
                      : "")
              << ", shrink the model (the pattern is the same at a smaller batch or size), or "
                 "read the analytic model's prediction, which needs no simulation:\n";
    print_analytic_instead(k, machine, gpu);
    return false;
  }
  if (size.accesses / rate > 2)
    std::cerr << "simulate: kernel " << k.name << " makes about " << format_count(size.accesses)
              << " accesses; at about " << format_count(rate) << " accesses/s that is about "
              << num(std::ceil(size.accesses / rate)) << " s\n";
  return true;
}

// The analytic model's prediction as JSON, each level's and tensor's misses beside the simulated
// ones.
nlohmann::json analytic_json(const predict::AnalyticResult& an,
                             const memory::Hierarchy& hierarchy) {
  nlohmann::json a;
  a["accesses"] = term_json(an.accesses);
  a["levels"] = nlohmann::json::array();
  for (size_t l = 0; l < an.levels.size(); ++l) {
    const auto& lv = an.levels[l];
    nlohmann::json tj = nlohmann::json::array();
    for (const auto& t : lv.tensors)
      tj.push_back({{"name", t.name},
                    {"graph_id", t.graph_id},
                    {"output", t.output},
                    {"reuse_depth", t.reuse_depth},
                    {"misses", term_json(t.misses)},
                    {"simulated_misses", hierarchy.counters(int(l), t.graph_id).misses}});
    a["levels"].push_back({{"name", lv.name},
                           {"misses", term_json(lv.misses)},
                           {"simulated_misses", hierarchy.counters(int(l)).misses},
                           {"writebacks", term_json(lv.writebacks)},
                           {"tensors", tj}});
  }
  a["memory_read_bytes"] = term_json(an.memory_read_bytes);
  a["memory_write_bytes"] = term_json(an.memory_write_bytes);
  a["notes"] = an.notes;
  return a;
}

// A sampled run's account: how it sampled and how sure its headline numbers are.
std::string sample_text(const predict::SampleInfo& s) {
  char buf[640];
  std::snprintf(buf, sizeof buf, "%.3g%%", 100 * s.walked_fraction);
  std::string out = "sampled: " + num(double(s.measured)) + " of " + num(double(s.units)) +
                    " units measured (iterations of loop " + s.unit_loop + "), " +
                    num(double(s.warm)) + " more walked to warm the caches: " + buf +
                    " of the trace walked; counters are estimates\n";
  if (s.error_known) {
    std::snprintf(buf, sizeof buf,
                  "  main memory %s ± %s, %s hit rate %.2f%% ± %.2f points (95%%, sampling "
                  "error)\n",
                  memory::format_bytes(s.dram_bytes).c_str(),
                  memory::format_bytes(s.dram_bytes_error).c_str(), s.last_level.c_str(),
                  100 * s.last_level_hit_rate, 100 * s.last_level_hit_rate_error);
    out += buf;
  } else {
    out += "  too few units measured to state an error bar\n";
  }
  if (s.warm_capped > 0)
    out += "  " + num(double(s.warm_capped)) +
           " of the measured units had a warm-up cut short of refilling " + s.last_level + " (" +
           num(s.warm_target_lines) +
           " lines): reuse farther apart than their warm-up is counted as misses, which the "
           "error bar does not cover; --sample off runs it exactly\n";
  out += "  the 3C split and reuse distances need every access: --sample off\n";
  return out;
}

nlohmann::json sample_json(const predict::SampleInfo& s) {
  return {{"unit_loop", s.unit_loop},
          {"unit_work_share", s.unit_work_share},
          {"units", s.units},
          {"measured", s.measured},
          {"warm", s.warm},
          {"warm_capped", s.warm_capped},
          {"warm_target_lines", s.warm_target_lines},
          {"walked_fraction", s.walked_fraction},
          {"last_level", s.last_level},
          {"dram_bytes", s.dram_bytes},
          {"dram_bytes_error", s.dram_bytes_error},
          {"last_level_hit_rate", s.last_level_hit_rate},
          {"last_level_hit_rate_error", s.last_level_hit_rate_error},
          {"error_known", s.error_known}};
}

// Prints run_model's --json answer: the machine, the kernel, the trace and its layout, the
// report, the rooflines and the analytic model (or why there is none).
void print_model_json(const SimulateFlags& f, const schedule::Kernel& k,
                      const predict::Machine& machine, const predict::KernelRun& run,
                      const std::string& steps, const memory::ReportOptions& ro) {
  const bool gpu = machine.kind == "gpu";
  const memory::Hierarchy& hierarchy = *run.hierarchy;
  const schedule::TraceSummary& ts = run.summary;
  nlohmann::json j;
  j["machine"] = {{"name", machine.name},
                  {"source", machine.source},
                  {"kind", machine.kind},
                  {"notes", machine.notes}};
  j["kernel"] = {{"name", k.name},
                 {"summary", k.summary},
                 {"steps", steps},
                 {"loop_nest", schedule::print_loop_nest(k)},
                 {"flops", run.flops}};
  j["trace"] = {{"source", f.file},
                {"mode", gpu ? "gpu" : "cpu"},
                {"accesses", hierarchy.trace_accesses()},
                {"global_reads", ts.global_reads},
                {"global_writes", ts.global_writes},
                {"shared_reads", ts.shared_reads},
                {"shared_writes", ts.shared_writes},
                {"acc_reads", ts.acc_reads},
                {"acc_writes", ts.acc_writes}};
  // Where each kernel argument lives in the trace, so a real run can place its buffers at the
  // same cache sets (scripts/cachegrind_compare.sh does).
  const schedule::TraceLayout layout = schedule::trace_layout(k, run.trace);
  j["layout"] = nlohmann::json::array();
  for (size_t t = 0; t < k.tensors.size(); ++t)
    j["layout"].push_back({{"name", k.tensors[t].name},
                           {"base", layout.tensor_base[t]},
                           {"alloc_elems", k.tensors[t].alloc_elems()}});
  // A stack accumulator tile's area (bytes 0: the accumulators are registers).
  j["accumulator"] = {{"base", layout.acc_base}, {"bytes", layout.acc_bytes}};
  j["write_back_all"] = true;
  if (run.sampled) j["sampled"] = sample_json(*run.sampled);
  j["report"] = memory::report_json(hierarchy, ro);
  j["roofline_simulated"] = roofline_json(run.roofline);
  if (run.analytic) {
    j["analytic"] = analytic_json(*run.analytic, hierarchy);
    j["roofline_analytic"] = roofline_json(*run.analytic_roofline);
  } else {
    j["analytic_error"] = run.analytic_error;
  }
  std::cout << j.dump(2) << "\n";
}

// Prints the analytic model's misses beside the simulated ones, level by level and tensor by
// tensor, then the formulas behind them.
void print_analytic_vs_simulation(const predict::AnalyticResult& an,
                                  const memory::Hierarchy& hierarchy) {
  std::cout << "\nanalytic model vs simulation (misses in lines)\n";
  std::printf("  %-8s %-10s %14s %14s %9s\n", "level", "tensor", "simulated", "analytic", "diff");
  for (size_t l = 0; l < an.levels.size(); ++l) {
    const auto& lv = an.levels[l];
    for (const auto& t : lv.tensors)
      std::printf(
          "  %-8s %-10s %14s %14s %9s\n", lv.name.c_str(), t.name.c_str(),
          num(double(hierarchy.counters(int(l), t.graph_id).misses)).c_str(),
          num(t.misses.value).c_str(),
          pct(double(hierarchy.counters(int(l), t.graph_id).misses), t.misses.value).c_str());
    const double sim = double(hierarchy.counters(int(l)).misses);
    std::printf("  %-8s %-10s %14s %14s %9s\n", lv.name.c_str(), "(all)", num(sim).c_str(),
                num(lv.misses.value).c_str(), pct(sim, lv.misses.value).c_str());
  }
  std::cout << "\nwhy these numbers (analytic)\n  " << an.accesses.to_string() << "\n";
  for (const auto& lv : an.levels)
    for (const auto& t : lv.tensors) std::cout << "  " << t.misses.to_string() << "\n";
  std::cout << "  " << an.memory_read_bytes.to_string() << "\n";
  for (const auto& n : an.notes) std::cout << "  note: " << n << "\n";
}

// Prints run_model's tables: the kernel, the report, the analytic model beside the simulation,
// each tensor's access pattern and the rooflines.
void print_model_text(const schedule::Kernel& k, const predict::Machine& machine,
                      const predict::KernelRun& run, const std::string& steps,
                      const memory::ReportOptions& ro) {
  const bool gpu = machine.kind == "gpu";
  const memory::Hierarchy& hierarchy = *run.hierarchy;
  for (const std::string& note : machine.notes) std::cout << "machine " << note << "\n";
  std::cout << "machine " << machine.name << " (" << machine.source << "), kernel " << k.name
            << ": " << k.summary << "\nsteps: " << (steps.empty() ? "(none)" : steps) << "\n"
            << schedule::print_loop_nest(k) << "\n"
            << (gpu ? "GPU" : "CPU") << " trace: " << hierarchy.trace_accesses()
            << " accesses, dirty lines written back at the end (the outputs reach memory)\n"
            << (run.sampled ? sample_text(*run.sampled) : "") << "\n"
            << memory::format_report(hierarchy, ro);
  if (run.analytic) {
    print_analytic_vs_simulation(*run.analytic, hierarchy);
  } else {
    std::cout << "\nanalytic model: " << run.analytic_error << "\n";
  }
  std::cout << "\naccess pattern (moves to another line; strided = to another 4 KiB page, which "
               "no prefetcher follows)\n";
  for (int t = 0; t <= hierarchy.max_tensor(); ++t) {
    const predict::TensorPattern tp = run.pattern(t);
    if (tp.line_moves == 0) continue;
    const std::string name =
        size_t(t) < ro.tensor_names.size() ? ro.tensor_names[size_t(t)] : "#" + std::to_string(t);
    std::printf("  %-10s %14s line moves, %5.1f%% strided\n", name.c_str(),
                num(double(tp.line_moves)).c_str(), 100.0 * tp.strided_fraction());
  }
  std::cout << "\nroofline from simulated traffic (" << num(run.flops) << " FLOP)\n"
            << roofline_text(run.roofline);
  if (run.analytic_roofline)
    std::cout << "roofline from analytic traffic\n" << roofline_text(*run.analytic_roofline);
}

// One schedule (`steps`, "A" or "B" in messages) of the model simulated on `machine`.
core::MemoryResult simulate_steps(const SimulateFlags& f,
                                  const std::shared_ptr<const graph::Graph>& g,
                                  const predict::Machine& machine, const std::string& steps,
                                  const char* which) {
  schedule::Program p;
  try {
    p = pipeline::plan(g, steps, pipeline::target(&machine)).current();
  } catch (const schedule::ScheduleError& e) {
    throw schedule::ScheduleError(std::string("schedule ") + which + " on machine " + machine.name +
                                  ": " + e.what());
  }
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Simulation, k, &machine);
  const bool sampled =
      f.sample == "on" || (f.sample == "auto" && predict::sampled_by_default(size.accesses));
  core::JobProgress progress;
  core::MemoryResult r = core::simulate_kernel(k, *g, machine, progress, sampled);
  r.steps = schedule::steps_to_string(schedule::parse_steps(steps));
  return r;
}

// --baseline / --baseline-recorded: A (schedule steps, or a run of a counters recording) and B
// (--apply's) on one machine, and the table of the two side by side — per level, per tensor and
// in time — that the app's views show.
int run_baseline(const SimulateFlags& f, const std::shared_ptr<const graph::Graph>& g,
                 const predict::Machine& machine) {
  const auto label = [](const core::MemoryResult& r) {
    return r.kernel + (r.steps.empty() ? std::string(", the default lowering") : ", " + r.steps);
  };
  core::Comparison c;
  if (!f.baseline_recorded.empty()) {
    kernels::CounterReport report;
    try {
      report = kernels::load_counters_report(f.baseline_recorded);
    } catch (const std::exception& e) {
      std::cerr << "simulate: --baseline-recorded: " << e.what() << "\n";
      return 1;
    }
    if (f.recorded_run < 0 || size_t(f.recorded_run) >= report.runs.size()) {
      std::cerr << "simulate: --recorded-run " << f.recorded_run << ": " << f.baseline_recorded
                << " has runs 0 to " << report.runs.size() - 1 << "\n";
      return 1;
    }
    const kernels::CounterRun& run = report.runs[size_t(f.recorded_run)];
    if (run.error) {
      std::cerr << "simulate: recorded run " << f.recorded_run
                << " did not complete: " << *run.error << "\n";
      return 1;
    }
    const std::string device =
        report.device.is_object() ? report.device.value("name", "") : std::string();
    const core::MemoryResult b = simulate_steps(f, g, machine, f.apply, "B");
    c = core::compare_recording(run, report.tool, device.empty() ? "an unnamed device" : device, b,
                                "recorded " + core::counter_run_label(run), label(b));
  } else {
    const core::MemoryResult a = simulate_steps(f, g, machine, f.baseline, "A");
    const core::MemoryResult b = simulate_steps(f, g, machine, f.apply, "B");
    c = core::compare_results(a, b, label(a), label(b));
  }
  if (!f.csv.empty()) {
    std::cout << core::table_csv(core::comparison_table(c));
  } else if (f.json) {
    std::cout << nlohmann::json{{"machine", machine.name}, {"comparison", core::comparison_json(c)}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "machine " << machine.name << ": B against baseline A\n"
              << core::comparison_text(c);
  }
  return 0;
}

int run_model(const SimulateFlags& f) {
  // The machine is the schedule's target: its shared memory, registers and vector width decide
  // which steps are legal, so a schedule made for the H200 may be refused on `tiny`.
  const auto g = pipeline::parse(pipeline::read_model(f.file));
  const predict::Machine machine = predict::load_machine(f.machine);
  schedule::Program p;
  try {
    p = pipeline::plan(g, f.apply, pipeline::target(&machine)).current();
  } catch (const schedule::ScheduleError& e) {
    throw schedule::ScheduleError("on machine " + machine.name + ": " + e.what());
  }
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  // On a GPU, counters over time follow the GPU mode's wave (block 0, warp 0 unless --follow).
  if (!f.follow.empty() || (f.over_time && machine.kind == "gpu"))
    return follow_warp(f, k, machine);
  if (f.has_baseline || !f.baseline_recorded.empty()) return run_baseline(f, g, machine);
  if (f.over_time) {
    // The Tiles view's walk through the machine's caches: a row per animation frame.
    if (!simulation_fits(f, k, machine, {},
                         pipeline::size_walk(pipeline::Walk::Tiles, k, &machine)))
      return 1;
    core::JobProgress progress;
    std::cout << core::table_csv(
        core::counters_over_time_table(core::record_tiles(k, progress, &machine)));
    return 0;
  }

  if (!f.csv.empty() && f.csv != "levels" && f.csv != "tensors") {
    std::cerr << "simulate: --csv expects levels or tensors, got '" << f.csv << "'\n";
    return 1;
  }
  if (f.sample != "auto" && f.sample != "on" && f.sample != "off") {
    std::cerr << "simulate: --sample expects auto, on or off, got '" << f.sample << "'\n";
    return 1;
  }
  memory::HierarchyOptions options;
  options.classify_misses = !f.no_3c;
  options.reuse_distance = !f.no_reuse;

  const pipeline::WalkSize size = pipeline::size_walk(
      pipeline::Walk::Simulation, k, &machine, {options.classify_misses, options.reuse_distance});
  const bool sampled =
      f.sample == "on" || (f.sample == "auto" && predict::sampled_by_default(size.accesses));
  if (sampled) {
    std::cerr << "simulate: kernel " << k.name << " makes about " << format_count(size.accesses)
              << " accesses (about " << num(std::ceil(size.seconds)) << " s exact): sampling about "
              << format_count(std::min(size.accesses, f.sample_budget))
              << " of them (--sample off runs it exactly)\n";
  } else if (!simulation_fits(f, k, machine, options, size)) {
    return 1;
  }

  // The shared pipeline: trace, hierarchy, write-back, level bytes, analytic model, rooflines.
  predict::KernelRun run;
  {
    Progress progress("simulate: kernel " + k.name, sampled ? 0.0 : size.accesses);
    predict::RunOptions ro_run;
    ro_run.classify_misses = options.classify_misses;
    ro_run.reuse_distance = options.reuse_distance;
    ro_run.threads = f.threads;
    ro_run.sample = sampled;
    ro_run.sample_budget = f.sample_budget;
    ro_run.wrap = [&](memory::AccessSink& next) {
      return std::make_unique<ProgressSink>(next, progress);
    };
    run = predict::simulate_kernel(k, *g, machine, ro_run);
  }
  memory::ReportOptions ro;
  ro.tensor_names = run.tensor_names;

  const std::string steps = schedule::steps_to_string(schedule::parse_steps(f.apply));
  if (!f.csv.empty()) {
    // The Memory view's tables, as its File > Export writes them.
    core::MemoryResult r;
    r.levels = core::level_results(*run.hierarchy);
    r.tensor_names = run.tensor_names;
    std::cout << core::table_csv(f.csv == "levels" ? core::memory_levels_table(r)
                                                   : core::memory_tensors_table(r));
    return 0;
  }
  if (f.json) {
    print_model_json(f, k, machine, run, steps, ro);
    return 0;
  }
  print_model_text(k, machine, run, steps, ro);
  return 0;
}

int run_simulate(const SimulateFlags& f) {
  if (!f.file.empty()) {
    if (!f.trace.empty()) {
      std::cerr << "simulate: give either a model FILE (with --apply) or --trace FILE.din\n";
      return 1;
    }
    return run_model(f);
  }
  if (!f.apply.empty()) {
    std::cerr << "simulate: --apply needs a model FILE to apply the steps to\n";
    return 1;
  }
  if (f.trace.empty()) {
    std::cerr << "simulate: give a model FILE (with --apply \"steps\") or --trace FILE.din\n";
    return 1;
  }
  std::vector<memory::TensorRegion> regions;
  for (const std::string& t : f.tensors) regions.push_back(memory::parse_tensor_region(t));
  std::vector<std::string> names;
  for (const auto& r : regions) names.push_back(r.name);
  TraceSource din = [&](memory::AccessSink& sink) {
    if (regions.empty()) return memory::read_din_file(f.trace, sink);
    memory::TensorRegionSink labelled(regions, sink);
    return memory::read_din_file(f.trace, labelled);
  };
  return simulate(f, f.trace, din, names);
}

const CommandRegistrar registrar{
    "simulate", "Run an address trace through a machine's simulated memory hierarchy",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<SimulateFlags>();
      sub.add_option("file", flags->file,
                     std::string(pipeline::kModelSpecHelp) +
                         ", whose current kernel is traced after --apply");
      sub.add_option("--apply", flags->apply, "Schedule steps to apply first (as for schedule)");
      sub.add_option("--trace", flags->trace, "Dinero IV din trace (label address [size])");
      sub.add_option("--machine", flags->machine,
                     "Preset name (tiny, host, h100, h200, a100, rtx4090) or a .machine file")
          ->capture_default_str();
      sub.add_flag("--json", flags->json, "Print JSON instead of tables");
      sub.add_flag("--no-3c", flags->no_3c, "Skip the compulsory/capacity/conflict split (faster)");
      sub.add_flag("--no-reuse", flags->no_reuse, "Skip the reuse-distance histogram (faster)");
      sub.add_option("--threads", flags->threads,
                     "1: one thread; 2: the 3C split and reuse distances on a second thread beside "
                     "the caches (the same numbers, sooner); 0 (default): 2 when this computer "
                     "has two cores or more")
          ->check(CLI::Range(0, 2));
      sub.add_flag("--write-back-all", flags->write_back_all,
                   "At the end, write every dirty line down to memory");
      sub.add_option("--max-accesses", flags->max_accesses,
                     "Refuse a model simulation estimated to make more accesses than this")
          ->capture_default_str();
      sub.add_option("--sample", flags->sample,
                     "auto: sample a kernel too big to simulate whole in about a second (units "
                     "of its loops, most skipped, with an error bar); on: always; off: every "
                     "access (the 3C split and reuse distances need it)")
          ->capture_default_str();
      sub.add_option("--sample-budget", flags->sample_budget,
                     "Accesses a sampled run walks, about (more: a smaller error bar, slower)")
          ->capture_default_str()
          ->check(CLI::PositiveNumber);
      sub.add_option("--follow", flags->follow,
                     "GPU machines: follow block BLOCK (launch index) and its warp WARP through "
                     "one wave (BLOCK[:WARP]; what the Tiles view's GPU mode shows)");
      sub.add_option("--baseline", flags->baseline,
                     "Compare against baseline A: these schedule steps (\"\" for the default "
                     "lowering) on the same model and machine; prints A, B (--apply) and the "
                     "change per level, per tensor and in time")
          ->each([flags](const std::string&) { flags->has_baseline = true; });
      sub.add_option("--baseline-recorded", flags->baseline_recorded,
                     "Compare against baseline A: a run of a counters recording (ncu or "
                     "cachegrind, e.g. assets/recorded/gpu-h200-counters-*.json); its measured "
                     "L2 and DRAM traffic (or D1/LL misses) and time beside B's");
      sub.add_option("--recorded-run", flags->recorded_run,
                     "Which run of --baseline-recorded's recording is A (0 = the first)")
          ->capture_default_str();
      sub.add_option("--csv", flags->csv,
                     "Print one table as CSV instead of the report: levels (each level's "
                     "counters) or tensors (each tensor at each level); with --baseline, the "
                     "comparison");
      sub.add_flag("--over-time", flags->over_time,
                   "Counters over time as CSV: per frame of the Tiles animation's walk, each "
                   "level's accesses, hits, hit rate and bytes in that window (on a GPU machine, "
                   "along the GPU mode's wave: block 0, warp 0, or --follow's)");
      sub.add_option("--tensor", flags->tensors,
                     "Label an address range as a tensor: NAME=BASE+BYTES (repeatable)");
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_simulate(*flags);
        } catch (const memory::TraceError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const predict::MachineError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const std::invalid_argument& e) {
          std::cerr << "simulate: " << e.what() << "\n";
          exit_code = 1;
        } catch (const graph::GraphError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const schedule::ScheduleError& e) {
          std::cerr << "simulate: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli

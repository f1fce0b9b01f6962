// `tilescope-cli autotune FILE --tile i,j`: sweeps two tile sizes of the current kernel (after
// --apply) through the app core's autotune functions, the ones the GUI's Timings view runs: each
// point's time predicted on --machine (analytic model + roofline, or the trace simulation where
// the model does not apply, and which), with --measure its time JIT-compiled on this CPU (verified
// against the interpreter first), the best point of each, and Spearman's rank correlation of the
// two over the points both timed.
#include "commands.h"
#include "work_limits.h"

#include "app/core/autotune.h"
#include "app/core/exports.h"
#include "app/core/jobs.h"
#include "app/core/verify_tolerance.h"
#include "sim/io/format.h"
#include "sim/io/input.h"
#include "sim/pipeline.h"
#include "sim/predict/machine.h"
#include "sim/schedule/transform.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tilescope::cli {
namespace {

struct AutotuneFlags {
  std::string file;
  std::string apply;
  std::string tile;
  std::string machine = "host";
  bool measure = false;
  bool json = false;
  bool csv = false;  // the points as CSV (the Timings view's File > Export)
  int max_per_axis = 0;
  bool max_per_axis_given = false;
  // Beyond this many element accesses (the trace simulations of a GPU sweep together, or the
  // reference interpreter's run before measuring) the sweep is refused before it starts.
  double max_accesses = 5e8;
};

// A mistake in the command line or the input; printed after "autotune: ".
class AutotuneError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "i,j" → {"i", "j"}; spaces around a name are dropped.
std::pair<std::string, std::string> parse_tile_list(const std::string& text) {
  std::vector<std::string> names;
  std::string name;
  std::istringstream in(text);
  while (std::getline(in, name, ',')) {
    const size_t b = name.find_first_not_of(" \t"), e = name.find_last_not_of(" \t");
    names.push_back(b == std::string::npos ? std::string() : name.substr(b, e - b + 1));
  }
  if (!text.empty() && text.back() == ',') names.push_back({});
  if (names.size() != 2 || names[0].empty() || names[1].empty())
    throw AutotuneError(
        "--tile takes the two loops to sweep as two names with a comma between them, e.g. "
        "--tile i,j; got '" +
        io::printable(text, 80) + "'");
  return {names[0], names[1]};
}

// Three significant digits in s, ms, µs or ns: the points of a small kernel differ below 0.1 µs.
std::string format_seconds(double s) {
  const char* unit = "s";
  double v = s;
  if (s < 1e-6) {
    unit = "ns";
    v = s * 1e9;
  } else if (s < 1e-3) {
    unit = "µs";
    v = s * 1e6;
  } else if (s < 1) {
    unit = "ms";
    v = s * 1e3;
  }
  char b[32];
  std::snprintf(b, sizeof b, "%.*f %s", v >= 100 ? 0 : v >= 10 ? 1 : 2, v, unit);
  return b;
}

// Runs one sweep on a job thread and shows its phase ("point 3 of 16: tile(...)") on stderr while
// a terminal watches; returns the grid or throws the sweep's error.
core::AutotuneGrid run_sweep(const std::string& what, core::Job<core::AutotuneGrid>::Work work) {
  core::Job<core::AutotuneGrid> job;
  job.start(what, std::move(work));
  const bool tty = isatty(STDERR_FILENO) == 1;
  std::string shown;
  std::optional<core::AutotuneGrid> grid;
  std::string error;
  while (!job.poll(grid, error)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!tty) continue;
    const std::string phase = io::printable(job.phase(), 100);
    if (phase == shown) continue;
    shown = phase;
    std::fprintf(stderr, "\r\033[K%s: %s", what.c_str(), phase.c_str());
    std::fflush(stderr);
  }
  if (!shown.empty()) std::fputs("\r\033[K", stderr);
  if (!grid) throw AutotuneError(what + " failed: " + error);
  return std::move(*grid);
}

nlohmann::json point_json(const core::AutotunePoint& p) {
  nlohmann::json j = {{"ok", p.ok()}, {"detail", p.detail}};
  j["seconds"] = p.ok() ? nlohmann::json(p.seconds) : nlohmann::json(nullptr);
  if (!p.ok()) j["why"] = (p.refused ? "refused: " : "failed: ") + p.why;
  return j;
}

nlohmann::json best_json(const core::AutotuneGrid& g) {
  if (g.best < 0) return nullptr;
  const core::AutotunePoint& p = g.points[size_t(g.best)];
  return {{"step", p.step}, {"seconds", p.seconds}, {"detail", p.detail}};
}

// What a point's column says: its time, or why it has none.
std::string time_cell(const core::AutotunePoint& p) {
  if (p.refused) return "refused";
  if (p.failed) return "failed";
  return format_seconds(p.seconds);
}
std::string detail_cell(const core::AutotunePoint& p) {
  return p.ok() ? p.detail : p.why;
}

std::string size_list(const std::vector<int64_t>& sizes) {
  std::string s;
  for (int64_t v : sizes) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

// Size first: neither a trace simulation nor the interpreter can stop with half an answer. Throws
// the refusal when the sweep of `points` points on kernel k would be too big.
void check_sweep_size(const AutotuneFlags& f, const schedule::Kernel& k,
                      const predict::Machine& machine, size_t points) {
  const bool gpu = machine.kind == "gpu";
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Interpreter, k, nullptr);
  if (gpu && size.accesses * double(points) > f.max_accesses)
    throw AutotuneError(
        "refused: on GPU machine " + machine.name + " every point is a trace simulation; " +
        std::to_string(points) + " points of about " + format_count(size.accesses) +
        " accesses each (" + size.formula + ") make about " +
        format_count(size.accesses * double(points)) + ", more than --max-accesses " +
        format_count(f.max_accesses) +
        ". Sweep fewer points (--max-per-axis), a smaller model, or raise --max-accesses");
  if (f.measure) {
    if (size.accesses > f.max_accesses)
      throw AutotuneError(
          "refused: --measure checks every point against the interpreter, which "
          "makes about " +
          format_count(size.accesses) + " element accesses on kernel " + k.name + " (" +
          size.formula + "), more than --max-accesses " + format_count(f.max_accesses) +
          "; measure a smaller model, or raise --max-accesses");
    // The sweep holds the inputs, the interpreter's reference and one point's buffers at once.
    uint64_t bytes = 0;
    for (const schedule::KernelTensor& t : k.tensors)
      bytes += uint64_t(std::max<int64_t>(t.alloc_elems(), 1)) * 4 * 3;
    const MemoryBudget budget = memory_budget();
    if (bytes > budget.bytes)
      throw AutotuneError("refused: --measure needs about " + format_bytes_exact(bytes) +
                          " for kernel " + k.name + "'s buffers, more than the " +
                          format_bytes_exact(budget.bytes) + " available (" + budget.source + ")");
  }
}

// What a sweep found: the predicted grid, with --measure the measured one and how the two rank.
struct SweepResults {
  core::AutotuneGrid sim;
  std::optional<core::AutotuneGrid> hw;
  std::optional<core::AutotuneAgreement> agree;
};

// Prints the sweep as JSON: the kernel, the machine, the loops, every point, the best of each
// side and their rank agreement.
void print_autotune_json(const AutotuneFlags& f, const schedule::Kernel& k,
                         const predict::Machine& machine, const core::AutotuneLoops& loops,
                         const SweepResults& r, const std::string& steps) {
  const core::AutotuneGrid& sim = r.sim;
  const std::optional<core::AutotuneGrid>& hw = r.hw;
  const std::optional<core::AutotuneAgreement>& agree = r.agree;
  nlohmann::json j;
  j["kernel"] = {{"name", k.name}, {"summary", k.summary}, {"steps", steps}};
  j["machine"] = {{"name", machine.name},
                  {"chosen", f.machine},
                  {"kind", machine.kind},
                  {"source", machine.source}};
  j["loops"] = {{"a", sim.loop_a},
                {"b", sim.loop_b},
                {"extent_a", loops.extent_a},
                {"extent_b", loops.extent_b},
                {"sizes_a", sim.sizes_a},
                {"sizes_b", sim.sizes_b}};
  j["notes"] = sim.notes;
  j["points"] = nlohmann::json::array();
  for (const core::AutotunePoint& p : sim.points) {
    nlohmann::json pj = {
        {"tile_a", p.tile_a}, {"tile_b", p.tile_b}, {"step", p.step}, {"predicted", point_json(p)}};
    if (hw) {
      const core::AutotunePoint* h = hw->find(p.tile_a, p.tile_b);
      pj["measured"] = h ? point_json(*h) : nlohmann::json(nullptr);
    }
    j["points"].push_back(pj);
  }
  j["best_predicted"] = best_json(sim);
  j["wall_seconds"] = {{"predicted", sim.wall_seconds}};
  if (hw) {
    j["best_measured"] = best_json(*hw);
    j["wall_seconds"]["measured"] = hw->wall_seconds;
    j["rank_agreement"] = {{"method", "spearman"},
                           {"rho", std::isnan(agree->spearman) ? nlohmann::json(nullptr)
                                                               : nlohmann::json(agree->spearman)},
                           {"points", agree->common},
                           {"predicted_best", agree->sim_best},
                           {"predicted_best_measured_rank", agree->sim_best_hw_rank},
                           {"measured_best", agree->hw_best}};
  }
  std::cout << j.dump(2) << "\n";
}

// Prints what was swept and how, then one row per point: its predicted time (and measured time)
// and what gave each.
void print_autotune_table(std::ostream& out, const schedule::Kernel& k,
                          const predict::Machine& machine, const SweepResults& r,
                          const std::string& steps) {
  const core::AutotuneGrid& sim = r.sim;
  const std::optional<core::AutotuneGrid>& hw = r.hw;
  out << "machine " << machine.name << " (" << machine.source << "), kernel " << k.name << ": "
      << k.summary << "\nsteps: " << (steps.empty() ? "(none)" : steps) << "\n"
      << "sweep: tile(" << sim.loop_a << ", " << sim.loop_b << ", T" << sim.loop_a << ", T"
      << sim.loop_b << ") with T" << sim.loop_a << " in " << size_list(sim.sizes_a) << " and T"
      << sim.loop_b << " in " << size_list(sim.sizes_b) << ": " << sim.points.size() << " points\n"
      << "predicted on " << machine.name
      << " by the roofline over the analytic model's traffic, or over the trace simulation's "
         "where the model does not apply ('predicted by' says which)\n";
  if (hw)
    out << "measured on this CPU: JIT-compiled, checked against the interpreter (relative error "
           "at most "
        << core::kVerifyTolerance << "), then the median of repeated runs\n";
  for (const std::string& n : sim.notes) out << "note: " << n << "\n";

  size_t step_w = 4;
  for (const core::AutotunePoint& p : sim.points) step_w = std::max(step_w, p.step.size());
  const auto cell = [](const std::string& text, size_t width) {
    return text + std::string(width > text.size() ? width - text.size() : 0, ' ');
  };
  out << "\n  " << cell("step", step_w) << "  " << io::pad_left("predicted", 10) << "  "
      << (hw ? cell("predicted by", 40) + "  " + io::pad_left("measured", 10) + "  measured by"
             : std::string("predicted by"))
      << "\n";
  for (const core::AutotunePoint& p : sim.points) {
    out << "  " << cell(p.step, step_w) << "  " << io::pad_left(time_cell(p), 10) << "  ";
    if (!hw) {
      out << detail_cell(p) << "\n";
      continue;
    }
    out << cell(detail_cell(p), 40) << "  ";
    if (const core::AutotunePoint* h = hw->find(p.tile_a, p.tile_b))
      out << io::pad_left(time_cell(*h), 10) << "  " << detail_cell(*h) << "\n";
    else
      out << io::pad_left("-", 10) << "  (not in the measured grid)\n";
  }
  out << "\n";
}

// Prints the best predicted and measured points and how well the two sides rank alike.
void print_autotune_verdict(std::ostream& out, const SweepResults& r) {
  const core::AutotuneGrid& sim = r.sim;
  const std::optional<core::AutotuneGrid>& hw = r.hw;
  const std::optional<core::AutotuneAgreement>& agree = r.agree;
  if (sim.best >= 0) {
    const core::AutotunePoint& b = sim.points[size_t(sim.best)];
    out << "best predicted: " << b.step << ", " << format_seconds(b.seconds) << ", " << b.detail
        << "\n";
  } else {
    out << "best predicted: none (no point has a predicted time)\n";
  }
  if (!hw) {
    out << "rank agreement: not computed (--measure times the points on this CPU to compare)\n";
    return;
  }
  if (hw->best >= 0) {
    const core::AutotunePoint& b = hw->points[size_t(hw->best)];
    out << "best measured:  " << b.step << ", " << format_seconds(b.seconds) << ", " << b.detail
        << "\n";
  } else {
    out << "best measured:  none (no point was verified and timed)\n";
  }
  if (std::isnan(agree->spearman)) {
    out << "rank agreement: Spearman's rho undefined over " << agree->common
        << " points timed by both (it needs at least 3, and neither side all equal)\n";
  } else {
    char rho[32];
    std::snprintf(rho, sizeof rho, "%.3f", agree->spearman);
    out << "rank agreement: Spearman's rho " << rho << " over " << agree->common
        << " points timed by both (1: the same order, -1: reversed); the fastest predicted of "
           "them, "
        << agree->sim_best << ", is number " << agree->sim_best_hw_rank << " of " << agree->common
        << " by measured time\n";
  }
}

int run_autotune(const AutotuneFlags& f) {
  const auto [want_a, want_b] = parse_tile_list(f.tile);
  if (f.max_per_axis_given && f.max_per_axis < 1)
    throw AutotuneError("--max-per-axis takes a count of at least 1 (tile sizes per loop), got " +
                        std::to_string(f.max_per_axis));
  const predict::Machine chosen = predict::load_machine(f.machine);
  const auto g = pipeline::parse(pipeline::read_model(f.file));
  schedule::Program base;
  try {
    base = pipeline::plan(g, f.apply, pipeline::target(&chosen)).current();
  } catch (const schedule::ScheduleError& e) {
    throw AutotuneError(std::string("--apply:") + e.what());
  }
  if (base.kernels.empty()) throw AutotuneError("the model has no kernel to sweep");
  const schedule::Kernel& k = base.kernels.at(size_t(base.current));
  const core::AutotuneLoops loops = core::choose_autotune_loops(k, want_a, want_b);
  if (!loops.error.empty()) {
    std::cerr << loops.error << "\n";  // "autotune: kernel … has no loop named …"
    return 1;
  }
  const core::PredictionMachine pm = core::autotune_prediction_machine(f.machine, chosen);
  // One grid for both sweeps, so every measured point is a predicted one: every power of two
  // when only predicting, the GUI's hardware grid when each point costs a compile.
  const int per_axis =
      f.max_per_axis_given ? f.max_per_axis : (f.measure ? core::kAutotuneCpuPerAxis : 0);
  const size_t points = core::autotune_tile_sizes(loops.extent_a, per_axis).size() *
                        core::autotune_tile_sizes(loops.extent_b, per_axis).size();
  check_sweep_size(f, k, pm.machine, points);

  SweepResults r;
  r.sim = run_sweep("autotune: predicting", [&](core::JobProgress& p) {
    return core::autotune_sweep_simulator(base, loops, pm.machine, p, per_axis);
  });
  if (!pm.note.empty()) r.sim.notes.insert(r.sim.notes.begin(), pm.note);
  if (f.measure)
    r.hw = run_sweep("autotune: measuring", [&](core::JobProgress& p) {
      return core::autotune_sweep_cpu(base, loops, p, per_axis);
    });
  if (r.hw) r.agree = core::autotune_agreement(r.sim, *r.hw);
  const std::string steps = schedule::steps_to_string(schedule::parse_steps(f.apply));

  if (f.csv) {
    // The measured sweep where there is one (as the Timings view shows it), else the predicted.
    std::cout << core::table_csv(core::autotune_table(r.hw ? *r.hw : r.sim));
    return 0;
  }
  if (f.json) {
    print_autotune_json(f, k, pm.machine, loops, r, steps);
    return 0;
  }
  print_autotune_table(std::cout, k, pm.machine, r, steps);
  print_autotune_verdict(std::cout, r);
  return 0;
}

const CommandRegistrar kRegistrar(
    "autotune",
    "Sweep two tile sizes of the current kernel: the time predicted on a machine for each point, "
    "with --measure the time measured on this CPU, the best of each and how well they rank",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<AutotuneFlags>();
      sub.add_option("file", flags->file,
                     std::string(pipeline::kModelSpecHelp) +
                         ", whose current kernel is swept after --apply")
          ->required();
      sub.add_option("--apply", flags->apply, "Schedule steps to apply first (as for schedule)");
      sub.add_option("--tile", flags->tile,
                     "The two serial loops to tile, e.g. i,j: each point applies "
                     "tile(i, j, Ti, Tj) with Ti, Tj powers of two from 4")
          ->required();
      sub.add_option("--machine", flags->machine,
                     "Machine the times are predicted on: a preset (host, tiny, h100, h200, "
                     "a100, rtx4090) or a .machine file; host predicts with host-measured when "
                     "probe has written one")
          ->capture_default_str();
      sub.add_flag("--measure", flags->measure,
                   "Also JIT-compile every point, check it against the interpreter and time it "
                   "on this CPU, and rank predicted against measured (Spearman's rho)");
      CLI::Option* per_axis = sub.add_option(
          "--max-per-axis", flags->max_per_axis,
          "Tile sizes per loop, spread evenly over the powers of two (default: all of them; "
          "with --measure 4)");
      sub.add_flag("--json", flags->json, "Print JSON instead of the table");
      sub.add_flag("--csv", flags->csv,
                   "Print the points as CSV (the measured sweep with --measure, else the "
                   "predicted one)");
      sub.add_option("--max-accesses", flags->max_accesses,
                     "Refuse a sweep estimated to simulate (GPU machines) or interpret (--measure) "
                     "more element accesses than this")
          ->capture_default_str();
      sub.callback([flags, per_axis, &exit_code] {
        flags->max_per_axis_given = per_axis->count() > 0;
        try {
          exit_code = run_autotune(*flags);
        } catch (const AutotuneError& e) {
          std::cerr << "autotune: " << e.what() << "\n";
          exit_code = 1;
        } catch (const graph::GraphError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const predict::MachineError& e) {
          std::cerr << e.what() << "\n";
          exit_code = 1;
        } catch (const schedule::ScheduleError& e) {
          std::cerr << "autotune: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    });

}  // namespace
}  // namespace tilescope::cli

// `tilescope-cli schedule FILE --apply "fuse(...); tile(...)"`: lowers a model, applies schedule
// steps one by one printing each loop nest and explanation, and emits generated C++ or CUDA.
#include "commands.h"
#include "work_limits.h"

#include "sim/graph/eval.h"
#include "sim/io/format.h"
#include "sim/io/input.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/interpreter.h"
#include "sim/schedule/transform.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>

namespace tilescope::cli {
namespace {

using namespace tilescope::schedule;

struct ScheduleFlags {
  std::string file;
  std::string apply;
  std::string steps_file;
  std::string emit;
  std::string save;
  bool all = false;
  bool quiet = false;
  bool verify = false;
  bool launch = false;
  // The machine whose limits decide which steps are legal (shared memory, registers, vector
  // width). The H200 by default: the CUDA code printed here is for a GPU of its class.
  std::string machine = "h200";
  // --verify interprets every element access; beyond this many it is refused up front.
  double max_accesses = 5e8;
};

std::string read_text(const std::string& path) {
  io::TextInput in = io::read_text_input(path, io::kMaxModelBytes, "a steps file");
  if (!in.ok) throw ScheduleError("cannot read '" + path + "': " + in.error);
  return std::move(in.text);
}

std::string rule(const std::string& title) {
  std::string s = "── " + title + " ";
  size_t width = io::text_columns(s);  // code points, not bytes
  while (width++ < 96) s += "─";
  return s;
}

// Interpreter vs the graph's plain-loop reference on deterministic random inputs.
int verify(const Program& p, std::ostream& out, double max_accesses) {
  // Size first, refuse before allocating: a 16384² matmul needs ~19 GiB and ~9·10^12 element
  // accesses here; running out of memory half way would take the machine's other work with it,
  // and nobody waits five days for a check. Both figures are printed, whichever is over.
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Interpreter, p, nullptr);
  const uint64_t need = size.bytes;
  const MemoryBudget& budget = size.budget;
  const double accesses = size.accesses;
  const bool too_big = need > budget.bytes, too_long = accesses > max_accesses;
  if (too_big || too_long) {
    std::cerr << "schedule: --verify refused: comparing this program with the reference needs "
                 "about "
              << format_bytes_exact(need) << " of memory ("
              << (too_big ? "more than the " : "within the ") << format_bytes_exact(budget.bytes)
              << " available, " << budget.source << ") and about " << format_count(accesses)
              << " element accesses in the interpreter (" << (too_long ? "more than" : "within")
              << " --max-accesses " << format_count(max_accesses) << "; about "
              << uint64_t(std::ceil(size.seconds)) << " s at about " << format_count(size.rate)
              << "/s). Verify the same steps on a smaller model: a schedule that is right at one "
                 "size is right at another it divides"
              << (too_big ? "" : ", or raise --max-accesses") << "\n";
    return 1;
  }
  auto feeds64 = graph::random_feeds(*p.graph, 1);
  std::map<graph::TensorId, std::vector<float>> feeds;
  for (const auto& [id, v] : feeds64) feeds[id] = std::vector<float>(v.begin(), v.end());
  const auto ref = graph::evaluate(*p.graph, feeds64);
  const auto got = run_program(p, feeds);
  double worst = 0;
  for (const auto& [id, v] : got) {
    const auto& r = ref[size_t(id)];
    double scale = 1e-30;
    for (double x : r) scale = std::max(scale, std::fabs(x));
    for (size_t i = 0; i < v.size(); ++i)
      worst = std::max(worst, std::fabs(double(v[i]) - r[i]) / scale);
  }
  out << "verify: interpreter vs plain-loop reference, max error relative to the largest value: "
      << worst << (worst < 1e-4 ? " (ok)" : " (MISMATCH)") << "\n";
  return worst < 1e-4 ? 0 : 1;
}

int run_schedule(const ScheduleFlags& f) {
  std::ostream& out = std::cout;
  std::shared_ptr<const graph::Graph> g;
  try {
    g = pipeline::parse(pipeline::read_model(f.file));
  } catch (const graph::GraphError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  try {
    const predict::Machine machine = predict::load_machine(f.machine);
    History h = pipeline::lower(g, pipeline::target(&machine));
    std::string text = f.apply;
    if (!f.steps_file.empty()) text = read_text(f.steps_file) + (text.empty() ? "" : ";" + text);
    const auto steps = parse_steps(text);
    const bool show = f.emit.empty() && !f.quiet;
    if (show) {
      out << rule("step 0: default lowering (" + std::to_string(h.current().kernels.size()) +
                  " kernel" + (h.current().kernels.size() == 1 ? "" : "s") + ")")
          << "\n";
      out << print_program(h.current());
    }
    for (size_t i = 0; i < steps.size(); ++i) {
      const StepResult r = h.apply(steps[i]);
      if (!r.ok) {
        std::cerr << "schedule: " << steps[i].line << ":" << steps[i].col << ": "
                  << steps[i].to_string() << " refused on machine " << machine.name << ": "
                  << r.explanation << "\n";
        return 1;
      }
      if (!show) continue;
      out << "\n" << rule("step " + std::to_string(i + 1) + ": " + steps[i].to_string()) << "\n";
      out << r.explanation << "\n\n";
      const Program& p = h.current();
      out << (f.all ? print_program(p) : print_loop_nest(p.kernels[size_t(p.current)]));
    }
    const Program& p = h.current();
    if (!f.save.empty()) {
      std::ofstream o(f.save);
      o << h.to_text() << "\n";
      if (!o) throw ScheduleError("cannot write '" + f.save + "'");
    }
    if (!f.emit.empty()) {
      for (size_t i = 0; i < p.kernels.size(); ++i) {
        if (!f.all && int(i) != p.current) continue;
        const Kernel& k = p.kernels[i];
        if (f.emit == "cpp")
          out << emit_cpp(k);
        else if (f.emit == "cuda")
          out << emit_cuda(k);
        else if (f.emit == "pseudo")
          out << print_loop_nest(k);
        else
          throw ScheduleError("--emit takes cpp, cuda or pseudo, not '" + f.emit + "'");
        if (f.all && i + 1 < p.kernels.size()) out << "\n";
      }
    }
    if (f.launch) {
      out << "launch: " << describe_launch(launch_config(p.kernels[size_t(p.current)])) << "\n";
    }
    if (f.verify) return verify(p, out, f.max_accesses);
  } catch (const ScheduleError& e) {
    std::cerr << "schedule: " << e.what() << "\n";
    return 1;
  } catch (const predict::MachineError& e) {
    std::cerr << "schedule: " << e.what() << "\n";
    return 1;
  } catch (const graph::GraphError& e) {
    std::cerr << "schedule: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

const CommandRegistrar kRegistrar(
    "schedule",
    "Lower a model to loop nests, apply schedule steps (fuse, tile, reorder, stage, bind, ...) "
    "and print each step, or emit C++ / CUDA",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<ScheduleFlags>();
      sub.add_option("file", flags->file, pipeline::kModelSpecHelp)
          ->required();
      sub.add_option("--apply", flags->apply,
                     "Steps, e.g. \"fuse(matmul0, add0, relu0); tile(i, 64); reorder(...)\"");
      sub.add_option("--steps", flags->steps_file,
                     "Read steps from a file (applied before --apply)");
      sub.add_option("--emit", flags->emit, "Print generated source instead: cpp, cuda or pseudo");
      sub.add_option("--save", flags->save, "Write the applied steps to a file (replayable)");
      sub.add_flag("--all", flags->all, "Show every kernel, not just the one the steps act on");
      sub.add_flag("--quiet", flags->quiet, "Do not print the step-by-step loop nests");
      sub.add_flag("--verify", flags->verify,
                   "Run the scheduled program in the interpreter and compare with the reference");
      sub.add_flag("--launch", flags->launch, "Print the CUDA launch configuration");
      sub.add_option("--machine", flags->machine,
                     "Machine whose limits (shared memory, registers, vector width) decide which "
                     "steps are legal: a preset or a .machine file")
          ->capture_default_str();
      sub.add_option("--max-accesses", flags->max_accesses,
                     "Refuse a --verify estimated to interpret more element accesses than this")
          ->capture_default_str();
      sub.callback([flags, &exit_code] { exit_code = run_schedule(*flags); });
    });

}  // namespace
}  // namespace tilescope::cli

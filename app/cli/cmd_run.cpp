// `tilescope-cli run --gpu FILE --apply "…"`: the current schedule of a model file on this
// machine's GPU — generated as CUDA, compiled by NVRTC, verified against the reference evaluator,
// timed beside cuBLAS — printed beside the simulator's prediction for the same kernel. The GPU
// work runs in tilescope-gpu-bench (so this process never maps the CUDA libraries); without a
// GPU, or without a CUDA build, it says why and exits non-zero.
#include "build_paths.h"
#include "commands.h"
#include "work_limits.h"

#include "sim/graph/model_parser.h"
#include "sim/io/input.h"
#include "sim/model/run.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace_size.h"
#include "sim/schedule/transform.h"

#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace tilescope::cli {
namespace {

struct RunFlags {
  bool gpu = false;
  std::string file;
  std::string apply;
  std::string machine = "h200";
  double max_accesses = 5e8;
  int repeats = 20;
};

#if TILESCOPE_HAVE_CUDA
std::string ms(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v << " ms";
  return os.str();
}
#endif

// The simulator's prediction for the kernel: its trace on `machine` and the roofline on it.
void print_prediction(const RunFlags& f, std::ostream& out) {
  const io::TextInput in = io::read_text_input(f.file, io::kMaxModelBytes, "a model file");
  if (!in.ok) throw std::invalid_argument("cannot read model file '" + f.file + "': " + in.error);
  auto g = std::make_shared<const graph::Graph>(graph::parse_model(in.text, f.file));
  const model::Machine machine = model::load_machine(f.machine);
  const schedule::Program p =
      schedule::History::replay(schedule::lower_graph(g), f.apply, model::target_for(machine))
          .current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  const schedule::TraceSize size = schedule::estimate_trace_size(k);
  out << "kernel " << k.name << ": " << k.summary << "\n";
  if (size.accesses > f.max_accesses) {
    out << "prediction: not simulated — the trace has about " << format_count(size.accesses)
        << " accesses, more than --max-accesses " << format_count(f.max_accesses) << "\n";
    return;
  }
  model::RunOptions ro;
  const model::KernelRun run = model::run_kernel(k, *g, machine, ro);
  out << "prediction on " << machine.name << ": " << run.roofline.summary() << "; DRAM "
      << format_bytes_exact(run.dram_bytes()) << ", " << format_count(run.flops) << " FLOP\n";
}

int run_gpu(const RunFlags& f) {
  if (!f.gpu) {
    std::cerr << "run: only --gpu is supported (`schedule FILE --apply … --verify` and the "
                 "Timings view run a schedule on this CPU)\n";
    return 1;
  }
  print_prediction(f, std::cout);
#if TILESCOPE_HAVE_CUDA
  const std::string json_path = (std::filesystem::temp_directory_path() /
                                 ("tilescope-run-gpu-" + std::to_string(getpid()) + ".json"))
                                    .string();
  auto quote = [](const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  const std::string command = quote(gpu_bench_program()) + " --run-schedule " + quote(f.file) +
                              " --apply " + quote(f.apply) + " --repeats " +
                              std::to_string(f.repeats) + " --out " + quote(json_path);
  const int status = std::system(command.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  nlohmann::json r;
  if (std::ifstream in(json_path); in) {
    try {
      r = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error&) {
    }
  }
  std::filesystem::remove(json_path);
  if (!r.is_object()) {
    std::cerr << "run --gpu: the GPU run did not complete (status " << code
              << "; its reason is above)\n";
    return 1;
  }
  std::cout << "measured on " << r["device"].value("name", "?") << ": "
            << (r.value("verified", false) ? "verified" : "NOT verified");
  if (r.contains("rel_error"))
    std::cout << " (relative error " << r["rel_error"].get<double>() << ")";
  if (r.contains("median_ms")) std::cout << ", " << ms(r["median_ms"].get<double>()) << " median";
  std::cout << "; NVRTC, " << r.value("registers", 0) << " registers/thread\n";
  if (r.contains("cublas") && r["cublas"].is_object())
    std::cout << "beside it: " << r["cublas"]["what"].get<std::string>() << ": "
              << ms(r["cublas"]["median_ms"].get<double>()) << " median\n";
  return code == 0 ? 0 : 1;
#else
  std::cerr << "run --gpu: this tilescope was built without CUDA (nvcc was not found when it was "
               "configured): the prediction above is all it can give here\n";
  return 1;
#endif
}

const CommandRegistrar registrar{
    "run", "Run the current schedule of a model on the GPU beside its prediction (--gpu)",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<RunFlags>();
      sub.add_flag("--gpu", flags->gpu,
                   "Generate CUDA, compile with NVRTC, verify, time beside cuBLAS (needs a GPU)");
      sub.add_option("FILE", flags->file, "Model file")->required();
      sub.add_option("--apply", flags->apply, "Schedule steps (as for schedule)");
      sub.add_option("--machine", flags->machine, "Machine the prediction is for")
          ->capture_default_str();
      sub.add_option("--max-accesses", flags->max_accesses,
                     "Largest trace simulated for the prediction")
          ->capture_default_str();
      sub.add_option("--repeats", flags->repeats, "Timed launches (median reported)")
          ->capture_default_str();
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_gpu(*flags);
        } catch (const std::exception& e) {
          std::cerr << "run: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli

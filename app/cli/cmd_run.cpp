// `tilescope-cli run --gpu FILE --apply "…"`: the current schedule of a model file on this
// machine's GPU — generated as CUDA, compiled by NVRTC, verified against the reference evaluator,
// timed beside cuBLAS — printed beside the simulator's prediction for the same kernel. The GPU
// work runs in tilescope-gpu-bench (so this process never maps the CUDA libraries); without a
// GPU, or without a CUDA build, it says why and exits non-zero.
#include "commands.h"
#include "work_limits.h"

#include "sim/predict/simulate.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"

#include <cmath>
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

std::string ms(double v) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(4) << v << " ms";
  return os.str();
}

// The simulator's prediction for the kernel: its trace on the study's machine and the roofline.
void print_prediction(const RunFlags& f, const pipeline::Study& s, std::ostream& out) {
  const predict::Machine& machine = s.machine;
  const schedule::Program& p = s.program();
  // The kernels run --gpu runs with it (split_k's sum, im2col's copy) are predicted with it.
  const std::vector<size_t> chain = schedule::scratch_chain(p, size_t(p.current));
  schedule::Program sub = p;  // the chain alone
  sub.kernels.clear();
  for (size_t ki : chain) sub.kernels.push_back(p.kernels[ki]);
  for (size_t ki : chain) {
    const schedule::Kernel& ck = p.kernels[ki];
    const int64_t blocks = schedule::launch_config(ck).blocks();
    out << "kernel " << ck.name << ": " << ck.summary << " (" << blocks << " block"
        << (blocks == 1 ? "" : "s");
    if (!schedule::binds_blocks(ck))
      out << ", no loop bound to blocks yet";
    else if (machine.kind == "gpu" && machine.cores > 0)
      out << " for " << machine.cores << " SMs: "
          << int(std::lround(100 * predict::busy_core_share(ck, machine))) << " % have work";
    out << ")\n";
  }
  const double accesses = pipeline::size_walk(pipeline::Walk::Simulation, sub, &machine).accesses;
  if (accesses > f.max_accesses) {
    out << "prediction: not simulated — the trace has about " << format_count(accesses)
        << " accesses, more than --max-accesses " << format_count(f.max_accesses) << "\n";
    return;
  }
  if (chain.size() > 1) {
    const predict::ProgramRun run = predict::run_program(sub, machine);
    const predict::Roofline r =
        predict::roofline(machine, run.flops, run.bytes, "fp32", "", {}, run.core_share);
    out << "prediction on " << machine.name << " for the " << chain.size()
        << " kernels together: " << r.summary() << "; DRAM "
        << format_bytes_exact(run.bytes.bytes.back()) << ", " << format_count(run.flops)
        << " FLOP\n";
    return;
  }
  const predict::KernelRun run = pipeline::simulate(s);
  out << "prediction on " << machine.name << ": " << run.roofline.summary() << "; DRAM "
      << format_bytes_exact(run.dram_bytes()) << ", " << format_count(run.flops) << " FLOP\n";
}

int run_gpu(const RunFlags& f) {
  if (!f.gpu) {
    std::cerr << "run: only --gpu is supported (`schedule FILE --apply … --verify` and the "
                 "Timings view run a schedule on this CPU)\n";
    return 1;
  }
  const pipeline::ModelText text = pipeline::read_model(f.file);
  print_prediction(f, pipeline::study(text, f.apply, predict::load_machine(f.machine)), std::cout);
  try {
    core::JobProgress progress;
    const core::GpuRunResult r = core::run_schedule_on_gpu(text.text, f.apply, f.repeats, progress);
    std::cout << "measured on " << r.device << ": " << (r.verified ? "verified" : "NOT verified");
    if (r.rel_error) std::cout << " (relative error " << *r.rel_error << ")";
    if (r.median_ms) std::cout << ", " << ms(*r.median_ms) << " median";
    std::cout << "; NVRTC, " << r.registers << " registers/thread\n";
    if (r.kernels.size() > 1)
      for (const core::GpuRunResult::KernelTime& t : r.kernels)
        std::cout << "  " << t.kernel << ": " << (t.median_ms ? ms(*t.median_ms) : "not timed")
                  << " median alone\n";
    if (r.cublas_ms)
      std::cout << "beside it: " << r.cublas_what << ": " << ms(*r.cublas_ms) << " median\n";
    return r.verified ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "run --gpu: " << e.what() << "\n";
    return 1;
  }
}

const CommandRegistrar registrar{
    "run", "Run the current schedule of a model on the GPU beside its prediction (--gpu)",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<RunFlags>();
      sub.add_flag("--gpu", flags->gpu,
                   "Generate CUDA, compile with NVRTC, verify, time beside cuBLAS (needs a GPU)");
      sub.add_option("FILE", flags->file, pipeline::kModelSpecHelp)->required();
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

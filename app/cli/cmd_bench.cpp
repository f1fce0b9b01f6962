// `tilescope-cli bench`: runs the real CPU (or GPU) kernel suites, prints the table, writes the
// JSON; `--show FILE` prints the table of a recorded report without running anything (`--csv`:
// as CSV, the rows the app's exports write).
#include "build_paths.h"
#include "commands.h"

#include "app/core/exports.h"
#include "kernels/counters_predict.h"
#include "kernels/cpu/bench_report.h"
#include "kernels/cpu/cpu_bench.h"
#include "kernels/gpu_counters.h"
#include "sim/predict/gpu_kernels.h"
#include "sim/predict/machine.h"
#include "sim/io/input.h"
#include "sim/io/json.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

namespace tilescope::cli {

namespace {

struct BenchFlags {
  bool cpu = false;
  bool gpu = false;
  std::string suite;
  int repeats = 10;
  int size = 0;
  int threads = 0;
  bool quick = false;
  std::string out;
  std::string show;
  bool csv = false;  // with --show: the table as CSV (the app's Export ▸ table)
  bool counters = false;
  std::string sdpa;  // --gpu: scripts/sdpa_reference.py's JSON, folded into the attention suites
  std::string sizes;
  std::string predict;
  std::string machine = "h200";
  // --twin: one trace description's prediction, no recording needed
  std::string twin;
  int twin_size = 4096;
  int blocks_per_sm = 0;
  int group = 0;
  double slot_offset = 0;
};

// --twin KERNEL: the simulator's prediction for one hand-written CUDA kernel at M = N = K =
// --twin-size on the machine, with the residency and block order the flags ask for.
int print_twin(const BenchFlags& flags) {
  predict::GpuKernelOptions o;
  o.max_blocks_per_sm = flags.blocks_per_sm;
  o.group_rows = flags.group;
  o.slot_offset = flags.slot_offset;
  const int n = flags.twin_size;
  const predict::GpuKernelPrediction p =
      predict::predict_gpu_kernel(flags.twin, n, n, n, predict::load_machine(flags.machine), o);
  const double l2_reads = p.l2_read_sectors;
  std::printf("%s %dx%dx%d on %s (%s): %d blocks per SM, %lld resident%s\n", p.twin.c_str(), n,
              n, n, flags.machine.c_str(), p.method.c_str(), p.blocks_per_sm,
              static_cast<long long>(p.resident_blocks),
              flags.group > 0 ? (", grouped " + std::to_string(flags.group)).c_str() : "");
  std::printf("  DRAM read %.1f MB, written %.1f MB, total %.1f MB\n", p.dram_read_bytes / 1e6,
              p.dram_write_bytes / 1e6, (p.dram_read_bytes + p.dram_write_bytes) / 1e6);
  std::printf("  L2 sectors read %.1f M (hit rate %.1f %%), written %.1f M\n", l2_reads / 1e6,
              l2_reads > 0 ? 100.0 * p.l2_read_hit_sectors / l2_reads : 0.0,
              p.l2_write_sectors / 1e6);
  std::printf("  shared-memory load conflicts %.0f, store conflicts %.0f\n", p.shared_ld_conflicts,
              p.shared_st_conflicts);
  return 0;
}

// A counters report: the simulator's predictions attached (again) for `machine`, the table
// printed, the JSON written to `out`.
int finish_counters(kernels::CounterReport report, const BenchFlags& flags,
                    const std::string& default_out) {
  kernels::predict_counters(report, predict::load_machine(flags.machine));
  std::cout << kernels::format_counters_table(report);
  const std::string out = flags.out.empty() ? default_out : flags.out;
  std::ofstream f(out);
  f << nlohmann::json(report).dump(2) << "\n";
  if (!f) {
    std::cerr << "bench: cannot write " << out << "\n";
    return 1;
  }
  std::cout << "\nwrote " << out << "\n";
  return 0;
}

// Reads a recorded report; a counters recording (tilescope-counters/1) is told apart by its
// schema. Returns true and fills `counters` for one.
bool read_counters(const std::string& path, kernels::CounterReport& counters) {
  const io::TextInput in = io::read_text_input(path, io::kMaxRecordingBytes, "a recorded report");
  if (!in.ok) return false;  // load_bench_report says what is wrong with it
  const io::JsonInput j = io::parse_json(in.text);
  if (!j.ok || !kernels::is_counters_document(j.value)) return false;
  counters = kernels::load_counters_report(path);
  return true;
}

int run_bench(const BenchFlags& flags) {
  using namespace tilescope::kernels;
  if (!flags.show.empty()) {
    if (CounterReport counters; read_counters(flags.show, counters)) {
      std::cout << (flags.csv ? core::table_csv(core::measured_report_table(counters))
                              : format_counters_table(counters));
      return 0;
    }
    const BenchReport report = load_bench_report(flags.show);
    std::cout << (flags.csv ? core::table_csv(core::timings_table(nlohmann::json(report)))
                            : format_bench_table(report));
    return 0;
  }
  if (flags.csv) {
    std::cerr << "bench: --csv goes with --show FILE (a recorded report's table as CSV)\n";
    return 1;
  }
  if (!flags.twin.empty()) return print_twin(flags);
  if (!flags.predict.empty()) {
    CounterReport counters;
    if (!read_counters(flags.predict, counters)) {
      std::cerr << "bench --predict: " << flags.predict
                << " is not a counters report (schema tilescope-counters/1)\n";
      return 1;
    }
    return finish_counters(std::move(counters), flags, "tilescope-counters.json");
  }
  if (flags.counters && !flags.gpu) {
    std::cerr << "bench: --counters goes with --gpu (hardware counters of the CUDA versions)\n";
    return 1;
  }
  if (flags.cpu == flags.gpu) {
    std::cerr << "bench: choose exactly one of --cpu or --gpu (or --show FILE)\n";
    return 1;
  }
  BenchReport report;
  if (flags.cpu) {
    CpuBenchOptions options;
    options.suite = flags.suite;
    options.repeats = flags.repeats;
    options.quick = flags.quick;
    options.size = flags.size;
    options.threads = flags.threads;
    report = run_cpu_bench(options, std::cerr);
  } else {
    if (flags.size != 0 || flags.threads != 0) {
      std::cerr << "bench --gpu: --size and --threads are options of the CPU matmul suite\n";
      return 1;
    }
#if TILESCOPE_HAVE_CUDA
    // The GPU bench runs as its own process, so this one never loads the CUDA libraries (see
    // kernels/cuda/CMakeLists.txt); it prints its progress and any "no usable GPU" reason itself.
    const std::string json_path = (std::filesystem::temp_directory_path() /
                                   ("tilescope-gpu-bench-" + std::to_string(getpid()) + ".json"))
                                      .string();
    std::string command = std::string("'") + gpu_bench_program() + "' --repeats " +
                          std::to_string(flags.repeats) + " --out '" + json_path + "'";
    if (flags.counters) {
      command += " --counters";
      if (!flags.sizes.empty()) command += " --sizes '" + flags.sizes + "'";
    }
    if (!flags.suite.empty()) command += " --suite '" + flags.suite + "'";
    if (flags.quick) command += " --quick";
    if (!flags.sdpa.empty()) command += " --sdpa '" + flags.sdpa + "'";
    const int status = std::system(command.c_str());
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (code != 0) {
      std::filesystem::remove(json_path);
      std::cerr << "bench --gpu: the GPU bench (" << gpu_bench_program() << ") stopped with "
                << (code < 0 ? std::string("a signal") : "status " + std::to_string(code)) << "\n";
      return 1;
    }
    if (flags.counters) {
      try {
        CounterReport counters = load_counters_report(json_path);
        std::filesystem::remove(json_path);
        return finish_counters(std::move(counters), flags, "tilescope-counters-gpu.json");
      } catch (const std::exception& e) {
        std::filesystem::remove(json_path);
        std::cerr << "bench --gpu --counters: " << e.what() << "\n";
        return 1;
      }
    }
    try {
      report = load_bench_report(json_path);
    } catch (const std::exception& e) {
      std::filesystem::remove(json_path);
      std::cerr << "bench --gpu: " << e.what() << "\n";
      return 1;
    }
    std::filesystem::remove(json_path);
#else
    std::cerr << "bench --gpu: this tilescope was built without CUDA (nvcc was not found when it "
                 "was configured); rebuild with the CUDA Toolkit installed, or read a recorded "
                 "GPU run with `bench --show assets/recorded/<file>.json`\n";
    return 1;
#endif
  }
  std::cout << format_bench_table(report);
  const std::string out =
      flags.out.empty() ? std::string("tilescope-bench-") + (flags.cpu ? "cpu" : "gpu") + ".json"
                        : flags.out;
  write_bench_report(report, out);
  std::cout << "\nwrote " << out << "\n";
  // A version that was not verified fails the command, so a silent failure cannot pass as a
  // benchmark.
  if (const int failed = unverified_count(report); failed > 0) {
    std::cerr << "bench: " << failed
              << " version(s) were not verified against the reference and were not timed (see "
                 "the notes above)\n";
    return 1;
  }
  return 0;
}

const CommandRegistrar registrar{
    "bench", "Run the real kernel suites (verified, then timed); print a table and write JSON",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<BenchFlags>();
      sub.add_flag("--cpu", flags->cpu, "Run the CPU suites (kernels compiled -O3 -march=native)");
      sub.add_flag("--gpu", flags->gpu, "Run the CUDA suites (needs a CUDA build and a GPU)");
      sub.add_option("--suite", flags->suite,
                     "Run these suites only, comma-separated (CPU: matmul, conv, bias_relu, jit, "
                     "schedule_twin; default all)");
      sub.add_option("--repeats", flags->repeats, "Timed runs per version (median reported)")
          ->capture_default_str();
      sub.add_flag("--quick", flags->quick, "Small sizes: a smoke run in seconds, not a benchmark");
      sub.add_option("--sdpa", flags->sdpa,
                     "With --gpu: PyTorch SDPA's times from scripts/sdpa_reference.py, shown "
                     "beside the attention suites' versions");
      sub.add_option("--size", flags->size,
                     "CPU matmul suite: M = N = K = SIZE (default 1024; at most 2048)");
      sub.add_option("--threads", flags->threads,
                     "CPU matmul suite: threads of version 6 and of Eigen's version 7, which "
                     "it is compared with (default: every hardware thread)");
      sub.add_option("--out", flags->out,
                     "Where to write the JSON (default tilescope-bench-cpu.json / -gpu.json)");
      sub.add_option("--show", flags->show,
                     "Print the table of a recorded report (e.g. assets/recorded/cpu-*.json; a "
                     "counters recording prints measured vs predicted counters)");
      sub.add_flag("--csv", flags->csv,
                   "With --show: the table as CSV — a timing report's versions (the Timings "
                   "view's table), or every run of a counters recording with each level's "
                   "predicted and measured traffic (the Memory view's predicted vs measured)");
      sub.add_flag("--counters", flags->counters,
                   "With --gpu: profile each version of sgemm, gemm_epilogue and grid_order once "
                   "under Nsight Compute and print the counters beside the simulator's "
                   "predictions");
      sub.add_option("--sizes", flags->sizes, "With --counters: square sizes (default 2048,4096)");
      sub.add_option("--predict", flags->predict,
                     "Recompute the simulator's predictions for a counters recording and print "
                     "the comparison (no GPU needed; --out writes the result)");
      sub.add_option("--machine", flags->machine,
                     "Machine the predictions are made for (default h200)")
          ->capture_default_str();
      sub.add_option("--twin", flags->twin,
                     "Print the simulator's prediction for one hand-written CUDA kernel "
                     "(sgemm_01 … sgemm_08, hgemm_02, …; no GPU needed)");
      sub.add_option("--twin-size", flags->twin_size, "With --twin: M = N = K")
          ->capture_default_str();
      sub.add_option("--blocks-per-sm", flags->blocks_per_sm,
                     "With --twin: at most this many resident blocks per SM (0: what the "
                     "kernel's resources allow)");
      sub.add_option("--slot-offset", flags->slot_offset,
                     "With --twin: the SM's second block starts this fraction of a block later "
                     "(0 in step … 0.5 half a block apart)");
      sub.add_option("--group", flags->group,
                     "With --twin: GroupedOrder<G> block order (0: launch order)");
      sub.callback([flags, &exit_code] {
        try {
          exit_code = run_bench(*flags);
        } catch (const tilescope::kernels::BenchError& e) {
          std::cerr << "bench: " << e.what() << "\n";
          exit_code = 1;
        } catch (const std::invalid_argument& e) {  // an unknown machine, an impossible shape
          std::cerr << "bench: " << e.what() << "\n";
          exit_code = 1;
        } catch (const tilescope::kernels::BenchReportError& e) {
          std::cerr << "bench: " << e.what() << "\n";
          exit_code = 1;
        } catch (const std::runtime_error& e) {  // a counters recording that cannot be read
          std::cerr << "bench: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli

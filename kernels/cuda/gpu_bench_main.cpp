// tilescope-gpu-bench: the GPU bench without the rest of the CLI (same run_gpu_bench as
// `tilescope-cli bench --gpu`), so scripts/gpu-run.sh has a path that depends only on kernels/cuda.
#include "kernels/cuda/attention_bench.h"
#include "kernels/cuda/gpu_bench.h"
#include "kernels/cuda/gpu_counters_run.h"
#include "kernels/cuda/run_schedule.h"
#include "sim/io/input.h"
#include "sim/pipeline.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  CLI::App app{
      "tilescope-gpu-bench — validate and time the CUDA kernel versions, write bench JSON"};
  tilescope::kernels::GpuBenchOptions options;
  std::string out_path;
  app.add_option("--suite", options.suite, "comma-separated suites, or all")->default_val("all");
  app.add_option("--repeats", options.repeats, "timed repeats per version")->default_val(20);
  app.add_flag("--quick", options.quick, "small problems (not for recorded numbers)");
  app.add_option("--out", out_path, "write the JSON here (default: stdout)");
  // Hardware counters: every version of the counters suites once under Nsight Compute.
  bool counters = false;
  tilescope::kernels::CountersOptions counter_options;
  std::string profile_one;
  int profile_size = 0;
  app.add_flag("--counters", counters,
               "profile each version of sgemm, gemm_epilogue and grid_order once under ncu and "
               "write a tilescope-counters/1 report (--suite picks among those three)");
  app.add_option("--sizes", counter_options.sizes, "--counters: square sizes M = N = K")
      ->delimiter(',');
  app.add_option("--ncu", counter_options.ncu, "--counters: the ncu program (default: found)");
  app.add_option("--profile-one", profile_one,
                 "SUITE:VERSION — the child of --counters: one warm-up and one profiled launch");
  app.add_option("--size", profile_size, "--profile-one: square size");
  // The current schedule of a model file on the GPU (tilescope-cli run --gpu).
  std::string schedule_file, schedule_steps;
  app.add_option("--run-schedule", schedule_file,
                 "model FILE: generate its current kernel after --apply, compile with NVRTC, "
                 "verify, time beside cuBLAS; JSON out");
  app.add_option("--apply", schedule_steps, "--run-schedule: schedule steps");
  // Attention: the problems scripts/sdpa_reference.py should time, and its results folded in.
  bool attention_shapes = false;
  std::string sdpa_path;
  app.add_flag("--attention-shapes", attention_shapes,
               "print the attention suites' problems as JSON (for scripts/sdpa_reference.py)");
  app.add_option("--sdpa", sdpa_path,
                 "FILE from scripts/sdpa_reference.py: PyTorch SDPA's backends beside the "
                 "attention suites' versions");
  CLI11_PARSE(app, argc, argv);
  if (attention_shapes) {
    std::cout << tilescope::kernels::attention_shapes_json(options.quick).dump(2) << "\n";
    return 0;
  }
  std::optional<nlohmann::json> sdpa;
  if (!sdpa_path.empty()) {
    std::ifstream in(sdpa_path);
    sdpa = nlohmann::json::parse(in, nullptr, false);
    if (!in || sdpa->is_discarded()) {
      std::cerr << "tilescope-gpu-bench: --sdpa " << sdpa_path << ": cannot read JSON\n";
      return 1;
    }
  }
  if (!schedule_file.empty()) {
    tilescope::pipeline::ModelText in;
    try {
      in = tilescope::pipeline::read_model_file(schedule_file);
    } catch (const tilescope::graph::GraphError& e) {
      std::cerr << "tilescope-gpu-bench: " << e.message() << "\n";
      return 1;
    }
    if (std::string reason; !tilescope::kernels::gpu_bench_available(&reason)) {
      std::cerr << "no usable GPU: " << reason << "\n";
      return 1;
    }
    try {
      const nlohmann::json doc = tilescope::kernels::run_schedule_on_gpu(
          in.text, schedule_file, schedule_steps, options.repeats, std::cerr);
      std::ofstream out(out_path.empty() ? "/dev/stdout" : out_path);
      out << doc.dump(2) << "\n";
      return doc.value("verified", false) ? 0 : 3;
    } catch (const std::exception& e) {
      std::cerr << "tilescope-gpu-bench --run-schedule: " << e.what() << "\n";
      return 2;
    }
  }
  if (!profile_one.empty()) {
    const auto colon = profile_one.find(':');
    if (colon == std::string::npos) {
      std::cerr << "tilescope-gpu-bench: --profile-one wants SUITE:VERSION\n";
      return 1;
    }
    if (profile_one.rfind("attention", 0) == 0)
      return tilescope::kernels::profile_attention_one(
          profile_one.substr(0, colon), std::atoi(profile_one.c_str() + colon + 1), std::cerr);
    return tilescope::kernels::profile_one(profile_one.substr(0, colon),
                                           std::atoi(profile_one.c_str() + colon + 1), profile_size,
                                           std::cerr);
  }
  if (counters) {
    counter_options.suite = options.suite == "all" ? "" : options.suite;
    try {
      const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
      nlohmann::json doc = tilescope::kernels::run_counters(counter_options, self, std::cerr);
      std::ofstream out(out_path.empty() ? "/dev/stdout" : out_path);
      out << doc.dump(2) << "\n";
      if (!out) {
        std::cerr << "tilescope-gpu-bench: cannot write " << out_path << "\n";
        return 1;
      }
    } catch (const std::exception& e) {
      std::cerr << "tilescope-gpu-bench --counters: " << e.what() << "\n";
      return 2;
    }
    return 0;
  }
  try {  // a misspelt suite is reported as such, with or without a GPU
    (void)tilescope::kernels::select_suites(options.suite, tilescope::kernels::gpu_bench_suites(),
                                            "GPU");
  } catch (const tilescope::kernels::BenchError& e) {
    std::cerr << "tilescope-gpu-bench: " << e.what() << "\n";
    return 1;
  }
  if (std::string reason; !tilescope::kernels::gpu_bench_available(&reason)) {
    std::cerr << "no usable GPU: " << reason << "\n";
    return 1;
  }
  try {
    tilescope::kernels::BenchReport report = tilescope::kernels::run_gpu_bench(options, std::cerr);
    if (sdpa) tilescope::kernels::fold_sdpa_results(report, *sdpa);
    const nlohmann::json doc = report;
    if (out_path.empty()) {
      std::cout << doc.dump(2) << "\n";
    } else {
      std::ofstream out(out_path);
      if (!out) {
        std::cerr << "tilescope-gpu-bench: cannot write " << out_path << "\n";
        return 1;
      }
      out << doc.dump(2) << "\n";
      std::cerr << "wrote " << out_path << "\n";
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "tilescope-gpu-bench: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tilescope-gpu-bench: " << e.what() << "\n";
    return 2;
  }
  return 0;
}

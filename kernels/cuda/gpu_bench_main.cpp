// tilescope-gpu-bench: the GPU bench without the rest of the CLI (same run_gpu_bench as
// `tilescope-cli bench --gpu`), so scripts/gpu-run.sh has a path that depends only on kernels/cuda.
#include "kernels/cuda/gpu_bench.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
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
  CLI11_PARSE(app, argc, argv);
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
    const nlohmann::json doc = tilescope::kernels::run_gpu_bench(options, std::cerr);
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

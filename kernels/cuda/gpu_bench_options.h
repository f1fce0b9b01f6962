// What a GPU bench run is asked for (tilescope-gpu-bench's --suite, --repeats, --quick), apart from
// gpu_bench.h so the harness (gpu_suite.h) and the suite files read it without the entry point.
#pragma once

#include <string>

namespace tilescope::kernels {

struct GpuBenchOptions {
  std::string suite;   // "" or "all" for every suite, else a comma-separated list (select_suites)
  int repeats = 20;    // timed repeats per version (slow versions stop earlier, never below 3)
  bool quick = false;  // small problems (seconds instead of a minute); not for recorded numbers
};

}  // namespace tilescope::kernels

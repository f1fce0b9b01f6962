// The CPU benchmark runner behind `tilescope-cli bench --cpu`: every version of every suite is
// verified against the Eigen reference on a poisoned output, then timed; the result is the JSON of
// bench_schema (kind "cpu") that the app, the lessons and the CLI table all read.
#pragma once

#include "kernels/cpu/jit.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::kernels {

struct CpuBenchOptions {
  std::string suite;   // "" runs every suite; otherwise one of cpu_bench_suites()
  int repeats = 10;    // timed runs per version (at least 3, fewer if one run is very slow)
  bool quick = false;  // small sizes and quick peaks: seconds instead of minutes (tests, CI)
  JitOptions jit;      // compiler and cache for the "jit" suite
};

// The suites, in the order they run.
std::vector<std::string> cpu_bench_suites();

// A request the runner cannot honour (unknown suite, repeats < 1): the message says what and why.
class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the suites, logging progress to `log`; throws BenchError for a bad request. A version that
// fails verification or cannot be built (the JIT without a compiler) is reported in its result
// ("verified": false and a "note"), never timed, and does not stop the run.
nlohmann::json run_cpu_bench(const CpuBenchOptions& options, std::ostream& log);

}  // namespace tilescope::kernels

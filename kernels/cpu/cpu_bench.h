// The CPU benchmark runner behind `tilescope-cli bench --cpu`: every version of every suite is
// verified against the Eigen reference on a poisoned output, then timed; the result is a
// BenchReport (kernels/bench_types.h, kind "cpu"), whose JSON the app, the lessons and the CLI
// table all read.
#pragma once

#include "kernels/bench_types.h"
#include "kernels/cpu/jit.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tilescope::kernels {

struct CpuBenchOptions {
  std::string suite;   // "" runs every suite; otherwise one of cpu_bench_suites()
  int repeats = 10;    // timed runs per version (at least 3, fewer if one run is very slow)
  bool quick = false;  // small sizes and quick peaks: seconds instead of minutes (tests, CI)
  // The matmul suite's problem M = N = K = size (0: its own, 1024; at most kMaxMatMulSize), and
  // the threads of its threaded versions, 6 and Eigen's 7 (0: every hardware thread).
  int size = 0;
  int threads = 0;
  JitOptions jit;  // compiler and cache for the "jit" suite
};

inline constexpr int kMaxMatMulSize = 2048;  // version 1 (naive ijk) takes minutes beyond it
inline constexpr int kMaxBenchThreads = 1024;

// The suites, in the order they run.
std::vector<std::string> cpu_bench_suites();

// Runs the suites, logging progress to `log`; throws BenchError for a bad request. A version that
// fails verification or cannot be built (the JIT without a compiler) is reported in its result
// (not verified, with a note), never timed, and does not stop the run.
BenchReport run_cpu_bench(const CpuBenchOptions& options, std::ostream& log);

}  // namespace tilescope::kernels

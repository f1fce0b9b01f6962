// `tilescope-gpu-bench --counters`: each version of the sgemm and gemm_epilogue suites (and the
// grid-order pair) profiled once under Nsight Compute, its counters parsed into a CounterReport
// (kernels/gpu_counters.h). Plain C++ header: no CUDA includes.
#pragma once

#include "kernels/gpu_counters.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tilescope::kernels {

struct CountersOptions {
  std::vector<int> sizes = {2048, 4096};  // M = N = K
  std::string suite;                      // "" = sgemm,gemm_epilogue,grid_order
  std::string ncu;      // the ncu program; "" = find it (TILESCOPE_NCU, PATH, ...)
  int timeout_s = 240;  // per profiled version
};

// The suites --counters knows, in the order it runs them.
std::vector<std::string> counters_suites();
// The versions of a counters suite: {version, name}.
std::vector<std::pair<int, std::string>> counters_versions(const std::string& suite);

// The ncu program to use, or "" with `reason` saying why there is none.
std::string find_ncu(const std::string& requested, std::string* reason);

// Runs every version of the chosen suites at every size under ncu (one process per version, which
// re-runs this program with --profile-one) and returns the measured half of the report.
CounterReport run_counters(const CountersOptions& options, const std::string& self_path,
                           std::ostream& log);

// The child's side: sets up `suite`'s inputs at size³, launches `version` once to warm up, then
// once more between cudaProfilerStart and cudaProfilerStop (ncu runs with --profile-from-start
// off, so exactly that launch's kernels are profiled), and checks the output against cuBLAS.
// Returns the process exit code; messages go to `log`.
int profile_one(const std::string& suite, int version, int size, std::ostream& log);

}  // namespace tilescope::kernels

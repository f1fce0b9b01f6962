// The simulator's predictions beside a counters report: which trace descriptions
// (sim/predict/gpu_kernels.h) make up each profiled version, their summed prediction, and the likely
// cause of each difference the comparison shows.
#pragma once

#include "kernels/gpu_counters.h"
#include "sim/predict/machine.h"

namespace tilescope::kernels {

// The kernels one run of a counters suite launches, in order, as trace-description names, each
// with its block order; empty with `why` set when the version has no description.
struct TwinLaunch {
  std::string kernel;
  int group_rows = 0;
};
std::vector<TwinLaunch> twin_launches(const std::string& suite, int version, std::string* why);

// Fills run.predicted for every run of `report` (cold caches for every kernel, as ncu measured
// them), and the causes where a difference is over the bounds.
void predict_counters(CounterReport& report, const predict::Machine& machine);

}  // namespace tilescope::kernels

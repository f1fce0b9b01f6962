// Timing GPU work with CUDA events: warm-up, then repeats each bracketed by its own pair of events,
// reported as median and minimum. The L2 is flushed before each repeat so no version is timed on a
// cache the previous repeat warmed.
#pragma once

#include "kernels/cuda/nvrtc_runner.h"

#include <functional>
#include <vector>

namespace tilescope::kernels::cuda {

struct TimingOptions {
  int warmup = 2;
  int repeats = 20;
  // Slow versions (the naive SGEMM takes a good fraction of a second) stop after this much timed
  // work, but never below 3 repeats.
  double budget_ms = 1500.0;
  bool flush_l2 = true;
};

// Times `run` (which launches work on the default stream). Throws GpuError on any CUDA failure.
KernelTiming time_gpu(const std::function<void()>& run, const TimingOptions& options);

// Median of a non-empty sample.
double median_of(std::vector<double> samples);

}  // namespace tilescope::kernels::cuda

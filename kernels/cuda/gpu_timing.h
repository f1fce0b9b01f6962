// Timing GPU work with CUDA events: warm-up, then repeats each bracketed by its own pair of events,
// reported as median and minimum. The L2 is flushed before each repeat so no version is timed on a
// cache the previous repeat warmed. How many repeats, and the median/minimum, follow the bench's
// one RepeatRule and summarise_samples() (kernels/bench_types.h), as the CPU harness does.
#pragma once

#include <functional>

namespace tilescope::kernels::cuda {

struct KernelTiming {
  double median_ms = 0.0;
  double min_ms = 0.0;
  int repeats = 0;
};

struct TimingOptions {
  int warmup = 2;
  int repeats = 20;
  // Slow versions (the naive SGEMM takes a good fraction of a second) stop once this much timed
  // work is done, but never below min_repeats.
  double budget_ms = 1500.0;
  int min_repeats = 3;
  bool flush_l2 = true;
};

// Times `run` (which launches work on the default stream). Throws GpuError on any CUDA failure.
KernelTiming time_gpu(const std::function<void()>& run, const TimingOptions& options);

}  // namespace tilescope::kernels::cuda

// CUDA-event timing with warm-up, an L2 flush before each repeat, median and minimum.
#include "kernels/cuda/gpu_timing.h"

#include "kernels/bench_types.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_memory.h"

#include <algorithm>
#include <vector>

namespace tilescope::kernels::cuda {
namespace {

// Writing twice the L2's size evicts whatever the previous repeat left there.
void flush_l2() {
  static DeviceBuffer<unsigned char> scratch = [] {
    int device = 0, l2 = 0;
    TS_CUDA_CHECK(cudaGetDevice(&device));
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    return DeviceBuffer<unsigned char>(2 * static_cast<std::size_t>(std::max(l2, 1 << 20)));
  }();
  static int pass = 0;
  TS_CUDA_CHECK(cudaMemsetAsync(scratch.get(), ++pass & 0xFF, scratch.bytes()));
}

class Event {
 public:
  Event() { TS_CUDA_CHECK(cudaEventCreate(&m_event)); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { cudaEventDestroy(m_event); }
  cudaEvent_t get() const { return m_event; }

 private:
  cudaEvent_t m_event{};
};

}  // namespace

KernelTiming time_gpu(const std::function<void()>& run, const TimingOptions& options) {
  Event start, stop;
  for (int i = 0; i < options.warmup; ++i) {
    TS_CUDA_CHECK(cudaEventRecord(start.get()));
    run();
    TS_CUDA_CHECK(cudaEventRecord(stop.get()));
    TS_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.f;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    if (ms > options.budget_ms / 4) break;  // a slow version is warm after one run
  }
  const RepeatRule rule{options.repeats, options.min_repeats, options.budget_ms};
  std::vector<double> samples;
  double spent_ms = 0.0;
  while (!rule.enough(static_cast<int>(samples.size()), spent_ms)) {
    if (options.flush_l2) flush_l2();
    TS_CUDA_CHECK(cudaEventRecord(start.get()));
    run();
    TS_CUDA_CHECK(cudaEventRecord(stop.get()));
    TS_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.f;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    samples.push_back(ms);
    spent_ms += ms;
  }
  TS_CUDA_CHECK(cudaGetLastError());
  const Timing summary = summarise_samples(std::move(samples));
  KernelTiming t;
  t.median_ms = summary.median_ms;
  t.min_ms = summary.min_ms;
  t.repeats = summary.repeats;
  return t;
}

}  // namespace tilescope::kernels::cuda

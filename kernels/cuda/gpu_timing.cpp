// CUDA-event timing with warm-up, an L2 flush before each repeat, median and minimum.
#include "kernels/cuda/gpu_timing.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_memory.h"

#include <algorithm>

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

double median_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

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
  std::vector<double> samples;
  int repeats = std::max(1, options.repeats);
  for (int i = 0; i < repeats; ++i) {
    if (options.flush_l2) flush_l2();
    TS_CUDA_CHECK(cudaEventRecord(start.get()));
    run();
    TS_CUDA_CHECK(cudaEventRecord(stop.get()));
    TS_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0.f;
    TS_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    samples.push_back(ms);
    if (i == 0 && ms > 0) {
      const int affordable = static_cast<int>(options.budget_ms / ms);
      repeats = std::min(repeats, std::max(3, affordable));
    }
  }
  TS_CUDA_CHECK(cudaGetLastError());
  KernelTiming t;
  t.repeats = static_cast<int>(samples.size());
  t.min_ms = *std::min_element(samples.begin(), samples.end());
  t.median_ms = median_of(samples);
  return t;
}

}  // namespace tilescope::kernels::cuda

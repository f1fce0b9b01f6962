// The CPU timing harness: warm-up, steady clock, median of repeats, verification, peaks, host info.
#include "kernels/cpu/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace tilescope::kernels {

Timing time_runs(const std::function<void(int rotation)>& run, const TimingOptions& options) {
  return time_runs_interleaved({run}, options).front();
}

std::vector<Timing> time_runs_interleaved(
    const std::vector<std::function<void(int rotation)>>& runs, const TimingOptions& options) {
  using Clock = std::chrono::steady_clock;
  const int rotations = std::max(1, options.rotations);
  const std::size_t count = runs.size();
  // One rotation counter for all runs: consecutive calls, whichever version makes them, always
  // use different sets, so no call finds the operands the previous call left in cache.
  int call = 0;
  for (std::size_t v = 0; v < count; ++v)
    for (int i = 0; i < options.warmup; ++i) runs[v](call++ % rotations);
  // Every run gets the same number of rounds; the budget is per run, so the rounds stop when all
  // of them together spent count × budget.
  const RepeatRule rule{options.repeats, options.min_repeats,
                        options.max_seconds * 1e3 * static_cast<double>(count)};
  std::vector<std::vector<double>> samples_ms(count);
  double spent_ms = 0.0;
  for (int rounds = 0; !rule.enough(rounds, spent_ms); ++rounds) {
    for (std::size_t v = 0; v < count; ++v) {
      const auto t0 = Clock::now();
      runs[v](call++ % rotations);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      samples_ms[v].push_back(ms);
      spent_ms += ms;
    }
  }
  std::vector<Timing> timings;
  for (auto& samples : samples_ms) timings.push_back(summarise_samples(std::move(samples)));
  return timings;
}

void poison(float* data, std::size_t count) {
  std::fill(data, data + count, std::numeric_limits<float>::quiet_NaN());
}

void fill_uniform(float* data, std::size_t count, unsigned seed) {
  std::uint32_t state = seed * 2654435761u + 12345u;
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;  // 24 bits → [-1, 1)
  }
}

// [SECTION] Peaks

namespace {

// kChains independent accumulator registers of kWidth floats: more independent FMAs than
// latency × ports (4 cycles × 2 ports = 8 registers in flight), few enough that none spills.
// GCC/Clang vector types keep the accumulators in registers; plain arrays let the optimiser
// interchange the loops and stream the accumulators through memory, which measures L1, not FMAs.
#if defined(__AVX512F__)
constexpr int kWidth = 16;
constexpr int kChains = 24;
#elif defined(__AVX__)
constexpr int kWidth = 8;
constexpr int kChains = 12;
#else
constexpr int kWidth = 4;
constexpr int kChains = 12;
#endif

#if defined(__GNUC__)
typedef float FmaVec __attribute__((vector_size(kWidth * sizeof(float))));
#endif

double fma_gflops(long iterations) {
  volatile float mul_v = 0.999999f, add_v = 1e-7f;  // unknown to the optimiser
  const float mul = mul_v, add = add_v;
  float sink = 0.0f;
  const auto t0 = std::chrono::steady_clock::now();
#if defined(__GNUC__)
  FmaVec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = FmaVec{} + 0.001f * static_cast<float>(c);
  const FmaVec mul_vec = FmaVec{} + mul, add_vec = FmaVec{} + add;
  for (long it = 0; it < iterations; ++it) {
#pragma GCC unroll 32
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * mul_vec + add_vec;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < kWidth; ++j) sink += acc[c][j];
#else
  float acc[kChains][kWidth];
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < kWidth; ++j) acc[c][j] = 0.001f * static_cast<float>(c + j);
  for (long it = 0; it < iterations; ++it)
    for (int c = 0; c < kChains; ++c)
      for (int j = 0; j < kWidth; ++j) acc[c][j] = acc[c][j] * mul + add;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int c = 0; c < kChains; ++c)
    for (int j = 0; j < kWidth; ++j) sink += acc[c][j];
#endif
  volatile float keep = sink;
  (void)keep;
  return 2.0 * iterations * kChains * kWidth / s / 1e9;
}

// ns per multiply-add in one dependent chain: x = x * mul + add, each waiting for the last.
double dependent_fma_ns(long iterations) {
  volatile float mul_v = 0.999999f, add_v = 1e-7f, x_v = 0.5f;  // unknown to the optimiser
  const float mul = mul_v, add = add_v;
  float x = x_v;
  const auto t0 = std::chrono::steady_clock::now();
  for (long it = 0; it < iterations; ++it) x = x * mul + add;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  x_v = x;
  return s / static_cast<double>(iterations) * 1e9;
}

double copy_gbps(std::size_t floats, int passes) {
  std::vector<float> src(floats, 1.0f), dst(floats, 0.0f);
  double best_s = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < passes; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    std::copy(src.begin(), src.end(), dst.begin());
    best_s = std::min(best_s,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    src[pass % floats] = dst[(pass * 7) % floats];  // keep the copies observable
  }
  return 2.0 * floats * sizeof(float) / best_s / 1e9;
}

}  // namespace

Peaks measure_peaks(bool quick) {
  Peaks peaks;
  double best = 0.0;
  for (int i = 0; i < 3; ++i) best = std::max(best, fma_gflops(quick ? 200000 : 2000000));
  peaks.gflops_fp32 = best;
  double chain = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) chain = std::min(chain, dependent_fma_ns(quick ? 2000000 : 20000000));
  peaks.dependent_fma_ns = chain;
  const HostInfo host = host_info();
  // Arrays of twice the last-level cache, so the copy cannot be served from it.
  std::size_t bytes = std::max<std::size_t>(2 * host.llc_bytes, std::size_t{256} << 20);
  if (quick) bytes = std::size_t{64} << 20;
  peaks.gbps = copy_gbps(bytes / sizeof(float), quick ? 2 : 4);
  std::ostringstream source;
  source << "measured on one thread: fp32 FMA loop with " << kChains << " independent " << kWidth
         << "-float vector accumulators; std::copy of " << (bytes >> 20)
         << " MiB arrays (read + write bytes, best of " << (quick ? 2 : 4)
         << "); one dependent multiply-add chain (best of 3)"
         << (quick ? " — quick mode: arrays may fit the last-level cache" : "");
  peaks.source = source.str();
  return peaks;
}

// [SECTION] Host

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::size_t parse_size(const std::string& text) {  // "48K", "2048K", "260M"
  if (text.empty()) return 0;
  std::size_t value = 0;
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    value = value * 10 + (text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) value <<= 10;
  if (i < text.size() && text[i] == 'M') value <<= 20;
  if (i < text.size() && text[i] == 'G') value <<= 30;
  return value;
}

}  // namespace

HostInfo host_info() {
  HostInfo host;
  host.cpu = host_cpu_model();
  host.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::ostringstream caches;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = read_line(dir + "/level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "/type");
    if (type == "Instruction") continue;
    const std::string size = read_line(dir + "/size");
    if (caches.tellp() > 0) caches << ", ";
    caches << "L" << level << (type == "Data" ? "d" : "") << " " << size;
    host.llc_bytes = std::max(host.llc_bytes, parse_size(size));
  }
  host.caches = caches.str().empty() ? "unknown" : caches.str();
#if defined(__AVX512F__)
  host.vector_isa = "AVX-512 (16 floats per register)";
#elif defined(__AVX2__)
  host.vector_isa = "AVX2 (8 floats per register)";
#elif defined(__AVX__)
  host.vector_isa = "AVX (8 floats per register)";
#elif defined(__ARM_NEON)
  host.vector_isa = "NEON (4 floats per register)";
#else
  host.vector_isa = "SSE2 or scalar";
#endif
  return host;
}

std::string kernel_compiler() {
#if defined(__clang__)
  return std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown compiler";
#endif
}

std::string kernel_flags() {
#ifdef TILESCOPE_KERNEL_FLAGS
  return TILESCOPE_KERNEL_FLAGS;
#else
  return "unknown";
#endif
}

}  // namespace tilescope::kernels

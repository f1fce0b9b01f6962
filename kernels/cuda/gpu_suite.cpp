// The GPU bench's harness (gpu_suite.h): validate every version, then time it.
#include "kernels/cuda/gpu_suite.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_device.h"
#include "kernels/cuda/gpu_timing.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace tilescope::kernels {

using cuda::GpuError;

void add_comparison(Suite& s, int slower, int faster, const std::string& label) {
  Comparison c;
  c.label = label;
  c.slower = slower;
  c.faster = faster;
  s.info.comparisons.push_back(c);
}

namespace {
std::size_t non_finite_count(const std::vector<float>& values) {
  return static_cast<std::size_t>(
      std::count_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); }));
}

}  // namespace

std::string fmt(double v, int precision) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(precision) << v;
  return os.str();
}

void abort_if_context_lost(const std::string& what) {
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {
    throw GpuError("the GPU context is no longer usable (" + std::string(cudaGetErrorString(err)) +
                   ") after: " + what);
  }
}

SuiteResult run_suite(Suite& s, const GpuBenchOptions& options, std::ostream& log) {
  SuiteResult result = s.info;
  log << "suite " << result.name << ": " << result.problem << "\n" << std::flush;
  cuda::TimingOptions timing;
  timing.repeats = std::max(1, options.repeats);
  for (Variant& v : s.variants) {
    VersionResult r;
    r.version = v.version;
    r.name = v.name;
    r.changed = v.changed;
    r.source = v.source;
    r.bytes = v.bytes;
    std::string note = v.note;
    try {
      s.fresh_inputs(s.seed + static_cast<std::uint64_t>(v.version) * kSeedStride);
      const Reference ref = s.reference_output();
      if (s.out)
        s.out->poison();
      else
        s.poison_output();
      v.run();
      TS_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> got = s.out ? s.out->to_host() : s.read_output();
      const std::size_t non_finite = non_finite_count(got);
      double rel = relative_error(got.data(), ref.host.data(), got.size());
      bool ok = non_finite == 0 && rel <= v.tolerance;
      if (v.version == 0 && s.version0_is_library) {
        // Version 0 against itself says only that it wrote every element; its accuracy comes from
        // the float64 CPU spot check.
        rel = non_finite ? INFINITY : ref.spot_rel_error;
        ok = non_finite == 0 && ref.spot_rel_error <= v.tolerance;
        note += (note.empty() ? "" : "; ") +
                std::string("checked against float64 CPU dot products at ") +
                std::to_string(kSpotSamples) + " random outputs";
      }
      if (std::isfinite(rel)) r.rel_error = rel;
      r.verified = ok;
      if (!ok) {
        note += (note.empty() ? "" : "; ") + std::string("NOT TIMED: failed validation (") +
                (non_finite ? std::to_string(non_finite) + " outputs not finite/unwritten"
                            : "relative error " + fmt(rel, 8) + " > " + fmt(v.tolerance, 8)) +
                ")";
        log << "  v" << v.version << " " << v.name << ": FAILED validation — " << note << "\n";
      } else {
        const cuda::KernelTiming t = cuda::time_gpu(v.run, timing);
        r.timing = Timing{t.median_ms, t.min_ms, t.repeats};
        log << "  v" << v.version << " " << std::left << std::setw(28) << v.name << std::right
            << std::setw(10) << fmt(t.median_ms, 4) << " ms " << std::setw(10)
            << fmt(result.flops / (t.median_ms * 1e6), 1) << " GFLOP/s  rel_err " << fmt(rel, 9)
            << "\n";
      }
    } catch (const GpuError& e) {
      note += (note.empty() ? "" : "; ") + std::string("error: ") + e.what();
      log << "  v" << v.version << " " << v.name << ": ERROR — " << e.what() << "\n";
      abort_if_context_lost(result.name + " version " + std::to_string(v.version) + ": " +
                            e.what());
    }
    if (!note.empty()) r.note = note;
    log << std::flush;
    result.results.push_back(std::move(r));
  }
  derive_rates(result, s.version0_is_library ? 0 : 1, nullptr);
  for (const Comparison& c : result.comparisons)
    if (c.time_ratio) log << "  " << c.label << ": " << fmt(*c.time_ratio, 2) << "×\n";
  if (const int sm_clock = cuda::current_sm_clock_mhz(); sm_clock > 0)
    result.sm_clock_mhz_after = sm_clock;
  log << std::flush;
  return result;
}

}  // namespace tilescope::kernels

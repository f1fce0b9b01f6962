// The GPU bench's harness, shared by every suite file: a suite is its description, how to draw
// fresh inputs and the reference output, and its versions; run_suite checks each version against
// the reference on fresh inputs with its output poisoned, then times it with CUDA events.
// Plain C++ (no CUDA headers); used by gpu_bench.cpp and attention_bench.cpp.
#pragma once

#include "kernels/bench_types.h"
#include "kernels/cuda/gpu_bench_options.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/gemm_problem.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::kernels {

// Samples of the float64 CPU spot checks (GEMM outputs; attention rows use their own count).
inline constexpr int kSpotSamples = 256;
// Each version gets fresh inputs, drawn from the suite's seed + kSeedStride · version.
inline constexpr std::uint64_t kSeedStride = 7919;

struct Variant {
  Variant(int version_, std::string name_, std::string changed_, std::function<void()> run_,
          double tolerance_ = kGemmToleranceFp32, std::string source_ = "hand",
          std::string note_ = {})
      : version(version_),
        name(std::move(name_)),
        changed(std::move(changed_)),
        run(std::move(run_)),
        tolerance(tolerance_),
        source(std::move(source_)),
        note(std::move(note_)) {}
  int version = 0;
  std::string name;
  std::string changed;
  std::function<void()> run;
  double tolerance = kGemmToleranceFp32;
  std::string source = "hand";
  std::string note;
  std::optional<double> bytes;  // this version's compulsory traffic, when the suite counts it
};

// The reference output on the current inputs, and how far version 0 itself is from a float64 CPU
// computation at sampled outputs (so version 0 is checked too, independently).
struct Reference {
  std::vector<float> host;
  double spot_rel_error = 0.0;
};

// One suite: its description as it will appear in the report (name, problem, reference, FLOPs,
// bytes, comparisons, suite-specific details), how to make inputs and the reference, its versions.
// The output is `out` (fp32), or, for suites whose kernels write another type, `poison_output`
// and `read_output` (which returns it widened to fp32).
struct Suite {
  SuiteResult info;
  std::uint64_t seed = 0;
  const cuda::DeviceBuffer<float>* out = nullptr;
  std::function<void()> poison_output;
  std::function<std::vector<float>()> read_output;
  std::function<void(std::uint64_t seed)> fresh_inputs;
  std::function<Reference()> reference_output;
  bool version0_is_library = true;  // otherwise the reference is a CPU loop and pct is vs version 1
  std::vector<Variant> variants;
};

void add_comparison(Suite& s, int slower, int faster, const std::string& label);
std::string fmt(double v, int precision = 3);
// A kernel fault (illegal address, ...) leaves the context unusable: stop the whole run then.
void abort_if_context_lost(const std::string& what);
SuiteResult run_suite(Suite& s, const GpuBenchOptions& options, std::ostream& log);

}  // namespace tilescope::kernels

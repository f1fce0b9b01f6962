// The one description of a benchmark report (schema "tilescope-bench/1") that the CPU and the GPU
// bench both fill: the result types, the only to_json/from_json that spell the schema's field
// names, the timing summary both harnesses use, and the rates derived from it. Plain C++: no CUDA.
//
// Index: [SECTION] Timing summary · [SECTION] Verification · [SECTION] Report types ·
//        [SECTION] Derived rates · [SECTION] JSON · [SECTION] Host
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::kernels {

inline constexpr const char* kBenchSchema = "tilescope-bench/1";

// A request a bench runner cannot honour (an unknown suite, repeats < 1): the message says what
// and why. An invalid argument, so callers that only know the standard hierarchy can catch it.
class BenchError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The suites a request names, in the order named: "" or "all" is every suite in `all`'s order,
// otherwise a comma-separated list. Throws BenchError naming an unknown suite and listing the
// suites of this `kind` ("CPU", "GPU").
std::vector<std::string> select_suites(const std::string& request,
                                       const std::vector<std::string>& all,
                                       const std::string& kind);

// [SECTION] Timing summary

struct Timing {
  double median_ms = 0.0;
  double min_ms = 0.0;
  int repeats = 0;
};

// How many timed runs one measurement takes, on the CPU and on the GPU alike: `repeats` wanted,
// but once the timed runs add up to more than `budget_ms` the measurement stops early (a naive
// kernel would otherwise take minutes) — never below `min_repeats`, so the median has a middle.
struct RepeatRule {
  int repeats = 10;
  int min_repeats = 3;
  double budget_ms = 4000.0;
  // True when `taken` timed runs, together `spent_ms` long, are enough.
  bool enough(int taken, double spent_ms) const;
};

// Median (the mean of the middle two for an even count), minimum and count of the samples; throws
// std::invalid_argument when there are none.
Timing summarise_samples(std::vector<double> samples_ms);

// "2026-11-29T14:03:11Z": when a report was made.
std::string utc_timestamp();

// [SECTION] Verification

// ‖got − ref‖₂ / ‖ref‖₂ in double precision; +infinity when got holds a NaN or an infinity (a
// position never written over the poison) or when ref is all zeros and got is not.
double relative_error(const float* got, const float* ref, std::size_t count);
double relative_error(const double* got, const double* ref, std::size_t count);

// [SECTION] Report types

// One version of one suite: what it is, whether it matched the reference, and how fast it ran.
struct VersionResult {
  int version = 0;
  std::string name;
  std::string changed;                  // what changed since the previous version
  std::string source = "hand";          // "hand" or "generated" (by sim/schedule)
  std::optional<std::string> compiled;  // CPU: "aot" (with the library) or "jit" (at run time)
  std::optional<double> bytes;          // this version's compulsory traffic, when it is known
  std::optional<bool> multithreaded;    // CPU: versions 0–5 use one thread
  bool verified = false;
  std::optional<double> rel_error;  // against the reference; empty when not finite or never run
  std::optional<Timing> timing;     // only a verified version is timed
  // Filled by derive_rates() from the timing.
  std::optional<double> gflops, gbps, pct_of_peak, pct_of_reference;
  std::optional<std::string> note;
  // How a version compiled at run time was built (CPU JIT and generated schedules).
  std::optional<std::string> steps, jit_command, cache_key;
  std::optional<bool> cache_hit;
  std::optional<double> compile_seconds;
  // Fields this schema does not interpret, kept as read so a report survives a round trip.
  nlohmann::json details = nlohmann::json::object();
};

// "version `faster` vs version `slower`": the measured ratios next to the byte ratio.
struct Comparison {
  std::string label;
  int slower = 0, faster = 0;            // version numbers, the expected-slower one first
  std::optional<double> time_ratio;      // slower median / faster median
  std::optional<double> min_time_ratio;  // the same for the fastest runs
  std::optional<double> byte_ratio;      // slower bytes / faster bytes
};

struct SuiteResult {
  std::string name;
  std::optional<std::string> error;  // set up failed (GPU: out of memory): no problem, no results
  std::string problem;               // the computation and its shapes, in words
  std::string reference;             // what version outputs are checked against
  nlohmann::json sizes;              // CPU: {"M": 1024, ...}; null when not given
  double flops = 0.0;
  double min_bytes = 0.0;                 // compulsory traffic of the fused computation
  std::optional<std::string> bound;       // CPU: "compute" or "memory", which peak % of peak uses
  std::optional<double> tolerance;        // CPU: the suite's relative-error tolerance
  std::optional<int> rotations;           // CPU: input/output sets cycled through while timing
  std::optional<int> sm_clock_mhz_after;  // GPU: the SM clock once the suite ran
  std::vector<VersionResult> results;
  std::vector<Comparison> comparisons;
  nlohmann::json details = nlohmann::json::object();  // suite-specific fields, kept as read
};

struct HostDescription {
  std::string cpu;
  int cores = 0;  // hardware threads visible to the bench
  std::optional<std::string> caches, vector_isa, load_average_before, load_average_after;
};

struct PeakRates {
  double gflops_fp32 = 0.0;
  double gbps = 0.0;
};

struct BenchReport {
  std::string kind;  // "cpu" or "gpu"
  std::optional<std::string> date;
  std::optional<HostDescription> host;
  std::optional<nlohmann::json> device;  // GPU: cuda::describe_device()'s object, as it is
  std::optional<std::string> compiler, flags;
  std::optional<bool> quick;
  std::optional<PeakRates> peaks;
  std::optional<std::string> peaks_source;
  std::vector<SuiteResult> suites;
  nlohmann::json details = nlohmann::json::object();
};

// [SECTION] Derived rates

// What the timings imply, the same way for every suite: GFLOP/s and GB/s of each timed version
// (its own bytes when known, else the suite's min_bytes), % of the peak the suite's bound names
// (only when `peaks` is given), % of `reference_version`'s median, and each comparison's ratios.
void derive_rates(SuiteResult& suite, int reference_version, const PeakRates* peaks);

// Versions that were not verified (and so not timed), over all suites.
int unverified_count(const BenchReport& report);

// [SECTION] JSON

// A document that does not follow the schema; the message names the field and where it is
// ("suites[2].results[0] needs a boolean \"verified\"").
class BenchSchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void to_json(nlohmann::json& j, const VersionResult& r);
void to_json(nlohmann::json& j, const Comparison& c);
void to_json(nlohmann::json& j, const SuiteResult& s);
// A GPU report also carries each suite's comparisons under their first spelling, "ratios"
// ({what, slower, faster, speedup}), which lessons and scripts/gpu-run.sh query.
void to_json(nlohmann::json& j, const BenchReport& report);
// Throw BenchSchemaError. A GPU report recorded before "comparisons" existed is read from "ratios".
void from_json(const nlohmann::json& j, BenchReport& report);

// [SECTION] Host

// /proc/cpuinfo's "model name", or "unknown CPU".
std::string host_cpu_model();

}  // namespace tilescope::kernels

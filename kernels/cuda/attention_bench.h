// The attention suites of the GPU bench (issue #31): versions 1–6 of attention.h at the sizes
// the issue asks for, each checked against the fp32 reference (itself spot-checked in float64),
// and PyTorch's scaled_dot_product_attention backends, measured by scripts/sdpa_reference.py in
// the same call, folded in beside them. Plain C++.
#pragma once

#include "kernels/bench_types.h"
#include "kernels/cuda/gpu_bench_options.h"
#include "kernels/cuda/attention.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::kernels {

// "attention", "attention_causal", "attention_1024", ...: in the order the bench runs them.
std::vector<std::string> attention_suites();
// The problem of a suite name (quick: B=1, H=4, N/8), or nothing when `name` is not one.
std::optional<cuda::AttentionShape> attention_suite_shape(const std::string& name, bool quick);
// {"attention": {"batch": 4, "heads": 16, "n": 4096, "d": 128, "causal": false, "dtype":
// "fp16"}, ...}: what scripts/sdpa_reference.py measures, so both sides time the same problems.
nlohmann::json attention_shapes_json(bool quick);

SuiteResult suite_attention(const std::string& name, const GpuBenchOptions& options,
                            std::ostream& log);

// The child of an ncu run: one warm-up and one launch of `version` between cudaProfilerStart and
// Stop (ncu --profile-from-start off), then the output checked against the fp32 reference.
// Returns 0 when it matched, 1 for a bad request, 2 for a GPU error, 3 for a wrong output.
int profile_attention_one(const std::string& suite, int version, std::ostream& log);

// Adds each PyTorch backend the script measured for a suite as a version (11 + its index in the
// script's backend list, source "pytorch"), with a comparison "best own version vs fastest
// backend", and re-derives the suite's rates. Unknown suites in the file are ignored; the file's
// torch version and device go into the report's details. Throws std::runtime_error on a file
// that is not the script's output.
void fold_sdpa_results(BenchReport& report, const nlohmann::json& sdpa);

}  // namespace tilescope::kernels

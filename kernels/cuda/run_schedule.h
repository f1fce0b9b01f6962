// `tilescope-cli run --gpu FILE --apply "…"`, the GPU half: the current kernel of a model file
// after the steps, generated as CUDA (emit_cuda), compiled by NVRTC, checked against the graph's
// reference evaluator on random inputs, timed, and timed beside cuBLAS when the kernel holds a
// matrix product. Plain C++ header: no CUDA includes.
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace tilescope::kernels {

// Returns {"kernel", "steps", "source", "launch", "registers", "verified", "rel_error",
// "median_ms", "min_ms", "gflops", "cublas": {...} or null, "device"}. Throws std::runtime_error
// (a schedule refusal, an unsupported kernel, NVRTC's log, a CUDA failure) with the reason.
nlohmann::json run_schedule_on_gpu(const std::string& model_text, const std::string& where,
                                   const std::string& steps, int repeats, std::ostream& log);

}  // namespace tilescope::kernels

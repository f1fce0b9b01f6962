// Predicted time of one GPU kernel, not only its bound. The roofline says a kernel takes at least
// max(FLOPs / peak, DRAM bytes / bandwidth); a kernel is slower when something else inside the SM
// runs out first. This model asks each unit the kernel keeps busy how long the kernel's work takes
// it, and names the slowest:
//
//   issue       each of an SM's warp schedulers issues one warp instruction a cycle: the FFMAs
//               (FMAs / 32) plus the memory instructions the trace counts, over the busy SMs
//   tensor      tensor-core FLOPs over the machine's peak for the dtype
//   data stage  the L1/shared-memory data stage moves one wavefront a cycle per SM: one per
//               shared-memory bank pass, one per 128-byte line a global access touches
//   L2          L2 bytes over the L2's bandwidth (when the machine file gives one)
//   DRAM        DRAM bytes over what the resident warps' loads in flight draw: Little's law with
//               a warp's whole round and the memory's queue, under the memory's bandwidth
//               (parallelism.h's predicted_bandwidth)
//
// The SM-local terms (issue, tensor, data stage) are per SM, so they scale with the busiest SM's
// share of the blocks (ceil(blocks / SMs) against blocks / SMs: the tail). The clock is the
// machine's: Nsight Compute measured the H100 at 1.96-2.05 GHz through every SGEMM (1.98 GHz
// nominal), and tensor-core kernels at 1.75-1.85 GHz.
// The prediction is the largest term — the units work in parallel, and the slowest sets the pace
// — with one exception: the SM's issue and its data stage overlap only in part. A warp that waits
// for a shared-memory load cannot issue the FMAs that use it, so while one unit is busy the other
// idles part of the time: their time is the longer plus half the shorter (kPipeOverlap). That
// half is measured, not derived: fitted once on Nsight Compute's H100 recording
// (assets/recorded/gpu-h100-counters-2026-12-05.json, SGEMM 1-8, where the cycles lie between the
// longer and the sum) and checked on the H200's (tests/predict/test_time_model.cpp).
// What the model leaves out — instructions the trace does not count (address arithmetic, loop
// control), latency a block's own barriers expose, launch overhead — shows as the measured time
// above it; docs/time-model.md lists each kernel's error and its cause.
#pragma once

#include "sim/predict/machine.h"
#include "sim/predict/occupancy.h"
#include "sim/schedule/kernel.h"
#include "sim/schedule/trace.h"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace tilescope::predict {

// The share of the shorter of issue and data-stage time hidden under the longer.
inline constexpr double kPipeOverlap = 0.5;

// What one kernel launch does, whole grid.
struct KernelWork {
  std::string name;
  double fp32_fmas = 0;                 // scalar FMAs on the CUDA cores
  double tensor_flops = 0;              // FLOPs on the tensor cores
  std::string tensor_dtype = "fp16";    // the peak they run at (Machine::peak(dtype, "tensor"))
  double memory_instructions = 0;       // warp instructions: global and shared loads and stores
  double data_stage_wavefronts = 0;     // L1/shared data-stage passes (global lines + shared)
  double l2_bytes = 0;                  // read + written between L1 and L2
  double dram_bytes = 0;                // read + written at DRAM
  int64_t blocks = 0;                   // the grid
  KernelResources resources;            // threads, registers, shared memory of one block
  double loads_in_flight_per_warp = 0;  // global loads a warp issues before it waits on one
  double bytes_per_load = 0;            // bytes one such warp load brings
};

struct TimeTerm {
  std::string name;    // "issue", "tensor", "data stage", "L2", "DRAM"
  double seconds = 0;  // this unit alone
  std::string why;     // "2.15 G warp instructions / (132 SMs × 4 per cycle × 1.75 GHz)"
};

struct TimePrediction {
  std::string error;            // why no prediction ("" when there is one)
  double seconds = 0;           // the largest term
  std::string limiter;          // its name
  std::string summary;          // "issue-bound: 2.15 G warp instructions …"
  std::vector<TimeTerm> terms;  // every unit the kernel uses, in the order above
  double bound_seconds = 0;     // the roofline: max(FLOPs / peak, DRAM bytes / bandwidth)
  double clock_hz = 0;          // the clock the SM terms used
  Occupancy occupancy;
  Waves waves;
  double tail_factor = 1;  // busiest SM's blocks / mean blocks per SM
};

// The prediction for `w` on GPU machine `m`. Never throws: a machine without per-SM limits or a
// block that cannot run gives `error`.
TimePrediction predict_time(const Machine& m, const KernelWork& w);
// Several launches one after another (a GEMM, then bias, then ReLU): times add; the limiter is the
// longest launch's.
TimePrediction predict_time(const Machine& m, const std::vector<KernelWork>& launches);

// A schedule's loads in flight per warp, for the DRAM term's Little's law: the global loads a warp
// issues in one iteration of its serial loops (unrolled and vectorized loops count as one
// iteration: their loads go out together), at least 1, from the kernel's GPU trace. A loop the
// schedule leaves serial is counted as written, one iteration's loads at a time — the pessimistic
// end, since a compiler often unrolls a short loop by 4 on its own.
struct ScheduleLoads {
  double per_warp = 0;        // loads in flight per warp
  double bytes_per_load = 0;  // sectors a load instruction touches × 32
};
ScheduleLoads schedule_loads(const schedule::Kernel& k, const schedule::TraceSummary& t,
                             int64_t warps, uint32_t sector_bytes = 32);

// {seconds, limiter, summary, bound_seconds, clock_hz, tail_factor, terms: [{name, seconds,
// why}], occupancy}.
nlohmann::json time_prediction_json(const TimePrediction& p);

}  // namespace tilescope::predict

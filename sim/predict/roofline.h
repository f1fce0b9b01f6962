// Roofline prediction of a kernel on a machine: compute time at peak beside the time each memory
// level needs to move its bytes at its bandwidth; the largest names the binding level.
#pragma once

#include "sim/predict/access_pattern.h"
#include "sim/predict/analytic.h"
#include "sim/predict/machine.h"

#include <string>
#include <vector>

namespace tilescope::predict {

// Bytes each level serves to the one above it: index 0 = L1 → core (element accesses × size),
// index k = level k → level k-1 (fills of level k-1), the last = main memory (last cache level's
// fills plus write-backs).
struct LevelBytes {
  std::vector<std::string> names;  // "L1", "L2", …, memory name
  std::vector<double> bytes;
  // Of `bytes`, the line fills that strided (not prefetchable) moves asked for, per level; empty
  // when the access pattern is not known. Charged at the machine's `strided_line` time.
  std::vector<double> strided_bytes = {};
  std::vector<uint32_t> line_bytes = {};  // the size of the lines each level serves (64 when unknown)
};

struct RooflineBound {
  std::string name;  // "compute", "L1", "L2", "DRAM"
  double seconds = 0;
  bool known = true;  // false when the machine gives no bandwidth / peak for it
  Term term;          // "t(L2) = bytes / bandwidth = …"
};

struct Roofline {
  std::vector<RooflineBound> bounds;  // compute first, then levels closest to the core first
  std::string binding;                // name of the largest known bound
  double seconds = 0;                 // its time
  std::vector<std::string> notes;     // bounds that could not be computed and why
  std::string summary() const;        // "0.52 ms, bound by DRAM (…)"
};

// A serial sum: when a CPU kernel's innermost loop is a reduction loop that is not vectorised,
// every multiply-add waits for the previous one into the same accumulator, so the kernel takes
// at least `steps` × the machine's dependent multiply-add latency, whatever the bandwidths.
struct ReductionChain {
  double steps = 0;  // multiply-adds in dependent order (0: the innermost loop is not a chain)
  std::string loop;  // the innermost reduction loop
};
ReductionChain reduction_chain(const schedule::Kernel& k);

// The share of a GPU's SMs a kernel gives work to: its blocks over the SMs, at most 1. A kernel
// of 16 blocks keeps 16 of 132 SMs busy, so its compute bound is the peak of those 16 (lesson 11's
// small-batch ceiling; split_k lifts it). 1 on a CPU machine and for a kernel that binds no loop
// to blocks yet: its launch is not decided. Resident blocks, occupancy and latency are not
// modelled here.
double busy_core_share(const schedule::Kernel& k, const Machine& m);
// A program's share: its flops over the flops each kernel could do at its own share,
// Σ flops / Σ (flops_k / share_k), so the compute bound is the sum of the kernels' bounds.
double busy_core_share(const std::vector<double>& flops, const std::vector<double>& shares);

// `peak_dtype`: "fp32" usually. The unit is simd on CPUs, simt on GPUs (tensor when asked).
// `chain` adds a "dependence" bound when the machine states `dependent_fma`. `core_share`
// (busy_core_share) divides the peak: below 1 the compute term says how many SMs have work.
Roofline roofline(const Machine& m, double flops, const LevelBytes& traffic,
                  const std::string& peak_dtype = "fp32", const std::string& peak_unit = "",
                  const ReductionChain& chain = {}, double core_share = 1.0);

// Level bytes from the analytic model (each access at its tensor's element size).
LevelBytes level_bytes(const Machine& m, const AnalyticResult& a);
// Level bytes from a simulated hierarchy (its counters).
LevelBytes level_bytes(const Machine& m, const memory::Hierarchy& h);
// The same, with every tensor's line fills split by its access pattern: the strided share of its
// moves (AccessPatternSink, fed the same trace) goes to `strided_bytes`.
LevelBytes level_bytes(const Machine& m, const memory::Hierarchy& h,
                       const AccessPatternSink& pattern);

}  // namespace tilescope::predict

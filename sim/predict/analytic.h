// Analytic traffic model of a scheduled CPU loop nest: per cache level and per tensor, the lines
// missed, derived from tile footprints and reuse (kerncraft's layer conditions, set-aware).
//
// The model. Number the kernel's loops 0 (outermost) … n-1. D_T(d) is the number of distinct
// lines tensor T touches while loops d..n-1 run once (outer loops at their first iteration),
// counted exactly from T's affine index and the trace layout's addresses. A level holds T's data
// across the iterations of loop d-1 when, in every cache set T's lines use, the lines of all
// tensors touched by one run of loops d..n-1 are at most the level's ways (LRU keeps a line whose
// set sees at most `ways` distinct lines between two uses). Let p_T be the outermost such depth.
// Then T misses
//     misses_T = D_T(p_T - 1) × n_0 × n_1 × … × n_(p_T - 2)
// (D_T(0) when p_T = 0: only first touches miss). Every number carries its formula and the
// values of its symbols so a learner can see why.
//
// Assumptions (docs/analytic-model.md): LRU; every phase's accesses are placed in the full loop
// nest (distinct lines do not depend on the order inside one run of the fitting loops); staged
// tiles are not modelled (the result says so); levels are modelled independently (each as if it
// saw the whole access stream), which is exact for LRU levels whose line sizes agree when tiles
// fit and an approximation otherwise; write-backs equal the output lines missed. An accumulator
// tile on the stack (schedule::accumulator_home) is one more tensor, "acc (stack)", at the trace
// layout's address: Init writes it, Reduce reads and writes it, the epilogue reads it.
#pragma once

#include "sim/memory/hierarchy.h"
#include "sim/schedule/kernel.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::predict {

// A number with the formula that produced it and the values of the formula's symbols.
struct Term {
  std::string name;  // "misses(L1, B)"
  double value = 0;
  std::string formula;                                  // "D_B(j) × n_i"
  std::vector<std::pair<std::string, double>> symbols;  // {"D_B(j)", 4096}, {"n_i", 256}
  std::string to_string() const;  // "misses(L1, B) = D_B(j) × n_i = 4096 × 256 = 1048576"
};

struct TensorTraffic {
  int tensor = -1;  // index into Kernel::tensors
  int graph_id = -1;
  std::string name;
  bool output = false;
  int reuse_depth = 0;  // p_T: loops from here inward keep T resident across loop p_T - 1
  Term misses;          // lines
};

struct LevelTraffic {
  std::string name;
  uint32_t line_bytes = 64;
  uint64_t lines = 0, ways = 0, sets = 0;
  std::vector<TensorTraffic> tensors;
  Term misses;      // Σ over tensors
  Term writebacks;  // output lines missed (each dirty line leaves once)
  Term fill_bytes;  // misses × line: bytes this level takes from the one below
};

struct AnalyticResult {
  std::string kernel;
  Term accesses;  // element accesses of the loop nest (reads + writes)
  Term reads, writes;
  double access_bytes = 0;  // those accesses' bytes, each at its tensor's dtype (fp32 accumulators)
  std::vector<LevelTraffic> levels;  // as HierarchyConfig::levels
  Term memory_read_bytes;            // last level's misses × line
  Term memory_write_bytes;           // last level's write-backs × line
  std::vector<std::string> notes;    // where the model is approximate for this kernel
};

struct AnalyticOptions {
  uint64_t alignment = 4096;                    // as schedule::TraceOptions::alignment
  uint64_t max_enumerated = uint64_t{1} << 27;  // index points enumerated per tensor footprint
  int16_t acc_tensor = -1;      // graph_id given to a stack accumulator's traffic (TraceOptions's)
  int16_t scratch_tensor = -1;  // given to a transform-made tensor's (TraceOptions's)
};

// Throws std::invalid_argument naming the kernel when the nest is too large to enumerate.
AnalyticResult analyze_kernel(const schedule::Kernel& k, const memory::HierarchyConfig& h,
                              const AnalyticOptions& o = {});

}  // namespace tilescope::predict

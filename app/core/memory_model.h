// What the Memory view explains beside the simulated counters: the analytic model's formula for a
// clicked number ("why this number"), and the working set of the current schedule's tiles against
// each cache level's capacity (recomputed per schedule, without simulating).
//
// Pure C++ (no ImGui): tests check both against hand counts.
#pragma once

#include "app/core/workbench.h"
#include "sim/predict/analytic.h"
#include "sim/schedule/kernel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// [SECTION] Working set

// The box of one tensor touched while loops `depth`.. run once (outer loops at iteration 0).
struct TensorTile {
  int tensor = -1;  // index into Kernel::tensors
  std::string name;
  std::vector<int64_t> extents;  // elements per dim of the bounding box of every access
  int64_t bytes = 0;             // elements × element size
};

struct WorkingSet {
  size_t depth = 0;  // loops depth.. run once; depth == loops.size(): one iteration
  std::string loop;  // name of loop `depth`, "" for one iteration of the innermost loop
  int64_t bytes = 0;
  std::vector<TensorTile> tiles;  // in kernel tensor order; tensors not touched are left out
};

// One entry per depth 0..loops.size(). Every tensor the kernel's phases load or store counts
// (inlined producers' inputs included); accumulators do not (registers or a stack tile).
std::vector<WorkingSet> working_sets(const schedule::Kernel& k);

// The depth whose run is "one tile": just inside the innermost loop that has a split partner
// further in (an outer tile loop such as i.o); 0 when the kernel is not tiled.
size_t tile_depth(const schedule::Kernel& k);

// [SECTION] Why this number

// One simulated number beside the analytic model's term for it.
struct FormulaRow {
  std::string what;  // "misses", "bytes read", ...
  double simulated = 0;
  std::optional<predict::Term> analytic;  // empty when the model has no term for it
  std::string missing;                  // why `analytic` is empty
};

struct FormulaView {
  std::string title;  // "L1 misses of B"
  std::vector<FormulaRow> rows;
  std::string not_covered;         // the whole kernel is outside the analytic model: why
  std::vector<std::string> notes;  // the model's approximations for this kernel
};

// The popup for a target: "LEVEL" (a cache level's misses, or main memory's bytes) or
// "LEVEL TENSOR". Throws std::invalid_argument naming the unknown level or tensor.
FormulaView memory_formula(const MemoryResult& r, std::string_view target);

// (analytic - simulated) / simulated; 0 when both are 0, infinity when only the simulation is 0.
double relative_difference(double simulated, double analytic);

// `memory formula TARGET` opens the popup for TARGET, `memory formula off` closes it. Returns ""
// or why the target names no level / tensor of the current machine and kernel.
std::string workbench_memory_formula(Workbench& wb, const std::string& target);

}  // namespace tilescope::core

// Derives a kernel's loop tree (loops, tail guards, stage copies, barriers, statements) from its
// schedule, and checks that the schedule is legal on a target. Every consumer walks this tree:
// the pseudo-code printer, the interpreter, the C++ and CUDA generators and the trace walker.
#pragma once

#include "sim/schedule/kernel.h"

#include <optional>
#include <string>
#include <vector>

namespace tilescope::schedule {

struct Node {
  enum class Kind { Loop, If, Stmt, Stage, Barrier, AccDecl };
  Kind kind = Kind::Stmt;
  int loop = -1;                 // Loop: index into Kernel::loops
  std::vector<TailGuard> conds;  // If: all must hold
  int phase = -1;                // Stmt
  int stage = -1;                // Stage: index into LoweredKernel::stages
  std::vector<Node> children;
};

// One place where a StageSpec's tile is loaded: the copy at the start of each iteration of `at`.
struct StagePlacement {
  int spec = -1;    // index into Kernel::stages
  int tensor = -1;  // Kernel::tensors index (or Kernel::computed when computed)
  bool computed = false;
  MemLevel level = MemLevel::Shared;
  std::string buffer;
  int at = -1;                   // loop index
  int phase = -1;                // -1: shared by all phases (at is before the first reduction loop)
  std::vector<int> inner_loops;  // loops below `at` whose iterations the tile covers
  std::vector<Affine> base;      // per dim, over loops at or above `at`: the tile's corner
  std::vector<int64_t> extents;  // per dim
  std::vector<int64_t> strides;  // dense strides of the buffer (with padding)
  int64_t elems = 0;             // buffer elements including padding
  int source = -1;            // enclosing placement of the same tensor the copy reads from, or -1
  int64_t executions = 0;     // how many times the copy runs (product of enclosing extents)
  int64_t footprint = 0;      // elements in one tile (without padding)
  int64_t uses_per_copy = 0;  // reads of the tile between two copies (all statements)
  int64_t bytes() const { return elems * 4; }
};

struct LoweredPhase {
  Phase phase;             // value and out_index over loop names; loads resolved to stages
  std::vector<int> loops;  // the inner loops this phase iterates (after region_start)
};

struct LoweredKernel {
  Kernel kernel;
  int region_start = 0;        // index of the first reduction loop (loops.size() when none)
  std::vector<int> acc_loops;  // spatial loops after region_start: the accumulator's dims
  std::vector<LoweredPhase> phases;
  std::vector<StagePlacement> stages;
  std::vector<Node> body;

  // Row-major offset into the accumulator; loops for which `drop` is true are left out (CUDA keeps
  // one accumulator per thread, so thread-bound loops do not index it).
  template <class Drop>
  Affine acc_index(Drop drop) const {
    std::vector<std::pair<std::string, int64_t>> terms;
    int64_t stride = 1;
    for (auto it = acc_loops.rbegin(); it != acc_loops.rend(); ++it) {
      if (drop(*it)) continue;
      terms.emplace_back(kernel.loops[size_t(*it)].name, stride);
      stride *= kernel.loops[size_t(*it)].extent;
    }
    Affine a;  // outermost first, as a reader expects
    for (auto it = terms.rbegin(); it != terms.rend(); ++it)
      a += Affine::var(it->first, it->second);
    return a;
  }
  template <class Drop>
  int64_t acc_elems(Drop drop) const {
    int64_t n = 1;
    for (int l : acc_loops)
      if (!drop(l)) n *= kernel.loops[size_t(l)].extent;
    return n;
  }
};

// Throws ScheduleError when the schedule cannot be laid out (a stage at a loop that does not
// surround the tensor's use, two different access patterns of one staged tensor).
LoweredKernel build_loop_tree(const Kernel& k);

// The learner-facing reason the schedule is illegal on `target`, or nullopt when it is legal.
std::optional<std::string> check_kernel(const Kernel& k, const Target& target);

// Lowers an axis-space expression to loop space: substitutes axis values, leaves loads unresolved.
VExpr to_loop_space(const Kernel& k, const VExpr& e);

// Bytes of the accumulator one worker (CPU thread / GPU thread) keeps.
int64_t accumulator_bytes(const LoweredKernel& lk, bool gpu);

// Which dims of a load (axis-space index) can fall outside the tensor: those need a bounds check.
std::vector<bool> dims_needing_check(const Kernel& k, const std::vector<Affine>& axis_index,
                                     const graph::Shape& shape);

// Minimum and maximum of an expression over loop ranges [0, extent).
std::pair<int64_t, int64_t> loop_range(const Kernel& k, const Affine& e);

}  // namespace tilescope::schedule

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

// Where a kernel's accumulators live: the one rule emit_cpp, the trace walker and the analytic
// model share. A GPU thread's accumulators are registers (emit_cuda unrolls register tiles). On
// the CPU, up to kRegisterAccumulatorElems floats per worker (all accumulators together) are
// scalars in registers: emit_cpp unrolls the accumulator's loops so every reference has a
// constant index and names a scalar. Why 16: x86-64 has 16 vector registers
// (Target::cpu_vector_registers) and the operands need some too; 16 floats are 4 SSE or 2 AVX
// vectors, and GCC 12 at -O2 keeps a 4×4 and a 1×16 tile of scalars with no floating-point spill
// (checked with objdump). Emitted as an array, even 16 floats stay on the stack. A larger
// accumulator, or one with a parallel loop among its dims (its index is not a constant), is a
// local array: on the stack, 64-byte aligned so it covers whole cache lines, and every read and
// write of it is a memory access the trace reports against a buffer of its own.
inline constexpr int64_t kRegisterAccumulatorElems = 16;

struct AccumulatorHome {
  bool registers = true;      // false: a local (stack) buffer whose accesses are traced
  int64_t elems_per_acc = 1;  // elements of one accumulator per worker
  int num_accs = 0;           // accumulators of the kernel (slots)
  int64_t elems() const { return elems_per_acc * num_accs; }
  int64_t bytes() const { return elems() * 4; }
};
AccumulatorHome accumulator_home(const Kernel& k, bool gpu);
inline constexpr const char* kAccumulatorBufferName = "acc (stack)";

// Which dims of a load (axis-space index) can fall outside the tensor: those need a bounds check.
std::vector<bool> dims_needing_check(const Kernel& k, const std::vector<Affine>& axis_index,
                                     const graph::Shape& shape);

// Minimum and maximum of an expression over loop ranges [0, extent).
std::pair<int64_t, int64_t> loop_range(const Kernel& k, const Affine& e);

}  // namespace tilescope::schedule

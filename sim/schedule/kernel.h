// The schedule IR: a Program of Kernels, each a computation (axes, phases, value expressions) plus
// how it is scheduled (loop order and splits, loop kinds, staged tiles, block order).
//
// A Kernel says *what* it computes in terms of its iteration axes (MatMul: i, j spatial, k
// reduction) and *how* as plain data: the current loop list (outermost first) with each axis
// expressed as an affine combination of loops, tail guards, and stages. The loop tree that
// printers, the interpreter, the code generators and the trace walker consume is derived from it by
// build_loop_tree() (loop_tree.h), the way TVM lowers a schedule: loops before the first reduction
// loop are shared; inside, each phase (accumulator init, reduction update, epilogue) gets its own
// copy of the loops it needs. That derivation is what keeps every reorder semantically legal by
// construction.
#pragma once

#include "sim/graph/graph.h"
#include "sim/io/format.h"
#include "sim/schedule/affine.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilescope::schedule {

// Bad input to the schedule layer (a step that does not parse, an unknown name, an op with no
// lowering): the message says what and where.
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// [SECTION] Targets

// Capacities the legality checks use. Defaults: an H200-class GPU and a recent x86 core.
struct Target {
  int64_t smem_bytes_per_block = 227 * 1024;  // opt-in maximum per block
  int64_t smem_bytes_per_sm = 228 * 1024;
  int64_t max_threads_per_block = 1024;
  int64_t max_grid_yz = 65535;
  int64_t register_bytes_per_thread = 255 * 4;  // 255 32-bit registers
  int64_t warp_size = 32;
  int64_t smem_banks = 32;
  int64_t sm_count = 132;  // blocks in the first wave (one per SM) for block-order comparisons
  int64_t cpu_l1_bytes = 48 * 1024;  // a scratchpad stage must fit here
  // A GPU machine's L1 of one SM (its first cache level); 0 on a CPU machine and in the defaults.
  // Explanations compare a loop's working set with this one, else with cpu_l1_bytes.
  int64_t gpu_l1_bytes = 0;
  std::string machine = {};       // the machine's name, for explanations ("" = the defaults above)
  int64_t cpu_vector_bytes = 32;  // AVX2: 8 fp32 lanes
  int64_t cpu_vector_registers = 16;
  int64_t max_accumulator_bytes = 64 * 1024;  // per thread / per CPU worker
  int64_t max_unroll = 64;
  int64_t max_vector_lanes = 64;
};

// [SECTION] Value expressions

enum class UnaryOp { Neg, ReLU, GELU, Sigmoid, Tanh, Exp, Log, Sqrt, Rsqrt, Square };
// ReluMask(a, b) = b > 0 ? a : 0. FillAbove(a, b) = b > 0 ? fill : a, with fill in VExpr::value
// (a causal mask: b is an Index, column minus row).
enum class BinaryOp { Add, Sub, Mul, Div, Max, Min, ReluMask, FillAbove };
const char* unary_name(UnaryOp);
const char* binary_name(BinaryOp);

struct VExpr {
  // Index: the integer value of index[0], an affine expression of the axes (of the loops once
  // lowered); it reads no memory. A causal mask compares column and row with it.
  enum class Kind { Const, Load, Acc, Unary, Binary, Index };
  Kind kind = Kind::Const;
  double value = 0;       // Const; Binary FillAbove: the fill value
  int tensor = -1;        // Load: index into Kernel::tensors (or Kernel::computed when computed)
  bool computed = false;  // Load of a computed (inlined) tensor
  std::vector<Affine> index;  // Load: one per tensor dim, over axis names
  bool checked = false;       // Load: out-of-range indices read pad_value (conv/pool padding)
  double pad_value = 0;
  int acc = -1;  // Acc: accumulator slot
  UnaryOp uop = UnaryOp::Neg;
  BinaryOp bop = BinaryOp::Add;
  std::vector<VExpr> args;
  // Set by build_loop_tree() only (index is then over loop names): the stage placement whose buffer
  // this load reads, and the index inside that buffer.
  int stage = -1;
  std::vector<Affine> buffer_index;
  std::vector<bool> check_dims;  // per dim: the index can leave the tensor (needs a bounds check)

  static VExpr constant(double v);
  static VExpr load(int tensor, std::vector<Affine> index);
  static VExpr accumulator(int slot);
  static VExpr unary(UnaryOp op, VExpr a);
  static VExpr binary(BinaryOp op, VExpr a, VExpr b);
  static VExpr index_value(Affine a);
  // `fill` where `above` > 0, else `a`.
  static VExpr fill_above(VExpr a, Affine above, double fill);
};

// [SECTION] Tensors of a kernel

enum class TensorRole { Input, Output };

struct KernelTensor {
  graph::TensorId id = -1;  // -1: a scratch tensor a transform created (im2col's unfolded matrix)
  std::string name;
  TensorRole role = TensorRole::Input;
  graph::Shape shape;
  std::vector<int64_t> strides;  // elements
  graph::DType dtype = graph::DType::F32;
  graph::Layout layout = graph::Layout::RowMajor;
  std::vector<int64_t> pad;  // per dim: extra elements in that dim's pitch (bank-conflict padding)
  int64_t numel() const;
  int64_t alloc_elems() const;  // elements the buffer spans (max offset + 1)
  int64_t bytes() const { return numel() * graph::dtype_size(dtype); }
  uint32_t elem_bytes() const { return uint32_t(graph::dtype_size(dtype)); }
  // The bytes its buffer spans at its dtype (at least one element): what a trace lays out.
  uint64_t buffer_bytes() const {
    return uint64_t(alloc_elems() > 1 ? alloc_elems() : 1) * elem_bytes();
  }
};

// An elementwise producer folded into its consumer by compute_at: it has no buffer; a load of it
// evaluates `definition` at the index (its dims are the variables def_var(0), def_var(1), ...).
// "$0", "$1", ...: cannot clash with loop names, which are identifiers with dots.
inline std::string def_var(size_t d) {
  return "$" + std::to_string(d);
}

struct ComputedTensor {
  graph::TensorId id = -1;
  std::string name;
  std::string op_name;
  graph::Shape shape;
  graph::DType dtype = graph::DType::F32;  // a tile of it, staged, holds elements of this size
  VExpr definition;
};

// [SECTION] Computation

struct Axis {
  std::string name;
  int64_t extent = 1;
  bool reduce = false;
};

enum class PhaseKind { Init, Reduce, Map };
// OnlineSum: the online softmax's sum of exp(x - running max) in one pass over x. It keeps the
// running maximum in a second slot (Phase::max_acc) and rescales what it has summed whenever the
// maximum grows (online_sum_update); the two-pass form reads x once for the maximum, once for
// the sum.
enum class ReduceOp { Sum, Max, OnlineSum };

// One statement of the kernel. Init and Reduce write an accumulator (one value per iteration of the
// spatial loops below the first reduction loop); Map stores `value` into a tensor.
struct Phase {
  PhaseKind kind = PhaseKind::Map;
  int acc = -1;
  ReduceOp op = ReduceOp::Sum;
  int max_acc = -1;  // OnlineSum: the running maximum's slot, updated with `acc`
  VExpr value;
  bool over_reduce_axes = false;  // Map: also iterates the reduction axes (softmax's output pass)
  int out_tensor = -1;
  std::vector<Affine> out_index;  // over axis names
};

// The accumulator slots a phase writes: Init and Reduce their `acc`, OnlineSum its maximum too
// (each also read first by Reduce); Map none. A fixed array: the trace asks per statement.
struct SlotList {
  int slot[2] = {-1, -1};
  int count = 0;
  const int* begin() const { return slot; }
  const int* end() const { return slot + count; }
  size_t size() const { return size_t(count); }
};
inline SlotList written_slots(const Phase& p) {
  if (p.kind == PhaseKind::Map) return {};
  if (p.kind == PhaseKind::Reduce && p.op == ReduceOp::OnlineSum) return {{p.acc, p.max_acc}, 2};
  return {{p.acc, -1}, 1};
}

// One step of the online softmax: `sum` holds the sum of exp(x' - max) over the x' seen so far.
// A new maximum rescales that sum by exp(old - new); -infinity (a masked score) adds nothing.
inline void online_sum_update(float& max, float& sum, float x) {
  if (x > max) {
    sum = sum * std::exp(max - x) + 1.0f;
    max = x;
  } else if (x > -std::numeric_limits<float>::infinity()) {
    sum += std::exp(x - max);
  }
}

// [SECTION] Schedule

enum class LoopKind {
  Serial,
  Parallel,  // CPU threads
  Unrolled,
  Vectorized,
  BlockX,
  BlockY,
  BlockZ,
  ThreadX,
  ThreadY,
  ThreadZ
};
const char* loop_kind_name(
    LoopKind);  // "serial", "parallel", "unrolled", "vectorized", "block.x" ...
bool is_block(LoopKind);
bool is_thread(LoopKind);

struct Loop {
  std::string name;
  int64_t extent = 1;
  LoopKind kind = LoopKind::Serial;
  bool reduce = false;
  int axis = -1;
};

// Iterations where `expr < bound` fails are skipped: the partial last tile of a split.
struct TailGuard {
  Affine expr;  // over loop names
  int64_t bound = 0;
};

enum class MemLevel { Global, Shared, Scratchpad, Registers };
const char* mem_level_name(MemLevel);  // "global", "shared", "scratchpad", "registers"

struct StageSpec {
  int tensor = -1;  // index into Kernel::tensors, or Kernel::computed when computed
  bool computed = false;
  MemLevel level = MemLevel::Shared;
  std::string at;  // loop name: the tile is (re)loaded at the start of each iteration of this loop
  bool double_buffer = false;
  std::string buffer;        // "x_shared"
  std::vector<int64_t> pad;  // per dim of the buffer
};

enum class BlockOrder { RowMajor, Grouped };

struct Kernel {
  std::string name;
  std::vector<std::string> op_names;
  std::vector<graph::OpId> ops;
  std::string summary;  // "y[64,512] = relu(x @ W.T + b)"

  std::vector<KernelTensor>
      tensors;  // inputs first, then outputs: the generated code's argument order
  std::vector<ComputedTensor> computed;
  std::vector<Axis> axes;
  int num_accs = 0;
  std::vector<Phase> phases;

  std::vector<Loop> loops;         // outermost first
  std::vector<Affine> axis_value;  // per axis, over loop names
  std::vector<TailGuard> guards;
  std::vector<StageSpec> stages;
  BlockOrder block_order = BlockOrder::RowMajor;
  int64_t group = 8;
  // The kernel's floating-point operations when a transform made work that no op of `ops`
  // describes, or took an op's work away: im2col's copy (0), split_k's sum of partials. -1: the
  // graph's cost of `ops`.
  int64_t flops = -1;

  int find_loop(const std::string& name) const;    // -1 when absent
  int find_tensor(const std::string& name) const;  // -1 when absent
  int find_computed(const std::string& name) const;
  int num_inputs() const;
  bool has_op(const std::string& op_name) const;
};

// The kernels lowered from a graph, in execution order, and which one steps apply to.
struct Program {
  std::shared_ptr<const graph::Graph> graph;
  std::vector<Kernel> kernels;
  int current = 0;
};

// The kernels that run with kernel `k` of `p`: those joined to it through scratch tensors
// (im2col's unfolded matrix, split_k's partials), in program order, `k` among them. A scratch
// tensor has no graph value, so its producer and consumer are run, verified and timed together.
std::vector<size_t> scratch_chain(const Program& p, size_t k);

// Elements-dense strides for `shape` with per-dim padding, in the memory order that `strides`
// already has (the dim with the largest stride is outermost).
std::vector<int64_t> repack_strides(const graph::Shape& shape, const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& pad);

using io::format_bytes;  // "4 KiB", "1.5 MiB", "96 B" (sim/io/format.h)

}  // namespace tilescope::schedule

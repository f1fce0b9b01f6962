// Typed steps: one struct per step kind, so code builds a step from values instead of text
// (`TileStep{.loops = {"i", "j"}, .factors = {32, 32}}`) and the primitives read fields, not
// strings. The text form (TransformStep, transform.h) stays the replayable trace: to_spec() reads a
// parsed text step into its struct, to_step() prints a struct back in canonical form.
#pragma once

#include "sim/graph/graph.h"
#include "sim/schedule/kernel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace tilescope::schedule {

// kernel(op): the following steps apply to the kernel that computes `op`.
struct KernelStep {
  static constexpr std::string_view kName = "kernel";
  std::string op{};
};

// The most ops one fused kernel holds. Each op of an epilogue adds its expression to the kernel's
// body (nested: relu(relu(…)) is one level per op), so fusing a 20,000-op chain cost minutes and
// a recursion as deep as the chain (issue #25); compilers stop far sooner, at what registers hold.
inline constexpr size_t kMaxFusedOps = 64;

// The most steps one schedule holds (a history, a lesson's steps block with the ones it continues
// from). Each step copies the program and most make the loop nest larger, so 8,000 chained steps
// took over 25 s and 8 GB (issue #25); a real schedule has tens.
inline constexpr size_t kMaxScheduleSteps = 256;
// The most kernels a history holds over all its entries (each entry is a whole program): 890
// steps on a 1,779-kernel program passed 8 GB. A 50-kernel CNN still takes all 256 steps.
inline constexpr size_t kMaxHistoryKernels = 100'000;

// fuse(producer, consumer, ...): elementwise consumers run in the producer's epilogue.
struct FuseStep {
  static constexpr std::string_view kName = "fuse";
  std::string producer{};
  std::vector<std::string> consumers{};
};

// compute_at(producer, consumer, at=LOOP|inline); no `at`: inline.
struct ComputeAtStep {
  static constexpr std::string_view kName = "compute_at";
  std::string producer{};
  std::string consumer{};
  std::optional<std::string> at{};
};

// split(loop, factor): loop → loop.o × loop.i.
struct SplitStep {
  static constexpr std::string_view kName = "split";
  std::string loop{};
  int64_t factor = 0;
};

// tile(loop, factor) splits one loop; tile(a, b, fa, fb) splits both and orders a.o, b.o, a.i, b.i.
struct TileStep {
  static constexpr std::string_view kName = "tile";
  std::vector<std::string> loops{};  // one or two
  std::vector<int64_t> factors{};    // one per loop
};

// reorder(l1, l2, ...): these loops take the positions they occupy, in this order.
struct ReorderStep {
  static constexpr std::string_view kName = "reorder";
  std::vector<std::string> loops{};
};

struct UnrollStep {
  static constexpr std::string_view kName = "unroll";
  std::string loop{};
};

struct VectorizeStep {
  static constexpr std::string_view kName = "vectorize";
  std::string loop{};
};

// parallel(loop): CPU threads.
struct ParallelStep {
  static constexpr std::string_view kName = "parallel";
  std::string loop{};
};

// bind(loop, block.x ... thread.z); `dim` must be a block or thread kind.
struct BindStep {
  static constexpr std::string_view kName = "bind";
  std::string loop{};
  LoopKind dim = LoopKind::BlockX;
};

// stage(tensor, shared|scratchpad|registers[, double], at=LOOP).
struct StageStep {
  static constexpr std::string_view kName = "stage";
  std::string tensor{};
  MemLevel level = MemLevel::Shared;
  std::string at{};
  bool double_buffer = false;
};

// block_order(row) or block_order(grouped[, group]); no group: 8.
struct BlockOrderStep {
  static constexpr std::string_view kName = "block_order";
  BlockOrder order = BlockOrder::RowMajor;
  std::optional<int64_t> group{};
};

// layout(tensor, rowmajor|nchw|nhwc|transposed).
struct LayoutStep {
  static constexpr std::string_view kName = "layout";
  std::string tensor{};
  graph::Layout layout = graph::Layout::RowMajor;
};

// pad(tensor or tile, dim, amount).
struct PadStep {
  static constexpr std::string_view kName = "pad";
  std::string target{};
  int64_t dim = 0;
  int64_t amount = 0;
};

// im2col(conv op).
struct Im2colStep {
  static constexpr std::string_view kName = "im2col";
  std::string op{};
};

// online_softmax(softmax op): the softmax's maximum and sum passes become one pass that keeps the
// running maximum and rescales the sum when it grows (the rewrite FlashAttention builds on).
struct OnlineSoftmaxStep {
  static constexpr std::string_view kName = "online_softmax";
  std::string op{};
};

// split_k(loop, parts): a reduction loop cut into `parts` independent slices (a parallel loop
// LOOP.p over the slices), each writing a partial result, and a second kernel that adds them.
struct SplitKStep {
  static constexpr std::string_view kName = "split_k";
  std::string loop{};
  int64_t parts = 0;
};

using StepSpec =
    std::variant<KernelStep, FuseStep, ComputeAtStep, SplitStep, TileStep, ReorderStep, UnrollStep,
                 VectorizeStep, ParallelStep, BindStep, StageStep, BlockOrderStep, LayoutStep,
                 PadStep, Im2colStep, OnlineSoftmaxStep, SplitKStep>;

// "tile": the step table row it belongs to.
inline std::string_view step_name(const StepSpec& s) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x)>::kName; }, s);
}

}  // namespace tilescope::schedule

// The trace walker: streams every memory access a scheduled kernel makes, in execution order, into
// a memory::AccessSink. Nothing is stored: memory stays bounded for any problem size.
//
// CPU mode walks the loop tree like the interpreter: one Access per element read or written, at
// byte addresses (each tensor at its own aligned base), Access::tensor = graph TensorId. Tiles in
// shared memory are AddressSpace::Shared accesses at offsets inside the tile area; scratchpad tiles
// are ordinary (Global space) accesses to their own buffer, as a CPU's packing buffer is; register
// tiles make no memory traffic. Tile copies read their source and write the tile. Accumulators
// follow accumulator_home() (loop_tree.h), the rule emit_cpp follows too: a few scalars in
// registers make no traffic; a larger accumulator tile is a stack array in the generated C++, so
// every read and write of it is traced (Init writes, Reduce reads and writes, the epilogue reads),
// at addresses in its own area after the tensors (TraceLayout::acc_base), tagged with
// TraceOptions::acc_tensor. GPU accumulators are per-thread registers: no traffic.
//
// GPU mode runs the blocks of the grid in launch order (block_order), `resident_blocks` at a time,
// interleaving the resident blocks one iteration of their outermost serial loop at a time (so two
// blocks that share a tile of an operand meet in L2 as they would on hardware). Within a block the
// threads of a warp execute in lockstep: global accesses of a warp's 32 lanes are coalesced into
// one Access per distinct `sector_bytes` sector (Access::warp = global warp id); shared-memory
// accesses stay one per lane (consecutive accesses with the same warp id form one warp request, for
// the bank-conflict model). A GPU trace's steps are the iterations of that interleaved serial loop;
// a `step_loop` named in GPU mode adds a step at each iteration of that loop inside a block (for a
// block body that starts with its thread loops, where no loop is interleaved).
#pragma once

#include "sim/memory/access.h"
#include "sim/schedule/kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::schedule {

struct TraceSummary;

// Sampled tracing (predict/sampling.h makes the plan and the estimate). A unit is one iteration
// of the loop TraceOptions::unit_loop (in GPU mode, when that is the loop the resident blocks
// walk together, one iteration of all of them). Before each unit the walker hands every access
// so far to the sink and asks begin_unit() whether to walk it; after a walked unit it calls
// end_unit(). A skipped unit makes no accesses. Everything outside units is always walked.
class TraceSampler {
 public:
  virtual ~TraceSampler() = default;
  virtual bool begin_unit(const TraceSummary& so_far) = 0;
  virtual void end_unit(const TraceSummary& so_far) = 0;
};

struct TraceOptions {
  std::string step_loop;      // step_boundary() at each iteration of this loop; "" = outermost
  uint64_t alignment = 4096;  // tensors start at multiples of this
  bool gpu = false;
  int64_t resident_blocks = 132;  // GPU mode: blocks in flight at once (one per SM by default)
  uint32_t sector_bytes = 32;
  uint32_t warp_size = 32;
  // GPU mode: AccessSink::warp_request() with the lanes' addresses before each warp instruction's
  // accesses (slower: the batch is handed over first). For the Tiles view's coalescing picture.
  bool lane_detail = false;
  // Access::tensor of accumulator-buffer accesses. -1 leaves them untagged; a report names them
  // when this is one past the graph's tensors (see name_accumulator_buffer).
  int16_t acc_tensor = -1;
  // Access::tensor of a kernel tensor a transform made (no graph id: im2col's unfolded matrix,
  // split_k's partials). -1 leaves them untagged (see name_scratch_tensors).
  int16_t scratch_tensor = -1;
  // Walk every loop statement by statement, as the interpreter does: no inner loop is traced from
  // its affine template. The same accesses, slower; tests compare the two.
  bool general_walk = false;
  // Sampled tracing (TraceSampler above); nullptr walks every unit.
  TraceSampler* sampler = nullptr;
  int unit_loop = -1;  // Kernel::loops index
};

// Tags the accumulator buffer with the id after the names a report already has (graph tensors by
// id), and appends its name ("acc (stack)"), so memory reports list it as a tensor of its own.
void name_accumulator_buffer(TraceOptions& o, std::vector<std::string>& tensor_names);
// The same for the tensors of `k` a transform made, under one name ("matmul0_partials"); nothing
// when it has none.
void name_scratch_tensors(TraceOptions& o, std::vector<std::string>& tensor_names, const Kernel& k);

struct TraceLayout {
  std::vector<uint64_t> tensor_base;  // per Kernel::tensors
  uint64_t acc_base = 0;              // CPU accumulator buffer (when not in registers); 0 = none
  uint64_t acc_bytes = 0;             // its size: one 64-byte-aligned array per accumulator slot
  uint64_t acc_slot_bytes = 0;        // distance between two slots' arrays
  uint64_t scratch_base = 0;          // scratchpad tiles live from here (Global space)
};
TraceLayout trace_layout(const Kernel& k, const TraceOptions& o = {});

// Where the trace keeps each stage spec's tile buffer: shared tiles from offset 0 of the block's
// shared memory (AddressSpace::Shared), scratchpad tiles after the tensors (Global, from
// TraceLayout::scratch_base); one area per spec, sized for its largest placement and twice that
// when double-buffered, each rounded up to 128 bytes. Register tiles make no traffic: no area
// (bytes = 0). The Tiles view draws these areas beside the tensors they copy.
struct StageArea {
  std::string buffer;  // "x_shared"
  int tensor = -1;     // Kernel::tensors index of the staged tensor; -1 when a computed one
  MemLevel level = MemLevel::Shared;
  memory::AddressSpace space = memory::AddressSpace::Shared;
  uint64_t addr = 0, bytes = 0;  // the whole area (both halves when double-buffered)
  int64_t elems = 0;             // one buffer's elements, padding included
  uint32_t elem_bytes = 4;       // the staged tensor's element size
  std::vector<int64_t> strides;  // that buffer's dense strides (padding included)
  bool double_buffer = false;
};
std::vector<StageArea> stage_areas(const Kernel& k, const TraceOptions& o = {});

struct TraceSummary {
  uint64_t global_reads = 0, global_writes = 0;  // Access records (elements, or sectors on GPU)
  uint64_t shared_reads = 0, shared_writes = 0;  // lane accesses
  uint64_t acc_reads = 0, acc_writes = 0;        // of the accumulator buffer (in global_*)
  uint64_t steps = 0;
  // GPU trace only, per warp instruction: how many touched global memory and the 128-byte lines
  // they touched (one L1 data-stage pass each), how many touched shared memory and the bank
  // passes they took (memory::bank_conflict_degree). The time model's inputs
  // (predict/time_model.h).
  uint64_t global_instructions = 0, global_lines = 0;
  uint64_t global_load_instructions = 0;  // of global_instructions, the loads
  uint64_t shared_instructions = 0, shared_wavefronts = 0;
};

TraceSummary trace_kernel(const Kernel& k, memory::AccessSink& sink, const TraceOptions& o = {});

// The first load of kernel tensor `tensor` (by name) that warp 0 of block 0 issues in the GPU
// trace with options `o` (GPU mode is forced): its active lanes, the distinct sectors they touch,
// and the fewest sectors that could hold the distinct bytes they ask for. lanes = 0 when that
// warp never loads the tensor from global memory. Throws ScheduleError for an unknown tensor.
struct WarpLoad {
  uint32_t lanes = 0, sectors = 0, ideal_sectors = 0;
};
WarpLoad first_warp_load(const Kernel& k, const std::string& tensor, TraceOptions o);

}  // namespace tilescope::schedule

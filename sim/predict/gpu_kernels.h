// Trace descriptions of the hand-written CUDA kernels (kernels/cuda/*.cuh): for each version, the
// addresses every warp of a block reads and writes in each iteration of its serial loop, and the
// shared-memory addresses of its lanes, so the simulator can predict what Nsight Compute measures
// on the same launch: L1 and L2 sectors, DRAM bytes, shared-memory wavefronts and bank conflicts.
//
// How a prediction is made (the model, said once):
// - Coalescing: the lanes of one warp instruction touch a set of 32-byte sectors; each is one L1
//   lookup (ncu's l1tex__t_sectors_*).
// - L1: one per SM, write-through, no allocation on stores, sectored LRU. Its size is the unified
//   256 KiB less the shared-memory carve-out the kernel's resident blocks need, shared by them.
//   Every block of a kernel makes the same accesses relative to its tiles' origins, so one block
//   is run through its share of L1 and its misses, shifted to each block's origins, are what every
//   block sends to L2.
// - L2: the machine's L2 (one cache, sectored, write-back, write-allocate, LRU), cold at the start
//   as ncu's cache control leaves it. The grid runs in waves of resident blocks (SMs × blocks per
//   SM, in launch order or grouped order); within a wave the blocks' misses are interleaved one
//   serial-loop iteration at a time. DRAM bytes are L2 misses (reads) and dirty sectors evicted
//   during the kernel (writes): what is still dirty in L2 when the kernel ends is not written
//   back, as ncu, which measures the kernel alone, does not see it either.
// - Reduction for large problems: K is cut to K/s (the first K/s of every block's serial loop),
//   only every s-th row of each block's C tile is stored, and the L2 holds 1/s of its sets; all
//   traffic counts are multiplied by s. Every footprint the L2 sees shrinks by s together with
//   its capacity, so hit rates are kept; tests check the error against the full trace where that
//   is feasible.
// - Shared memory: the descriptions list the shared-memory instructions as nvcc emitted them
//   (it turns runs of scalar reads into LDS.128 where addresses allow). The data path returns
//   128 bytes a wavefront, so a warp instruction is served in phases of 32 / (bytes per lane / 4)
//   lanes (quarter-warps for 16-byte accesses), two phases together when every lane shares its
//   address with lane n^1 (or every lane with n^2); a phase takes as many wavefronts as the most
//   distinct 4-byte words one bank must deliver (one word is broadcast). Conflicts are wavefronts
//   beyond one per phase, as ncu counts them.
#pragma once

#include "sim/predict/machine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::predict {

struct GpuKernelOptions {
  int k_slice = 0;  // s above; 0 = chosen so the L2 trace stays under max_l2_accesses
  double max_l2_accesses = 6e6;
  int group_rows = 0;  // block order: 0 = launch order, else GroupedOrder<group_rows>
  // The L2 is split into this many partitions (Hopper: 2; 1 models one unified L2), each SM near
  // one (l2_partitions.h): a line lives in its home partition, and a read from an SM near another
  // one, served by the home or by DRAM, leaves a copy near the reader (l2_near_copies; measured
  // on an H100 by scripts/experiments/l2_partitions.cu). Data both halves read is held twice.
  int l2_partitions = 2;
  bool l2_near_copies = true;
  // At most this many blocks per SM (0: as many as the kernel's threads, registers and shared
  // memory allow). Fewer resident blocks make smaller waves: an experiment's knob (a launch with
  // extra dynamic shared memory does the same on the hardware).
  int max_blocks_per_sm = 0;
  // The blocks of an SM's residency slots out of phase: slot s of every SM starts its blocks
  // s × slot_offset of a block's serial loop later than slot 0 (0 = in step, the waves above;
  // 0.5 = the half-block offset measured on the H200 for SGEMM 1, 3 and 8). Blocks go to slots
  // in launch order, one SM's worth (`cores` blocks) per slot.
  double slot_offset = 0;
};

// Everything predicted for one launch, in the units of kernels/gpu_counters.h's keys.
struct GpuKernelPrediction {
  std::string twin;    // the trace description's name
  std::string method;  // "full trace" or the reduction used
  int k_slice = 1;
  double dram_read_bytes = 0, dram_write_bytes = 0;
  double l2_read_sectors = 0, l2_write_sectors = 0, l2_read_hit_sectors = 0;
  double l1_load_sectors = 0, l1_load_hit_sectors = 0, l1_store_sectors = 0, l1_load_requests = 0;
  // Passes of the L1's data stage for global accesses: one per distinct 128-byte line a warp
  // instruction touches (what limits an uncoalesced load: 32 lanes on 32 lines take 32 passes).
  double l1_load_wavefronts = 0, l1_store_wavefronts = 0;
  double shared_ld_wavefronts = 0, shared_st_wavefronts = 0;
  double shared_ld_conflicts = 0, shared_st_conflicts = 0;
  double shared_ld_instructions = 0, shared_st_instructions = 0;
  int blocks_per_sm = 0;
  int64_t resident_blocks = 0;
  double l1_bytes_per_block = 0;
  // For the time model (time_model.h): the launch and the work of the whole grid.
  int threads = 0, registers = 0, smem_bytes = 0;  // one block (registers as ptxas allocates them)
  int64_t blocks = 0;                              // the grid
  double fp32_fmas = 0, tensor_flops = 0;          // M·N·K on CUDA cores, or 2·M·N·K on tensor cores
  // Global loads one warp issues in a serial step before it waits (they stage one tile), and the
  // bytes one of them brings (its sectors × 32).
  double loads_per_warp_per_step = 0, bytes_per_load = 0;
};

// The kernels with a trace description: "sgemm_01" … "sgemm_08", "bias_add", "relu",
// "bias_relu_fused", "sgemm_08_bias_relu", "hgemm_02" (global traffic only: its ldmatrix and
// swizzled shared tiles are not described).
std::vector<std::string> gpu_twin_kernels();
bool has_gpu_twin(const std::string& kernel);

// The prediction for one launch of `kernel` on an M×N×K problem (elementwise kernels: an M×N
// matrix) on GPU machine `m` (its SM count, L2 and shared-memory banks). Throws
// std::invalid_argument for an unknown kernel or a shape the kernel cannot run.
GpuKernelPrediction predict_gpu_kernel(const std::string& kernel, int M, int N, int K,
                                     const Machine& m, const GpuKernelOptions& options = {});

// The shared-memory cost of one warp instruction: wavefronts under the phase model above, and
// the conflict-free count (one per phase that has any lane).
struct SharedCost {
  uint32_t wavefronts = 0, ideal = 0;
};
struct LaneAddr {
  uint64_t addr = 0;
  uint32_t bytes = 4;
};
SharedCost shared_warp_cost(const std::vector<LaneAddr>& lanes, uint32_t banks = 32,
                            uint32_t bank_width = 4);

}  // namespace tilescope::predict

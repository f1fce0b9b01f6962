// The Tiles view's GPU mode: one wave of a GPU kernel as the simulator runs it (the same trace
// and hierarchy as the Memory view's GPU simulation, sim/predict/simulate.h), seen from one block
// and one warp the learner picks:
// - the launch grid, with the blocks of the picked block's wave (the resident blocks: one per SM,
//   as the trace interleaves them) marked;
// - per frame (each step of the wave), the share of every bin of every tensor that the L2 holds
//   now (the machine's hierarchy, fed by every block) and that the picked block's SM's own L1
//   holds (a private L1 fed by the blocks that run on that SM: block b runs on SM b mod resident);
// - what the whole wave and the picked block touched in the step before the frame;
// - the picked warp's instructions in that step, lane by lane: the sectors a global access needs
//   against the fewest that could hold its bytes (coalesced or not), the wavefronts a shared
//   access takes against one per phase (bank conflicts, sim/predict/gpu_kernels.h's model).
#pragma once

#include "app/core/jobs.h"
#include "app/core/tile_grid.h"
#include "sim/predict/machine.h"
#include "sim/schedule/kernel.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::core {

inline constexpr int kMaxGpuTileFrames = 512;
inline constexpr size_t kMaxWarpAccessesPerFrame = 48;

// One warp instruction of the picked warp.
struct GpuWarpAccess {
  int grid = -1;  // index into GpuTilesResult::grids
  bool write = false, shared = false;
  uint32_t lanes = 0;              // active lanes
  std::vector<int64_t> lane_elem;  // each lane's element, memory order, within the grid
  uint32_t lane_bytes = 4;         // bytes each lane asks for (its element's dtype)
  uint32_t sectors = 0;            // global: distinct sectors the lanes touch
  uint32_t ideal_sectors = 0;      // global: the fewest sectors that can hold the lanes' bytes
  uint32_t wavefronts = 0, ideal_wavefronts = 0;  // shared: bank-conflict model
  bool coalesced() const {
    return shared ? wavefronts <= ideal_wavefronts : sectors <= ideal_sectors;
  }
};

struct GpuTilesFrame {
  uint64_t step = 0;  // the trace's step count when it was taken (0 = the wave's start)
  // Per bin (TileGrid offsets): the share of the bin's elements held, 0 … 255.
  std::vector<uint8_t> l1, l2;
  std::vector<uint8_t> wave;   // per bin: 1 when a block of the wave touched it in the last step
  std::vector<TileBox> block;  // per grid: what the picked block touched in the last step
  std::vector<GpuWarpAccess> warp;  // the picked warp's instructions in the last step
  uint32_t warp_more = 0;           // instructions beyond kMaxWarpAccessesPerFrame
};

// The base's counters over time: per frame, the counters so far of the Memory view's GPU hierarchy
// (every block of the trace up to the end of the picked wave).
struct GpuTilesResult : CountersOverTime {
  std::string kernel;
  std::array<int64_t, 3> grid{1, 1, 1}, block_dims{1, 1, 1};
  int64_t blocks = 1, resident = 1;  // blocks in the grid, blocks in flight at once
  int64_t block = 0, wave = 0, waves = 1, sm = 0;
  int warp = 0, warps_per_block = 1, warp_size = 32;
  uint32_t sector_bytes = 32;
  // The picker: launch index (pid) of the block at each cell, rows = y (then z) of the grid,
  // columns = x.
  std::vector<int64_t> block_at;
  std::string step_loop;  // what a step is: "" = the whole block body
  std::string l1_name, l2_name;
  uint64_t l1_bytes = 0, l2_bytes = 0;
  std::vector<TileGrid> grids;
  std::vector<GpuTilesFrame> frames;
  size_t first_block_frame = 0;  // the first frame after a step of the picked block
  bool blocks_in_turn = false;   // the wave's blocks run one after another (no interleaved loop)
  // The picked warp over the whole wave: global instructions, their sectors and the ideal.
  uint64_t warp_global = 0, warp_sectors = 0, warp_ideal_sectors = 0;
};

// The picked warp's instructions of one frame, alike ones together (same grid, direction, space,
// lanes, sectors and wavefronts), in first-seen order: the first of each and how many.
struct WarpPattern {
  const GpuWarpAccess* first = nullptr;
  int count = 0;
};
std::vector<WarpPattern> warp_patterns(const GpuTilesFrame& f);
// One instruction in words: "load W (global): 32 lanes → 32 sectors = 1024 B moved for 128 B
// used — uncoalesced: neighbouring lanes 256 B apart".
std::string describe_warp_access(const GpuTilesResult& r, const GpuWarpAccess& w);

// Why GPU mode does not apply to this kernel on this machine ("" when it does): not a GPU
// machine, or no loop bound to blocks.
std::string gpu_tiles_unavailable(const schedule::Kernel& k, const predict::Machine& m);

// Walks the kernel's GPU trace up to the end of the wave that runs `block` (a launch index) and
// records that wave. Throws std::invalid_argument when GPU mode does not apply or block / warp
// is out of range (the message says which and the valid range).
GpuTilesResult record_gpu_tiles(const schedule::Kernel& k, const predict::Machine& m, int64_t block,
                                int warp, JobProgress& progress);

}  // namespace tilescope::core

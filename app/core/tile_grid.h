// The Tiles view's grids: each kernel tensor (and each staged copy of one) drawn in memory order,
// binned to at most kTileBins a side, and the recorded frames of the loop-nest walk. Shared by
// the walk (record_tiles, tile_grid.cpp) and the GPU mode (tiles_gpu.h).
#pragma once

#include "app/core/jobs.h"
#include "app/core/memory_grid.h"
#include "sim/memory/access.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"
#include "sim/schedule/kernel.h"
#include "sim/schedule/trace.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::core {

// The Tiles animation: each kernel tensor drawn as a grid in memory order (rows = all dims but
// the last), binned to at most kTileBins per side, with the cumulative access count of every bin
// at evenly spaced step boundaries of the loop nest. Bounded memory for any problem size.
inline constexpr int kTileBins = 48;
inline constexpr int kMaxTileFrames = 1024;
struct TileGrid {
  std::string name;
  bool output = false;
  // A staged copy (stage(x, shared|scratchpad, at=…)): the buffer's area, drawn beside the tensor
  // it copies. `staged_from` names that tensor ("" for a tensor's own grid); `level` is "shared"
  // or "scratchpad". Its elements are reloaded with every copy, so it is coloured against its own
  // `peak_per_element` (the tensors against TilesResult::peak_per_element).
  std::string staged_from, level;
  double peak_per_element = 0;
  int64_t rows = 1, cols = 1;  // elements, memory order
  int bin_rows = 1, bin_cols = 1;
  size_t offset = 0;  // first bin of this grid in a frame
  // 1 / elements in each bin (row-major over bins). Bins hold unequal numbers of elements when a
  // side does not divide evenly (256 into 48), so the view colours accesses per element, or an
  // even access pattern would show as a checkerboard.
  std::vector<double> inv_elems;
  size_t bins() const { return size_t(bin_rows) * size_t(bin_cols); }
  // The (bin row, bin column) of element `e` in memory order.
  std::pair<size_t, size_t> bin_of(uint64_t e) const {
    const int64_t row = int64_t(e) / cols, col = int64_t(e) % cols;
    return {size_t(row * bin_rows / rows), size_t(col * bin_cols / cols)};
  }
};
// Where a grid's elements are in a trace: bytes [begin, end) of one address space.
struct TileGridSpan {
  uint64_t begin = 0, end = 0;
  memory::AddressSpace space = memory::AddressSpace::Global;
  uint32_t elem_bytes = 4;  // the tensor's dtype
  // The element (memory order) holding byte `addr` of the span.
  uint64_t elem_of(uint64_t addr) const { return (addr - begin) / elem_bytes; }
  // Elements an access of `size` bytes at `addr` covers, from elem_of(addr): a sector holds
  // several.
  uint64_t elems_in(uint32_t size) const {
    return (size > elem_bytes ? size : elem_bytes) / elem_bytes;
  }
};
// The grids of kernel `k` traced with `layout` and `options`: each tensor, then its staged copies
// (stage_areas); `spans` gets each grid's addresses. Offsets number the bins of all grids in turn.
std::vector<TileGrid> make_tile_grids(const schedule::Kernel& k,
                                      const schedule::TraceLayout& layout,
                                      const schedule::TraceOptions& options,
                                      std::vector<TileGridSpan>& spans);
// The bins one step of the step loop touched in a grid: rows r0..r1, columns c0..c1 (inclusive);
// r1 < 0 when the step did not touch the grid.
struct TileBox {
  int r0 = 0, c0 = 0, r1 = -1, c1 = -1;
  bool empty() const { return r1 < 0; }
};
// Counters over time (issue #32): along an animation's frames, the counters so far per level
// (closest first, then main memory; before the end's write-back) and the trace accesses so far.
// The loop-nest walk fills it on a CPU machine (TilesResult), the GPU mode for its wave
// (GpuTilesResult: the Memory view's GPU hierarchy, fed by every block of the trace).
struct CountersOverTime {
  std::vector<uint64_t> frame_step;  // the step each frame was taken at
  std::string machine;               // "" when the walk ran through no hierarchy
  std::vector<std::string> level_names;
  std::vector<uint64_t> frame_accesses;
  std::vector<std::vector<memory::Counters>> frame_counters;
};

struct TilesResult : CountersOverTime {
  std::string kernel;
  std::string step_loop;  // the loop whose iterations are the animation's steps
  uint64_t steps = 0;     // iterations of step_loop in the whole run
  std::vector<TileGrid> grids;
  std::vector<std::vector<uint32_t>> frames;  // cumulative accesses per bin
  // Per frame, per grid: the current tile — what the last step before the frame touched (a frame
  // may span several steps; the tile is one step's, not everything since the previous frame).
  std::vector<std::vector<TileBox>> frame_tiles;
  double peak_per_element = 1;  // the most accesses per element any bin reaches (≥ 1)

  // When the walk is given a CPU machine, the same accesses also run through the machine's
  // hierarchy: the counters over time (the base), and per frame the small levels' set × way grids
  // as they stand then, each way's `age` being the accesses since the core last touched its line.
  std::vector<std::vector<CacheGrid>> frame_grids;
};

// One level's traffic between frame f-1 and frame f. Frame 0's is everything before the first
// frame: nothing for the loop-nest walk, the earlier waves for the GPU mode's wave.
struct LevelWindow {
  std::string level;
  uint64_t accesses = 0, hits = 0;
  uint64_t bytes = 0;  // read + written at this level in the window
  double hit_rate() const { return accesses ? double(hits) / double(accesses) : 0.0; }
};
std::vector<LevelWindow> counters_window(const CountersOverTime& r, size_t frame);

// Frame `frame`'s window as the state JSON gives it: machine, frame, accesses so far, per level
// accesses, hits, hit rate and bytes.
nlohmann::json counters_window_json(const CountersOverTime& r, size_t frame);

// The walk itself (tile_grid.cpp), callable without a thread (the workbench runs it as a job;
// tests call it directly): the step loop chosen, the frames recorded; throws JobCancelled when
// `progress` is cancelled.
// With `machine` (a CPU machine), the walk also fills the counters over time.
TilesResult record_tiles(const schedule::Kernel& k, JobProgress& progress,
                         const predict::Machine* machine = nullptr);

}  // namespace tilescope::core

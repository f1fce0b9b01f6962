// Occupancy: how many blocks of a kernel one SM holds at once, which resource stops it there, and
// how many waves a grid then takes. From the kernel's resources (threads per block, registers per
// thread, shared memory per block) and the machine's per-SM limits (Machine::sm), with the
// allocation rules of the CUDA Occupancy Calculator: registers are allocated per warp in units
// (256 on every GPU since Volta) and split evenly over the SM's warp schedulers; shared memory is
// allocated per block in 128 B units, plus the 1 KiB the driver keeps for each block.
//
// Theoretical occupancy is what Nsight Compute reports as "Theoretical Occupancy"
// (sm__maximum_warps_per_active_cycle_pct) and its block limits (launch__occupancy_limit_*).
// Shared memory is counted against the SM's largest carve-out unless a carve-out is given: the
// driver may pick a smaller one for a launch (ncu's launch__shared_mem_config_size), but never
// one that lowers the occupancy the other limits allow.
#pragma once

#include "sim/predict/machine.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::predict {

// What one block of a kernel asks of an SM.
struct KernelResources {
  int64_t threads_per_block = 0;
  int64_t registers_per_thread = 0;  // as ptxas allocates them (ptxas -v, ncu's
                                     // launch__registers_per_thread)
  int64_t smem_per_block = 0;        // static + dynamic shared memory, bytes (without the driver's)
};

struct Occupancy {
  std::string error;  // why the block cannot run on this machine at all ("" when it can)
  // Blocks per SM each resource allows (ncu's launch__occupancy_limit_*).
  int64_t by_warps = 0, by_blocks = 0, by_registers = 0, by_smem = 0;
  int64_t blocks_per_sm = 0;  // the least of the four
  std::string limiter;        // "warps", "blocks", "registers" or "shared memory" (ties: all)
  int64_t warps_per_block = 0;
  int64_t warps_per_sm = 0;              // blocks_per_sm × warps_per_block
  double occupancy = 0;                  // warps_per_sm / the SM's warps, 0 to 1
  int64_t registers_per_warp = 0;        // allocated (rounded up to the unit)
  int64_t smem_per_block_allocated = 0;  // with the driver's reserve, rounded up to the unit
  int64_t smem_per_sm = 0;               // the carve-out counted against
};

// Occupancy of `r` on `m`. `carveout_bytes` > 0 counts shared memory against that carve-out
// instead of the SM's largest (the scratchpad's size). Throws std::invalid_argument when `m` does
// not state its per-SM limits (Machine::sm) or is not a GPU.
Occupancy occupancy(const Machine& m, const KernelResources& r, int64_t carveout_bytes = 0);
// The result as JSON (`tilescope-cli occupancy --json`, the app's state JSON): blocks_per_sm,
// limiter, limits {warps, blocks, registers, shared_memory}, warps per block and per SM,
// occupancy, registers per warp, shared memory per block allocated and per SM.
nlohmann::json occupancy_json(const Occupancy& o);

// A grid of `blocks` on `m` at occupancy `o`: every SM holds o.blocks_per_sm of them at once.
struct Waves {
  int64_t blocks = 0;
  int64_t per_wave = 0;     // SMs × blocks per SM
  int64_t full_waves = 0;   // waves in which every SM is full
  int64_t tail_blocks = 0;  // blocks of the last, partial wave (0 when none)
  double waves = 0;         // blocks / per_wave (ncu's launch__waves_per_multiprocessor)
  // The share of the SMs' block slots the tail wave fills (1 when there is no tail).
  double tail_fill() const { return tail_blocks == 0 ? 1.0 : double(tail_blocks) / per_wave; }
};
Waves waves(const Machine& m, const Occupancy& o, int64_t blocks);
// The warps an SM that has work holds at once: the blocks occupancy allows, or the grid's share of
// blocks per SM (ceil(blocks / SMs)) when that is fewer, times the warps of a block. A grid of 128
// one-warp blocks on 132 SMs gives each busy SM 1 warp, whatever its occupancy.
int64_t resident_warps(const Machine& m, const Occupancy& o, int64_t blocks);

// Occupancy as one resource varies with the others fixed, in the manner of Nsight's occupancy
// calculator: (value, occupancy 0..1, blocks per SM) for block sizes 32..max threads (step 32),
// registers per thread 8..max (step 8; each allocation-unit boundary), or shared memory per block
// 0..the per-block maximum (step `smem_step`, 1 KiB by default).
struct OccupancyPoint {
  int64_t value = 0;
  double occupancy = 0;
  int64_t blocks_per_sm = 0;
};
enum class OccupancyAxis { Threads, Registers, SharedMemory };
std::vector<OccupancyPoint> occupancy_curve(const Machine& m, const KernelResources& r,
                                            OccupancyAxis axis, int64_t smem_step = 1024);

}  // namespace tilescope::predict

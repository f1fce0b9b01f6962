// Occupancy from a kernel's resources and the machine's per-SM limits (occupancy.h).
#include "sim/predict/occupancy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace tilescope::predict {

namespace {

int64_t round_up(int64_t x, int64_t unit) {
  return unit <= 1 ? x : (x + unit - 1) / unit * unit;
}

int64_t div_up(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Blocks per SM the registers allow. Registers are allocated per warp, rounded up to the unit, and
// each warp scheduler (sub-partition) owns an equal share of the SM's file: a warp's registers
// come from its scheduler's share, so the SM holds (share / per warp) warps per scheduler.
int64_t blocks_by_registers(const Machine::SmLimits& sm, int64_t registers_per_warp,
                            int64_t warps_per_block) {
  if (registers_per_warp == 0) return sm.blocks;
  const int64_t parts = std::max<int64_t>(sm.sub_partitions, 1);
  const int64_t warps = (sm.registers / parts) / registers_per_warp * parts;
  return warps / warps_per_block;
}

}  // namespace

Occupancy occupancy(const Machine& m, const KernelResources& r, int64_t carveout_bytes) {
  if (m.kind != "gpu")
    throw std::invalid_argument("occupancy: machine " + m.name + " is a CPU; occupancy is a GPU's");
  const Machine::SmLimits& sm = m.sm;
  if (!sm.known())
    throw std::invalid_argument("occupancy: machine " + m.name +
                                " does not state its per-SM limits (warps_per_sm, blocks_per_sm, "
                                "registers_per_sm, register_unit in its file)");
  const int64_t warp = m.scratchpad && m.scratchpad->warp_size > 0 ? m.scratchpad->warp_size : 32;
  Occupancy o;
  o.smem_per_sm = carveout_bytes > 0 ? carveout_bytes
                  : m.scratchpad     ? int64_t(m.scratchpad->size_bytes)
                                     : 0;
  const int64_t max_threads = m.threads_per_block > 0 ? m.threads_per_block : sm.warps * warp;
  if (r.threads_per_block < 1 || r.threads_per_block > max_threads) {
    o.error = "a block of " + std::to_string(r.threads_per_block) + " threads cannot run on " +
              m.name + " (1 to " + std::to_string(max_threads) + " threads per block)";
    return o;
  }
  if (r.registers_per_thread < 0 ||
      (m.registers_per_thread > 0 && r.registers_per_thread > m.registers_per_thread)) {
    o.error = std::to_string(r.registers_per_thread) + " registers per thread: " + m.name +
              " gives a thread at most " + std::to_string(m.registers_per_thread);
    return o;
  }
  o.warps_per_block = div_up(r.threads_per_block, warp);
  o.registers_per_warp = round_up(r.registers_per_thread * warp, sm.register_unit);
  // The launch check assumes a block's registers come from every scheduler at once: its warps
  // rounded up to a multiple of the schedulers must fit the SM's file.
  const int64_t parts = std::max<int64_t>(sm.sub_partitions, 1);
  if (o.registers_per_warp * round_up(o.warps_per_block, parts) > sm.registers) {
    o.error = "a block of " + std::to_string(r.threads_per_block) + " threads at " +
              std::to_string(r.registers_per_thread) + " registers each needs more than the SM's " +
              std::to_string(sm.registers) + " registers";
    return o;
  }
  const int64_t smem_limit = m.smem_per_block > 0 ? m.smem_per_block : o.smem_per_sm;
  if (r.smem_per_block < 0 || r.smem_per_block > smem_limit) {
    o.error = std::to_string(r.smem_per_block) + " B of shared memory per block: " + m.name +
              " gives a block at most " + std::to_string(smem_limit) + " B";
    return o;
  }
  o.smem_per_block_allocated =
      round_up(r.smem_per_block + sm.smem_reserved_per_block, std::max<int64_t>(sm.smem_unit, 1));
  o.by_warps = sm.warps / o.warps_per_block;
  o.by_blocks = sm.blocks;
  o.by_registers = blocks_by_registers(sm, o.registers_per_warp, o.warps_per_block);
  o.by_smem = o.smem_per_block_allocated > 0 ? o.smem_per_sm / o.smem_per_block_allocated
                                             : sm.blocks;
  o.blocks_per_sm = std::min({o.by_warps, o.by_blocks, o.by_registers, o.by_smem});
  const std::pair<int64_t, const char*> limits[] = {{o.by_warps, "warps"},
                                                    {o.by_blocks, "blocks"},
                                                    {o.by_registers, "registers"},
                                                    {o.by_smem, "shared memory"}};
  for (const auto& [n, name] : limits)
    if (n == o.blocks_per_sm) o.limiter += (o.limiter.empty() ? "" : " and ") + std::string(name);
  o.warps_per_sm = o.blocks_per_sm * o.warps_per_block;
  o.occupancy = double(o.warps_per_sm) / double(sm.warps);
  return o;
}

nlohmann::json occupancy_json(const Occupancy& o) {
  return {{"blocks_per_sm", o.blocks_per_sm},
          {"limiter", o.limiter},
          {"limits",
           {{"warps", o.by_warps},
            {"blocks", o.by_blocks},
            {"registers", o.by_registers},
            {"shared_memory", o.by_smem}}},
          {"warps_per_block", o.warps_per_block},
          {"warps_per_sm", o.warps_per_sm},
          {"occupancy", o.occupancy},
          {"registers_per_warp", o.registers_per_warp},
          {"smem_per_block_allocated", o.smem_per_block_allocated},
          {"smem_per_sm", o.smem_per_sm}};
}

int64_t resident_warps(const Machine& m, const Occupancy& o, int64_t blocks) {
  if (m.cores <= 0 || blocks <= 0) return 0;
  const int64_t share = (blocks + m.cores - 1) / m.cores;
  return std::min(o.blocks_per_sm, share) * o.warps_per_block;
}

Waves waves(const Machine& m, const Occupancy& o, int64_t blocks) {
  Waves w;
  w.blocks = blocks;
  w.per_wave = int64_t(m.cores) * o.blocks_per_sm;
  if (w.per_wave <= 0) return w;
  w.full_waves = blocks / w.per_wave;
  w.tail_blocks = blocks % w.per_wave;
  w.waves = double(blocks) / double(w.per_wave);
  return w;
}

std::vector<OccupancyPoint> occupancy_curve(const Machine& m, const KernelResources& r,
                                            OccupancyAxis axis, int64_t smem_step) {
  std::vector<OccupancyPoint> out;
  auto add = [&](int64_t value, KernelResources x) {
    const Occupancy o = occupancy(m, x);
    if (o.error.empty()) out.push_back({value, o.occupancy, o.blocks_per_sm});
  };
  const int64_t warp = m.scratchpad && m.scratchpad->warp_size > 0 ? m.scratchpad->warp_size : 32;
  switch (axis) {
    case OccupancyAxis::Threads: {
      const int64_t most = m.threads_per_block > 0 ? m.threads_per_block : m.sm.warps * warp;
      for (int64_t t = warp; t <= most; t += warp) {
        KernelResources x = r;
        x.threads_per_block = t;
        add(t, x);
      }
      break;
    }
    case OccupancyAxis::Registers: {
      const int64_t most = m.registers_per_thread > 0 ? m.registers_per_thread : 255;
      for (int64_t g = 8; g <= most + 7; g += 8) {
        KernelResources x = r;
        x.registers_per_thread = std::min(g, most);
        add(x.registers_per_thread, x);
      }
      break;
    }
    case OccupancyAxis::SharedMemory: {
      const int64_t most = m.smem_per_block > 0 ? m.smem_per_block
                           : m.scratchpad       ? int64_t(m.scratchpad->size_bytes)
                                                : 0;
      const int64_t step = std::max<int64_t>(smem_step, 1);
      for (int64_t b = 0; b <= most; b += step) {
        KernelResources x = r;
        x.smem_per_block = b;
        add(b, x);
      }
      break;
    }
  }
  return out;
}

}  // namespace tilescope::predict

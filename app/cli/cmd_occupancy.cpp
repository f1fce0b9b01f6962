// `tilescope-cli occupancy`: how many blocks of a kernel one SM holds, which resource stops it,
// and the waves a grid takes — for resources given by hand (--threads, --registers, --smem), for
// the current kernel of a model's schedule (its launch's threads and shared memory, registers
// given), or for every kernel of a counters recording beside Nsight Compute's own figures.
// --curve prints occupancy as one resource varies, as Nsight's occupancy calculator plots it.
#include "commands.h"

#include "sim/pipeline.h"
#include "sim/predict/occupancy.h"
#include "sim/predict/parallelism.h"
#include "sim/schedule/codegen.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

namespace tilescope::cli {
namespace {

struct OccupancyFlags {
  std::string machine = "h200";
  int64_t threads = 0, registers = -1, smem = 0, grid = 0;
  int64_t loads = 0, load_bytes = 128;  // --loads: Little's law over the loads in flight
  std::string model, apply, curve, recorded;
  bool json = false;
};

void print_occupancy(const predict::Machine& m, const predict::KernelResources& r,
                     const predict::Occupancy& o) {
  std::printf("%s: a block of %lld threads (%lld warps), %lld registers per thread, %lld B of "
              "shared memory\n",
              m.name.c_str(), (long long)r.threads_per_block, (long long)o.warps_per_block,
              (long long)r.registers_per_thread, (long long)r.smem_per_block);
  std::printf("blocks per SM each resource allows:\n");
  std::printf("  warps          %3lld   (%lld warps an SM / %lld a block)\n",
              (long long)o.by_warps, (long long)m.sm.warps, (long long)o.warps_per_block);
  std::printf("  blocks         %3lld   (the SM's block slots)\n", (long long)o.by_blocks);
  std::printf("  registers      %3lld   (%lld a warp, allocated in units of %lld; %lld per "
              "scheduler)\n",
              (long long)o.by_registers, (long long)o.registers_per_warp,
              (long long)m.sm.register_unit,
              (long long)(m.sm.registers / std::max<int64_t>(m.sm.sub_partitions, 1)));
  std::printf("  shared memory  %3lld   (%lld B a block with the driver's %lld B, of %lld B)\n",
              (long long)o.by_smem, (long long)o.smem_per_block_allocated,
              (long long)m.sm.smem_reserved_per_block, (long long)o.smem_per_sm);
  std::printf("%lld blocks per SM, limited by %s: %lld of %lld warps, occupancy %.1f %%\n",
              (long long)o.blocks_per_sm, o.limiter.c_str(), (long long)o.warps_per_sm,
              (long long)m.sm.warps, 100 * o.occupancy);
}

void print_waves(const predict::Machine& m, const predict::Occupancy& o, int64_t blocks) {
  const predict::Waves w = predict::waves(m, o, blocks);
  std::printf("a grid of %lld blocks: %lld a wave (%d SMs x %lld): %.2f waves", (long long)blocks,
              (long long)w.per_wave, m.cores, (long long)o.blocks_per_sm, w.waves);
  if (w.tail_blocks > 0)
    std::printf(", %lld full and a tail of %lld blocks (%.0f %% of the slots)\n",
                (long long)w.full_waves, (long long)w.tail_blocks, 100 * w.tail_fill());
  else
    std::printf(", all full\n");
}

int print_curve(const OccupancyFlags& f, const predict::Machine& m,
                const predict::KernelResources& r) {
  predict::OccupancyAxis axis;
  if (f.curve == "threads")
    axis = predict::OccupancyAxis::Threads;
  else if (f.curve == "registers")
    axis = predict::OccupancyAxis::Registers;
  else if (f.curve == "smem")
    axis = predict::OccupancyAxis::SharedMemory;
  else {
    std::cerr << "occupancy: --curve takes threads, registers or smem, not '" << f.curve << "'\n";
    return 1;
  }
  const auto points = predict::occupancy_curve(m, r, axis);
  if (f.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& p : points)
      j.push_back({{"value", p.value}, {"occupancy", p.occupancy}, {"blocks_per_sm", p.blocks_per_sm}});
    std::cout << nlohmann::json{{"machine", m.name}, {"axis", f.curve}, {"points", j}}.dump(1)
              << "\n";
    return 0;
  }
  std::printf("%s  blocks/SM  occupancy\n", f.curve.c_str());
  for (const auto& p : points)
    std::printf("%8lld  %9lld  %5.1f %%  %s\n", (long long)p.value, (long long)p.blocks_per_sm,
                100 * p.occupancy, std::string(size_t(std::lround(p.occupancy * 40)), '#').c_str());
  return 0;
}

// Every kernel of a tilescope-counters recording: tilescope's occupancy beside ncu's. Exit 1 when
// any theoretical occupancy or block limit differs.
int compare_recorded(const OccupancyFlags& f, const predict::Machine& m) {
  std::ifstream in(f.recorded);
  if (!in) {
    std::cerr << "occupancy: cannot read " << f.recorded << "\n";
    return 1;
  }
  const nlohmann::json rec = nlohmann::json::parse(in, nullptr, false);
  if (rec.is_discarded() || !rec.contains("runs")) {
    std::cerr << "occupancy: " << f.recorded << " is not a counters recording (no \"runs\")\n";
    return 1;
  }
  int rows = 0, differ = 0;
  std::printf("%-6s %-34s %5s %4s %7s  %-22s %9s %9s\n", "size", "kernel", "thr", "reg", "smem",
              "limited by", "tilescope", "ncu");
  for (const auto& run : rec.at("runs"))
    for (const auto& k : run.at("kernels")) {
      const auto& mt = k.at("metrics");
      auto get = [&](const char* key) { return int64_t(mt.value(key, 0.0)); };
      const predict::KernelResources r{
          get("launch__block_size"), get("launch__registers_per_thread"),
          get("launch__shared_mem_per_block_static") + get("launch__shared_mem_per_block_dynamic")};
      const predict::Occupancy o = predict::occupancy(m, r);
      const double ncu = mt.value("sm__maximum_warps_per_active_cycle_pct", -1.0);
      const predict::Occupancy at = predict::occupancy(m, r, get("launch__shared_mem_config_size"));
      const bool same = std::fabs(100 * o.occupancy - ncu) < 1e-6 &&
                        at.by_registers == get("launch__occupancy_limit_registers") &&
                        at.by_warps == get("launch__occupancy_limit_warps") &&
                        at.by_smem == get("launch__occupancy_limit_shared_mem") &&
                        at.by_blocks == get("launch__occupancy_limit_blocks");
      differ += same ? 0 : 1;
      ++rows;
      std::printf("%-6d %-34.34s %5lld %4lld %7lld  %-22s %8.1f%% %8.1f%%%s\n",
                  run.value("M", 0), k.value("name", "").c_str(), (long long)r.threads_per_block,
                  (long long)r.registers_per_thread, (long long)r.smem_per_block,
                  o.limiter.c_str(), 100 * o.occupancy, ncu, same ? "" : "  DIFFERS");
    }
  std::printf("%d kernels: theoretical occupancy and every block limit %s ncu's%s\n", rows,
              differ == 0 ? "equal" : "not all equal to",
              differ == 0 ? "" : (" (" + std::to_string(differ) + " differ)").c_str());
  return differ == 0 ? 0 : 1;
}

int run_occupancy(const OccupancyFlags& f) {
  const predict::Machine m = predict::load_machine(f.machine);
  if (!f.recorded.empty()) return compare_recorded(f, m);
  predict::KernelResources r{f.threads, f.registers, f.smem};
  int64_t grid = f.grid;
  if (!f.model.empty()) {
    // The current kernel's launch: threads and dynamic shared memory from its schedule.
    const pipeline::Study s = pipeline::study(pipeline::read_model(f.model), f.apply, m);
    const schedule::LaunchConfig lc = schedule::launch_config(s.kernel());
    r.threads_per_block = lc.threads();
    r.smem_per_block = lc.dynamic_smem_bytes;
    if (grid == 0) grid = lc.blocks();
    std::printf("kernel %s: %lld blocks of %lld threads, %lld B of shared memory\n",
                s.kernel().name.c_str(), (long long)lc.blocks(), (long long)lc.threads(),
                (long long)lc.dynamic_smem_bytes);
  }
  if (r.registers_per_thread < 0) {
    std::cerr << "occupancy: give --registers (ptxas -v reports them for a compiled kernel; "
                 "`run --gpu` prints NVRTC's count for a schedule)\n";
    return 1;
  }
  if (!f.curve.empty()) return print_curve(f, m, r);
  const predict::Occupancy o = predict::occupancy(m, r);
  if (!o.error.empty()) {
    std::cerr << "occupancy: " << o.error << "\n";
    return 1;
  }
  if (f.json) {
    nlohmann::json j = predict::occupancy_json(o);
    j["machine"] = m.name;
    if (grid > 0) {
      const predict::Waves w = predict::waves(m, o, grid);
      j["grid"] = {{"blocks", w.blocks}, {"per_wave", w.per_wave}, {"full_waves", w.full_waves},
                   {"tail_blocks", w.tail_blocks}, {"waves", w.waves}};
    }
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  print_occupancy(m, r, o);
  if (grid > 0) print_waves(m, o, grid);
  if (f.loads > 0) {
    // The SMs a grid keeps busy (one block each before any SM takes a second), and the warps
    // each holds: its share of the grid, at most what occupancy allows.
    const int64_t busy = grid > 0 ? std::min<int64_t>(m.cores, grid) : m.cores;
    const int64_t blocks_each = grid > 0 ? (grid + busy - 1) / busy : o.blocks_per_sm;
    const int64_t warps = std::min(o.blocks_per_sm, blocks_each) * o.warps_per_block;
    const predict::ParallelismBound b =
        predict::memory_parallelism(m, busy, {warps, f.loads, f.load_bytes});
    std::printf("memory: %s: at most %.0f GB/s on %lld SMs (the memory's %.0f GB/s at %.0f ns)\n",
                b.summary.c_str(), b.bandwidth / 1e9, (long long)busy, b.memory_bandwidth / 1e9,
                b.latency_s * 1e9);
    std::printf("memory: predicted %.0f GB/s: a warp's round takes %.0f ns (the trip %.0f ns, %.0f "
                "of it queueing at %.0f %% of the memory's bandwidth)\n",
                b.predicted_bandwidth / 1e9, b.round_s * 1e9, b.loaded_latency_s * 1e9,
                (b.loaded_latency_s - b.latency_s) * 1e9,
                100 * b.predicted_bandwidth / b.memory_bandwidth);
  }
  return 0;
}

const CommandRegistrar registrar{
    "occupancy",
    "Blocks and warps per SM of a kernel, the resource that limits them, and its waves",
    [](CLI::App& sub, int& exit_code) {
      auto f = std::make_shared<OccupancyFlags>();
      sub.add_option("--machine", f->machine, "A GPU machine (its per-SM limits)")
          ->capture_default_str();
      sub.add_option("--threads", f->threads, "Threads per block");
      sub.add_option("--registers", f->registers, "Registers per thread (ptxas -v, ncu)");
      sub.add_option("--smem", f->smem, "Shared memory per block, bytes (static + dynamic)");
      sub.add_option("--grid", f->grid, "Blocks in the grid: print its waves");
      sub.add_option("--model", f->model,
                     "Take threads, shared memory and grid from the current kernel of this model "
                     "(FILE, default or -)");
      sub.add_option("--apply", f->apply, "Schedule steps for --model (as for schedule)");
      sub.add_option("--curve", f->curve,
                     "Occupancy as one resource varies: threads, registers or smem");
      sub.add_option("--recorded", f->recorded,
                     "Compare with ncu for every kernel of a counters recording (exit 1 if any "
                     "differs)");
      sub.add_option("--loads", f->loads,
                     "Independent loads a warp has in flight: print Little's law's bandwidth");
      sub.add_option("--load-bytes", f->load_bytes,
                     "Bytes one warp load moves (128: 32 lanes x 4 B; 512 for float4)")
          ->capture_default_str();
      sub.add_flag("--json", f->json, "JSON instead of text");
      sub.callback([f, &exit_code] {
        try {
          exit_code = run_occupancy(*f);
        } catch (const std::exception& e) {
          std::cerr << "occupancy: " << e.what() << "\n";
          exit_code = 1;
        }
      });
    }};

}  // namespace
}  // namespace tilescope::cli

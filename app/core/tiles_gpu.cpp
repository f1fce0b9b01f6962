#include "app/core/tiles_gpu.h"

#include "sim/memory/hierarchy.h"
#include "sim/predict/gpu_kernels.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/trace_size.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace tilescope::core {

std::vector<WarpPattern> warp_patterns(const GpuTilesFrame& f) {
  std::vector<WarpPattern> out;
  std::map<std::tuple<int, bool, bool, uint32_t, uint32_t, uint32_t, uint32_t>, size_t> index;
  for (const GpuWarpAccess& w : f.warp) {
    const auto key = std::make_tuple(w.grid, w.write, w.shared, w.lanes, w.sectors, w.wavefronts,
                                     w.ideal_sectors);
    const auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.push_back({&w, 0});
    ++out[it->second].count;
  }
  return out;
}

std::string describe_warp_access(const GpuTilesResult& r, const GpuWarpAccess& w) {
  const std::string name = w.grid >= 0 ? r.grids[size_t(w.grid)].name : "?";
  std::string s = std::string(w.write ? "store " : "load ") + name;
  char buf[256];
  if (w.shared) {
    std::snprintf(buf, sizeof buf, " (shared): %u lanes → %u wavefront%s (%u without conflicts)%s",
                  w.lanes, w.wavefronts, w.wavefronts == 1 ? "" : "s", w.ideal_wavefronts,
                  w.wavefronts > w.ideal_wavefronts ? " — bank conflicts" : " — no conflict");
    return s + buf;
  }
  const uint64_t moved = uint64_t(w.sectors) * r.sector_bytes;
  const std::set<int64_t> distinct(w.lane_elem.begin(), w.lane_elem.end());
  const uint64_t used = distinct.size() * w.lane_bytes;
  std::snprintf(buf, sizeof buf, " (global): %u lanes → %u sector%s = %llu B moved for %llu B used",
                w.lanes, w.sectors, w.sectors == 1 ? "" : "s",
                static_cast<unsigned long long>(moved), static_cast<unsigned long long>(used));
  s += buf;
  if (distinct.size() == 1 && w.lanes > 1) return s + " — a broadcast: every lane the same word";
  if (w.sectors <= w.ideal_sectors) return s + " — coalesced";
  // The lanes' stride, when they form one.
  int64_t stride = w.lane_elem.size() >= 2 ? w.lane_elem[1] - w.lane_elem[0] : 0;
  for (size_t i = 2; i < w.lane_elem.size() && stride != 0; ++i)
    if (w.lane_elem[i] - w.lane_elem[i - 1] != stride) stride = 0;
  if (stride != 0) {
    std::snprintf(buf, sizeof buf, " — uncoalesced: neighbouring lanes %lld B apart",
                  static_cast<long long>(std::llabs(stride) * w.lane_bytes));
    return s + buf;
  }
  return s + " — uncoalesced";
}

std::string gpu_tiles_unavailable(const schedule::Kernel& k, const predict::Machine& m) {
  if (m.kind != "gpu")
    return "the machine is " + m.name +
           ", a CPU: blocks and warps belong to a GPU (choose minigpu, h200, … as the machine)";
  if (!schedule::binds_blocks(k))
    return "no loop of " + k.name +
           " is bound to blocks yet: bind one (bind(i_o, block.y)) and the grid has blocks to pick";
  return {};
}

namespace {

// Thrown by the sink when the walk reaches the wave after the picked one: nothing later is drawn.
struct WaveDone {};

// How the trace steps through a block body. A serial loop outside the thread loops is what the
// trace interleaves the wave's blocks over (its iterations are the steps); without one the blocks
// run in turn, and the outermost loop inside the thread loops that is neither a block nor a
// thread loop gives the steps ("" when there is none: one step per block).
struct BodySteps {
  bool interleaved = false;
  std::string step_loop;
};
BodySteps body_steps(const schedule::Kernel& k) {
  BodySteps b;
  bool seen_thread = false;
  std::string inner;
  for (const schedule::Loop& l : k.loops) {
    if (schedule::is_block(l.kind)) continue;
    if (schedule::is_thread(l.kind)) {
      seen_thread = true;
      continue;
    }
    if (!seen_thread) b.interleaved = true;
    if (inner.empty()) inner = l.name;
  }
  if (!b.interleaved) b.step_loop = inner;
  return b;
}

class GpuTileSink final : public memory::AccessSink {
 public:
  GpuTileSink(GpuTilesResult& r, const predict::Machine& m, std::vector<TileGridSpan> spans,
              JobProgress& p)
      : m_r(r),
        m_spans(std::move(spans)),
        m_p(p),
        m_main(m.hierarchy()),
        m_l1(l1_only(m)),
        m_banks(m.scratchpad ? m.scratchpad->banks : 32),
        m_bank_width(m.scratchpad ? m.scratchpad->bank_width : 4) {
    for (const TileGrid& g : m_r.grids) m_bins += g.bins();
    for (int level = 0; level < m_main.level_count(); ++level)
      m_r.level_names.push_back(m_main.config().levels[size_t(level)].name);
    m_r.level_names.push_back(m_main.config().memory.name);
    m_wave.assign(m_bins, 0);
    m_box.assign(m_r.grids.size(), TileBox{});
    m_picked_warp = int32_t(m_r.block * m_r.warps_per_block + m_r.warp);
  }

  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    if (m_p.cancel) throw JobCancelled();
    for (size_t i = 0; i < n; ++i) {
      const memory::Access& x = a[i];
      const int64_t block = x.warp >= 0 ? x.warp / m_r.warps_per_block : -1;
      const int64_t wave = block >= 0 ? block / m_r.resident : -1;
      if (wave > m_r.wave) throw WaveDone{};
      if (wave == m_r.wave && m_r.frames.empty()) snapshot(0);  // the wave's start
      m_main.access(x);
      if (block >= 0 && block % m_r.resident == m_r.sm && x.space == memory::AddressSpace::Global)
        m_l1.access(x);
      if (wave == m_r.wave) mark(x, block == m_r.block);
    }
  }
  void warp_request(const memory::WarpRequest& q) override {
    if (q.warp != m_picked_warp || q.lanes == 0) return;
    const int grid = grid_of(q.lane_addr[0], q.space);
    GpuWarpAccess w;
    w.grid = grid;
    w.write = q.kind == memory::AccessKind::Write;
    w.shared = q.space == memory::AddressSpace::Shared;
    w.lanes = q.lanes;
    const uint64_t base = grid >= 0 ? m_spans[size_t(grid)].begin : 0;
    const uint64_t elem = grid >= 0 ? m_spans[size_t(grid)].elem_bytes : q.lane_bytes;
    w.lane_bytes = q.lane_bytes;
    std::vector<uint64_t> sectors;
    std::vector<predict::LaneAddr> lanes;
    for (uint32_t i = 0; i < q.lanes; ++i) {
      w.lane_elem.push_back(int64_t((q.lane_addr[i] - base) / elem));
      sectors.push_back(q.lane_addr[i] / m_r.sector_bytes);
      lanes.push_back({q.lane_addr[i], q.lane_bytes});
    }
    std::sort(sectors.begin(), sectors.end());
    w.sectors = uint32_t(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
    // The fewest sectors the distinct bytes could fill: a broadcast (every lane one address)
    // needs one, 32 lanes of 4 distinct bytes need four.
    std::vector<uint64_t> distinct(q.lane_addr, q.lane_addr + q.lanes);
    std::sort(distinct.begin(), distinct.end());
    const uint64_t bytes =
        uint64_t(std::unique(distinct.begin(), distinct.end()) - distinct.begin()) * q.lane_bytes;
    w.ideal_sectors = uint32_t((bytes + m_r.sector_bytes - 1) / m_r.sector_bytes);
    if (w.shared) {
      const predict::SharedCost c = predict::shared_warp_cost(lanes, m_banks, m_bank_width);
      w.wavefronts = c.wavefronts;
      w.ideal_wavefronts = c.ideal;
    } else {
      m_r.warp_global += 1;
      m_r.warp_sectors += w.sectors;
      m_r.warp_ideal_sectors += w.ideal_sectors;
    }
    if (m_warp.size() < kMaxWarpAccessesPerFrame)
      m_warp.push_back(std::move(w));
    else
      ++m_warp_more;
  }
  void step_boundary(uint64_t step) override {
    m_step = step;
    if (m_touched) {
      // A step of the picked wave ended: it is a frame (every `m_every`-th, so at most
      // kMaxGpuTileFrames are kept; when full, every other one is dropped and the stride doubles).
      if (m_count++ % m_every == 0) snapshot(step);
      if (m_r.frames.size() > size_t(kMaxGpuTileFrames)) thin();
    }
    clear_step();
  }
  void finish() {
    if (m_touched) snapshot(m_step + 1);
  }

 private:
  static memory::HierarchyConfig l1_only(const predict::Machine& m) {
    memory::HierarchyConfig c = m.hierarchy();
    if (c.levels.size() > 1) c.levels.resize(1);
    c.scratchpad.reset();
    return c;
  }

  int grid_of(uint64_t addr, memory::AddressSpace space) const {
    for (size_t t = 0; t < m_spans.size(); ++t)
      if (m_spans[t].space == space && addr >= m_spans[t].begin && addr < m_spans[t].end)
        return int(t);
    return -1;
  }

  void mark(const memory::Access& a, bool picked) {
    const int t = grid_of(a.addr, a.space);
    // A shared tile is each block's own: only the picked block's is drawn.
    if (t < 0 || (a.space == memory::AddressSpace::Shared && !picked)) return;
    const TileGrid& g = m_r.grids[size_t(t)];
    const TileGridSpan& s = m_spans[size_t(t)];
    const uint64_t first = s.elem_of(a.addr);
    const uint64_t last = std::min<uint64_t>(first + s.elems_in(a.size), uint64_t(g.rows * g.cols));
    for (uint64_t e = first; e < last; ++e) {
      const auto [br, bc] = g.bin_of(e);
      m_wave[g.offset + br * size_t(g.bin_cols) + bc] = 1;
      if (!picked) continue;
      TileBox& b = m_box[size_t(t)];
      if (b.empty()) {
        b = {int(br), int(bc), int(br), int(bc)};
      } else {
        b.r0 = std::min(b.r0, int(br)), b.r1 = std::max(b.r1, int(br));
        b.c0 = std::min(b.c0, int(bc)), b.c1 = std::max(b.c1, int(bc));
      }
    }
    m_touched = true;
  }

  // Per bin, the share of its elements in sectors `h`'s level holds.
  std::vector<uint8_t> held(const memory::Hierarchy& h, int level) const {
    std::vector<double> count(m_bins, 0.0);
    if (level >= 0 && level < h.level_count()) {
      const uint32_t sector = h.config().levels[size_t(level)].sector_size();
      for (const memory::ResidentLine& l : h.resident_lines(level)) {
        const int t = grid_of(l.addr, memory::AddressSpace::Global);
        if (t < 0 && grid_of(l.addr + l.bytes - 1, memory::AddressSpace::Global) < 0) continue;
        for (uint32_t s = 0; s * sector < l.bytes; ++s) {
          if (!(l.valid_sectors >> s & 1u)) continue;
          for (uint64_t a = l.addr + uint64_t(s) * sector, e = 1;
               a < l.addr + uint64_t(s + 1) * sector; a += e) {
            const int g = grid_of(a, memory::AddressSpace::Global);
            e = g < 0 ? 1 : m_spans[size_t(g)].elem_bytes;  // each element once, at its dtype
            if (g < 0) continue;
            const TileGrid& tg = m_r.grids[size_t(g)];
            const auto [br, bc] = tg.bin_of(m_spans[size_t(g)].elem_of(a));
            count[tg.offset + br * size_t(tg.bin_cols) + bc] += 1;
          }
        }
      }
    }
    std::vector<uint8_t> out(m_bins, 0);
    for (const TileGrid& g : m_r.grids)
      for (size_t i = 0; i < g.bins(); ++i)
        out[g.offset + i] =
            uint8_t(std::lround(255.0 * std::min(1.0, count[g.offset + i] * g.inv_elems[i])));
    return out;
  }

  void snapshot(uint64_t step) {
    GpuTilesFrame f;
    f.step = step;
    f.l2 = held(m_main, m_main.level_count() - 1);
    f.l1 = held(m_l1, 0);
    f.wave = m_wave;
    f.block = m_box;
    f.warp = m_warp;
    f.warp_more = m_warp_more;
    m_r.frames.push_back(std::move(f));
    // Counters over time: the whole hierarchy's counters so far (every block up to here).
    std::vector<memory::Counters> c;
    for (int level = 0; level <= m_main.level_count(); ++level) c.push_back(m_main.counters(level));
    m_r.frame_counters.push_back(std::move(c));
    m_r.frame_accesses.push_back(m_main.trace_accesses());
    m_r.frame_step.push_back(step);
    m_p.fraction = std::min(0.99, m_p.fraction + 0.001);
  }

  void clear_step() {
    std::fill(m_wave.begin(), m_wave.end(), uint8_t{0});
    m_box.assign(m_box.size(), TileBox{});
    m_warp.clear();
    m_warp_more = 0;
    m_touched = false;
  }

  void thin() {
    // Keep frame 0 and every other one after it.
    const auto keep = [](auto& v) {
      size_t n = 0;
      for (size_t i = 0; i < v.size(); i += 2, ++n)
        if (n != i) v[n] = std::move(v[i]);  // a vector moved onto itself is left empty
      v.resize(n);
    };
    keep(m_r.frames);
    keep(m_r.frame_counters);
    keep(m_r.frame_accesses);
    keep(m_r.frame_step);
    m_every *= 2;
  }

  GpuTilesResult& m_r;
  std::vector<TileGridSpan> m_spans;
  JobProgress& m_p;
  memory::Hierarchy m_main, m_l1;
  uint32_t m_banks, m_bank_width;
  size_t m_bins = 0;
  int32_t m_picked_warp = 0;
  std::vector<uint8_t> m_wave;
  std::vector<TileBox> m_box;
  std::vector<GpuWarpAccess> m_warp;
  uint32_t m_warp_more = 0;
  bool m_touched = false;
  uint64_t m_step = 0, m_count = 0, m_every = 1;
};

}  // namespace

GpuTilesResult record_gpu_tiles(const schedule::Kernel& k, const predict::Machine& m, int64_t block,
                                int warp, JobProgress& progress) {
  if (const std::string why = gpu_tiles_unavailable(k, m); !why.empty())
    throw std::invalid_argument("GPU tiles: " + why);
  GpuTilesResult r;
  r.kernel = k.name;
  r.machine = m.name;
  const schedule::LaunchConfig lc = schedule::launch_config(k);
  r.grid = lc.grid;
  r.block_dims = lc.block;
  r.blocks = lc.blocks();
  schedule::TraceOptions to = predict::trace_options_for(m);
  to.lane_detail = true;
  const BodySteps steps = body_steps(k);
  to.step_loop = steps.step_loop;
  r.step_loop = steps.step_loop;
  r.blocks_in_turn = !steps.interleaved;
  r.resident = std::max<int64_t>(1, to.resident_blocks);
  r.waves = (r.blocks + r.resident - 1) / r.resident;
  r.warp_size = int(to.warp_size);
  r.sector_bytes = to.sector_bytes;
  const int64_t threads = lc.threads();
  r.warps_per_block = int((threads + r.warp_size - 1) / r.warp_size);
  if (block < 0 || block >= r.blocks)
    throw std::invalid_argument("GPU tiles: block " + std::to_string(block) +
                                " is not in the grid (0 … " + std::to_string(r.blocks - 1) + ")");
  if (warp < 0 || warp >= r.warps_per_block)
    throw std::invalid_argument("GPU tiles: warp " + std::to_string(warp) +
                                " is not in a block of " + std::to_string(threads) +
                                " threads (0 … " + std::to_string(r.warps_per_block - 1) + ")");
  r.block = block;
  r.warp = warp;
  r.wave = block / r.resident;
  r.sm = block % r.resident;
  // The picker's cells: the launch index of the block at each (x, y, z).
  const int64_t cells = r.blocks;
  if (cells > (int64_t(1) << 20))
    throw std::invalid_argument("GPU tiles: " + std::to_string(cells) +
                                " blocks are more than the picker draws (1,048,576)");
  r.block_at.assign(size_t(cells), 0);
  for (int64_t pid = 0; pid < r.blocks; ++pid) {
    const std::array<int64_t, 3> c = schedule::block_coords(k, pid);
    // block_coords gives loop values; the grid's x, y, z are those of the block loops in order.
    const int64_t x = std::clamp<int64_t>(c[0], 0, r.grid[0] - 1);
    const int64_t y = std::clamp<int64_t>(c[1], 0, r.grid[1] - 1);
    const int64_t z = std::clamp<int64_t>(c[2], 0, r.grid[2] - 1);
    r.block_at[size_t((z * r.grid[1] + y) * r.grid[0] + x)] = pid;
  }
  const memory::HierarchyConfig hc = m.hierarchy();
  r.l1_name = hc.levels.front().name;
  r.l1_bytes = hc.levels.front().size_bytes;
  r.l2_name = hc.levels.back().name;
  r.l2_bytes = hc.levels.back().size_bytes;

  const schedule::TraceLayout layout = schedule::trace_layout(k, to);
  std::vector<TileGridSpan> spans;
  r.grids = make_tile_grids(k, layout, to, spans);
  GpuTileSink sink(r, m, spans, progress);
  try {
    schedule::trace_kernel(k, sink, to);
  } catch (const WaveDone&) {
  }
  sink.finish();
  for (size_t i = 0; i < r.frames.size(); ++i)
    if (std::any_of(r.frames[i].block.begin(), r.frames[i].block.end(),
                    [](const TileBox& b) { return !b.empty(); })) {
      r.first_block_frame = i;
      break;
    }
  progress.fraction = 1.0;
  return r;
}

}  // namespace tilescope::core

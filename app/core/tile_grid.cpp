// The Tiles animation's walk: the grids of a kernel's tensors (tile_grid.h) and the loop nest
// walked once, counting accesses per bin and snapshotting them at step boundaries.
#include "app/core/tile_grid.h"

#include "sim/schedule/trace.h"

#include <algorithm>
#include <cmath>
#include <memory>

namespace tilescope::core {

std::vector<TileGrid> make_tile_grids(const schedule::Kernel& k,
                                      const schedule::TraceLayout& layout,
                                      const schedule::TraceOptions& options,
                                      std::vector<TileGridSpan>& spans) {
  std::vector<TileGrid> grids;
  spans.clear();
  size_t bins = 0;
  const std::vector<schedule::StageArea> areas = schedule::stage_areas(k, options);
  // Each tensor, then the staged copies of it (beside it in the view).
  struct Entry {
    int tensor = -1, area = -1;
  };
  std::vector<Entry> entries;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    entries.push_back({int(i), -1});
    for (size_t a = 0; a < areas.size(); ++a)
      if (areas[a].tensor == int(i) && areas[a].bytes > 0) entries.push_back({int(i), int(a)});
  }
  for (const Entry& e : entries) {
    const schedule::KernelTensor& t = k.tensors[size_t(e.tensor)];
    const schedule::StageArea* area = e.area >= 0 ? &areas[size_t(e.area)] : nullptr;
    TileGrid g;
    g.name = area ? area->buffer : t.name;
    g.output = !area && t.role == schedule::TensorRole::Output;
    if (area) {
      g.staged_from = t.name;
      g.level = schedule::mem_level_name(area->level);
    }
    // The area holds one buffer, or two when double-buffered (drawn one below the other).
    const uint32_t elem_bytes = area ? area->elem_bytes : t.elem_bytes();
    const int64_t elems = area ? std::max<int64_t>(int64_t(area->bytes / elem_bytes), 1)
                               : std::max<int64_t>(t.alloc_elems(), 1);
    // Memory order: a row is one pitch of the fastest-varying dim (the second-smallest stride).
    std::vector<int64_t> strides = area ? area->strides : t.strides;
    std::sort(strides.begin(), strides.end());
    g.cols = strides.size() >= 2 ? std::max<int64_t>(strides[1], 1) : elems;
    g.rows = (elems + g.cols - 1) / g.cols;
    g.bin_rows = static_cast<int>(std::min<int64_t>(g.rows, kTileBins));
    g.bin_cols = static_cast<int>(std::min<int64_t>(g.cols, kTileBins));
    g.offset = bins;
    bins += g.bins();
    std::vector<int64_t> rows_in(size_t(g.bin_rows), 0), cols_in(size_t(g.bin_cols), 0);
    for (int64_t r = 0; r < g.rows; ++r) ++rows_in[size_t(r * g.bin_rows / g.rows)];
    for (int64_t c = 0; c < g.cols; ++c) ++cols_in[size_t(c * g.bin_cols / g.cols)];
    for (int r = 0; r < g.bin_rows; ++r)
      for (int c = 0; c < g.bin_cols; ++c)
        g.inv_elems.push_back(
            1.0 / double(std::max<int64_t>(1, rows_in[size_t(r)] * cols_in[size_t(c)])));
    grids.push_back(g);
    const uint64_t base = area ? area->addr : layout.tensor_base[size_t(e.tensor)];
    spans.push_back({base, base + uint64_t(elems) * elem_bytes,
                     area ? area->space : memory::AddressSpace::Global, elem_bytes});
  }
  return grids;
}

namespace {

// Counts accesses per bin of each kernel tensor and snapshots the counts at step boundaries.
class TileSink final : public memory::AccessSink {
 public:
  TileSink(TilesResult& r, const schedule::TraceLayout& layout, const schedule::Kernel& k,
           uint64_t every, uint64_t expected_steps, JobProgress& p, memory::Hierarchy* h)
      : m_r(r),
        m_every(std::max<uint64_t>(every, 1)),
        m_expected(std::max<uint64_t>(expected_steps, 1)),
        m_p(p),
        m_h(h) {
    m_r.grids = make_tile_grids(k, layout, schedule::TraceOptions{}, m_spans);
    size_t bins = 0;
    for (const TileGrid& g : m_r.grids) bins += g.bins();
    m_counts.assign(bins, 0);
    m_tile.assign(m_r.grids.size(), TileBox{});
    m_last_tile = m_tile;
  }
  void access(const memory::Access& a) override { access_batch(&a, 1); }
  void access_batch(const memory::Access* a, size_t n) override {
    if (m_p.cancel) throw JobCancelled();
    for (size_t i = 0; i < n; ++i) count(a[i]);
    if (m_h) {
      if (!m_touch.empty())
        for (size_t i = 0; i < n; ++i) {
          const uint64_t line = a[i].addr / m_line;
          m_touch[slot(line)] = {line, m_accesses + i};
        }
      m_accesses += n;
      m_h->access_batch(a, n);
    }
  }
  // The hierarchy's counters and small grids now (frame 0: before any access).
  void snapshot_counters() {
    if (!m_h) return;
    std::vector<memory::Counters> c;
    for (int level = 0; level <= m_h->level_count(); ++level) c.push_back(m_h->counters(level));
    m_r.frame_counters.push_back(std::move(c));
    m_r.frame_accesses.push_back(m_h->trace_accesses());
    std::vector<CacheGrid> grids;
    for (int level = 0; level < m_h->level_count(); ++level) {
      std::optional<CacheGrid> g = snapshot_cache_grid(*m_h, level);
      if (!g) continue;
      for (CacheCell& cell : g->cells) {
        if (!cell.valid) continue;
        // The line in bytes, then in the walk's smallest line: when the core last touched it.
        const uint64_t line = cell.line * g->line_bytes / m_line;
        const Touch& t = m_touch[slot(line)];
        if (t.line == line) cell.age = m_accesses - 1 - t.access;
      }
      grids.push_back(std::move(*g));
    }
    m_r.frame_grids.push_back(std::move(grids));
  }
  void step_boundary(uint64_t step) override {
    m_step = step;
    // The step that just ended is the current tile until the next one ends.
    m_last_tile = m_tile;
    m_tile.assign(m_tile.size(), TileBox{});
    if (step % m_every == 0 && step > 0) {
      snapshot(step);
      m_p.fraction = std::min(0.99, double(step) / double(m_expected));
    }
  }
  void finish(uint64_t steps) {
    if (std::any_of(m_tile.begin(), m_tile.end(), [](const TileBox& b) { return !b.empty(); }))
      m_last_tile = m_tile;
    snapshot(steps);
    m_r.steps = steps;
  }
  uint64_t last_step() const { return m_step; }

 private:
  void count(const memory::Access& a) {
    for (size_t t = 0; t < m_spans.size(); ++t) {
      const TileGridSpan& s = m_spans[t];
      if (a.space != s.space || a.addr < s.begin || a.addr >= s.end) continue;
      const TileGrid& g = m_r.grids[t];
      // A GPU sector covers several elements: count each element it holds.
      const uint64_t first = s.elem_of(a.addr);
      const uint64_t last =
          std::min<uint64_t>(first + s.elems_in(a.size), uint64_t(g.rows * g.cols));
      for (uint64_t e = first; e < last; ++e) {
        const auto [br, bc] = g.bin_of(e);
        ++m_counts[g.offset + br * size_t(g.bin_cols) + bc];
        TileBox& b = m_tile[t];
        if (b.empty()) {
          b = {int(br), int(bc), int(br), int(bc)};
        } else {
          b.r0 = std::min(b.r0, int(br)), b.r1 = std::max(b.r1, int(br));
          b.c0 = std::min(b.c0, int(bc)), b.c1 = std::max(b.c1, int(bc));
        }
      }
      return;
    }
  }
  void snapshot(uint64_t step) {
    if (m_r.frames.size() >= size_t(kMaxTileFrames) + 1) return;
    snapshot_counters();
    m_r.frames.push_back(m_counts);
    m_r.frame_step.push_back(step);
    m_r.frame_tiles.push_back(m_last_tile);
  }

  TilesResult& m_r;
  uint64_t m_every;
  uint64_t m_expected;
  JobProgress& m_p;
  std::vector<TileGridSpan> m_spans;  // per grid: its bytes
  std::vector<uint32_t> m_counts;
  std::vector<TileBox> m_tile, m_last_tile;  // per grid: this step's bins, the last step's
  uint64_t m_step = 0;
  // Counters over time: the hierarchy, accesses so far, and per line (of the smallest line
  // size) the access that last touched it.
  memory::Hierarchy* m_h = nullptr;
  uint64_t m_accesses = 0;
  uint64_t m_line = 64;
  // When each line was last touched, in a fixed table (a line's slot by hash; a later line in the
  // same slot replaces it, and its age is then unknown): the lines a drawable cache holds (at
  // most kMaxGridSets × kMaxGridWays a level) are among the most recently touched, so they are
  // nearly always still there, and the table never grows with the kernel's footprint.
  struct Touch {
    uint64_t line = ~uint64_t(0), access = 0;
  };
  static constexpr int kTouchBits = 18;
  std::vector<Touch> m_touch;
  static size_t slot(uint64_t line) {
    return size_t((line * 0x9E3779B97F4A7C15ull) >> (64 - kTouchBits));
  }

 public:
  // The smallest line of the hierarchy, and whether any level is small enough to draw (else no
  // ages are kept).
  void set_lines(uint64_t line, bool drawn) {
    m_line = std::max<uint64_t>(line, 1);
    if (drawn) m_touch.assign(size_t(1) << kTouchBits, Touch{});
  }
};

}  // namespace

TilesResult record_tiles(const schedule::Kernel& k, JobProgress& progress,
                         const predict::Machine* machine) {
  TilesResult r;
  r.kernel = k.name;
  std::unique_ptr<memory::Hierarchy> h;
  if (machine && machine->kind != "gpu") {
    h = std::make_unique<memory::Hierarchy>(machine->hierarchy());
    r.machine = machine->name;
    for (int level = 0; level < h->level_count(); ++level)
      r.level_names.push_back(h->config().levels[size_t(level)].name);
    r.level_names.push_back(h->config().memory.name);
  }
  // The step loop: the deepest loop whose iterations (the product of the extents down to it)
  // stay under a few thousand, so the animation moves tile by tile, not element by element.
  double iterations = 1;
  for (const schedule::Loop& l : k.loops) {
    if (iterations * double(l.extent) > 4096 && !r.step_loop.empty()) break;
    iterations *= double(l.extent);
    r.step_loop = l.name;
  }
  const uint64_t expected = uint64_t(std::max(iterations, 1.0));
  schedule::TraceOptions to;
  to.step_loop = r.step_loop;
  const schedule::TraceLayout layout = schedule::trace_layout(k, to);
  TileSink sink(r, layout, k, (expected + kMaxTileFrames - 1) / kMaxTileFrames, expected, progress,
                h.get());
  if (h) {
    uint64_t line = ~uint64_t(0);
    for (const memory::CacheConfig& c : h->config().levels)
      line = std::min<uint64_t>(line, c.line_bytes);
    bool drawn = false;
    for (int level = 0; level < h->level_count(); ++level)
      drawn = drawn || snapshot_cache_grid(*h, level).has_value();
    sink.set_lines(h->config().levels.empty() ? 64 : line, drawn);
  }
  sink.snapshot_counters();                     // frame 0: an empty hierarchy
  r.frames.push_back(std::vector<uint32_t>());  // frame 0: nothing touched yet (filled below)
  r.frame_step.push_back(0);
  r.frame_tiles.emplace_back();  // frame 0: no tile yet (sized below)
  const schedule::TraceSummary s = schedule::trace_kernel(k, sink, to);
  sink.finish(s.steps);
  for (TileGrid& g : r.grids)
    for (size_t i = 0; i < g.inv_elems.size(); ++i) {
      double& peak = g.staged_from.empty() ? r.peak_per_element : g.peak_per_element;
      peak = std::max(peak, r.frames.back()[g.offset + i] * g.inv_elems[i]);
    }
  size_t bins = 0;
  for (const TileGrid& g : r.grids) bins += size_t(g.bin_rows) * size_t(g.bin_cols);
  r.frames[0].assign(bins, 0);
  r.frame_tiles[0].assign(r.grids.size(), TileBox{});
  progress.fraction = 1.0;
  return r;
}

// [SECTION] Counters over time

std::vector<LevelWindow> counters_window(const CountersOverTime& r, size_t frame) {
  std::vector<LevelWindow> out;
  if (frame >= r.frame_counters.size()) return out;
  for (size_t level = 0; level < r.level_names.size(); ++level) {
    const memory::Counters& now = r.frame_counters[frame][level];
    const memory::Counters before =
        frame == 0 ? memory::Counters{} : r.frame_counters[frame - 1][level];
    LevelWindow w;
    w.level = r.level_names[level];
    w.accesses = now.accesses - before.accesses;
    w.hits = now.hits - before.hits;
    w.bytes = (now.read_bytes + now.write_bytes) - (before.read_bytes + before.write_bytes);
    out.push_back(w);
  }
  return out;
}

nlohmann::json counters_window_json(const CountersOverTime& r, size_t frame) {
  nlohmann::json levels = nlohmann::json::array();
  for (const LevelWindow& w : counters_window(r, frame))
    levels.push_back({{"level", w.level},
                      {"accesses", w.accesses},
                      {"hits", w.hits},
                      {"hit_rate", w.hit_rate()},
                      {"bytes", w.bytes}});
  return {{"machine", r.machine},
          {"frame", frame},
          {"accesses", frame < r.frame_accesses.size() ? r.frame_accesses[frame] : 0},
          {"window", levels}};
}

}  // namespace tilescope::core

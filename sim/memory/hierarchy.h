// The memory hierarchy simulator: cache levels above a main memory, plus an optional scratchpad,
// driven by a streamed address trace through the AccessSink interface.
//
// Lifecycle: construct from a HierarchyConfig (usually predict::Machine::hierarchy()), feed accesses
// with access_batch() (or access(), or through an AccessBuffer), call finish() at the end, then
// read counters per level and per tensor. step_boundary() calls the on_step callback, which is how
// animations take snapshots (resident_lines()); nothing is recorded when no callback is set.
//
// Semantics, per level (all documented here so the tests' reference model can follow them):
// - A request is split into the level's sectors (sector = line unless the level is sectored).
//   Each sector is one access: a hit when its line is present and the sector valid.
// - Read miss: choose a victim (invalid way first), evict it (dirty sectors are written to the
//   level below, one request per sector), install the line, fetch the sector from below.
// - Write miss with write-allocate: as a read miss, except that a write covering the whole sector
//   does not fetch it (nothing to merge). Without write-allocate the write goes below, no install.
// - Write-back levels mark the sector dirty; write-through levels send every write below.
// - An inclusive level that evicts a line invalidates it in every level above; dirty copies there
//   are merged into the eviction (the line is then written back from this level).
// - 3C (when options.classify_misses): compulsory = first access to the sector ever; capacity =
//   a fully-associative LRU cache with as many sectors as this level would miss too; else conflict.
#pragma once

#include "sim/memory/access.h"
#include "sim/memory/analysis.h"
#include "sim/memory/cache.h"
#include "sim/memory/scratchpad.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::memory {

struct MemoryConfig {
  std::string name = "DRAM";
  uint64_t size_bytes = 0;           // 0 = not known
  double bandwidth_bytes_per_s = 0;  // 0 = not known
  double latency_ns = 0;             // 0 = not known
};

inline constexpr size_t kMaxLevels = 8;  // cache levels a hierarchy may have

struct HierarchyConfig {
  std::vector<CacheConfig> levels;  // closest to the core first
  MemoryConfig memory;
  std::optional<ScratchpadConfig> scratchpad;
  std::string check() const;  // "" when usable, else the first problem
};

struct HierarchyOptions {
  bool classify_misses = false;  // 3C split (read from each level's reuse distances)
  bool reuse_distance = false;   // reuse-distance histogram per level
  // 3C and reuse analysed on a second thread while this one simulates the caches (the same
  // numbers; AnalysisPipeline).
  bool analysis_thread = false;
  // Always take the general request path, even where the specialised one applies (see
  // Hierarchy::fast_path()). For tests that demand identical counters from both.
  bool force_general_path = false;
};

// Counts for one level (or one tensor at one level). Main memory uses accesses, reads, writes,
// read_bytes and write_bytes only (every access "hits"). Every access is a read or a write and a
// hit or a miss, so the hierarchy stores neither `accesses` nor `hits` while it runs (two fewer
// increments per simulated access) and derives them (with_totals) when asked.
struct Counters {
  uint64_t accesses = 0, reads = 0, writes = 0;
  uint64_t hits = 0, misses = 0;
  uint64_t compulsory = 0, capacity = 0, conflict = 0;  // with classify_misses; sum to misses
  uint64_t sector_misses = 0;       // misses that found the line but not the sector
  uint64_t evictions = 0;           // valid lines replaced
  uint64_t writebacks = 0;          // evictions (or flushes) of dirty lines
  uint64_t back_invalidations = 0;  // lines invalidated here by an inclusive level below
  uint64_t read_bytes = 0;          // bytes of read requests that reached this level
  uint64_t write_bytes = 0;         // bytes of write requests that reached this level
  Counters& operator+=(const Counters& o);
  // hits / accesses; 0 for a level nothing reached.
  double hit_rate() const { return accesses ? double(hits) / double(accesses) : 0.0; }
};

// `c` with accesses = reads + writes and hits = accesses − misses.
Counters with_totals(Counters c);

struct ResidentLine {
  uint64_t addr = 0;    // first byte of the line
  uint32_t bytes = 0;   // line size
  int16_t tensor = -1;  // tensor whose access brought the line in
  uint32_t valid_sectors = 0, dirty_sectors = 0;
};

class Hierarchy final : public AccessSink {
 public:
  explicit Hierarchy(HierarchyConfig config, HierarchyOptions options = {});
  ~Hierarchy() override;
  Hierarchy(const Hierarchy&) = delete;
  Hierarchy& operator=(const Hierarchy&) = delete;

  void access(const Access& a) override { access_batch(&a, 1); }
  void access_batch(const Access* accesses, size_t count) override;
  void step_boundary(uint64_t step) override;

  using StepCallback = std::function<void(uint64_t step, const Hierarchy&)>;
  void on_step(StepCallback callback) { m_on_step = std::move(callback); }

  // Completes any partly gathered scratchpad warp access and the side analyses. Call once the
  // trace has ended (the queries below also wait for the analyses).
  void finish();
  // Writes every dirty line down to main memory (counted as write-backs), leaving lines clean:
  // "the kernel's results reach memory".
  void write_back_all();
  // A sampled run's estimates (predict/sampling.h) in place of the counters: per level, main
  // memory last, the rows by tensor + 1; the scratchpad's statistics; the trace's access count.
  void set_estimate(const std::vector<std::vector<Counters>>& rows,
                    const ScratchpadStats& scratchpad, uint64_t trace_accesses);

  int level_count() const { return static_cast<int>(m_levels.size()); }
  const HierarchyConfig& config() const { return m_config; }
  const HierarchyOptions& options() const { return m_options; }
  const Cache& cache(int level) const;
  // level in [0, level_count()]; level_count() is main memory. Index = tensor + 1 (0 = unknown).
  std::vector<Counters> counters_by_tensor(int level) const;
  Counters counters(int level) const;  // summed over tensors
  Counters counters(int level, int tensor) const;
  int max_tensor() const;                       // largest tensor id seen, -1 when none
  const ReuseDistance* reuse(int level) const;  // nullptr unless options.reuse_distance
  const Scratchpad* scratchpad() const { return m_scratchpad.get(); }
  uint64_t trace_accesses() const { return m_trace_accesses; }
  // Bytes held by the levels' tag stores and replacement state (Cache::memory_bytes()), the bulk
  // of a hierarchy's memory.
  size_t cache_memory_bytes() const;
  // True when accesses take the specialised path: chosen once, at construction, for the common
  // configuration — every level whole-line (unsectored), non-inclusive, write-back and
  // write-allocate, with lines no shorter than the level above's.
  // The counters are the same either way; only the speed differs.
  bool fast_path() const { return m_fast; }
  // Lines currently held by `level`, in set/way order. O(lines); meant for step callbacks.
  std::vector<ResidentLine> resident_lines(int level) const;

 private:
  struct Level;
  struct FastLevel;
  void request(size_t k, uint64_t addr, uint32_t size, bool write, int16_t tensor);
  void unit_access(size_t k, uint64_t unit, uint64_t addr, uint32_t bytes, bool write,
                   int16_t tensor);
  void evict(size_t k, uint64_t way);
  template <bool common, int order>
  void fast_batch(const Access* accesses, size_t count);
  template <int order>
  bool fast_lookup(const FastLevel& F, size_t k, uint64_t line, uint32_t bytes, bool write,
                   int16_t tensor, size_t row, uint64_t& way);
  bool fast_lookup_any(const FastLevel& F, size_t k, uint64_t line, uint32_t bytes, bool write,
                       int16_t tensor, size_t row, uint64_t& way);
  template <int order>
  uint64_t fast_miss0(uint64_t line, uint32_t bytes, bool write, int16_t tensor);
  void fast_access(size_t k, uint64_t addr, uint32_t bytes, bool write, int16_t tensor);
  void memory_access(uint32_t bytes, bool write, int16_t tensor);
  bool back_invalidate(size_t k, uint64_t addr, uint32_t bytes);
  void shared_access(const Access& a);
  void flush_warp();
  // Level k's access of `unit` for the side analyses: a hit, or a miss in counter row `row`.
  void note(size_t k, uint64_t unit, bool hit, size_t row) {
    if (m_analysis)
      m_analysis->record(
          k, unit,
          hit || !m_options.classify_misses ? AnalysisPipeline::kHit : static_cast<uint32_t>(row));
  }
  // Counter rows: index 0 for accesses without a tensor, tensor + 1 otherwise.
  static size_t row_of(int16_t tensor) { return tensor < 0 ? 0 : static_cast<size_t>(tensor) + 1; }
  // Inline because every simulated access bumps one; the rare growth path stays out of line.
  Counters& counter(size_t k, int16_t tensor) {
    const size_t i = row_of(tensor);
    if (i < m_rows) [[likely]]
      return m_row_data[k][i];
    grow_counters(i);
    return m_row_data[k][i];
  }
  // Every level's row grows to at least index + 1 (all levels keep the same number of rows, so a
  // row that exists at one level exists at all of them: the fast path checks once per access).
  void grow_counters(size_t index);

  HierarchyConfig m_config;
  HierarchyOptions m_options;
  std::vector<std::unique_ptr<Level>> m_levels;
  std::unique_ptr<AnalysisPipeline> m_analysis;   // with classify_misses or reuse_distance
  std::vector<std::vector<Counters>> m_counters;  // [level 0..n] by tensor + 1
  // m_counters[k].data() and the common row count, kept beside it: vector::size() divides by
  // sizeof(Counters) on every hot-path counter lookup. Refreshed whenever the rows grow.
  std::vector<Counters*> m_row_data;
  size_t m_rows = 0;
  std::unique_ptr<Scratchpad> m_scratchpad;
  std::vector<LaneAccess> m_warp_lanes;
  int32_t m_warp_id = -1;
  bool m_warp_write = false;
  StepCallback m_on_step;
  uint64_t m_trace_accesses = 0;
  bool m_fast = false;
  std::vector<FastLevel> m_fast_levels;  // when m_fast: one per level
  // when m_fast: fast_batch compiled for level 0's set count and replacement order
  void (Hierarchy::*m_fast_batch)(const Access*, size_t) = nullptr;
};

}  // namespace tilescope::memory

// A small cache level's set × way grid, read from the simulator's hierarchy (memory_grid.h).
#include "app/core/memory_grid.h"

namespace tilescope::core {

std::optional<CacheGrid> snapshot_cache_grid(const memory::Hierarchy& h, int level) {
  if (level < 0 || level >= h.level_count()) return std::nullopt;
  const memory::Cache& c = h.cache(level);
  if (c.sets() > kMaxGridSets || c.ways() > kMaxGridWays) return std::nullopt;
  CacheGrid g;
  g.level = level;
  g.name = c.config().name;
  g.sets = c.sets();
  g.ways = c.ways();
  g.line_bytes = c.config().line_bytes;
  g.cells.resize(g.sets * g.ways);
  for (uint64_t set = 0; set < g.sets; ++set) {
    for (uint64_t w = 0; w < g.ways; ++w) {
      const uint64_t way = set * g.ways + w;
      CacheCell& cell = g.cells[way];
      cell.valid = c.valid(way);
      if (!cell.valid) continue;
      cell.line = c.tag(way);
      cell.tensor = c.tensor(way);
      cell.valid_sectors = c.valid_mask(way);
      cell.dirty_sectors = c.dirty_mask(way);
      cell.mru = c.mru(set) == way;
    }
  }
  return g;
}

}  // namespace tilescope::core

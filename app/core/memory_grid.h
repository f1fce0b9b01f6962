// The end state of one small cache level as a set × way grid (what the Memory view draws): per
// way its line, owning tensor, valid and dirty sectors, and whether it is its set's most recently
// used way. Taken from the simulator before the final write-back, so dirty lines still show.
//
// Pure C++ (no ImGui): the workbench takes the snapshot inside the simulation job.
#pragma once

#include "sim/memory/hierarchy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::core {

// Levels up to this many sets × ways are drawn cell by cell; larger ones would be unreadable.
inline constexpr uint64_t kMaxGridSets = 64;
inline constexpr uint64_t kMaxGridWays = 16;

struct CacheCell {
  bool valid = false;
  uint64_t line = 0;    // line number (byte address / line size); only when valid
  int16_t tensor = -1;  // graph tensor id whose access brought the line in (-1: unknown)
  uint32_t valid_sectors = 0;
  uint32_t dirty_sectors = 0;  // 0: clean
  bool mru = false;            // the set's most recently used (touched or filled) way
  // Accesses since the core last touched this line; filled by the Tiles walk's grids (0 there
  // means "this very access"), left at kNoAge by the end-of-run snapshot.
  static constexpr uint64_t kNoAge = ~uint64_t(0);
  uint64_t age = kNoAge;
};

struct CacheGrid {
  int level = 0;
  std::string name;
  uint64_t sets = 0, ways = 0;
  uint32_t line_bytes = 64;
  std::vector<CacheCell> cells;  // set-major: cells[set * ways + way]
  const CacheCell& at(uint64_t set, uint64_t way) const { return cells[set * ways + way]; }
};

// The grid of `level`, or nothing when the level has more than kMaxGridSets sets or
// kMaxGridWays ways (fully associative levels count all their lines as ways).
std::optional<CacheGrid> snapshot_cache_grid(const memory::Hierarchy& h, int level);

}  // namespace tilescope::core

// Sizing long work before it starts — the memory this computer can give, what a simulation, an
// interpreter run or a compiled run will hold, and about how long each takes — so the CLI and the
// app both refuse what cannot fit and say what a long run costs before the learner waits for it.
//
// A learner types `x: [100000, 100000]` as easily as `x: [64, 64]`. Estimates come from loop
// extents and shapes (microseconds, no walk); the rates are measured medians, used only to say
// "about N s", never to decide a result.
#pragma once

#include "sim/memory/hierarchy.h"
#include "sim/schedule/kernel.h"

#include <cstdint>
#include <string>

namespace tilescope::predict {

struct MemoryBudget {
  uint64_t bytes = 0;
  std::string source;  // where the number came from, for the refusal message
};

// TILESCOPE_MEMORY_LIMIT (bytes, or with a K/M/G suffix) when set, so tests can ask for a small
// budget; else MemAvailable from /proc/meminfo (through host_path); else a fixed 4 GiB.
MemoryBudget memory_budget();

// Accesses per second of wall time, `tilescope-cli simulate` on conv_block at N = 1, 28×28 (56.5 M
// accesses) on `tiny`, two cores (the analyses on the second), 2026-12-06: 37 M/s with the 3C
// split and reuse distances, 39 M/s with the 3C split alone, 42.5 M/s with neither — rounded
// down, as a one-core computer runs the analyses on the same core.
inline constexpr double kSimulationRateFull = 30e6;
inline constexpr double kSimulationRateOneAnalysis = 33e6;
inline constexpr double kSimulationRatePlain = 40e6;
double typical_simulation_rate(bool classify_misses, bool reuse_distance);

// Element accesses per second of the reference interpreter (plus the graph's reference), measured
// on a 256³ matmul: 33.6 M accesses in 1.3 s of CPU time.
inline constexpr double kInterpreterRate = 20e6;

// Bytes of a kernel's buffers as the interpreter holds them: one float per allocated element
// (padding included), whatever the dtype.
uint64_t kernel_buffer_bytes(const schedule::Kernel& k);

// Memory a simulation of `k` holds: every level's tag arrays, and for the 3C split and the reuse
// histogram a hash entry per distinct sector or line the trace touches (at most the kernel's
// buffers, which the walker lays out once; the entries are open-addressed 16-byte slots at most
// 3/4 full, doubled when they fill: ~48 bytes each counting a rehash, and the reuse tree adds 8),
// plus 64 MiB for the program, the report and the walker's buffers.
uint64_t simulation_bytes(const schedule::Kernel& k, const memory::HierarchyConfig& h,
                          bool classify_misses, bool reuse_distance);

}  // namespace tilescope::predict

// Memory probe: measures, on one thread of this CPU, what a line costs at each level of the
// memory hierarchy for the two kinds of access the simulator tells apart —
//   streaming: reading a buffer front to back, which the hardware prefetchers see coming, and
//   strided:   reading one line per 4 KiB row, column after column (a row-major matrix walked down
//              its columns, as naive ijk GEMM walks B), which no prefetcher follows across pages.
// Each level gets a buffer that fits it but not the level above it, so the loads are served
// there. The results become a machine file (`tilescope-cli probe`), whose per-level `bandwidth`
// and `strided_line` the roofline uses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::kernels {

struct LevelProbe {
  std::string name;           // "L1", "L2", "L3", "DRAM"
  uint64_t size_bytes = 0;    // the level's size (0 for DRAM)
  uint64_t buffer_bytes = 0;  // the buffer the probe walked
  double stream_gbps = 0;     // streaming read bandwidth, GB/s (best of the repeats)
  double strided_line_ns = 0; // ns per line of the strided walk (best of the repeats)
};

struct MemoryProbe {
  std::vector<LevelProbe> levels;  // closest to the core first, DRAM last
  std::string method;              // how it was measured, for the machine file's header
};

// `cache_bytes`: sizes of the data/unified cache levels, closest first (from sysfs);
// `dram_buffer_bytes`: the DRAM buffer (0 = four times the last level, at least 256 MiB, at
// most 1 GiB). `quick` shortens every measurement (tests).
MemoryProbe probe_memory(const std::vector<uint64_t>& cache_bytes, uint64_t dram_buffer_bytes,
                         bool quick);

}  // namespace tilescope::kernels

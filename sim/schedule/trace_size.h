// How many accesses trace_kernel() will walk for a kernel, counted from its loop extents in
// microseconds, so a caller can say how big a simulation is (and refuse one) before starting it.
#pragma once

#include "sim/schedule/kernel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilescope::schedule {

struct TraceSize {
  // Element accesses of the loop nest: per statement, (loads + stores + stack-accumulator reads
  // and writes) × its iterations. The walker does work per element in GPU mode too (lanes are
  // coalesced into sectors after their addresses are computed), so this measures its work either
  // way. Tile copies are not counted; tail tiles count at the loops' full extents.
  double accesses = 0;
  std::string formula;  // "2·n_n·n_k·n_c·... + n_n·n_k·..." over the kernel's axes
};

// `gpu`: as traced in GPU mode, where accumulators are registers (no traffic).
TraceSize estimate_trace_size(const Kernel& k, bool gpu = false);

// The loops a sampled trace (TraceSampler in trace.h) can take its units from, outermost first:
// from the top of the nest, each time the serial loop that holds most of the work below (thread
// loops, and the block loops of a GPU trace, are passed through). For each, the units its
// iterations make over the whole walk and its share of the work (statement executions; tail
// guards ignored, so an estimate for ragged tiles). In GPU mode the loop the resident blocks walk
// together makes one unit per wave of `resident` blocks per iteration.
struct UnitLoop {
  int loop = -1;  // Kernel::loops index
  std::string name;
  double units = 0;
  double work_share = 0;  // of the walk's statement executions, in [0, 1]
};
std::vector<UnitLoop> unit_chain(const Kernel& k, bool gpu, int64_t resident);

}  // namespace tilescope::schedule

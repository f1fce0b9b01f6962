// How many accesses trace_kernel() will walk for a kernel, counted from its loop extents in
// microseconds, so a caller can say how big a simulation is (and refuse one) before starting it.
#pragma once

#include "sim/schedule/kernel.h"

#include <string>

namespace tilescope::schedule {

struct TraceSize {
  // Element accesses of the loop nest: per statement, (loads + stores + stack-accumulator reads
  // and writes) × its iterations. The walker does work per element in GPU mode too (lanes are
  // coalesced into sectors after their addresses are computed), so this measures its work either
  // way. Tile copies are not counted; tail tiles count at the loops' full extents.
  double accesses = 0;
  std::string formula;  // "2·n_n·n_k·n_c·... + n_n·n_k·..." over the kernel's axes
};

TraceSize estimate_trace_size(const Kernel& k);

}  // namespace tilescope::schedule

// A kernel's FLOPs from the graph's cost table (kernel_facts.h).
#include "app/core/kernel_facts.h"

namespace tilescope::core {

int64_t kernel_flops(const schedule::Kernel& k, const graph::Graph& g) {
  int64_t flops = 0;
  for (graph::OpId op : k.ops) flops += g.op_cost(op).flops;
  return flops;
}

}  // namespace tilescope::core

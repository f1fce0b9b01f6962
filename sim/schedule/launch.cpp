// The CUDA launch a kernel's bindings make: grid and block sizes, dynamic shared memory, the order
// blocks are launched in, and the launch described for a learner.
#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <string>

namespace tilescope::schedule {

bool binds_blocks(const Kernel& k) {
  return std::any_of(k.loops.begin(), k.loops.end(), [](const Loop& l) { return is_block(l.kind); });
}

std::string describe_launch(const LaunchConfig& lc) {
  const int64_t blocks = lc.blocks();
  const int64_t threads = lc.threads();
  auto dims = [](const std::array<int64_t, 3>& d) {
    return std::to_string(d[0]) + "×" + std::to_string(d[1]) + "×" + std::to_string(d[2]);
  };
  std::string s = "grid " + dims(lc.grid) + " = " + std::to_string(blocks) +
                  (blocks == 1 ? " block" : " blocks") + ", block " + dims(lc.block) + " = " +
                  std::to_string(threads) + (threads == 1 ? " thread" : " threads") +
                  ", dynamic shared memory " + std::to_string(lc.dynamic_smem_bytes) + " B";
  if (blocks == 1 && threads == 1)
    s += " — nothing is bound yet, so one thread of one block would run the whole loop nest; "
         "bind(LOOP, block.x) and bind(LOOP, thread.x) spread it over the GPU";
  else if (threads == 1)
    s += " — one thread per block: bind a loop to thread.x so each block's work is shared";
  else if (blocks == 1)
    s += " — one block, on one SM of many: bind a loop to block.x to use the others";
  return s;
}

LaunchConfig launch_config(const Kernel& k) {
  LaunchConfig lc;
  for (const auto& l : k.loops) {
    switch (l.kind) {
      case LoopKind::BlockX:
        lc.grid[0] = l.extent;
        break;
      case LoopKind::BlockY:
        lc.grid[1] = l.extent;
        break;
      case LoopKind::BlockZ:
        lc.grid[2] = l.extent;
        break;
      case LoopKind::ThreadX:
        lc.block[0] = l.extent;
        break;
      case LoopKind::ThreadY:
        lc.block[1] = l.extent;
        break;
      case LoopKind::ThreadZ:
        lc.block[2] = l.extent;
        break;
      default:
        break;
    }
  }
  if (k.block_order == BlockOrder::Grouped) {
    lc.grid = {lc.blocks(), 1, 1};
  }
  const LoweredKernel lk = build_loop_tree(k);
  for (size_t s = 0; s < k.stages.size(); ++s) {
    if (k.stages[s].level != MemLevel::Shared) continue;
    int64_t elems = 0;
    for (const auto& pl : lk.stages)
      if (pl.spec == int(s)) elems = std::max(elems, pl.elems);
    lc.dynamic_smem_bytes += elems * 4 * (k.stages[s].double_buffer ? 2 : 1);
  }
  return lc;
}

std::array<int64_t, 3> block_coords(const Kernel& k, int64_t pid) {
  int64_t ext[3] = {1, 1, 1};
  for (const auto& l : k.loops) {
    if (l.kind == LoopKind::BlockX) ext[0] = l.extent;
    if (l.kind == LoopKind::BlockY) ext[1] = l.extent;
    if (l.kind == LoopKind::BlockZ) ext[2] = l.extent;
  }
  if (k.block_order == BlockOrder::Grouped) {
    const int64_t num_m = ext[1], num_n = ext[0];
    const int64_t in_group = k.group * num_n;
    const int64_t first_m = (pid / in_group) * k.group;
    const int64_t group_m = std::min(num_m - first_m, k.group);
    return {(pid % in_group) / group_m, first_m + (pid % in_group) % group_m, 0};
  }
  return {pid % ext[0], (pid / ext[0]) % ext[1], pid / (ext[0] * ext[1])};
}

}  // namespace tilescope::schedule

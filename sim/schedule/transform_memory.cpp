// The memory primitives: stage (a tile copied into shared memory, a scratchpad or registers),
// block_order, layout and pad, and the bank-conflict degree of a warp's read of a shared tile.
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/lower.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace tilescope::schedule::detail {

// [SECTION] Memory primitives

namespace {

std::string level_capacity_text(MemLevel l, const Target& t) {
  switch (l) {
    case MemLevel::Shared:
      return format_bytes(t.smem_bytes_per_block) + " of shared memory a block may use";
    case MemLevel::Scratchpad:
      return format_bytes(t.cpu_l1_bytes) + " L1 cache";
    case MemLevel::Registers:
      return format_bytes(t.register_bytes_per_thread) + " of registers per thread";
    case MemLevel::Global:
      return "global memory";
  }
  return "";
}

}  // namespace

std::string do_stage(Kernel& k, const StageStep& s, const Target& t) {
  const std::string tn = s.tensor;
  if (s.level == MemLevel::Global) refuse_mem_level(mem_level_name(s.level));
  const bool dbl = s.double_buffer;
  const std::string at = s.at;
  if (at.empty()) refuse("stage: say where the tile is loaded, e.g. at=k.o");
  need_loop(k, StageStep::kName, at);
  StageSpec st;
  st.level = s.level;
  st.at = at;
  st.double_buffer = dbl;
  int ti = k.find_tensor(tn);
  if (ti >= 0) {
    if (k.tensors[size_t(ti)].role == TensorRole::Output)
      refuse("stage: " + tn +
             " is written by this kernel, not read; a staged tile is a copy of "
             "an input kept close because it is read many times (outputs already accumulate in "
             "registers)");
    st.tensor = ti;
  } else {
    ti = k.find_computed(tn);
    if (ti < 0) {
      std::vector<std::string> names;
      for (const auto& x : k.tensors)
        if (x.role == TensorRole::Input) names.push_back(x.name);
      refuse("stage: kernel " + k.name + " reads no tensor named '" + tn + "'; it reads " +
             join(names));
    }
    st.tensor = ti;
    st.computed = true;
  }
  for (const auto& o : k.stages)
    if (o.tensor == st.tensor && o.computed == st.computed && o.at == at)
      refuse("stage: " + tn + " is already staged at " + at);
  const char* suffix = st.level == MemLevel::Shared       ? "_shared"
                       : st.level == MemLevel::Scratchpad ? "_scratch"
                                                          : "_reg";
  st.buffer = c_ident(tn) + suffix;
  for (int n = 2; std::any_of(k.stages.begin(), k.stages.end(),
                              [&](const StageSpec& o) { return o.buffer == st.buffer; });
       ++n)
    st.buffer = c_ident(tn) + suffix + std::to_string(n);
  Kernel next = k;
  next.stages.push_back(st);
  check_or_refuse(next, t,
                  "stage(" + tn + ", " + mem_level_name(s.level) + ", at=" + at + ") refused: ");
  k = next;
  const LoweredKernel lk = build_loop_tree(k);
  const StagePlacement* pl = nullptr;
  for (const auto& x : lk.stages)
    if (x.spec == int(k.stages.size() - 1)) pl = &x;
  std::string e = "Tile " + st.buffer + " holds " + dims_text(pl->extents) + " elements of " + tn +
                  " (" + format_bytes(pl->bytes()) + (dbl ? ", ×2 for double-buffering" : "") +
                  ") in " + mem_level_name(st.level) + ", reloaded " + count_text(pl->executions) +
                  " times (once per iteration of " + at + "). ";
  const int64_t before = pl->uses_per_copy * pl->executions;
  const int64_t after = pl->footprint * pl->executions;
  if (pl->source < 0 && after > 0 && before <= after) {
    // No reuse inside the tile: staging only adds a copy. Say so, and what would help.
    e += "Each copied element is read only once from the tile, so reads of " + tn + " from " +
         (st.level == MemLevel::Registers ? "memory" : "global memory") + " stay at " +
         count_text(after) +
         ": this stage adds a copy and saves nothing. Stage at a loop further " +
         "out (so the tile is reused across the loops inside it) or tile so that an inner loop " +
         "does not index " + tn + ". ";
  } else if (pl->source < 0) {
    e += "Reads of " + tn + " from " +
         (st.level == MemLevel::Registers ? "memory" : "global memory") + " drop from " +
         count_text(before) + " to " + count_text(after);
    if (after > 0)
      e += " (each copied element is then read " + std::to_string(before / after) +
           "× from the tile)";
    e += ". ";
  } else {
    e += "It is filled from the enclosing tile " + lk.stages[size_t(pl->source)].buffer +
         ", so each element fetched once from there is read " +
         std::to_string(pl->uses_per_copy / std::max<int64_t>(1, pl->footprint)) + "× from " +
         mem_level_name(st.level) + ". ";
  }
  e += "It uses " + format_bytes(pl->bytes() * (dbl ? 2 : 1)) + " of the " +
       level_capacity_text(st.level, t) + ".";
  if (st.level == MemLevel::Shared)
    e += " All threads of a block copy it together, with a barrier before it is read and another "
         "before it is overwritten" +
         std::string(dbl ? "; with two buffers alternating, the second barrier is not needed."
                         : ".");
  return e;
}

std::string do_block_order(Kernel& k, const BlockOrderStep& s, const Target& t) {
  Kernel next = k;
  if (s.order == BlockOrder::RowMajor) {
    next.block_order = BlockOrder::RowMajor;
  } else {
    const int64_t g = s.group.value_or(8);
    if (g < 1) refuse("block_order: a group must hold at least one row of tiles");
    next.block_order = BlockOrder::Grouped;
    next.group = g;
  }
  check_or_refuse(next, t, "block_order refused: ");
  // What the first wave of blocks touches in each order: distinct rows and columns of tiles.
  int64_t total = 1;
  for (const auto& l : next.loops)
    if (is_block(l.kind)) total *= l.extent;
  const int64_t wave = std::min<int64_t>(total, t.sm_count);
  auto touched = [&](const Kernel& kk) {
    std::set<int64_t> rows, cols;
    for (int64_t b = 0; b < wave; ++b) {
      auto c = block_coords(kk, b);
      cols.insert(c[0]);
      rows.insert(c[1]);
    }
    return std::make_pair(rows.size(), cols.size());
  };
  Kernel row = next;
  row.block_order = BlockOrder::RowMajor;
  auto [r0, c0] = touched(row);
  auto [r1, c1] = touched(next);
  k = next;
  std::string e = next.block_order == BlockOrder::Grouped
                      ? "Blocks now launch in groups of " + std::to_string(next.group) +
                            " rows of tiles, walking down a column of tiles before moving right "
                            "(Triton's grouped ordering), on a 1-D grid. "
                      : "Blocks launch in row-major order: x fastest. ";
  e += "The first " + std::to_string(wave) + " blocks (one wave on a " +
       std::to_string(t.sm_count) + "-SM GPU) touch " + std::to_string(r1) + " rows × " +
       std::to_string(c1) + " columns of tiles = " + std::to_string(r1 + c1) +
       " operand panels that must share L2";
  if (next.block_order == BlockOrder::Grouped)
    e += ", against " + std::to_string(r0) + " + " + std::to_string(c0) + " = " +
         std::to_string(r0 + c0) + " in row-major order";
  return e + ". Results are identical; only which data is reused from L2 changes.";
}

std::string do_layout(Program& p, const LayoutStep& s, const Target& t) {
  const graph::Layout layout = s.layout;
  if (layout == graph::Layout::Strided) refuse_layout("strided");
  const auto tid = p.graph->find_tensor(s.tensor);
  if (!tid) refuse("layout: there is no tensor named '" + s.tensor + "'");
  const graph::Tensor& gt = p.graph->tensor(*tid);
  if ((layout == graph::Layout::NCHW || layout == graph::Layout::NHWC) && gt.rank() != 4)
    refuse("layout: " + gt.name + " is " + graph::shape_to_string(gt.shape) +
           "; NCHW and NHWC "
           "describe 4-D images [N, C, H, W]");
  if (layout == graph::Layout::Transposed && gt.rank() < 2)
    refuse("layout: " + gt.name + " has fewer than two dims, so there is nothing to transpose");
  const std::vector<int64_t> strides = graph::layout_strides(gt.shape, layout);
  std::string e = gt.name + " is now stored " + graph::layout_name(layout) + " (strides [";
  for (size_t d = 0; d < strides.size(); ++d) e += (d ? ", " : "") + std::to_string(strides[d]);
  e += "]). ";
  Program next = p;
  for (auto& k : next.kernels) {
    for (auto& kt : k.tensors) {
      if (kt.id != *tid) continue;
      if (kt.shape != gt.shape)
        refuse("layout: kernel " + k.name + " reads " + gt.name +
               " as a flat array (a reshape), "
               "which needs it row-major");
      // Stride along the innermost loop that reads it, before and after.
      const int slot = int(&kt - k.tensors.data());
      auto inner_stride = [&](const std::vector<int64_t>& st) -> std::pair<std::string, int64_t> {
        if (k.loops.empty()) return {"", 0};
        const LoweredKernel lk = build_loop_tree(k);
        for (const auto& ph : lk.phases) {
          std::pair<std::string, int64_t> r{"", 0};
          visit_loads(ph.phase.value, [&](const VExpr& l) {
            if (l.computed || l.tensor != slot || l.stage >= 0) return;
            std::vector<int> nest;
            for (int i = 0; i < lk.region_start; ++i) nest.push_back(i);
            for (int i : lk.phases[size_t(&ph - lk.phases.data())].loops) nest.push_back(i);
            if (nest.empty()) return;
            const std::string inner = k.loops[size_t(nest.back())].name;
            int64_t str = 0;
            for (size_t d = 0; d < l.index.size(); ++d) str += l.index[d].coef(inner) * st[d];
            r = {inner, str};
          });
          if (!r.first.empty()) return r;
        }
        return {"", 0};
      };
      auto [loop_before, before] = inner_stride(kt.strides);
      kt.layout = layout;
      kt.strides = repack_strides(kt.shape, strides, kt.pad);
      auto [loop_after, after] = inner_stride(kt.strides);
      if (!loop_after.empty())
        e += "In " + k.name + ", the innermost loop " + loop_after + " now steps through " +
             gt.name + " " + std::to_string(std::abs(after)) + " element" +
             (std::abs(after) == 1 ? "" : "s") + " at a time (was " +
             std::to_string(std::abs(before)) + ")" +
             (std::abs(after) <= 1 && std::abs(before) > 1
                  ? ": consecutive iterations now share cache lines. "
              : std::abs(after) > 1 && std::abs(before) <= 1
                  ? ": each iteration now lands on a different cache line. "
                  : ". ");
      (void)loop_before;
    }
    check_or_refuse(k, t, "layout refused: ");
  }
  e += "A real program must also store the data this way: the producer writes it, or a "
       "transposing copy runs once.";
  p = next;
  return e;
}

std::string do_pad(Program& p, const PadStep& s, const Target& t) {
  const int64_t dim = s.dim;
  const int64_t amount = s.amount;
  if (amount < 0 || amount > 64)
    refuse("pad: the amount must be between 0 and 64 elements, got " + std::to_string(amount));
  Kernel& k = p.kernels[size_t(p.current)];
  for (auto& st : k.stages) {
    if (st.buffer != s.target) continue;
    const LoweredKernel before_lk = build_loop_tree(k);
    size_t rank = 0;
    for (const auto& pl : before_lk.stages)
      if (k.stages[size_t(pl.spec)].buffer == st.buffer) rank = pl.extents.size();
    if (dim < 0 || dim >= int64_t(rank))
      refuse("pad: tile " + st.buffer + " has " + std::to_string(rank) + " dims; dim " +
             std::to_string(dim) + " does not exist");
    const int64_t before = shared_read_conflict_degree(k, st.buffer, t);
    Kernel next = k;
    for (auto& o : next.stages)
      if (o.buffer == st.buffer) {
        o.pad.resize(rank, 0);
        o.pad[size_t(dim)] += amount;
      }
    check_or_refuse(next, t, "pad refused: ");
    const int64_t after = shared_read_conflict_degree(next, st.buffer, t);
    k = next;
    std::string e = "Each row of tile " + st.buffer + " along dim " + std::to_string(dim) +
                    " gets " + std::to_string(amount) + " unused element" +
                    (amount == 1 ? "" : "s") + ", changing the distance between rows. ";
    if (before > 0)
      e += "A warp's read of the tile in the main loop now hits " +
           (after == 1 ? std::string("32 different banks (conflict-free)")
                       : "banks " + std::to_string(after) + "-way conflicted") +
           "; before it was " +
           (before == 1 ? std::string("conflict-free")
                        : std::to_string(before) + "-way conflicted") +
           " (a " + std::to_string(before) + "-way conflict serializes the read into " +
           std::to_string(before) + " passes).";
    else
      e += "No thread-bound loop indexes this tile, so bank conflicts do not arise in its reads.";
    return e;
  }
  // A tensor in memory: every kernel that touches it sees the larger pitch.
  const auto tid = p.graph->find_tensor(s.target);
  if (!tid) refuse("pad: there is no tile or tensor named '" + s.target + "'");
  const graph::Tensor& gt = p.graph->tensor(*tid);
  if (dim < 0 || dim >= gt.rank())
    refuse("pad: " + gt.name + " has " + std::to_string(gt.rank()) + " dims; dim " +
           std::to_string(dim) + " does not exist");
  int64_t old_alloc = 0, new_alloc = 0;
  const int64_t elem_bytes = graph::dtype_size(gt.dtype);
  for (auto& kk : p.kernels)
    for (auto& kt : kk.tensors) {
      if (kt.id != *tid) continue;
      if (kt.shape != gt.shape)
        refuse("pad: kernel " + kk.name + " reads " + gt.name + " as a flat array (a reshape)");
      old_alloc = kt.alloc_elems();
      kt.pad.resize(kt.shape.size(), 0);
      kt.pad[size_t(dim)] += amount;
      kt.strides = repack_strides(kt.shape, kt.strides, kt.pad);
      new_alloc = kt.alloc_elems();
    }
  return gt.name + " dim " + std::to_string(dim) + " is padded by " + std::to_string(amount) +
         " element" + (amount == 1 ? "" : "s") + ": its buffer grows from " +
         format_bytes(old_alloc * elem_bytes) + " to " + format_bytes(new_alloc * elem_bytes) +
         ". Padding changes which cache sets and banks consecutive rows map to; the values are "
         "unchanged.";
}

}  // namespace tilescope::schedule::detail

namespace tilescope::schedule {

int64_t shared_read_conflict_degree(const Kernel& k, const std::string& buffer, const Target& t) {
  const LoweredKernel lk = build_loop_tree(k);
  int64_t tx = 1, ty = 1;
  std::string vx, vy;
  for (const auto& l : k.loops) {
    if (l.kind == LoopKind::ThreadX) tx = l.extent, vx = l.name;
    if (l.kind == LoopKind::ThreadY) ty = l.extent, vy = l.name;
  }
  if (vx.empty() && vy.empty()) return 0;
  int64_t worst = 0;
  for (const auto& ph : lk.phases)
    detail::visit_loads(ph.phase.value, [&](const VExpr& l) {
      if (l.stage < 0 || lk.stages[size_t(l.stage)].buffer != buffer) return;
      const StagePlacement& pl = lk.stages[size_t(l.stage)];
      Affine off;
      for (size_t d = 0; d < l.buffer_index.size(); ++d) off += l.buffer_index[d] * pl.strides[d];
      const int64_t sx = vx.empty() ? 0 : off.coef(vx), sy = vy.empty() ? 0 : off.coef(vy);
      if (sx == 0 && sy == 0) return;
      // Lanes 0..31 of the first warp: lane = x + tx*y; each reads one 4-byte word.
      std::map<int64_t, std::set<int64_t>> bank_words;
      for (int64_t lane = 0; lane < std::min<int64_t>(t.warp_size, tx * ty); ++lane) {
        const int64_t word = (lane % tx) * sx + (lane / tx) * sy;
        bank_words[((word % t.smem_banks) + t.smem_banks) % t.smem_banks].insert(word);
      }
      int64_t deg = 0;
      for (const auto& [b, w] : bank_words) deg = std::max<int64_t>(deg, int64_t(w.size()));
      worst = std::max(worst, deg);
    });
  return worst;
}

}  // namespace tilescope::schedule

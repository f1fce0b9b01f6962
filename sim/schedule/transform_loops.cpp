// The loop primitives: split (and tile), reorder, and the loop kinds (unroll, vectorize,
// parallel, bind), each a legality check, the new loop list and an explanation.
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/lower.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilescope::schedule::detail {

// [SECTION] Loop primitives

std::string do_split(Kernel& k, std::string_view step, const std::string& name, int64_t f) {
  const std::string sn(step);
  const int li = need_loop(k, step, name);
  const Loop L = k.loops[size_t(li)];
  if (f <= 0)
    refuse(sn + "(" + name + ", " + std::to_string(f) +
           "): a tile must have at least one "
           "iteration; the factor must be 1 or more");
  if (f > L.extent)
    refuse(sn + "(" + name + ", " + std::to_string(f) + "): loop " + name + " has only " +
           std::to_string(L.extent) + " iterations, so a tile of " + std::to_string(f) +
           " would be mostly empty; use a factor of at most " + std::to_string(L.extent));
  if (L.kind != LoopKind::Serial)
    refuse(sn + ": loop " + name + " is already " + loop_kind_name(L.kind) +
           "; split loops before mapping them");
  const std::string o = name + ".o", i = name + ".i";
  if (k.find_loop(o) >= 0 || k.find_loop(i) >= 0)
    refuse(sn + ": loops named " + o + " / " + i + " already exist");
  const int64_t outer = (L.extent + f - 1) / f;
  Loop lo = L, lin = L;
  lo.name = o;
  lo.extent = outer;
  lin.name = i;
  lin.extent = f;
  k.loops[size_t(li)] = lo;
  k.loops.insert(k.loops.begin() + li + 1, lin);
  const Affine by = Affine::var(o, f) + Affine::var(i);
  for (auto& a : k.axis_value) a = a.substitute(name, by);
  for (auto& g : k.guards) g.expr = g.expr.substitute(name, by);
  const bool tail = L.extent % f != 0;
  if (tail) k.guards.push_back({by, L.extent});
  for (auto& st : k.stages)
    if (st.at == name) st.at = i;
  std::string e = "Loop " + name + " (" + std::to_string(L.extent) + " iterations) is now " + o +
                  " (" + std::to_string(outer) + ") × " + i + " (" + std::to_string(f) +
                  "): " + name + " = " + o + "*" + std::to_string(f) + " + " + i + ". ";
  if (tail) {
    const int64_t last = L.extent - (outer - 1) * f;
    e += std::to_string(f) + " does not divide " + std::to_string(L.extent) +
         ": the last tile has only " + std::to_string(last) + " of " + std::to_string(f) +
         " iterations, so the body is guarded by `if (" + by.to_string() + " < " +
         std::to_string(L.extent) + ")`; " + std::to_string(outer * f - L.extent) +
         " iterations are skipped. ";
  }
  if (f == L.extent || f == 1) {
    // Accepted (a later step may still want the two names), but the learner should know it tiles
    // nothing: one of the two loops runs once.
    e += "This changes nothing by itself: " + (f == L.extent ? o : i) +
         " has a single iteration, so the tile is " +
         (f == L.extent ? "the whole loop" : "one iteration") + ".";
    if (L.extent > 2)
      e += " A factor between 2 and " + std::to_string(L.extent - 1) + " makes tiles.";
    return e;
  }
  e += "Nothing runs in a different order yet; the split pays off once other loops move between " +
       o + " and " + i + " (reorder) or " + o + " is mapped to threads or blocks.";
  return e;
}

std::string do_reorder(Kernel& k, const ReorderStep& s, const Target& t) {
  std::vector<int> idx;
  std::set<std::string> seen;
  for (const auto& a : s.loops) {
    if (!seen.insert(a).second) refuse("reorder: loop " + a + " is listed twice");
    idx.push_back(need_loop(k, ReorderStep::kName, a));
  }
  std::vector<int> slots = idx;
  std::sort(slots.begin(), slots.end());
  std::vector<Loop> loops = k.loops;
  for (size_t i = 0; i < slots.size(); ++i) loops[size_t(slots[i])] = k.loops[size_t(idx[i])];
  // A reduction loop carries the running sum; it cannot move outside a loop whose iterations run
  // on different workers.
  for (size_t r = 0; r < loops.size(); ++r) {
    if (!loops[r].reduce) continue;
    for (size_t q = r + 1; q < loops.size(); ++q) {
      const LoopKind kind = loops[q].kind;
      if (kind == LoopKind::Parallel || is_block(kind))
        refuse("reorder would put reduction loop " + loops[r].name + " outside loop " +
               loops[q].name + ", which runs on " +
               (kind == LoopKind::Parallel ? "separate CPU threads" : "separate GPU blocks") +
               ". " + loops[r].name +
               " carries a dependence: each step adds to the running sum the previous step left, "
               "so one output's steps must all happen in one worker, and " +
               (kind == LoopKind::Parallel ? "threads" : "blocks") +
               " cannot hand partial sums to each other in the middle of the loop");
    }
    break;
  }
  Kernel next = k;
  next.loops = loops;
  check_or_refuse(next, t, "reorder refused: ");
  k = next;
  std::vector<std::string> order;
  for (const auto& l : k.loops) order.push_back(l.name);
  std::string e = "Loop order is now " + join(order, " → ") + ". ";
  int r = -1;
  for (size_t i = 0; i < k.loops.size(); ++i)
    if (k.loops[i].reduce) {
      r = int(i);
      break;
    }
  if (r >= 0) {
    const LoweredKernel lk = build_loop_tree(k);
    const int64_t acc = accumulator_bytes(lk, false) / 4;
    if (acc > 1) {
      std::vector<std::string> dims;
      for (int l : lk.acc_loops) dims.push_back(k.loops[size_t(l)].name);
      e += "The reduction now starts at " + k.loops[size_t(r)].name + ", so " +
           std::to_string(acc) + " running sums (one per " + join(dims, "×") + ", " +
           format_bytes(acc * 4) + ") stay live across it and are finished after it. ";
    } else {
      e += "The reduction runs innermost: each output is finished before the next starts, with "
           "one running sum. ";
    }
    e += working_set_text(k, r, t);
  }
  return e;
}

std::string do_kind(Kernel& k, std::string_view step, const std::string& loop, LoopKind kind,
                    const Target& t) {
  const std::string sn(step);
  const int li = need_loop(k, step, loop);
  Loop& L = k.loops[size_t(li)];
  if (L.reduce && kind != LoopKind::Unrolled)
    refuse(sn + "(" + L.name + ") refused: " + L.name +
           " is a reduction loop; it carries a dependence (each iteration adds to the sum the "
           "previous one left), so its iterations cannot run side by side on " +
           (kind == LoopKind::Vectorized ? "vector lanes"
            : kind == LoopKind::Parallel ? "CPU threads"
                                         : "GPU threads or blocks") +
           ". Map a spatial loop instead, or cut the sum into independent slices with split_k(" +
           L.name + ", PARTS)");
  if (L.kind != LoopKind::Serial)
    refuse(sn + ": loop " + L.name + " is already " + loop_kind_name(L.kind));
  Kernel next = k;
  next.loops[size_t(li)].kind = kind;
  check_or_refuse(next, t, sn + "(" + L.name + ") refused: ");
  k = next;
  const Loop& N = k.loops[size_t(li)];
  const std::string ext = std::to_string(N.extent);
  switch (kind) {
    case LoopKind::Unrolled:
      return "Loop " + N.name + " is unrolled: its body is written out " + ext +
             " times, removing the loop counter and branch and letting the compiler keep the " +
             ext + " iterations' values in registers.";
    case LoopKind::Vectorized: {
      const int64_t lanes = t.cpu_vector_bytes / 4;
      std::string e = "Loop " + N.name + " runs as vector lanes: " + ext +
                      " fp32 values = " + format_bytes(N.extent * 4) + " per step";
      if (N.extent % lanes == 0)
        e += ", " + std::to_string(N.extent / lanes) + " " +
             std::to_string(t.cpu_vector_bytes * 8) + "-bit vector register(s) per step.";
      else
        e += "; " + ext + " is not a multiple of the " + std::to_string(lanes) + " lanes of a " +
             std::to_string(t.cpu_vector_bytes * 8) +
             "-bit register, so part of each step runs with idle lanes.";
      return e;
    }
    case LoopKind::Parallel:
      return "Loop " + N.name + "'s " + ext +
             " iterations are split into contiguous chunks, one per CPU thread. Each thread writes "
             "its own outputs, so no locking is needed.";
    default: {
      const LaunchConfig lc = launch_config(k);
      const int64_t blocks = lc.blocks();
      const int64_t threads = lc.threads();
      std::string e = "Loop " + N.name + " → " + loop_kind_name(kind) + ": its " + ext +
                      " iterations run at once on the GPU. Grid: " + std::to_string(lc.grid[0]) +
                      "×" + std::to_string(lc.grid[1]) + "×" + std::to_string(lc.grid[2]) + " = " +
                      std::to_string(blocks) + " blocks of " + std::to_string(lc.block[0]) + "×" +
                      std::to_string(lc.block[1]) + "×" + std::to_string(lc.block[2]) + " = " +
                      std::to_string(threads) + " thread" + (threads == 1 ? "" : "s") + " (" +
                      std::to_string((threads + t.warp_size - 1) / t.warp_size) + " warp" +
                      ((threads + t.warp_size - 1) / t.warp_size == 1 ? "" : "s") + ").";
      if (is_thread(kind) && threads % t.warp_size != 0)
        e += " " + std::to_string(threads) + " is not a multiple of " +
             std::to_string(t.warp_size) + ": the last warp runs with idle lanes.";
      return e;
    }
  }
}

std::string do_bind(Kernel& k, const BindStep& s, const Target& t) {
  if (!is_block(s.dim) && !is_thread(s.dim)) refuse_gpu_dim(loop_kind_name(s.dim));
  return do_kind(k, BindStep::kName, s.loop, s.dim, t);
}

}  // namespace tilescope::schedule::detail

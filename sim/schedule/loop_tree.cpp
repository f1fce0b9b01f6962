// Builds the loop tree of a kernel from its schedule (TVM-style: shared outer loops, one inner nest
// per phase), places stage copies with their tile footprints, and checks legality on a target.
#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tilescope::schedule {

// [SECTION] Ranges and substitution

std::pair<int64_t, int64_t> loop_range(const Kernel& k, const Affine& e) {
  int64_t lo = e.constant, hi = e.constant;
  for (const auto& [n, c] : e.terms) {
    const int li = k.find_loop(n);
    const int64_t ext = li >= 0 ? k.loops[size_t(li)].extent : 1;
    if (c > 0)
      hi += c * (ext - 1);
    else
      lo += c * (ext - 1);
  }
  return {lo, hi};
}

namespace {

std::pair<int64_t, int64_t> axis_range(const Kernel& k, const Affine& e) {
  int64_t lo = e.constant, hi = e.constant;
  for (const auto& [n, c] : e.terms) {
    int64_t ext = 1;
    for (const auto& a : k.axes)
      if (a.name == n) ext = a.extent;
    if (c > 0)
      hi += c * (ext - 1);
    else
      lo += c * (ext - 1);
  }
  return {lo, hi};
}

// Simultaneous substitution of variables by expressions.
Affine substitute_all(const Affine& e, const std::vector<std::string>& names,
                      const std::vector<Affine>& values) {
  Affine r = Affine::lit(e.constant);
  for (const auto& [n, c] : e.terms) {
    bool done = false;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != n) continue;
      r += values[i] * c;
      done = true;
      break;
    }
    if (!done) r += Affine::var(n, c);
  }
  return r;
}

void substitute_loads(VExpr& e, const std::vector<std::string>& names,
                      const std::vector<Affine>& values) {
  if (e.kind == VExpr::Kind::Load || e.kind == VExpr::Kind::Index)
    for (auto& i : e.index) i = substitute_all(i, names, values);
  for (auto& a : e.args) substitute_loads(a, names, values);
}

template <class F>
void for_each_load(VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (auto& a : e.args) for_each_load(a, f);
}
template <class F>
void for_each_load(const VExpr& e, F f) {
  if (e.kind == VExpr::Kind::Load) f(e);
  for (const auto& a : e.args) for_each_load(a, f);
}

}  // namespace

std::vector<bool> dims_needing_check(const Kernel& k, const std::vector<Affine>& axis_index,
                                     const graph::Shape& shape) {
  std::vector<bool> need(axis_index.size(), false);
  for (size_t d = 0; d < axis_index.size() && d < shape.size(); ++d) {
    auto [lo, hi] = axis_range(k, axis_index[d]);
    need[d] = lo < 0 || hi >= shape[d];
  }
  return need;
}

VExpr to_loop_space(const Kernel& k, const VExpr& e) {
  VExpr r = e;
  std::vector<std::string> names;
  for (const auto& a : k.axes) names.push_back(a.name);
  std::vector<Affine> values = k.axis_value;
  std::function<void(VExpr&)> go = [&](VExpr& x) {
    if (x.kind == VExpr::Kind::Load) {
      const graph::Shape& shape =
          x.computed ? k.computed[size_t(x.tensor)].shape : k.tensors[size_t(x.tensor)].shape;
      x.check_dims = dims_needing_check(k, x.index, shape);
      for (auto& i : x.index) i = substitute_all(i, names, values);
    }
    if (x.kind == VExpr::Kind::Index) x.index[0] = substitute_all(x.index[0], names, values);
    for (auto& a : x.args) go(a);
  };
  go(r);
  return r;
}

// [SECTION] Building the tree

namespace {

class TreeBuilder {
 public:
  explicit TreeBuilder(const Kernel& k) { m_lk.kernel = k; }

  LoweredKernel run() {
    const Kernel& k = m_lk.kernel;
    const int n = int(k.loops.size());
    int r = n;
    for (int i = 0; i < n; ++i)
      if (k.loops[size_t(i)].reduce) {
        r = i;
        break;
      }
    m_lk.region_start = r;
    for (int i = r; i < n; ++i)
      if (!k.loops[size_t(i)].reduce) m_lk.acc_loops.push_back(i);

    for (const Phase& p : k.phases) {
      LoweredPhase lp;
      lp.phase = p;
      lp.phase.value = to_loop_space(k, p.value);
      std::vector<std::string> names;
      for (const auto& a : k.axes) names.push_back(a.name);
      for (auto& i : lp.phase.out_index) i = substitute_all(i, names, k.axis_value);
      const bool all =
          p.kind == PhaseKind::Reduce || (p.kind == PhaseKind::Map && p.over_reduce_axes);
      for (int i = r; i < n; ++i)
        if (all || !k.loops[size_t(i)].reduce) lp.loops.push_back(i);
      m_lk.phases.push_back(std::move(lp));
    }
    place_stages();
    resolve_loads();
    build_outer(0, m_lk.body, {}, std::vector<bool>(k.guards.size(), false));
    return std::move(m_lk);
  }

 private:
  bool phase_reads(int p, int tensor, bool computed) const {
    bool found = false;
    for_each_load(m_lk.phases[size_t(p)].phase.value, [&](const VExpr& l) {
      if (l.tensor == tensor && l.computed == computed) found = true;
    });
    return found;
  }

  std::string tensor_name(int tensor, bool computed) const {
    const Kernel& k = m_lk.kernel;
    return computed ? k.computed[size_t(tensor)].name : k.tensors[size_t(tensor)].name;
  }

  // Loop indices of the nest a phase runs in: the outer loops, then the phase's own.
  std::vector<int> nest(int phase) const {
    std::vector<int> v;
    for (int i = 0; i < m_lk.region_start; ++i) v.push_back(i);
    for (int l : m_lk.phases[size_t(phase)].loops) v.push_back(l);
    return v;
  }

  void place_stages() {
    const Kernel& k = m_lk.kernel;
    for (size_t s = 0; s < k.stages.size(); ++s) {
      const StageSpec& spec = k.stages[s];
      const int at = k.find_loop(spec.at);
      const std::string tname = tensor_name(spec.tensor, spec.computed);
      if (at < 0)
        throw ScheduleError("stage of '" + tname + "': there is no loop named '" + spec.at + "'");
      std::vector<int> readers;
      for (size_t p = 0; p < m_lk.phases.size(); ++p)
        if (phase_reads(int(p), spec.tensor, spec.computed)) readers.push_back(int(p));
      if (readers.empty())
        throw ScheduleError("stage of '" + tname + "': this kernel never reads '" + tname + "'");
      if (at < m_lk.region_start) {
        add_placement(int(s), at, -1, readers);
        continue;
      }
      for (int p : readers) {
        const auto& pl = m_lk.phases[size_t(p)].loops;
        if (std::find(pl.begin(), pl.end(), at) == pl.end())
          throw ScheduleError("stage of '" + tname + "' at " + spec.at + ": '" + tname +
                              "' is also read after the " + spec.at +
                              " loop has finished, so a tile loaded inside " + spec.at +
                              " cannot serve that read; stage it at a loop outside the reduction");
        add_placement(int(s), at, p, {p});
      }
    }
  }

  void add_placement(int spec_index, int at, int phase, const std::vector<int>& readers) {
    const Kernel& k = m_lk.kernel;
    const StageSpec& spec = k.stages[size_t(spec_index)];
    StagePlacement pl;
    pl.spec = spec_index;
    pl.tensor = spec.tensor;
    pl.computed = spec.computed;
    pl.level = spec.level;
    pl.buffer = spec.buffer;
    pl.at = at;
    pl.phase = phase;
    // The access pattern: every read of the tensor must use the same index.
    std::vector<Affine> index;
    bool have = false;
    int64_t uses = 0;
    for (int p : readers) {
      int64_t iters = 1;
      for (int l : nest(p))
        if (l > at) iters *= k.loops[size_t(l)].extent;
      for_each_load(m_lk.phases[size_t(p)].phase.value, [&](const VExpr& l) {
        if (l.tensor != spec.tensor || l.computed != spec.computed) return;
        uses += iters;
        if (!have) {
          index = l.index;
          have = true;
        } else if (!(index.size() == l.index.size() &&
                     std::equal(index.begin(), index.end(), l.index.begin()))) {
          throw ScheduleError("stage of '" + tensor_name(spec.tensor, spec.computed) +
                              "': the kernel reads it at two different positions, so one tile "
                              "cannot serve both reads");
        }
      });
    }
    pl.uses_per_copy = uses;
    std::set<int> inner;
    for (const auto& e : index) {
      Affine base, off;
      base.constant = e.constant;
      for (const auto& [n, c] : e.terms) {
        const int li = k.find_loop(n);
        if (li > at) {
          off += Affine::var(n, c);
          inner.insert(li);
        } else {
          base += Affine::var(n, c);
        }
      }
      auto [lo, hi] = loop_range(k, off);
      base += Affine::lit(lo);
      pl.base.push_back(base);
      pl.extents.push_back(hi - lo + 1);
    }
    pl.inner_loops.assign(inner.begin(), inner.end());
    std::vector<int64_t> pitch = pl.extents;
    for (size_t d = 0; d < pitch.size() && d < spec.pad.size(); ++d) pitch[d] += spec.pad[d];
    pl.strides.assign(pitch.size(), 1);
    for (int d = int(pitch.size()) - 2; d >= 0; --d)
      pl.strides[size_t(d)] = pl.strides[size_t(d) + 1] * pitch[size_t(d) + 1];
    pl.elems = pitch.empty() ? 1 : pl.strides[0] * pitch[0];
    pl.footprint = 1;
    for (int64_t e : pl.extents) pl.footprint *= e;
    pl.executions = 1;
    for (int l : phase < 0 ? nest(readers[0]) : nest(phase))
      if (l <= at) pl.executions *= k.loops[size_t(l)].extent;
    m_lk.stages.push_back(std::move(pl));
  }

  // Points each load at the innermost stage placement that covers it; inlines computed tensors.
  // Placements are ordered outermost first, and each copy reads from the closest enclosing tile of
  // the same tensor when there is one (shared tile → register tile).
  void resolve_loads() {
    std::stable_sort(m_lk.stages.begin(), m_lk.stages.end(),
                     [](const StagePlacement& a, const StagePlacement& b) { return a.at < b.at; });
    for (size_t s = 0; s < m_lk.stages.size(); ++s) {
      auto& pl = m_lk.stages[s];
      int best = -1;
      for (size_t q = 0; q < s; ++q) {
        const auto& o = m_lk.stages[q];
        if (o.tensor != pl.tensor || o.computed != pl.computed || o.at >= pl.at) continue;
        if (o.phase != -1 && o.phase != pl.phase) continue;
        if (best < 0 || o.at > m_lk.stages[size_t(best)].at) best = int(q);
      }
      pl.source = best;
    }
    for (size_t p = 0; p < m_lk.phases.size(); ++p) {
      VExpr& v = m_lk.phases[p].phase.value;
      resolve(v, int(p));
      inline_computed(v, m_lk.kernel);
    }
  }

  void resolve(VExpr& v, int phase) {
    for_each_load(v, [&](VExpr& l) {
      int best = -1;
      for (size_t s = 0; s < m_lk.stages.size(); ++s) {
        const auto& pl = m_lk.stages[s];
        if (pl.tensor != l.tensor || pl.computed != l.computed) continue;
        if (pl.phase != -1 && pl.phase != phase) continue;
        if (best < 0 || pl.at > m_lk.stages[size_t(best)].at) best = int(s);
      }
      l.stage = best;
      l.buffer_index.clear();
      if (best >= 0)
        for (size_t d = 0; d < l.index.size(); ++d)
          l.buffer_index.push_back(l.index[d] - m_lk.stages[size_t(best)].base[d]);
    });
  }

  static void inline_computed(VExpr& v, const Kernel& k) {
    if (v.kind == VExpr::Kind::Load && v.computed && v.stage < 0) {
      const ComputedTensor& c = k.computed[size_t(v.tensor)];
      std::vector<std::string> names;
      for (size_t d = 0; d < c.shape.size(); ++d) names.push_back(def_var(d));
      VExpr def = c.definition;
      substitute_loads(def, names, v.index);
      for_each_load(def, [&](VExpr& l) {
        if (l.check_dims.empty()) l.check_dims.assign(l.index.size(), false);
      });
      v = std::move(def);
      return;
    }
    for (auto& a : v.args) inline_computed(a, k);
  }

  bool guard_ready(const TailGuard& g, const std::set<std::string>& defined,
                   const std::set<std::string>* allowed) const {
    for (const auto& [n, c] : g.expr.terms) {
      (void)c;
      if (!defined.count(n)) return false;
      if (allowed && !allowed->count(n)) return false;
    }
    return true;
  }

  // Stage copies at loop `l` (for `phase`, or the shared ones when phase is -1), then guards
  // that became decidable, then the rest of the nest through `inner`. `defined` and `placed` are
  // per path, hence by value.
  template <class Inner>
  void open_loop(int l, int phase, std::vector<Node>& out, std::set<std::string> defined,
                 std::vector<bool> placed, const std::set<std::string>* allowed, Inner inner) {
    const Kernel& k = m_lk.kernel;
    Node loop;
    loop.kind = Node::Kind::Loop;
    loop.loop = l;
    defined.insert(k.loops[size_t(l)].name);
    bool shared = false;
    for (size_t s = 0; s < m_lk.stages.size(); ++s) {
      const auto& pl = m_lk.stages[s];
      if (pl.at != l || pl.phase != phase) continue;
      Node st;
      st.kind = Node::Kind::Stage;
      st.stage = int(s);
      loop.children.push_back(st);
      shared = shared || pl.level == MemLevel::Shared;
    }
    if (shared) loop.children.push_back(barrier());
    std::vector<TailGuard> ready;
    for (size_t g = 0; g < k.guards.size(); ++g) {
      if (placed[g] || !guard_ready(k.guards[g], defined, allowed)) continue;
      placed[g] = true;
      ready.push_back(k.guards[g]);
    }
    if (ready.empty()) {
      inner(loop.children, defined, placed);
    } else {
      Node cond;
      cond.kind = Node::Kind::If;
      cond.conds = ready;
      inner(cond.children, defined, placed);
      loop.children.push_back(std::move(cond));
    }
    if (shared) loop.children.push_back(barrier());
    out.push_back(std::move(loop));
  }

  static Node barrier() {
    Node b;
    b.kind = Node::Kind::Barrier;
    return b;
  }

  void build_outer(int depth, std::vector<Node>& out, const std::set<std::string>& defined,
                   const std::vector<bool>& placed) {
    const Kernel& k = m_lk.kernel;
    if (depth == m_lk.region_start) {
      if (k.num_accs > 0) {
        Node a;
        a.kind = Node::Kind::AccDecl;
        out.push_back(a);
      }
      for (size_t p = 0; p < m_lk.phases.size(); ++p) {
        std::set<std::string> allowed;
        for (int l : nest(int(p))) allowed.insert(k.loops[size_t(l)].name);
        build_phase(int(p), 0, out, defined, placed, allowed);
      }
      return;
    }
    open_loop(depth, -1, out, defined, placed, nullptr,
              [&](std::vector<Node>& body, const std::set<std::string>& d,
                  const std::vector<bool>& pl) { build_outer(depth + 1, body, d, pl); });
  }

  void build_phase(int p, size_t idx, std::vector<Node>& out, const std::set<std::string>& defined,
                   const std::vector<bool>& placed, const std::set<std::string>& allowed) {
    const auto& loops = m_lk.phases[size_t(p)].loops;
    if (idx == loops.size()) {
      Node s;
      s.kind = Node::Kind::Stmt;
      s.phase = p;
      out.push_back(s);
      return;
    }
    open_loop(loops[idx], p, out, defined, placed, &allowed,
              [&](std::vector<Node>& body, const std::set<std::string>& d,
                  const std::vector<bool>& pl) { build_phase(p, idx + 1, body, d, pl, allowed); });
  }

  LoweredKernel m_lk;
};

}  // namespace

LoweredKernel build_loop_tree(const Kernel& k) {
  return TreeBuilder(k).run();
}

int64_t accumulator_bytes(const LoweredKernel& lk, bool gpu) {
  const int64_t per =
      lk.acc_elems([&](int l) { return gpu && is_thread(lk.kernel.loops[size_t(l)].kind); });
  return lk.kernel.num_accs * per * 4;
}

AccumulatorHome accumulator_home(const Kernel& k, bool gpu) {
  AccumulatorHome h;
  h.num_accs = k.num_accs;
  // The accumulator's dims: the spatial loops inside the first reduction loop (as build_loop_tree
  // derives acc_loops), less the thread-bound ones on the GPU.
  bool in_region = false, parallel_dim = false;
  for (const Loop& l : k.loops) {
    in_region = in_region || l.reduce;
    if (!in_region || l.reduce) continue;
    if (gpu && is_thread(l.kind)) continue;
    h.elems_per_acc *= l.extent;
    parallel_dim = parallel_dim || l.kind == LoopKind::Parallel;
  }
  h.registers = gpu || k.num_accs == 0 || (h.elems() <= kRegisterAccumulatorElems && !parallel_dim);
  return h;
}

// [SECTION] Legality

std::optional<std::string> check_kernel(const Kernel& k, const Target& t) {
  const int n = int(k.loops.size());
  // Binding and parallel structure.
  int seen_non_block = -1;
  std::set<LoopKind> bound;
  int64_t threads = 1;
  int parallel = 0;
  int r = n;
  for (int i = 0; i < n; ++i)
    if (k.loops[size_t(i)].reduce) {
      r = i;
      break;
    }
  for (int i = 0; i < n; ++i) {
    const Loop& L = k.loops[size_t(i)];
    if (L.reduce && L.kind != LoopKind::Serial && L.kind != LoopKind::Unrolled)
      return "loop " + L.name +
             " is a reduction loop (it carries the running sum from one "
             "iteration to the next), so it cannot be " +
             std::string(loop_kind_name(L.kind)) + ": its iterations must run one after another";
    if (is_block(L.kind)) {
      if (seen_non_block >= 0)
        return "loop " + L.name + " is bound to " + loop_kind_name(L.kind) + " but loop " +
               k.loops[size_t(seen_non_block)].name +
               " runs outside it; a CUDA grid has no loop around it, so block-bound loops must "
               "be the outermost ones";
      if ((L.kind != LoopKind::BlockX) && L.extent > t.max_grid_yz)
        return "loop " + L.name + " has " + std::to_string(L.extent) + " iterations but " +
               loop_kind_name(L.kind) + " allows at most " + std::to_string(t.max_grid_yz) +
               " blocks";
    } else {
      if (seen_non_block < 0) seen_non_block = i;
    }
    if (is_block(L.kind) || is_thread(L.kind)) {
      if (bound.count(L.kind))
        return std::string("two loops are bound to ") + loop_kind_name(L.kind) +
               "; each GPU dimension can carry one loop";
      bound.insert(L.kind);
    }
    if (is_thread(L.kind)) threads *= L.extent;
    if (L.kind == LoopKind::Parallel) {
      ++parallel;
      if (i >= r)
        return "loop " + L.name + " runs inside reduction loop " + k.loops[size_t(r)].name +
               ": every thread would have to stop and wait for the others after each step of " +
               k.loops[size_t(r)].name + "; parallelize a loop outside the reduction";
    }
    if (L.kind == LoopKind::Vectorized) {
      if (i != n - 1)
        return "loop " + L.name + " is vectorized but loop " + k.loops[size_t(n - 1)].name +
               " runs inside it; vector lanes need the innermost loop";
      if (L.extent > t.max_vector_lanes)
        return "loop " + L.name + " has " + std::to_string(L.extent) +
               " iterations, too many for vector lanes (at most " +
               std::to_string(t.max_vector_lanes) + "); split it first";
    }
    if (L.kind == LoopKind::Unrolled && L.extent > t.max_unroll)
      return "unrolling loop " + L.name + " would paste its body " + std::to_string(L.extent) +
             " times (the limit is " + std::to_string(t.max_unroll) + "); split it first";
  }
  if (parallel > 1) return "only one loop can be spread over CPU threads";
  if (threads > t.max_threads_per_block)
    return "the thread-bound loops make " + std::to_string(threads) +
           " threads per block, more than the " + std::to_string(t.max_threads_per_block) +
           " a block may have";
  if (k.block_order == BlockOrder::Grouped &&
      !(bound.count(LoopKind::BlockX) && bound.count(LoopKind::BlockY) &&
        !bound.count(LoopKind::BlockZ)))
    return "a grouped block order needs exactly two grid dimensions (block.y for rows of tiles, "
           "block.x for columns)";

  LoweredKernel lk;
  try {
    lk = build_loop_tree(k);
  } catch (const ScheduleError& e) {
    return std::string(e.what());
  }
  // Stages: where they may sit, and whether they fit.
  int64_t shared = 0, scratch = 0, regs = 0;
  for (size_t s = 0; s < k.stages.size(); ++s) {
    const StageSpec& spec = k.stages[s];
    const int at = k.find_loop(spec.at);
    const Loop& A = k.loops[size_t(at)];
    for (int i = 0; i < n; ++i) {
      const Loop& L = k.loops[size_t(i)];
      if (!is_thread(L.kind)) continue;
      if (spec.level == MemLevel::Shared && i <= at)
        return "shared tile " + spec.buffer + " is loaded at loop " + spec.at +
               ", which is inside (or is) thread-bound loop " + L.name +
               "; a shared tile is loaded once per block, so it must sit outside the thread loops";
      if (spec.level != MemLevel::Shared && i > at)
        return std::string(mem_level_name(spec.level)) + " tile " + spec.buffer +
               " is private to one thread, but thread-bound loop " + L.name + " runs inside loop " +
               spec.at + "; stage it at a loop inside " + L.name;
    }
    if (spec.double_buffer && (A.kind != LoopKind::Serial || A.extent < 2))
      return "double-buffering " + spec.buffer + " overlaps loading the next tile of loop " +
             spec.at + " with computing on the current one; that needs " + spec.at +
             " to be a serial loop with at least two iterations";
    int64_t bytes = 0;
    for (const auto& pl : lk.stages)
      if (pl.spec == int(s)) bytes = std::max(bytes, pl.bytes());
    bytes *= spec.double_buffer ? 2 : 1;
    if (spec.level == MemLevel::Shared) shared += bytes;
    if (spec.level == MemLevel::Scratchpad) scratch += bytes;
    if (spec.level == MemLevel::Registers) regs += bytes;
  }
  if (shared > 0 && t.smem_bytes_per_block <= 0)
    return "the shared-memory tiles need " + format_bytes(shared) +
           " per block, and this machine has no shared memory (a CPU machine: stage in "
           "scratchpad instead, or choose a GPU machine such as h200)";
  if (shared > t.smem_bytes_per_block)
    return "the shared-memory tiles need " + format_bytes(shared) + " per block, more than the " +
           format_bytes(t.smem_bytes_per_block) + " a block can have";
  if (scratch > t.cpu_l1_bytes)
    return "the scratchpad tiles need " + format_bytes(scratch) + ", more than the " +
           format_bytes(t.cpu_l1_bytes) + " L1 cache they are meant to live in";
  if (regs > t.register_bytes_per_thread)
    return "the register tiles need " + format_bytes(regs) + " per thread, more than the " +
           format_bytes(t.register_bytes_per_thread) + " of registers a thread has";
  const int64_t acc = std::max(accumulator_bytes(lk, false), accumulator_bytes(lk, true));
  if (acc > t.max_accumulator_bytes)
    return "with this loop order the running sums of every output below the first reduction loop "
           "(" +
           k.loops[size_t(lk.region_start)].name + ") must be kept at once: " + format_bytes(acc) +
           ", more than the " + format_bytes(t.max_accumulator_bytes) +
           " allowed; move the reduction loop further in";
  return std::nullopt;
}

}  // namespace tilescope::schedule

// The trace walker: the loop tree in execution order, as a stream of element (CPU) or warp-sector
// (GPU) accesses.
#include "sim/schedule/trace.h"

#include "sim/memory/scratchpad.h"
#include "sim/schedule/affine_eval.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <functional>
#include <map>
#include <unordered_map>

namespace tilescope::schedule {

namespace {

// An L1 line: one pass of the data stage moves one (a warp instruction's lines, TraceSummary).
constexpr uint64_t kLineBytes = 128;

// Bytes of one element of a stage spec's tile: the staged tensor's dtype.
uint32_t stage_elem_bytes(const Kernel& k, const StageSpec& spec) {
  return uint32_t(graph::dtype_size(spec.computed ? k.computed[size_t(spec.tensor)].dtype
                                                  : k.tensors[size_t(spec.tensor)].dtype));
}

std::vector<StageArea> stage_areas(const LoweredKernel& lk, const TraceLayout& layout) {
  const Kernel& k = lk.kernel;
  std::vector<StageArea> areas;
  uint64_t sh = 0, sc = 0;
  for (size_t s = 0; s < k.stages.size(); ++s) {
    const StageSpec& spec = k.stages[s];
    StageArea a;
    a.buffer = spec.buffer;
    a.tensor = spec.computed ? -1 : spec.tensor;
    a.level = spec.level;
    a.double_buffer = spec.double_buffer;
    for (const StagePlacement& pl : lk.stages)
      if (pl.spec == int(s) && pl.elems > a.elems) {
        a.elems = pl.elems;
        a.strides = pl.strides;
      }
    // At the tensor's dtype; StagePlacement::bytes counts the generated code's float buffers.
    a.elem_bytes = stage_elem_bytes(k, spec);
    const uint64_t bytes = uint64_t(a.elems) * a.elem_bytes * (spec.double_buffer ? 2 : 1);
    const uint64_t rounded = (bytes + 127) / 128 * 128;
    if (spec.level == MemLevel::Shared) {
      a.space = memory::AddressSpace::Shared;
      a.addr = sh;
      sh += rounded;
    } else {
      a.space = memory::AddressSpace::Global;
      a.addr = layout.scratch_base + sc;
      sc += rounded;
    }
    a.bytes = spec.level == MemLevel::Registers ? 0 : bytes;
    areas.push_back(std::move(a));
  }
  return areas;
}

}  // namespace

std::vector<StageArea> stage_areas(const Kernel& k, const TraceOptions& o) {
  const LoweredKernel lk = build_loop_tree(k);
  return stage_areas(lk, trace_layout(lk.kernel, o));
}

namespace {

using memory::Access;
using memory::AccessKind;
using memory::AddressSpace;

class Tracer {
 public:
  Tracer(const Kernel& k, memory::AccessSink& sink, const TraceOptions& o)
      : m_lk(build_loop_tree(k)), m_k(m_lk.kernel), m_sink(sink), m_o(o), m_env(m_lk.kernel) {
    m_layout = trace_layout(m_k, o);
    m_areas = stage_areas(m_lk, m_layout);
    m_step_loop = o.step_loop.empty() ? (m_k.loops.empty() ? -1 : 0) : m_k.find_loop(o.step_loop);
    if (!o.step_loop.empty() && m_step_loop < 0)
      throw ScheduleError("trace: kernel " + m_k.name + " has no loop named '" + o.step_loop + "'");
    if (o.gpu) {
      m_gpu_step_loop = o.step_loop.empty() ? -1 : m_step_loop;
      m_step_loop = -1;
    }
    m_acc_traced = !o.gpu && !accumulator_home(m_k, o.gpu).registers;
    if (m_acc_traced) m_acc_index = m_lk.acc_index([](int) { return false; });
    for (size_t p = 0; p < m_lk.phases.size(); ++p) {
      std::vector<const VExpr*> sites;
      collect(m_lk.phases[p].phase.value, sites);
      m_sites.push_back(sites);
      // The CPU statement's reads in expression order: loads and, on the stack, accumulators.
      std::vector<const VExpr*> cpu;
      collect(m_lk.phases[p].phase.value, cpu, m_acc_traced);
      m_cpu_sites.push_back(cpu);
    }
    for (const auto& l : m_k.loops) {
      if (l.kind == LoopKind::ThreadX) m_tdim[0] = l.extent;
      if (l.kind == LoopKind::ThreadY) m_tdim[1] = l.extent;
      if (l.kind == LoopKind::ThreadZ) m_tdim[2] = l.extent;
    }
    m_nthreads = m_tdim[0] * m_tdim[1] * m_tdim[2];
  }

  TraceSummary run() {
    if (m_o.gpu)
      run_gpu();
    else
      walk(m_lk.body);
    flush();
    return m_sum;
  }

 private:
  // [SECTION] Emission

  void emit(uint64_t addr, uint32_t size, AccessKind kind, int tensor, AddressSpace space,
            int32_t warp = -1) {
    Access a;
    a.addr = addr;
    a.size = size;
    a.kind = kind;
    a.tensor = int16_t(tensor);
    a.warp = warp;
    a.space = space;
    if (space == AddressSpace::Shared)
      (kind == AccessKind::Write ? m_sum.shared_writes : m_sum.shared_reads)++;
    else
      (kind == AccessKind::Write ? m_sum.global_writes : m_sum.global_reads)++;
    m_buf.push_back(a);
    if (m_buf.size() >= kBatch) flush();
  }
  void flush() {
    if (!m_buf.empty()) m_sink.access_batch(m_buf.data(), m_buf.size());
    m_buf.clear();
  }
  void step() {
    flush();
    m_sink.step_boundary(m_sum.steps++);
  }
  // Sampled tracing (TraceSampler): whether an iteration of loop node `n` is a unit, and the
  // sampler's word on it once the sink has every access before it.
  bool is_unit(const Node& n) const { return m_o.sampler && n.loop == m_o.unit_loop; }
  bool begin_unit() {
    flush();
    return m_o.sampler->begin_unit(m_sum);
  }
  void end_unit() {
    flush();
    m_o.sampler->end_unit(m_sum);
  }

  // One element access resolved to where it lands; `valid` false for registers / out of bounds.
  struct Target {
    bool valid = false;
    uint64_t addr = 0;
    AddressSpace space = AddressSpace::Global;
    int tensor = -1;
    uint32_t size = 4;  // bytes of one element
  };

  static void collect(const VExpr& e, std::vector<const VExpr*>& out, bool accs = false) {
    if (e.kind == VExpr::Kind::Load || (accs && e.kind == VExpr::Kind::Acc)) out.push_back(&e);
    for (const auto& a : e.args) collect(a, out, accs);
  }

  // Element of accumulator `slot` the statement at the current loop values touches.
  uint64_t acc_addr(int slot) {
    return m_layout.acc_base + uint64_t(slot) * m_layout.acc_slot_bytes +
           uint64_t(m_env.eval(m_acc_index)) * 4;
  }
  void emit_acc(int slot, AccessKind kind) {
    (kind == AccessKind::Write ? m_sum.acc_writes : m_sum.acc_reads)++;
    emit(acc_addr(slot), 4, kind, m_o.acc_tensor, AddressSpace::Global);
  }

  int graph_id(int tensor, bool computed) const {
    return computed ? m_k.computed[size_t(tensor)].id : tag(m_k.tensors[size_t(tensor)]);
  }
  // A tensor's tag in Access::tensor: its graph id, or TraceOptions::scratch_tensor for one a
  // transform made (im2col's unfolded matrix, split_k's partials).
  int tag(const KernelTensor& kt) const { return kt.id >= 0 ? kt.id : m_o.scratch_tensor; }

  // Where element `off` (elements) of a placement's tile lives.
  Target tile_target(const StagePlacement& pl, int64_t off) {
    Target t;
    t.tensor = graph_id(pl.tensor, pl.computed);
    const StageSpec& spec = m_k.stages[size_t(pl.spec)];
    if (pl.level == MemLevel::Registers) return t;
    int64_t flip = 0;
    if (spec.double_buffer) flip = m_env.loop_value(pl.at) & 1;
    t.valid = true;
    const StageArea& area = m_areas[size_t(pl.spec)];
    t.size = area.elem_bytes;
    t.addr = area.addr + uint64_t(off + flip * area.elems) * t.size;
    t.space = pl.level == MemLevel::Shared ? AddressSpace::Shared : AddressSpace::Global;
    return t;
  }

  Target global_target(int tensor, const int64_t* g, size_t dims) {
    const KernelTensor& kt = m_k.tensors[size_t(tensor)];
    int64_t off = 0;
    for (size_t d = 0; d < dims; ++d) off += g[d] * kt.strides[d];
    return {true, m_layout.tensor_base[size_t(tensor)] + uint64_t(off) * kt.elem_bytes(),
            AddressSpace::Global, tag(kt), kt.elem_bytes()};
  }
  Target global_target(int tensor, const std::vector<int64_t>& g) {
    return global_target(tensor, g.data(), g.size());
  }

  // A load's target at the current loop values with its bounds left to the caller: the address
  // (as if in range) and, for each dimension that needs a check, the index and its limit.
  static constexpr size_t kMaxDims = 8;
  struct Unchecked {
    Target target;
    size_t checks = 0;
    int64_t index[kMaxDims] = {}, limit[kMaxDims] = {};
  };
  bool unchecked_load(const VExpr& l, Unchecked& u) {
    const graph::Shape& shape =
        l.computed ? m_k.computed[size_t(l.tensor)].shape : m_k.tensors[size_t(l.tensor)].shape;
    if (l.index.size() > kMaxDims) return false;
    int64_t g[kMaxDims];
    u.checks = 0;
    for (size_t d = 0; d < l.index.size(); ++d) {
      g[d] = m_env.eval(l.index[d]);
      if (d >= l.check_dims.size() || l.check_dims[d]) {
        u.index[u.checks] = g[d];
        u.limit[u.checks++] = shape[d];
      }
    }
    if (l.stage >= 0) {
      const StagePlacement& pl = m_lk.stages[size_t(l.stage)];
      int64_t off = 0;
      for (size_t d = 0; d < l.buffer_index.size(); ++d)
        off += m_env.eval(l.buffer_index[d]) * pl.strides[d];
      u.target = tile_target(pl, off);
    } else {
      u.target = global_target(l.tensor, g, l.index.size());
    }
    return true;
  }

  Target load_target(const VExpr& l) {
    Unchecked u;
    if (!unchecked_load(l, u)) {  // more dimensions than Unchecked holds: the long way
      const graph::Shape& shape =
          l.computed ? m_k.computed[size_t(l.tensor)].shape : m_k.tensors[size_t(l.tensor)].shape;
      std::vector<int64_t> g(l.index.size());
      for (size_t d = 0; d < g.size(); ++d) {
        g[d] = m_env.eval(l.index[d]);
        if ((d >= l.check_dims.size() || l.check_dims[d]) && (g[d] < 0 || g[d] >= shape[d]))
          return {};
      }
      return global_target(l.tensor, g);
    }
    for (size_t c = 0; c < u.checks; ++c)
      if (u.index[c] < 0 || u.index[c] >= u.limit[c]) return {};
    return u.target;
  }

  Target store_target(const Phase& p) {
    if (p.kind != PhaseKind::Map) return {};
    const KernelTensor& kt = m_k.tensors[size_t(p.out_tensor)];
    int64_t off = 0;
    for (size_t d = 0; d < p.out_index.size(); ++d)
      off += m_env.eval(p.out_index[d]) * kt.strides[d];
    return {true, m_layout.tensor_base[size_t(p.out_tensor)] + uint64_t(off) * kt.elem_bytes(),
            AddressSpace::Global, tag(kt), kt.elem_bytes()};
  }

  // The accesses of one element of a tile copy: reads of its source, then the tile write.
  void copy_element(const StagePlacement& pl, const std::vector<int64_t>& base,
                    const std::vector<int64_t>& o, std::vector<Target>& reads, Target& write) {
    reads.clear();
    write = {};
    const graph::Shape& shape =
        pl.computed ? m_k.computed[size_t(pl.tensor)].shape : m_k.tensors[size_t(pl.tensor)].shape;
    std::vector<int64_t> g(o.size());
    int64_t off = 0;
    for (size_t d = 0; d < o.size(); ++d) {
      g[d] = base[d] + o[d];
      if (g[d] < 0 || g[d] >= shape[d]) return;  // outside the tensor: the copy writes 0, no read
      off += o[d] * pl.strides[d];
    }
    if (pl.source >= 0) {
      const StagePlacement& src = m_lk.stages[size_t(pl.source)];
      int64_t so = 0;
      for (size_t d = 0; d < g.size(); ++d) so += (g[d] - m_env.eval(src.base[d])) * src.strides[d];
      reads.push_back(tile_target(src, so));
    } else if (pl.computed) {
      for (size_t d = 0; d < g.size(); ++d) m_env.set_def(d, g[d]);
      std::vector<const VExpr*> sites;
      collect(m_k.computed[size_t(pl.tensor)].definition, sites);
      for (const VExpr* l : sites) reads.push_back(load_target(*l));
    } else {
      reads.push_back(global_target(pl.tensor, g));
    }
    write = tile_target(pl, off);
  }

  static bool next_index(std::vector<int64_t>& o, const std::vector<int64_t>& ext) {
    for (size_t d = o.size(); d > 0; --d) {
      if (++o[d - 1] < ext[d - 1]) return true;
      o[d - 1] = 0;
    }
    return false;
  }

  // [SECTION] CPU walk

  // `acc[x] op= value` reads acc[x] (Reduce), then value's operands; it then writes acc[x] (Init,
  // Reduce) or the output element (Map). The online sum reads and writes its maximum too.
  void stmt_cpu(int p) {
    const Phase& ph = m_lk.phases[size_t(p)].phase;
    if (m_acc_traced && ph.kind == PhaseKind::Reduce)
      for (int slot : written_slots(ph)) emit_acc(slot, AccessKind::Read);
    for (const VExpr* l : m_cpu_sites[size_t(p)]) {
      if (l->kind == VExpr::Kind::Acc) {
        emit_acc(l->acc, AccessKind::Read);
        continue;
      }
      Target t = load_target(*l);
      if (t.valid) emit(t.addr, t.size, AccessKind::Read, t.tensor, t.space);
    }
    if (m_acc_traced)
      for (int slot : written_slots(ph)) emit_acc(slot, AccessKind::Write);
    Target w = store_target(ph);
    if (w.valid) emit(w.addr, w.size, AccessKind::Write, w.tensor, w.space);
  }

  void stage_cpu(int s) {
    const StagePlacement& pl = m_lk.stages[size_t(s)];
    std::vector<int64_t> base(pl.base.size()), o(pl.base.size(), 0);
    for (size_t d = 0; d < base.size(); ++d) base[d] = m_env.eval(pl.base[d]);
    std::vector<Target> reads;
    Target write;
    do {
      copy_element(pl, base, o, reads, write);
      for (const auto& r : reads)
        if (r.valid) emit(r.addr, r.size, AccessKind::Read, r.tensor, r.space);
      if (write.valid) emit(write.addr, write.size, AccessKind::Write, write.tensor, write.space);
    } while (!o.empty() && next_index(o, pl.extents));
  }

  // [SECTION] Innermost loops
  //
  // A loop whose body is only statements makes the same accesses at every iteration, each at an
  // address (and bounds-checked indices) affine in the loop's value: they are evaluated twice, at
  // 0 and 1, and the loop then emits address0 + v × step without evaluating anything. The order and
  // every access are stmt_cpu's (stmt_gpu's, lane by lane, for a GPU walk); a double-buffered tile
  // that flips with this loop, a load of more than kMaxDims dimensions, or a GPU guard on thread
  // indices keeps the general walk.
  struct InnerCheck {
    int64_t index = 0, step = 0, limit = 0;
  };
  struct InnerAccess {
    uint64_t addr = 0;
    int64_t step = 0;  // bytes per iteration
    AccessKind kind = AccessKind::Read;
    AddressSpace space = AddressSpace::Global;
    int tensor = -1;
    uint32_t size = 4;   // bytes
    bool acc = false;    // counts as an accumulator access (TraceSummary)
    bool valid = false;  // false: no access (a register tile, a Reduce phase's store)
    uint32_t check_begin = 0, checks = 0;  // InnerLoop::checks
  };
  // The TraceSummary counters an access of a CPU inner loop bumps.
  struct InnerCounted {
    uint64_t* count;
    uint64_t* acc;  // nullptr unless an accumulator access
  };
  // One warp instruction of a GPU inner loop: lanes [begin, end) of InnerLoop::accesses.
  struct InnerWarp {
    size_t begin = 0, end = 0;
    AccessKind kind = AccessKind::Read;
    int32_t warp = -1;       // global warp id
    int32_t block_warp = 0;  // the warp's index inside its block
  };
  struct InnerLoop {
    std::vector<InnerAccess> accesses;
    std::vector<InnerCheck> checks;
    std::vector<InnerWarp> warps;
    void clear() {
      accesses.clear();
      checks.clear();
      warps.clear();
    }
    void add(const Target& t, AccessKind kind, bool acc) {
      InnerAccess a;
      a.valid = t.valid;
      a.addr = t.addr;
      a.kind = kind;
      a.space = t.space;
      a.tensor = t.tensor;
      a.size = t.size;
      a.acc = acc;
      a.check_begin = uint32_t(checks.size());
      accesses.push_back(a);
    }
    bool in_range(const InnerAccess& a, int64_t v) const {
      for (uint32_t c = a.check_begin; c < a.check_begin + a.checks; ++c) {
        const int64_t g = checks[c].index + v * checks[c].step;
        if (g < 0 || g >= checks[c].limit) return false;
      }
      return true;
    }
  };

  void add_load(InnerLoop& out, const VExpr& l) {
    Unchecked u;
    unchecked_load(l, u);
    out.add(u.target, AccessKind::Read, false);
    out.accesses.back().checks = uint32_t(u.checks);
    for (size_t c = 0; c < u.checks; ++c) out.checks.push_back({u.index[c], 0, u.limit[c]});
  }

  bool inner_loop(const Node& n, bool gpu) {
    if (m_o.general_walk) return false;
    if (n.loop == (gpu ? m_gpu_step_loop : m_step_loop) || n.children.empty()) return false;
    if (gpu && !m_deferred.empty()) return false;
    for (const Node& c : n.children)
      if (c.kind != Node::Kind::Stmt) return false;
    for (const Node& c : n.children)
      for (const VExpr* l : m_cpu_sites[size_t(c.phase)]) {
        if (l->kind != VExpr::Kind::Load) continue;
        if (l->index.size() > kMaxDims) return false;
        if (l->stage >= 0) {
          const StagePlacement& pl = m_lk.stages[size_t(l->stage)];
          if (pl.at == n.loop && m_k.stages[size_t(pl.spec)].double_buffer) return false;
        }
      }
    return true;
  }

  // The accesses of one iteration of `n`'s statements at the loop's current value, as stmt_cpu
  // makes them.
  void inner_accesses_cpu(const Node& n, InnerLoop& out) {
    out.clear();
    const auto acc = [&](int slot, AccessKind kind) {
      out.add({true, acc_addr(slot), AddressSpace::Global, m_o.acc_tensor}, kind, true);
    };
    for (const Node& c : n.children) {
      const Phase& ph = m_lk.phases[size_t(c.phase)].phase;
      if (m_acc_traced && ph.kind == PhaseKind::Reduce)
        for (int slot : written_slots(ph)) acc(slot, AccessKind::Read);
      for (const VExpr* l : m_cpu_sites[size_t(c.phase)]) {
        if (l->kind == VExpr::Kind::Acc) {
          acc(l->acc, AccessKind::Read);
        } else {
          add_load(out, *l);
        }
      }
      if (m_acc_traced)
        for (int slot : written_slots(ph)) acc(slot, AccessKind::Write);
      out.add(store_target(ph), AccessKind::Write, false);
    }
  }

  // As stmt_gpu makes them: per statement, per warp, each load site's lanes, then the store's.
  void inner_accesses_gpu(const Node& n, InnerLoop& out) {
    out.clear();
    const int64_t ws = m_o.warp_size;
    for (const Node& c : n.children) {
      const auto& sites = m_sites[size_t(c.phase)];
      const Phase& ph = m_lk.phases[size_t(c.phase)].phase;
      for (int64_t w0 = 0; w0 < m_nthreads; w0 += ws) {
        const int32_t warp = int32_t(m_pid * ((m_nthreads + ws - 1) / ws) + w0 / ws);
        const int64_t end = std::min(w0 + ws, m_nthreads);
        for (size_t i = 0; i <= sites.size(); ++i) {
          InnerWarp w;
          w.begin = out.accesses.size();
          w.kind = i < sites.size() ? AccessKind::Read : AccessKind::Write;
          w.warp = warp;
          w.block_warp = int32_t(w0 / ws);
          for (int64_t tid = w0; tid < end; ++tid) {
            set_lane(tid);
            if (i < sites.size()) {
              add_load(out, *sites[i]);
            } else {
              out.add(store_target(ph), AccessKind::Write, false);
            }
          }
          w.end = out.accesses.size();
          out.warps.push_back(w);
        }
      }
    }
  }

  void inner_accesses(const Node& n, bool gpu, InnerLoop& out) {
    gpu ? inner_accesses_gpu(n, out) : inner_accesses_cpu(n, out);
  }

  // m_inner at v = 0 and its steps from `next` (v = 1).
  void inner_steps(const InnerLoop& next) {
    for (size_t i = 0; i < m_inner.accesses.size(); ++i)
      m_inner.accesses[i].step = int64_t(next.accesses[i].addr - m_inner.accesses[i].addr);
    for (size_t c = 0; c < m_inner.checks.size(); ++c)
      m_inner.checks[c].step = next.checks[c].index - m_inner.checks[c].index;
  }

  // Every address and checked index of an inner loop is affine in all loop values (not only its
  // own), so a loop executed many times (a convolution's 3-wide kernel loop) is evaluated once:
  // at all loops 0 and at each loop set to 1, giving each access a coefficient per loop. A
  // double-buffered tile flips with its loop's parity, which is not affine: such a loop is
  // evaluated at every execution instead.
  struct InnerTemplate {
    bool affine = false;
    InnerLoop zero;                    // at every loop value 0 (thread loops: each lane's)
    std::vector<int> loops;            // loops some address or index depends on
    std::vector<int64_t> addr, index;  // [access or check][loops]: coefficients
  };

  const InnerTemplate& inner_template(const Node& n, bool gpu) {
    auto [it, fresh] = m_templates.try_emplace(&n);
    InnerTemplate& t = it->second;
    if (!fresh) return t;
    t.affine = std::none_of(m_k.stages.begin(), m_k.stages.end(),
                            [](const StageSpec& s) { return s.double_buffer; });
    if (!t.affine) return t;
    const size_t loops = m_k.loops.size();
    std::vector<int64_t> saved(loops);
    for (size_t l = 0; l < loops; ++l) {
      saved[l] = m_env.loop_value(int(l));
      m_env.set_loop(int(l), 0);
    }
    inner_accesses(n, gpu, t.zero);
    for (size_t l = 0; l < loops; ++l) {
      if (gpu && is_thread(m_k.loops[l].kind)) continue;  // each lane sets its own
      m_env.set_loop(int(l), 1);
      inner_accesses(n, gpu, m_inner_next);
      m_env.set_loop(int(l), 0);
      bool used = false;
      std::vector<int64_t> addr(t.zero.accesses.size()), index(t.zero.checks.size());
      for (size_t i = 0; i < addr.size(); ++i)
        used |= (addr[i] = int64_t(m_inner_next.accesses[i].addr - t.zero.accesses[i].addr)) != 0;
      for (size_t c = 0; c < index.size(); ++c)
        used |= (index[c] = m_inner_next.checks[c].index - t.zero.checks[c].index) != 0;
      if (!used && int(l) != n.loop) continue;
      t.loops.push_back(int(l));
      t.addr.insert(t.addr.end(), addr.begin(), addr.end());
      t.index.insert(t.index.end(), index.begin(), index.end());
    }
    for (size_t l = 0; l < loops; ++l) m_env.set_loop(int(l), saved[l]);
    return t;
  }

  // m_inner at the current outer loop values (v = 0) with its steps, from the template.
  void instantiate(const InnerTemplate& t, int loop) {
    m_inner = t.zero;
    // Warp ids count from the block's first warp; the template was made in some other block.
    if (!m_inner.warps.empty()) {
      const int64_t block_warps = (m_nthreads + m_o.warp_size - 1) / m_o.warp_size;
      for (InnerWarp& w : m_inner.warps) w.warp = int32_t(m_pid * block_warps + w.block_warp);
    }
    const size_t na = t.zero.accesses.size(), nc = t.zero.checks.size();
    for (size_t j = 0; j < t.loops.size(); ++j) {
      const int l = t.loops[j];
      const int64_t* addr = t.addr.data() + j * na;
      const int64_t* index = t.index.data() + j * nc;
      if (l == loop) {
        for (size_t i = 0; i < na; ++i) m_inner.accesses[i].step = addr[i];
        for (size_t c = 0; c < nc; ++c) m_inner.checks[c].step = index[c];
        continue;
      }
      const int64_t v = m_env.loop_value(l);
      if (v == 0) continue;
      for (size_t i = 0; i < na; ++i) m_inner.accesses[i].addr += uint64_t(addr[i] * v);
      for (size_t c = 0; c < nc; ++c) m_inner.checks[c].index += index[c] * v;
    }
  }

  void walk_inner(const Node& n, bool gpu) {
    const int64_t extent = m_k.loops[size_t(n.loop)].extent;
    if (extent <= 0) return;
    if (const InnerTemplate& t = inner_template(n, gpu); t.affine) {
      instantiate(t, n.loop);
    } else {
      m_env.set_loop(n.loop, 0);
      inner_accesses(n, gpu, m_inner);
      if (extent > 1) {
        m_env.set_loop(n.loop, 1);
        inner_accesses(n, gpu, m_inner_next);
        inner_steps(m_inner_next);
      }
    }
    if (!gpu) {
      walk_inner_cpu(extent);
    } else {
      walk_inner_gpu(extent);
    }
    m_env.set_loop(n.loop, extent - 1);
  }

  // emit()'s work for each access of m_inner at every v, with the summary counter each one bumps
  // found once instead of per access.
  void walk_inner_cpu(int64_t extent) {
    std::erase_if(m_inner.accesses, [](const InnerAccess& a) { return !a.valid; });
    std::vector<InnerCounted>& counted = m_inner_counted;
    counted.clear();
    for (const InnerAccess& a : m_inner.accesses) {
      const bool write = a.kind == AccessKind::Write;
      uint64_t* count = a.space == AddressSpace::Shared
                            ? (write ? &m_sum.shared_writes : &m_sum.shared_reads)
                            : (write ? &m_sum.global_writes : &m_sum.global_reads);
      counted.push_back({count, a.acc ? (write ? &m_sum.acc_writes : &m_sum.acc_reads) : nullptr});
    }
    const size_t n = m_inner.accesses.size();
    for (int64_t v = 0; v < extent; ++v) {
      if (m_buf.size() + n > kBatch) flush();
      for (size_t i = 0; i < n; ++i) {
        const InnerAccess& a = m_inner.accesses[i];
        if (a.checks != 0 && !m_inner.in_range(a, v)) continue;
        ++*counted[i].count;
        if (counted[i].acc) ++*counted[i].acc;
        Access out;
        out.addr = a.addr + uint64_t(v * a.step);
        out.size = a.size;
        out.kind = a.kind;
        out.tensor = int16_t(a.tensor);
        out.space = a.space;
        m_buf.push_back(out);
      }
    }
  }

  void walk_inner_gpu(int64_t extent) {
    const auto at = [](const InnerAccess& a, int64_t v) {
      return Target{true, a.addr + uint64_t(v * a.step), a.space, a.tensor, a.size};
    };
    for (int64_t v = 0; v < extent; ++v) {
      for (const InnerWarp& w : m_inner.warps) {
        if (w.end - w.begin == 1 && !m_o.lane_detail &&
            m_inner.accesses[w.begin].space == AddressSpace::Global) {
          // One lane (a kernel with no thread loops): warp_access's coalescing of a single global
          // address — its sector, one line, one instruction — without its lists.
          const InnerAccess& a = m_inner.accesses[w.begin];
          if (!a.valid || !m_inner.in_range(a, v)) continue;
          const uint64_t sector = (a.addr + uint64_t(v * a.step)) / m_o.sector_bytes;
          emit(sector * m_o.sector_bytes, m_o.sector_bytes, w.kind, a.tensor, a.space, w.warp);
          ++m_sum.global_instructions;
          if (w.kind != AccessKind::Write) ++m_sum.global_load_instructions;
          ++m_sum.global_lines;
          continue;
        }
        m_lanes.clear();  // lanes out of range or with no target make no access in warp_access
        for (size_t i = w.begin; i < w.end; ++i) {
          const InnerAccess& a = m_inner.accesses[i];
          if (a.valid && m_inner.in_range(a, v)) m_lanes.push_back(at(a, v));
        }
        warp_access(m_lanes, w.kind, w.warp);
      }
    }
  }

  void walk(const std::vector<Node>& nodes) {
    for (const Node& n : nodes) {
      switch (n.kind) {
        case Node::Kind::Loop: {
          const bool unit = is_unit(n);
          if (!unit && inner_loop(n, false)) {
            walk_inner(n, false);
            break;
          }
          for (int64_t v = 0; v < m_k.loops[size_t(n.loop)].extent; ++v) {
            if (unit && !begin_unit()) continue;
            m_env.set_loop(n.loop, v);
            if (n.loop == m_step_loop) step();
            walk(n.children);
            if (unit) end_unit();
          }
          break;
        }
        case Node::Kind::If:
          if (conds_hold(n.conds)) walk(n.children);
          break;
        case Node::Kind::Stmt:
          stmt_cpu(n.phase);
          break;
        case Node::Kind::Stage:
          stage_cpu(n.stage);
          break;
        default:
          break;
      }
    }
  }

  bool conds_hold(const std::vector<TailGuard>& cs) {
    for (const auto& c : cs)
      if (m_env.eval(c.expr) >= c.bound) return false;
    return true;
  }

  // [SECTION] GPU walk

  bool uses_thread_var(const std::vector<TailGuard>& cs) const {
    for (const auto& c : cs)
      for (const auto& [n, k] : c.expr.terms) {
        (void)k;
        const int l = m_k.find_loop(n);
        if (l >= 0 && is_thread(m_k.loops[size_t(l)].kind)) return true;
      }
    return false;
  }

  void set_lane(int64_t tid) {
    const int64_t t[3] = {tid % m_tdim[0], (tid / m_tdim[0]) % m_tdim[1],
                          tid / (m_tdim[0] * m_tdim[1])};
    for (size_t i = 0; i < m_k.loops.size(); ++i) {
      const LoopKind k = m_k.loops[i].kind;
      if (k == LoopKind::ThreadX) m_env.set_loop(int(i), t[0]);
      if (k == LoopKind::ThreadY) m_env.set_loop(int(i), t[1]);
      if (k == LoopKind::ThreadZ) m_env.set_loop(int(i), t[2]);
    }
  }

  bool lane_active() {
    for (const auto* cs : m_deferred)
      if (!conds_hold(*cs)) return false;
    return true;
  }

  // One warp instruction: lanes' targets → coalesced sectors (global) or lane accesses (shared).
  void warp_access(const std::vector<Target>& lanes, AccessKind kind, int32_t warp) {
    if (m_o.lane_detail) lane_detail(lanes, kind, warp);
    std::vector<uint64_t>& sectors = m_warp_sectors;
    std::vector<uint64_t>& lines = m_warp_lines;
    sectors.clear();
    lines.clear();
    m_shared_lanes.clear();
    for (const Target& t : lanes) {
      if (!t.valid) continue;
      if (t.space == AddressSpace::Shared) {
        emit(t.addr, t.size, kind, t.tensor, t.space, warp);
        m_shared_lanes.push_back({t.addr, t.size});
        continue;
      }
      const uint64_t line = t.addr / kLineBytes;
      if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
      const uint64_t s = t.addr / m_o.sector_bytes;
      if (std::find(sectors.begin(), sectors.end(), s) != sectors.end()) continue;
      sectors.push_back(s);
      emit(s * m_o.sector_bytes, m_o.sector_bytes, kind, t.tensor, t.space, warp);
    }
    if (!lines.empty()) {
      ++m_sum.global_instructions;
      if (kind != AccessKind::Write) ++m_sum.global_load_instructions;
      m_sum.global_lines += lines.size();
    }
    if (!m_shared_lanes.empty()) {
      ++m_sum.shared_instructions;
      m_sum.shared_wavefronts += memory::bank_conflict_degree(m_shared_lanes);
    }
  }

  void lane_detail(const std::vector<Target>& lanes, AccessKind kind, int32_t warp) {
    std::vector<uint64_t> addr;
    const Target* first = nullptr;
    for (const Target& t : lanes) {
      if (!t.valid) continue;
      if (!first) first = &t;
      addr.push_back(t.addr);
    }
    if (!first) return;
    flush();  // the sink sees the request before its accesses, after every earlier one
    memory::WarpRequest r;
    r.warp = warp;
    r.tensor = int16_t(first->tensor);
    r.kind = kind;
    r.space = first->space;
    r.lane_bytes = first->size;
    r.lane_addr = addr.data();
    r.lanes = uint32_t(addr.size());
    m_sink.warp_request(r);
  }

  void stmt_gpu(int p) {
    const auto& sites = m_sites[size_t(p)];
    const Phase& ph = m_lk.phases[size_t(p)].phase;
    const int64_t ws = m_o.warp_size;
    for (int64_t w0 = 0; w0 < m_nthreads; w0 += ws) {
      const int32_t warp = int32_t(m_pid * ((m_nthreads + ws - 1) / ws) + w0 / ws);
      std::vector<std::vector<Target>>& per_site = m_per_site;  // scratch, kept between warps
      per_site.resize(sites.size() + 1);
      for (auto& lanes : per_site) lanes.clear();
      for (int64_t tid = w0; tid < std::min(w0 + ws, m_nthreads); ++tid) {
        set_lane(tid);
        if (!lane_active()) continue;
        for (size_t i = 0; i < sites.size(); ++i) per_site[i].push_back(load_target(*sites[i]));
        per_site[sites.size()].push_back(store_target(ph));
      }
      for (size_t i = 0; i < sites.size(); ++i) warp_access(per_site[i], AccessKind::Read, warp);
      warp_access(per_site[sites.size()], AccessKind::Write, warp);
    }
  }

  void stage_gpu(int s) {
    const StagePlacement& pl = m_lk.stages[size_t(s)];
    const int64_t ws = m_o.warp_size;
    const int64_t warps = (m_nthreads + ws - 1) / ws;
    if (pl.level != MemLevel::Shared) {
      // A private tile: every thread copies its own, element by element, in lockstep.
      for (int64_t w0 = 0; w0 < m_nthreads; w0 += ws) {
        const int32_t warp = int32_t(m_pid * warps + w0 / ws);
        std::vector<int64_t> o(pl.base.size(), 0);
        do {
          std::vector<std::vector<Target>> reads;
          std::vector<Target> writes;
          for (int64_t tid = w0; tid < std::min(w0 + ws, m_nthreads); ++tid) {
            set_lane(tid);
            if (!lane_active()) continue;
            std::vector<int64_t> base(pl.base.size());
            for (size_t d = 0; d < base.size(); ++d) base[d] = m_env.eval(pl.base[d]);
            std::vector<Target> r;
            Target wr;
            copy_element(pl, base, o, r, wr);
            if (reads.size() < r.size()) reads.resize(r.size());
            for (size_t i = 0; i < r.size(); ++i) reads[i].push_back(r[i]);
            writes.push_back(wr);
          }
          for (const auto& r : reads) warp_access(r, AccessKind::Read, warp);
          warp_access(writes, AccessKind::Write, warp);
        } while (!o.empty() && next_index(o, pl.extents));
      }
      return;
    }
    // Cooperative copy: element e goes to thread e % nthreads, as in the generated CUDA.
    std::vector<int64_t> base(pl.base.size());
    for (size_t d = 0; d < base.size(); ++d) base[d] = m_env.eval(pl.base[d]);
    for (int64_t e0 = 0; e0 < pl.footprint; e0 += m_nthreads) {
      for (int64_t w0 = 0; w0 < m_nthreads; w0 += ws) {
        const int32_t warp = int32_t(m_pid * warps + w0 / ws);
        std::vector<std::vector<Target>> reads;
        std::vector<Target> writes;
        for (int64_t lane = w0; lane < std::min(w0 + ws, m_nthreads); ++lane) {
          const int64_t e = e0 + lane;
          if (e >= pl.footprint) break;
          std::vector<int64_t> o(pl.extents.size());
          int64_t rem = e;
          for (size_t d = o.size(); d > 0; --d) {
            o[d - 1] = rem % pl.extents[d - 1];
            rem /= pl.extents[d - 1];
          }
          std::vector<Target> r;
          Target wr;
          copy_element(pl, base, o, r, wr);
          if (reads.size() < r.size()) reads.resize(r.size());
          for (size_t i = 0; i < r.size(); ++i) reads[i].push_back(r[i]);
          writes.push_back(wr);
        }
        for (const auto& r : reads) warp_access(r, AccessKind::Read, warp);
        warp_access(writes, AccessKind::Write, warp);
      }
    }
  }

  void walk_gpu(const std::vector<Node>& nodes) {
    for (const Node& n : nodes) walk_gpu_node(n);
  }

  void walk_gpu_node(const Node& n) {
    switch (n.kind) {
      case Node::Kind::Loop:
        if (is_thread(m_k.loops[size_t(n.loop)].kind)) {
          walk_gpu(n.children);  // lanes are enumerated at the leaves
        } else if (const bool unit = is_unit(n); !unit && inner_loop(n, true)) {
          walk_inner(n, true);
        } else {
          for (int64_t v = 0; v < m_k.loops[size_t(n.loop)].extent; ++v) {
            if (unit && !begin_unit()) continue;
            if (n.loop == m_gpu_step_loop) step();
            m_env.set_loop(n.loop, v);
            walk_gpu(n.children);
            if (unit) end_unit();
          }
        }
        break;
      case Node::Kind::If:
        if (uses_thread_var(n.conds)) {
          m_deferred.push_back(&n.conds);
          walk_gpu(n.children);
          m_deferred.pop_back();
        } else if (conds_hold(n.conds)) {
          walk_gpu(n.children);
        }
        break;
      case Node::Kind::Stmt:
        stmt_gpu(n.phase);
        break;
      case Node::Kind::Stage:
        stage_gpu(n.stage);
        break;
      default:
        break;
    }
  }

  void set_block(int64_t pid) {
    m_pid = pid;
    const auto c = block_coords(m_k, pid);
    for (size_t i = 0; i < m_k.loops.size(); ++i) {
      const LoopKind k = m_k.loops[i].kind;
      if (k == LoopKind::BlockX) m_env.set_loop(int(i), c[0]);
      if (k == LoopKind::BlockY) m_env.set_loop(int(i), c[1]);
      if (k == LoopKind::BlockZ) m_env.set_loop(int(i), c[2]);
    }
  }

  void run_gpu() {
    // The block body: everything below the block-bound loops (which are the outermost loops).
    std::vector<const Node*> units;
    int64_t blocks = 1;
    std::function<void(const std::vector<Node>&)> descend = [&](const std::vector<Node>& nodes) {
      for (const Node& n : nodes) {
        if (n.kind == Node::Kind::Loop && is_block(m_k.loops[size_t(n.loop)].kind)) {
          blocks *= m_k.loops[size_t(n.loop)].extent;
          descend(n.children);
        } else {
          units.push_back(&n);
        }
      }
    };
    descend(m_lk.body);
    const int64_t resident = std::max<int64_t>(1, m_o.resident_blocks);
    for (int64_t first = 0; first < blocks; first += resident) {
      const int64_t last = std::min(blocks, first + resident);
      for (const Node* up : units) {
        const Node& unit = *up;
        const bool serial = unit.kind == Node::Kind::Loop &&
                            !is_thread(m_k.loops[size_t(unit.loop)].kind) &&
                            !is_block(m_k.loops[size_t(unit.loop)].kind);
        if (!serial) {
          for (int64_t b = first; b < last; ++b) {
            set_block(b);
            walk_gpu_node(unit);
          }
          continue;
        }
        // Resident blocks advance through this loop together, one iteration at a time (one unit
        // of a sampled trace when it is TraceOptions::unit_loop).
        const bool sampled = is_unit(unit);
        for (int64_t v = 0; v < m_k.loops[size_t(unit.loop)].extent; ++v) {
          if (sampled && !begin_unit()) continue;
          step();
          for (int64_t b = first; b < last; ++b) {
            set_block(b);
            m_env.set_loop(unit.loop, v);
            walk_gpu(unit.children);
          }
          if (sampled) end_unit();
        }
      }
    }
  }

  LoweredKernel m_lk;
  const Kernel& m_k;
  memory::AccessSink& m_sink;
  TraceOptions m_o;
  AffineEnv m_env;
  TraceLayout m_layout;
  std::vector<StageArea> m_areas;  // per stage spec: where its tile buffer lives
  std::vector<std::vector<const VExpr*>> m_sites;
  std::vector<std::vector<const VExpr*>> m_cpu_sites;
  bool m_acc_traced = false;
  Affine m_acc_index;
  static constexpr size_t kBatch = 4096;  // accesses handed to the sink at once (about)
  std::vector<Access> m_buf;
  InnerLoop m_inner, m_inner_next;  // walk_inner's accesses at v = 0 and v = 1
  std::vector<InnerCounted> m_inner_counted;
  std::unordered_map<const Node*, InnerTemplate> m_templates;  // by inner loop node
  std::vector<Target> m_lanes;                         // walk_inner's lanes of one warp instruction
  std::vector<memory::LaneAccess> m_shared_lanes;      // warp_access's scratch
  std::vector<uint64_t> m_warp_sectors, m_warp_lines;  // warp_access's scratch
  std::vector<std::vector<Target>> m_per_site;         // stmt_gpu's scratch
  TraceSummary m_sum;
  int m_step_loop = -1;
  int m_gpu_step_loop = -1;  // GPU mode: a loop inside the block body stepped at (TraceOptions)
  int64_t m_tdim[3] = {1, 1, 1};
  int64_t m_nthreads = 1;
  int64_t m_pid = 0;
  std::vector<const std::vector<TailGuard>*> m_deferred;
};

}  // namespace

TraceSummary trace_kernel(const Kernel& k, memory::AccessSink& sink, const TraceOptions& o) {
  return Tracer(k, sink, o).run();
}

}  // namespace tilescope::schedule

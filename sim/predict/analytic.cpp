// Analytic traffic model: tile footprints per loop depth, set-aware fit tests, misses per tensor.
#include "sim/predict/analytic.h"

#include "sim/schedule/loop_tree.h"
#include "sim/schedule/trace.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tilescope::predict {
namespace {

using schedule::Affine;
using schedule::Kernel;
using schedule::VExpr;

std::string fmt_number(double v) {
  std::ostringstream s;
  if (v == std::floor(v) && std::abs(v) < 1e18) {
    s << static_cast<long long>(v);
  } else {
    s.precision(6);
    s << v;
  }
  return s.str();
}

// One element access of the nest: which tensor, its byte address over loop names, read or write.
struct NestAccess {
  int tensor = -1;
  Affine addr;  // bytes, base included
  bool write = false;
  bool in_reduce = false;  // made by the Reduce phase (runs alone inside the reduction loops)
  int phase = -1;          // index into Kernel::phases
};

Affine over_loops(const Kernel& k, const Affine& over_axes) {
  Affine r = over_axes;
  for (size_t a = 0; a < k.axes.size(); ++a)
    if (r.uses(k.axes[a].name)) r = r.substitute(k.axes[a].name, k.axis_value[a]);
  return r;
}

Affine address(const Kernel& k, int tensor, const std::vector<Affine>& index, uint64_t base) {
  const schedule::KernelTensor& t = k.tensors.at(size_t(tensor));
  Affine a = Affine::lit(int64_t(base));
  for (size_t d = 0; d < index.size() && d < t.strides.size(); ++d)
    a += over_loops(k, index[d]) * (t.strides[d] * int64_t(t.elem_bytes()));
  return a;
}

uint64_t count_accs(const VExpr& e) {
  uint64_t n = e.kind == VExpr::Kind::Acc ? 1 : 0;
  for (const VExpr& a : e.args) n += count_accs(a);
  return n;
}

// Loads of `e`, with loads of computed (inlined) tensors replaced by the loads of their definition
// at the index they are read at. Counts the loads per evaluation in `count`.
void collect_loads(const Kernel& k, const VExpr& e, const std::vector<Affine>& subst,
                   const std::vector<uint64_t>& base, std::vector<NestAccess>& out,
                   uint64_t& count) {
  if (e.kind == VExpr::Kind::Load) {
    std::vector<Affine> idx = e.index;
    if (!subst.empty())
      for (Affine& a : idx)
        for (size_t d = 0; d < subst.size(); ++d)
          if (a.uses(schedule::def_var(d))) a = a.substitute(schedule::def_var(d), subst[d]);
    if (e.computed) {
      collect_loads(k, k.computed.at(size_t(e.tensor)).definition, idx, base, out, count);
      return;
    }
    out.push_back({e.tensor, address(k, e.tensor, idx, base[size_t(e.tensor)]), false});
    ++count;
    return;
  }
  for (const VExpr& a : e.args) collect_loads(k, a, subst, base, out, count);
}

// Distinct lines one tensor's accesses touch while loops depth..n-1 run once (outer loops and
// loops the address does not use at 0), skipping points that tail guards exclude.
class Footprint {
 public:
  Footprint(const Kernel& k, uint64_t max_points) : m_k(k), m_max(max_points) {}

  std::unordered_set<uint64_t> lines(const std::vector<const NestAccess*>& accs, size_t depth,
                                     uint32_t line_bytes) const {
    std::unordered_set<uint64_t> out;
    for (const NestAccess* a : accs) add(*a, depth, line_bytes, out);
    return out;
  }

 private:
  void add(const NestAccess& a, size_t depth, uint32_t line_bytes,
           std::unordered_set<uint64_t>& out) const {
    std::vector<size_t> vars;  // loop positions enumerated
    uint64_t points = 1;
    for (size_t l = depth; l < m_k.loops.size(); ++l) {
      if (!a.addr.uses(m_k.loops[l].name)) continue;
      vars.push_back(l);
      points *= uint64_t(std::max<int64_t>(m_k.loops[l].extent, 1));
      if (points > m_max)
        throw std::invalid_argument("analytic model: kernel " + m_k.name +
                                    " has a tile footprint of more than " + std::to_string(m_max) +
                                    " points to enumerate");
    }
    // Guards that involve an enumerated loop: evaluated per point (others pass at 0).
    std::vector<const schedule::TailGuard*> guards;
    for (const schedule::TailGuard& g : m_k.guards)
      for (size_t l : vars)
        if (g.expr.uses(m_k.loops[l].name)) {
          guards.push_back(&g);
          break;
        }
    std::vector<int64_t> coef(vars.size()), val(vars.size(), 0);
    for (size_t v = 0; v < vars.size(); ++v) coef[v] = a.addr.coef(m_k.loops[vars[v]].name);
    uint64_t last = ~uint64_t{0};
    while (true) {
      bool ok = true;
      for (const schedule::TailGuard* g : guards) {
        int64_t x = g->expr.constant;
        for (const auto& [name, c] : g->expr.terms)
          for (size_t v = 0; v < vars.size(); ++v)
            if (m_k.loops[vars[v]].name == name) x += c * val[v];
        if (x >= g->bound) ok = false;
      }
      if (ok) {
        int64_t addr = a.addr.constant;
        for (size_t v = 0; v < vars.size(); ++v) addr += coef[v] * val[v];
        const uint64_t line = uint64_t(addr) / line_bytes;
        if (line != last) out.insert(line);
        last = line;
      }
      // Odometer, innermost loop fastest.
      size_t v = vars.size();
      while (v > 0) {
        --v;
        if (++val[v] < m_k.loops[vars[v]].extent) break;
        val[v] = 0;
        if (v == 0) return;
      }
      if (vars.empty()) return;
    }
  }

  const Kernel& m_k;
  uint64_t m_max;
};

Term product_term(const std::string& name, const std::string& d_sym, double d_value,
                  const std::vector<std::pair<std::string, double>>& factors) {
  Term t;
  t.name = name;
  t.formula = d_sym;
  t.symbols.emplace_back(d_sym, d_value);
  t.value = d_value;
  for (const auto& [sym, v] : factors) {
    t.formula += " × " + sym;
    t.symbols.emplace_back(sym, v);
    t.value *= v;
  }
  return t;
}

// `count` accesses on each of `iters` iterations, added to a total and its formula.
void add_count(double& total, std::string& formula, double count, double iters,
               const std::string& iter_formula) {
  if (count <= 0) return;
  total += count * iters;
  formula += (formula.empty() ? "" : " + ") +
             (count > 1 ? fmt_number(count) + "·" : std::string()) + iter_formula;
}

// The accumulator tile on the stack: a read per reference in the value (and one per slot by
// Reduce's `acc +=`; the online sum's two), a write per slot by Init and Reduce. Returns the
// reads and writes per iteration.
std::pair<uint64_t, uint64_t> push_acc_accesses(const schedule::Phase& ph, int acc_id,
                                                const Affine& acc_index,
                                                const schedule::TraceLayout& layout,
                                                std::vector<NestAccess>& accs) {
  const bool reduce = ph.kind == schedule::PhaseKind::Reduce;
  const schedule::SlotList slots = schedule::written_slots(ph);
  const auto slot_addr = [&](int slot) {  // fp32 accumulators, as the trace lays them out
    return acc_index * 4 + Affine::lit(int64_t(layout.acc_base + uint64_t(std::max(slot, 0)) *
                                                                     layout.acc_slot_bytes));
  };
  if (reduce)
    for (int slot : slots) accs.push_back({acc_id, slot_addr(slot), false, true});
  const uint64_t value_reads = count_accs(ph.value);
  for (uint64_t i = 0; i < value_reads; ++i)
    accs.push_back({acc_id, slot_addr(ph.acc), false, reduce});
  for (int slot : slots) accs.push_back({acc_id, slot_addr(slot), true, reduce});
  return {value_reads + (reduce ? slots.size() : 0), slots.size()};
}

// The bytes of the nest's accesses, each at its tensor's dtype (the stack accumulator, one past
// the tensors, is fp32): AnalyticResult::access_bytes and, on a machine with no cache, main
// memory's bytes, since every access reaches it. `phase_iters`: how many times each phase runs.
void count_access_bytes(AnalyticResult& r, const Kernel& k, const std::vector<NestAccess>& accs,
                        const std::vector<double>& phase_iters) {
  double read_bytes = 0, write_bytes = 0;
  std::set<uint32_t> sizes;
  for (const NestAccess& a : accs) {
    const uint32_t b =
        a.tensor < int(k.tensors.size()) ? k.tensors[size_t(a.tensor)].elem_bytes() : 4;
    (a.write ? write_bytes : read_bytes) += phase_iters[size_t(a.phase)] * b;
    sizes.insert(b);
  }
  r.access_bytes = read_bytes + write_bytes;
  if (!r.levels.empty()) return;
  const double reads = r.reads.value, writes = r.writes.value;
  if (sizes.size() <= 1) {
    const std::string b = std::to_string(sizes.empty() ? 4u : *sizes.begin());
    r.memory_read_bytes = {
        "DRAM read bytes", read_bytes, "reads × " + b + " B", {{"reads", reads}}};
    r.memory_write_bytes = {
        "DRAM write bytes", write_bytes, "writes × " + b + " B", {{"writes", writes}}};
  } else {
    r.memory_read_bytes = {"DRAM read bytes", read_bytes, "Σ reads × their element's bytes", {}};
    r.memory_write_bytes = {
        "DRAM write bytes", write_bytes, "Σ writes × their element's bytes", {}};
  }
}

// How many times one run of the loops from the first reduction loop in fetches the lines of
// tensor `t` (its accesses at `depth`, the region's start, overflow the cache): the phases that
// walk the reduction loops run one after another there (softmax: maximum, sum, output), and a
// line the previous walk of `t` fetched is still there for the next one only if the walks from
// one to the other fit. 1 + the share of t's lines lost between each two consecutive walks.
double walk_passes(const Kernel& k, const std::vector<NestAccess>& accs, int t, const Footprint& fp,
                   size_t depth, const memory::CacheConfig& c) {
  std::vector<int> walks;
  for (const NestAccess& a : accs) {
    const schedule::Phase& ph = k.phases[size_t(a.phase)];
    const bool walk = ph.kind == schedule::PhaseKind::Reduce || ph.over_reduce_axes;
    if (a.tensor == t && walk && (walks.empty() || walks.back() != a.phase))
      walks.push_back(a.phase);
  }
  double passes = 1;
  for (size_t w = 1; w < walks.size(); ++w) {
    std::vector<const NestAccess*> between, mine;
    for (const NestAccess& a : accs)
      if (a.phase >= walks[w - 1] && a.phase <= walks[w]) {
        between.push_back(&a);
        if (a.tensor == t) mine.push_back(&a);
      }
    std::unordered_map<uint64_t, uint64_t> occupancy;  // set → lines of all tensors
    for (uint64_t line : fp.lines(between, depth, c.line_bytes)) ++occupancy[line % c.sets()];
    const std::unordered_set<uint64_t> lines = fp.lines(mine, depth, c.line_bytes);
    uint64_t over = 0;
    for (uint64_t line : lines)
      if (occupancy[line % c.sets()] > c.effective_ways()) ++over;
    passes += lines.empty() ? 0.0 : double(over) / double(lines.size());
  }
  return passes;
}

}  // namespace

std::string Term::to_string() const {
  std::string s = name + " = ";
  if (!formula.empty() && formula != fmt_number(value)) {
    s += formula;
    if (!symbols.empty()) {
      std::string subst = formula;
      // Replace symbols longest first so "n_i" does not eat part of "n_i.o".
      std::vector<std::pair<std::string, double>> sorted = symbols;
      std::sort(sorted.begin(), sorted.end(),
                [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
      for (const auto& [sym, v] : sorted) {
        size_t at = 0;
        const std::string rep = fmt_number(v);
        while ((at = subst.find(sym, at)) != std::string::npos) {
          subst.replace(at, sym.size(), rep);
          at += rep.size();
        }
      }
      if (subst != formula && subst != fmt_number(value)) s += " = " + subst;
    }
    s += " = ";
  }
  return s + fmt_number(value);
}

AnalyticResult analyze_kernel(const Kernel& k, const memory::HierarchyConfig& h,
                              const AnalyticOptions& o) {
  AnalyticResult r;
  r.kernel = k.name;
  schedule::TraceOptions to;
  to.alignment = o.alignment;
  const schedule::TraceLayout layout = schedule::trace_layout(k, to);
  // A stack accumulator is tensor number k.tensors.size() here; its index is row-major over its
  // loops (the spatial loops inside the first reduction loop), as LoweredKernel::acc_index.
  const bool acc_stack = !schedule::accumulator_home(k, false).registers;
  const int acc_id = int(k.tensors.size());
  Affine acc_index;
  {
    size_t first = k.loops.size();
    for (size_t l = 0; l < k.loops.size() && first == k.loops.size(); ++l)
      if (k.loops[l].reduce) first = l;
    int64_t stride = 1;
    for (size_t l = k.loops.size(); l-- > first;) {
      if (k.loops[l].reduce) continue;
      acc_index += Affine::var(k.loops[l].name, stride);
      stride *= k.loops[l].extent;
    }
  }

  // Accesses of every phase, and how many times each phase runs.
  std::vector<NestAccess> accs;
  double reads = 0, writes = 0;
  std::vector<double> phase_iters;  // how many times each phase runs
  std::string reads_formula, writes_formula;
  std::vector<std::pair<std::string, double>> rw_symbols;
  for (size_t pi = 0; pi < k.phases.size(); ++pi) {
    const schedule::Phase& ph = k.phases[pi];
    const bool all_axes = ph.kind == schedule::PhaseKind::Reduce || ph.over_reduce_axes;
    double iters = 1;
    std::string iter_formula;
    for (const schedule::Axis& ax : k.axes) {
      if (ax.reduce && !all_axes) continue;
      iters *= double(ax.extent);
      const std::string sym = "n_" + ax.name;
      iter_formula += (iter_formula.empty() ? "" : "·") + sym;
      if (std::find_if(rw_symbols.begin(), rw_symbols.end(),
                       [&](const auto& s) { return s.first == sym; }) == rw_symbols.end())
        rw_symbols.emplace_back(sym, double(ax.extent));
    }
    if (iter_formula.empty()) iter_formula = "1";
    phase_iters.push_back(iters);
    uint64_t loads = 0;
    const size_t first = accs.size();
    collect_loads(k, ph.value, {}, layout.tensor_base, accs, loads);
    for (size_t i = first; i < accs.size(); ++i)
      accs[i].in_reduce = ph.kind == schedule::PhaseKind::Reduce;
    add_count(reads, reads_formula, double(loads), iters, iter_formula);
    if (acc_stack) {
      const auto [acc_reads, acc_writes] = push_acc_accesses(ph, acc_id, acc_index, layout, accs);
      add_count(reads, reads_formula, double(acc_reads), iters, iter_formula + " (acc)");
      add_count(writes, writes_formula, double(acc_writes), iters, iter_formula + " (acc)");
    }
    if (ph.kind == schedule::PhaseKind::Map && ph.out_tensor >= 0) {
      accs.push_back(
          {ph.out_tensor,
           address(k, ph.out_tensor, ph.out_index, layout.tensor_base[size_t(ph.out_tensor)]),
           true});
      add_count(writes, writes_formula, 1, iters, iter_formula);
    }
    for (size_t i = first; i < accs.size(); ++i) accs[i].phase = int(pi);
  }
  r.reads = {"reads", reads, reads_formula.empty() ? "0" : reads_formula, rw_symbols};
  r.writes = {"writes", writes, writes_formula.empty() ? "0" : writes_formula, rw_symbols};
  r.accesses = {
      "accesses", reads + writes, "reads + writes", {{"reads", reads}, {"writes", writes}}};
  if (!k.stages.empty())
    r.notes.push_back(
        "staged tiles are not modelled: the prediction counts the loop nest's "
        "accesses as if every tensor were read in place");
  if (!k.guards.empty())
    r.notes.push_back(
        "partial tiles: repeat counts use the loops' full extents, so tail tiles "
        "are over-counted");

  // Tensors the nest touches, in kernel order.
  std::vector<int> touched;
  for (const NestAccess& a : accs)
    if (std::find(touched.begin(), touched.end(), a.tensor) == touched.end())
      touched.push_back(a.tensor);
  std::sort(touched.begin(), touched.end());
  std::vector<std::vector<const NestAccess*>> by_tensor(touched.size());
  std::vector<bool> is_output(touched.size(), false);
  for (const NestAccess& a : accs) {
    size_t t = size_t(std::find(touched.begin(), touched.end(), a.tensor) - touched.begin());
    by_tensor[t].push_back(&a);
    is_output[t] = is_output[t] || a.write;
  }

  const size_t n = k.loops.size();
  // Loops from the first reduction loop inward are copied per phase (loop_tree.h): one run of
  // loops d..n-1 with d past it is the Reduce phase alone, so only its accesses compete there.
  size_t first_reduce = n;
  for (size_t l = 0; l < n; ++l)
    if (k.loops[l].reduce) {
      first_reduce = l;
      break;
    }
  std::vector<std::vector<const NestAccess*>> reduce_only(touched.size());
  for (size_t t = 0; t < touched.size(); ++t)
    for (const NestAccess* a : by_tensor[t])
      if (a->in_reduce) reduce_only[t].push_back(a);
  Footprint fp(k, o.max_enumerated);
  for (const memory::CacheConfig& c : h.levels) {
    LevelTraffic lt;
    lt.name = c.name;
    lt.line_bytes = c.line_bytes;
    lt.lines = c.lines();
    lt.ways = c.effective_ways();
    lt.sets = c.sets();
    if (c.sector_size() != c.line_bytes)
      r.notes.push_back(c.name + " is sectored: the model counts whole lines");
    if (c.replacement != memory::Replacement::LRU)
      r.notes.push_back(c.name + " is not LRU: the fit test assumes LRU");

    // Per tensor, the parts of its misses: at depth d, the share of its lines that sit in sets
    // overflowing there (more lines than ways) loses its reuse across loop d-1, so those lines
    // miss once per run of loops d..; the rest keep it and are judged one loop further out.
    struct Part {
      int depth = 0;
      double share = 1;   // of T's lines
      double lines = 0;   // D_T(depth)
      double passes = 1;  // fetches of those lines per run of loops depth.. (walk_passes)
    };
    std::vector<std::vector<Part>> parts(touched.size());
    std::vector<int> reuse(touched.size(), int(n));
    std::vector<double> weight(touched.size(), 1.0);  // share of T's lines still reused
    size_t remaining = touched.size();
    for (int d = int(n); d >= 0 && remaining > 0; --d) {
      std::vector<std::unordered_set<uint64_t>> s(touched.size());
      std::unordered_map<uint64_t, uint64_t> occupancy;  // set → lines of all tensors
      const bool reduce_region = size_t(d) > first_reduce;
      for (size_t t = 0; t < touched.size(); ++t) {
        s[t] = fp.lines(reduce_region ? reduce_only[t] : by_tensor[t], size_t(d), c.line_bytes);
        for (uint64_t line : s[t]) ++occupancy[line % lt.sets];
      }
      for (size_t t = 0; t < touched.size(); ++t) {
        if (weight[t] <= 0) continue;
        if (reduce_region && reduce_only[t].empty()) {  // not touched here: nothing to lose
          reuse[t] = d;
          continue;
        }
        uint64_t over = 0;
        for (uint64_t line : s[t])
          if (occupancy[line % lt.sets] > lt.ways) ++over;
        // The accumulator is touched on every iteration of the reduction, and between one outer
        // iteration's last use (the epilogue) and the next one's first (Init) only the epilogue
        // runs: what stays resident across the reduction stays resident across outer loops.
        if (touched[t] == acc_id && size_t(d) <= first_reduce) over = 0;
        const double lines = double(s[t].size());
        const double f = lines > 0 ? double(over) / lines : 0.0;
        if (d == 0) {  // the whole nest: whatever is still reused misses only on first touch
          parts[t].push_back({0, weight[t], lines});
          weight[t] = 0;
        } else if (over > 0) {
          const bool region = size_t(d) == first_reduce;
          parts[t].push_back({d, weight[t] * f, lines,
                              region ? walk_passes(k, accs, touched[t], fp, size_t(d), c) : 1.0});
          weight[t] *= 1 - f;
        }
        if (over == 0) reuse[t] = d;
        if (weight[t] <= 1e-12) {
          weight[t] = 0;
          --remaining;
        }
      }
    }

    double total = 0, wb = 0;
    std::vector<std::pair<std::string, double>> total_syms;
    std::string total_formula;
    for (size_t t = 0; t < touched.size(); ++t) {
      const bool is_acc = touched[t] == acc_id;
      schedule::KernelTensor acc_kt;
      acc_kt.id = o.acc_tensor;
      acc_kt.name = "acc";
      const schedule::KernelTensor& kt = is_acc ? acc_kt : k.tensors[size_t(touched[t])];
      TensorTraffic tt;
      tt.tensor = is_acc ? -1 : touched[t];
      tt.graph_id = is_acc || kt.id >= 0 ? kt.id : o.scratch_tensor;
      tt.name = is_acc ? std::string(schedule::kAccumulatorBufferName) : kt.name;
      tt.output = is_output[t];
      tt.reuse_depth = reuse[t];
      tt.misses.name = "misses(" + c.name + ", " + kt.name + ")";
      for (const Part& part : parts[t]) {
        // D_T(q): lines of T while loops q.. run once; each run of them misses afresh.
        const size_t q = size_t(part.depth);
        const std::string d_sym =
            "D_" + kt.name + "(" + (q < n ? k.loops[q].name + ".." : "stmt") + ")";
        std::vector<std::pair<std::string, double>> factors;
        for (size_t l = 0; l < q; ++l)
          factors.emplace_back("n_" + k.loops[l].name, double(k.loops[l].extent));
        Term one = product_term(tt.misses.name, d_sym, part.lines, factors);
        if (part.share < 1) {
          const std::string share_sym =
              "share_" + kt.name + "(" + (q < n ? k.loops[q].name : "stmt") + ")";
          one.formula = share_sym + " × " + one.formula;
          one.symbols.insert(one.symbols.begin(), {share_sym, part.share});
          one.value *= part.share;
        }
        if (part.passes > 1) {
          const std::string passes_sym = "passes_" + kt.name + "(" + k.loops[q].name + "..)";
          one.formula = passes_sym + " × " + one.formula;
          one.symbols.insert(one.symbols.begin(), {passes_sym, part.passes});
          one.value *= part.passes;
        }
        tt.misses.formula += (tt.misses.formula.empty() ? "" : " + ") + one.formula;
        for (auto& sym : one.symbols)
          if (std::find(tt.misses.symbols.begin(), tt.misses.symbols.end(), sym) ==
              tt.misses.symbols.end())
            tt.misses.symbols.push_back(sym);
        tt.misses.value += one.value;
      }
      tt.misses.value = std::round(tt.misses.value);
      total += tt.misses.value;
      if (tt.output) wb += tt.misses.value;
      const std::string sym = "misses_" + kt.name;
      total_formula += (total_formula.empty() ? "" : " + ") + sym;
      total_syms.emplace_back(sym, tt.misses.value);
      lt.tensors.push_back(std::move(tt));
    }
    lt.misses = {"misses(" + c.name + ")", total, total_formula, total_syms};
    lt.writebacks = {"writebacks(" + c.name + ")", wb, "misses of written tensors", {}};
    lt.fill_bytes = {"bytes(" + c.name + " ← below)",
                     total * c.line_bytes,
                     "misses × line",
                     {{"misses", total}, {"line", double(c.line_bytes)}}};
    r.levels.push_back(std::move(lt));
  }
  if (!r.levels.empty()) {
    const LevelTraffic& last = r.levels.back();
    r.memory_read_bytes = {
        "DRAM read bytes",
        last.misses.value * last.line_bytes,
        "misses(" + last.name + ") × line",
        {{"misses(" + last.name + ")", last.misses.value}, {"line", double(last.line_bytes)}}};
    r.memory_write_bytes = {"DRAM write bytes",
                            last.writebacks.value * last.line_bytes,
                            "writebacks(" + last.name + ") × line",
                            {{"writebacks(" + last.name + ")", last.writebacks.value},
                             {"line", double(last.line_bytes)}}};
  }
  count_access_bytes(r, k, accs, phase_iters);
  return r;
}

}  // namespace tilescope::predict

// The Memory view's explanations: working sets of the schedule's tiles, the analytic formula
// behind a clicked number, and the end-state set × way grid of small cache levels.
#include "app/core/memory_model.h"

#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tilescope::core {
namespace {

struct IndexAccess {
  int tensor = -1;
  std::vector<schedule::Affine> index;  // over loop names
};

// Replaces every variable found in `names` by the matching expression, all at once (a loop may
// share its axis's name, so one-by-one substitution could rewrite a replacement again).
schedule::Affine substitute_all(const schedule::Affine& e, const std::vector<std::string>& names,
                                const std::vector<schedule::Affine>& by) {
  schedule::Affine r = schedule::Affine::lit(e.constant);
  for (const auto& [var, c] : e.terms) {
    const auto it = std::find(names.begin(), names.end(), var);
    r += it == names.end() ? schedule::Affine::var(var, c) : by[size_t(it - names.begin())] * c;
  }
  return r;
}

// Loads of kernel tensors in `e`; a load of an inlined (computed) tensor contributes the loads of
// its definition at that index. `def` maps the definition's $0, $1, ... when inside one.
void collect_loads(const schedule::Kernel& k, const schedule::VExpr& e,
                   const std::vector<schedule::Affine>* def, std::vector<IndexAccess>& out,
                   int depth = 0) {
  if (depth > 64) return;  // a definition cannot nest deeper than the graph; guards a cycle
  if (e.kind == schedule::VExpr::Kind::Load) {
    std::vector<schedule::Affine> idx = e.index;
    if (def) {
      std::vector<std::string> vars;
      for (size_t d = 0; d < def->size(); ++d) vars.push_back(schedule::def_var(d));
      for (schedule::Affine& a : idx) a = substitute_all(a, vars, *def);
    }
    if (e.computed) {
      if (e.tensor >= 0 && size_t(e.tensor) < k.computed.size())
        collect_loads(k, k.computed[size_t(e.tensor)].definition, &idx, out, depth + 1);
    } else if (e.tensor >= 0 && size_t(e.tensor) < k.tensors.size()) {
      out.push_back({e.tensor, std::move(idx)});
    }
  }
  for (const schedule::VExpr& a : e.args) collect_loads(k, a, def, out, depth);
}

// Every access of the kernel with its index over loop names.
std::vector<IndexAccess> kernel_accesses(const schedule::Kernel& k) {
  std::vector<IndexAccess> accs;
  for (const schedule::Phase& ph : k.phases) {
    collect_loads(k, ph.value, nullptr, accs);
    if (ph.kind == schedule::PhaseKind::Map && ph.out_tensor >= 0)
      accs.push_back({ph.out_tensor, ph.out_index});
  }
  std::vector<std::string> axes;
  for (const schedule::Axis& a : k.axes) axes.push_back(a.name);
  for (IndexAccess& a : accs)
    for (schedule::Affine& e : a.index) e = substitute_all(e, axes, k.axis_value);
  return accs;
}

}  // namespace

// [SECTION] Working set

std::vector<WorkingSet> working_sets(const schedule::Kernel& k) {
  const std::vector<IndexAccess> accs = kernel_accesses(k);
  const size_t n = k.loops.size();
  std::vector<WorkingSet> out;
  for (size_t d = 0; d <= n; ++d) {
    WorkingSet ws;
    ws.depth = d;
    ws.loop = d < n ? k.loops[d].name : "";
    for (size_t t = 0; t < k.tensors.size(); ++t) {
      const schedule::KernelTensor& kt = k.tensors[t];
      const size_t rank = kt.shape.size();
      // Per dim, the smallest and largest index any access reaches.
      struct Range {
        int64_t lo = std::numeric_limits<int64_t>::max();
        int64_t hi = std::numeric_limits<int64_t>::min();
      };
      std::vector<Range> box;
      box.resize(rank);
      bool touched = false;
      for (const IndexAccess& a : accs) {
        if (a.tensor != int(t) || a.index.size() != rank) continue;
        touched = true;
        for (size_t dim = 0; dim < rank; ++dim) {
          // Outer loops sit at iteration 0; each inner loop sweeps 0..extent-1.
          int64_t l = a.index[dim].constant, h = l;
          for (const auto& [var, c] : a.index[dim].terms) {
            const int li = k.find_loop(var);
            if (li < 0 || size_t(li) < d) continue;
            const int64_t span = c * (k.loops[size_t(li)].extent - 1);
            if (span > 0)
              h += span;
            else
              l += span;
          }
          box[dim].lo = std::min(box[dim].lo, l);
          box[dim].hi = std::max(box[dim].hi, h);
        }
      }
      if (!touched) continue;
      TensorTile tile;
      tile.tensor = int(t);
      tile.name = kt.name;
      int64_t elems = 1;
      for (size_t dim = 0; dim < rank; ++dim) {
        // Padding reads (conv) leave the tensor; only elements inside it occupy cache.
        const int64_t lo = std::max<int64_t>(box[dim].lo, 0);
        const int64_t hi = std::min<int64_t>(box[dim].hi, kt.shape[dim] - 1);
        const int64_t e = std::max<int64_t>(hi - lo + 1, 0);
        tile.extents.push_back(e);
        elems *= e;
      }
      tile.bytes = elems * graph::dtype_size(kt.dtype);
      ws.bytes += tile.bytes;
      ws.tiles.push_back(std::move(tile));
    }
    out.push_back(std::move(ws));
  }
  return out;
}

size_t tile_depth(const schedule::Kernel& k) {
  for (size_t l = k.loops.size(); l-- > 0;) {
    if (k.loops[l].axis < 0) continue;
    for (size_t m = l + 1; m < k.loops.size(); ++m)
      if (k.loops[m].axis == k.loops[l].axis) return l + 1;
  }
  return 0;
}

// [SECTION] Why this number

double relative_difference(double simulated, double analytic) {
  if (simulated == 0) return analytic == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (analytic - simulated) / simulated;
}

FormulaView memory_formula(const MemoryResult& r, std::string_view target) {
  const size_t space = target.find(' ');
  const std::string level_name(target.substr(0, space));
  const std::string tensor =
      space == std::string_view::npos ? std::string() : std::string(target.substr(space + 1));
  size_t li = r.levels.size();
  for (size_t i = 0; i < r.levels.size(); ++i)
    if (r.levels[i].name == level_name) li = i;
  if (li == r.levels.size()) {
    std::string known;
    for (const LevelResult& l : r.levels) known += (known.empty() ? "" : ", ") + l.name;
    throw std::invalid_argument("no level '" + level_name + "' on " + r.machine +
                                " (levels: " + known + ")");
  }
  int graph_id = -2;  // -2: no tensor asked for
  if (!tensor.empty()) {
    const auto it = std::find(r.tensor_names.begin(), r.tensor_names.end(), tensor);
    if (it == r.tensor_names.end())
      throw std::invalid_argument("no tensor '" + tensor + "' in " + r.kernel);
    graph_id = int(it - r.tensor_names.begin());
  }
  const LevelResult& lr = r.levels[li];
  const bool memory = li + 1 == r.levels.size();
  const auto sim = [&](auto field) {
    if (graph_id == -2) return double(field(lr.total));
    const size_t i = size_t(graph_id + 1);
    return i < lr.by_tensor.size() ? double(field(lr.by_tensor[i])) : 0.0;
  };
  FormulaView v;
  v.title = memory ? lr.name + " traffic" + (tensor.empty() ? "" : " of " + tensor)
                   : lr.name + " misses" + (tensor.empty() ? "" : " of " + tensor);
  if (!r.analytic) v.not_covered = r.analytic_error;
  const predict::AnalyticResult* a = r.analytic ? &*r.analytic : nullptr;
  if (a) v.notes = a->notes;
  // The analytic model's term for `tensor` at analytic level `level`, if it has one.
  const auto tensor_term = [&](size_t level) -> const predict::TensorTraffic* {
    if (!a || level >= a->levels.size()) return nullptr;
    for (const predict::TensorTraffic& t : a->levels[level].tensors)
      if (t.name == tensor) return &t;
    return nullptr;
  };
  const std::string no_term = "the analytic model has no term for " + tensor + " here";
  if (!memory) {
    FormulaRow row;
    row.what = "misses";
    row.simulated = sim([](const memory::Counters& c) { return c.misses; });
    if (tensor.empty()) {
      if (a && li < a->levels.size()) row.analytic = a->levels[li].misses;
    } else if (const predict::TensorTraffic* t = tensor_term(li)) {
      row.analytic = t->misses;
    } else if (a) {
      row.missing = no_term;
    }
    v.rows.push_back(std::move(row));
    return v;
  }
  FormulaRow read, written;
  read.what = "bytes read";
  read.simulated = sim([](const memory::Counters& c) { return c.read_bytes; });
  written.what = "bytes written";
  written.simulated = sim([](const memory::Counters& c) { return c.write_bytes; });
  if (a && tensor.empty()) {
    read.analytic = a->memory_read_bytes;
    written.analytic = a->memory_write_bytes;
  } else if (a && !a->levels.empty()) {
    // Per tensor: the last cache level's misses of it come from memory; a written tensor's
    // missed lines go back once (the model's write-back rule).
    const predict::LevelTraffic& last = a->levels.back();
    if (const predict::TensorTraffic* t = tensor_term(a->levels.size() - 1)) {
      const double line = double(last.line_bytes);
      read.analytic = predict::Term{"bytes read(" + lr.name + ", " + tensor + ")",
                                  t->misses.value * line,
                                  t->misses.name + " × line",
                                  {{t->misses.name, t->misses.value}, {"line", line}}};
      written.analytic =
          t->output ? predict::Term{"bytes written(" + lr.name + ", " + tensor + ")",
                                  t->misses.value * line,
                                  t->misses.name + " × line (each missed line is written back)",
                                  {{t->misses.name, t->misses.value}, {"line", line}}}
                    : predict::Term{"bytes written(" + lr.name + ", " + tensor + ")",
                                  0,
                                  "0 (" + tensor + " is only read)",
                                  {}};
    } else {
      read.missing = written.missing = no_term;
    }
  }
  v.rows.push_back(std::move(read));
  v.rows.push_back(std::move(written));
  return v;
}

std::string workbench_memory_formula(Workbench& wb, const std::string& target) {
  if (target == "off") {
    wb.memory_formula.clear();
    return {};
  }
  if (const MemoryResult* r = wb.memory_result()) {
    try {
      (void)memory_formula(*r, target);
    } catch (const std::invalid_argument& e) {
      return std::string("memory formula: ") + e.what();
    }
  } else if (wb.machine) {
    // No result yet (the popup fills in when it arrives): check the level against the machine.
    const memory::HierarchyConfig h = wb.machine->hierarchy();
    const std::string level = target.substr(0, target.find(' '));
    bool found = level == h.memory.name;
    for (const memory::CacheConfig& c : h.levels) found = found || c.name == level;
    if (!found) return "memory formula: no level '" + level + "' on " + wb.machine_name;
  }
  wb.memory_formula = target;
  return {};
}

}  // namespace tilescope::core

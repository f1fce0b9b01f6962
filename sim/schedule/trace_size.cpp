// Closed-form access count of a kernel's trace (what trace_kernel() will walk), from its axes.
#include "sim/schedule/trace_size.h"

#include "sim/schedule/loop_tree.h"

namespace tilescope::schedule {

namespace {

// Loads of `e` per evaluation, with an inlined (computed) tensor's loads counted at each read.
double count_loads(const Kernel& k, const VExpr& e) {
  if (e.kind == VExpr::Kind::Load && e.computed)
    return count_loads(k, k.computed.at(size_t(e.tensor)).definition);
  double n = e.kind == VExpr::Kind::Load ? 1 : 0;
  for (const VExpr& a : e.args) n += count_loads(k, a);
  return n;
}

double count_acc_reads(const VExpr& e) {
  double n = e.kind == VExpr::Kind::Acc ? 1 : 0;
  for (const VExpr& a : e.args) n += count_acc_reads(a);
  return n;
}

}  // namespace

TraceSize estimate_trace_size(const Kernel& k) {
  TraceSize r;
  const bool acc_stack = !accumulator_home(k, false).registers;
  for (const Phase& ph : k.phases) {
    const bool all_axes = ph.kind == PhaseKind::Reduce || ph.over_reduce_axes;
    double iters = 1;
    std::string iter_formula;
    for (const Axis& ax : k.axes) {
      if (ax.reduce && !all_axes) continue;
      iters *= double(ax.extent);
      iter_formula += (iter_formula.empty() ? "n_" : "·n_") + ax.name;
    }
    if (iter_formula.empty()) iter_formula = "1";
    // The same counts as the walker: the value's loads, the Map's store, and, for an accumulator
    // tile on the stack, its reads (each reference, plus Reduce's own acc +=) and its write.
    double per_iter = count_loads(k, ph.value);
    if (ph.kind == PhaseKind::Map && ph.out_tensor >= 0) per_iter += 1;
    if (acc_stack) {
      per_iter += count_acc_reads(ph.value) + (ph.kind == PhaseKind::Reduce ? 1 : 0);
      if (ph.kind != PhaseKind::Map) per_iter += 1;
    }
    if (per_iter == 0) continue;
    r.accesses += per_iter * iters;
    const std::string count = per_iter == 1 ? "" : std::to_string(int64_t(per_iter)) + "·";
    r.formula += (r.formula.empty() ? "" : " + ") + count + iter_formula;
  }
  if (r.formula.empty()) r.formula = "0";
  return r;
}

}  // namespace tilescope::schedule

// Closed-form access count of a kernel's trace (what trace_kernel() will walk), from its axes.
#include "sim/schedule/trace_size.h"

#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <cmath>

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

TraceSize estimate_trace_size(const Kernel& k, bool gpu) {
  TraceSize r;
  const bool acc_stack = !accumulator_home(k, gpu).registers;
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

namespace {

// Statement executions under one execution of `n` (thread loops count once: their lanes run
// in lockstep as one walk in GPU mode; on a CPU they are loops like any other).
double work(const Kernel& k, const Node& n, bool gpu) {
  double w = n.kind == Node::Kind::Stmt ? 1.0 : 0.0;
  for (const Node& c : n.children) w += work(k, c, gpu);
  if (n.kind == Node::Kind::Loop && !(gpu && is_thread(k.loops[size_t(n.loop)].kind)))
    w *= double(std::max<int64_t>(0, k.loops[size_t(n.loop)].extent));
  return w;
}

bool serial(const Kernel& k, const Node& n, bool gpu) {
  if (n.kind != Node::Kind::Loop) return false;
  const LoopKind kind = k.loops[size_t(n.loop)].kind;
  return !gpu || (!is_thread(kind) && !is_block(kind));
}

// The heaviest serial loop among `nodes`, looking through ifs and (GPU) thread loops.
const Node* heaviest(const Kernel& k, const std::vector<Node>& nodes, bool gpu, double& w) {
  const Node* best = nullptr;
  for (const Node& n : nodes) {
    double nw = 0;
    const Node* cand = nullptr;
    if (serial(k, n, gpu)) {
      cand = &n;
      nw = work(k, n, gpu);
    } else if (n.kind == Node::Kind::If || n.kind == Node::Kind::Loop) {
      cand = heaviest(k, n.children, gpu, nw);
    }
    if (cand && nw > w) {
      w = nw;
      best = cand;
    }
  }
  return best;
}

}  // namespace

std::vector<UnitLoop> unit_chain(const Kernel& k, bool gpu, int64_t resident) {
  const LoweredKernel lk = build_loop_tree(k);
  const Kernel& kk = lk.kernel;
  // The walk's top: in GPU mode the block body, below the (outermost) block loops.
  double blocks = 1;
  const std::vector<Node>* top = &lk.body;
  while (gpu && top->size() == 1 && top->front().kind == Node::Kind::Loop &&
         is_block(kk.loops[size_t(top->front().loop)].kind)) {
    blocks *= double(kk.loops[size_t(top->front().loop)].extent);
    top = &top->front().children;
  }
  double total = 0;
  for (const Node& n : *top) total += work(kk, n, gpu);
  std::vector<UnitLoop> chain;
  if (total <= 0) return chain;
  // A top-level serial loop of a GPU block body is walked by the resident blocks together.
  const double waves = std::ceil(blocks / double(std::max<int64_t>(1, resident)));
  const std::vector<Node>* nodes = top;
  double mult = blocks;  // executions of `nodes` over the walk
  bool interleaved = gpu;
  for (;;) {
    double w = 0;
    const Node* n = heaviest(kk, *nodes, gpu, w);
    if (!n) break;
    const Loop& l = kk.loops[size_t(n->loop)];
    const double extent = double(std::max<int64_t>(0, l.extent));
    const bool together = interleaved && std::any_of(nodes->begin(), nodes->end(),
                                                     [&](const Node& m) { return &m == n; });
    chain.push_back(
        {n->loop, l.name, (together ? waves : mult) * extent, mult * w / (blocks * total)});
    mult *= extent;
    interleaved = false;
    nodes = &n->children;
  }
  return chain;
}

}  // namespace tilescope::schedule

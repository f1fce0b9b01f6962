// The Schedule panel's fusion choices, each tried on the current program (fuse_options.h).
#include "app/core/fuse_options.h"

#include "sim/schedule/transform.h"

#include <algorithm>
#include <set>

namespace tilescope::core {

std::vector<FuseOption> fuse_options(const Workbench& wb) {
  const schedule::Program* prog = wb.program();
  const schedule::Kernel* k = wb.kernel();
  if (!prog || !k || k->op_names.empty() || !prog->graph) return {};
  const graph::Graph& g = *prog->graph;
  std::vector<std::string> consumers, producers;
  for (const schedule::KernelTensor& t : k->tensors) {
    if (t.id < 0) continue;
    if (t.role == schedule::TensorRole::Output) {
      for (graph::OpId c : g.consumers(t.id))
        if (!k->has_op(g.op(c).name)) consumers.push_back(g.op(c).name);
    } else if (const graph::OpId p = g.tensor(t.id).producer; p >= 0 && !k->has_op(g.op(p).name)) {
      producers.push_back(g.op(p).name);
    }
  }
  const auto unique = [](std::vector<std::string>& v) {
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const std::string& s : v)
      if (seen.insert(s).second) out.push_back(s);
    v = out;
  };
  unique(consumers);
  unique(producers);
  std::vector<std::pair<std::string, std::string>> candidates;  // (step, label)
  // The chain of single consumers (add then relu), as a compiler's epilogue fusion takes it.
  if (consumers.size() == 1) {
    std::vector<std::string> chain;
    std::optional<graph::OpId> op = g.find_op(consumers[0]);
    // At most kMaxFusedOps in one kernel: the chain is cut there (a longer one is refused).
    while (op && k->op_names.size() + chain.size() < schedule::kMaxFusedOps) {
      chain.push_back(g.op(*op).name);
      const std::vector<graph::OpId> next = g.op(*op).outputs.size() == 1
                                                ? g.consumers(g.op(*op).outputs[0])
                                                : std::vector<graph::OpId>{};
      op.reset();
      if (next.size() == 1 && !k->has_op(g.op(next[0]).name)) op = next[0];
    }
    // The longest legal prefix of it (a pooling window ends an epilogue); shorter chains are
    // not offered, the single consumer below says why it is refused. A prefix of a legal chain
    // is legal, so the longest is found by bisection: trying every length from the longest down
    // took 8 minutes on the UI thread for a 20,000-op chain (issue #25).
    const schedule::Target target = workbench_target(wb);
    const auto chain_step = [&](size_t n, std::string* label) {
      std::string step = "fuse(" + k->op_names.front();
      for (size_t i = 0; i < n; ++i) {
        step += ", " + chain[i];
        if (label) *label += (label->empty() ? "" : ", ") + chain[i];
      }
      return step + ")";
    };
    const auto legal = [&](size_t n) {
      try {
        return schedule::apply_step(*prog, schedule::parse_steps(chain_step(n, nullptr)).at(0),
                                    target)
            .ok;
      } catch (const std::exception&) {
        return false;
      }
    };
    size_t lo = 1, hi = chain.size();  // the longest legal length lies in [lo, hi]
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (legal(mid))
        lo = mid;
      else
        hi = mid - 1;
    }
    if (lo > 1) {
      std::string label;
      std::string step = chain_step(lo, &label);
      candidates.emplace_back(std::move(step), std::move(label));
    }
  }
  for (const std::string& c : consumers)
    candidates.emplace_back("fuse(" + k->op_names.front() + ", " + c + ")", c);
  for (const std::string& p : producers)
    candidates.emplace_back("fuse(" + p + ", " + k->op_names.front() + ")", p);

  std::vector<FuseOption> out;
  const schedule::Target target = workbench_target(wb);
  for (const auto& [step, label] : candidates) {
    FuseOption o{step, label, false, ""};
    try {
      const std::vector<schedule::TransformStep> steps = schedule::parse_steps(step);
      const schedule::StepResult r = schedule::apply_step(*prog, steps.at(0), target);
      o.legal = r.ok;
      if (!r.ok) o.reason = r.explanation;
    } catch (const std::exception& e) {
      o.reason = e.what();
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace tilescope::core

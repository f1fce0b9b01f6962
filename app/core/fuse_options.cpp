// The Schedule panel's fusion choices, each tried on the current program (fuse_options.h).
#include "app/core/fuse_options.h"

#include "sim/schedule/transform.h"

#include <algorithm>

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
    for (const std::string& s : v)
      if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    v = out;
  };
  unique(consumers);
  unique(producers);
  std::vector<std::pair<std::string, std::string>> candidates;  // (step, label)
  // The chain of single consumers (add then relu), as a compiler's epilogue fusion takes it.
  if (consumers.size() == 1) {
    std::vector<std::string> chain;
    std::optional<graph::OpId> op = g.find_op(consumers[0]);
    while (op) {
      chain.push_back(g.op(*op).name);
      const std::vector<graph::OpId> next = g.op(*op).outputs.size() == 1
                                                ? g.consumers(g.op(*op).outputs[0])
                                                : std::vector<graph::OpId>{};
      op.reset();
      if (next.size() == 1 && !k->has_op(g.op(next[0]).name)) op = next[0];
    }
    // The longest legal prefix of it (a pooling window ends an epilogue); shorter chains are
    // not offered, the single consumer below says why it is refused.
    const schedule::Target target = workbench_target(wb);
    for (size_t n = chain.size(); n > 1; --n) {
      std::string step = "fuse(" + k->op_names.front(), label;
      for (size_t i = 0; i < n; ++i) {
        step += ", " + chain[i];
        label += (label.empty() ? "" : ", ") + chain[i];
      }
      step += ")";
      try {
        if (schedule::apply_step(*prog, schedule::parse_steps(step).at(0), target).ok) {
          candidates.emplace_back(step, label);
          break;
        }
      } catch (const std::exception&) {
        // Not legal: try a shorter chain.
      }
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

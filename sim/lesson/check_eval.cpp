// The check language's functions evaluated: graph costs, schedules, simulated traffic, machines,
// recordings and helpers, one function per family of check_functions.cpp's rows (the curriculum's,
// lessons 07 onward, are in curriculum.cpp). Each reads the session through its CheckCall; the
// call's names were validated when the lesson loaded.
#include "sim/lesson/check_functions.h"
#include "sim/lesson/check_call.h"

#include "sim/lesson/recorded.h"

#include "sim/memory/hierarchy.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace tilescope::lesson::detail {

namespace {

// Whether `needle` occurs in `hay`, in time linear in both (Knuth-Morris-Pratt). A lesson's
// contains() on generated code of megabytes and a needle like "aaa…ab" made std::string::find's
// quadratic worst case a hang (issue #25).
bool contains_linear(std::string_view hay, std::string_view needle) {
  if (needle.empty()) return true;
  std::vector<size_t> fail(needle.size(), 0);  // longest proper border of needle[0..i]
  for (size_t i = 1, k = 0; i < needle.size(); ++i) {
    while (k > 0 && needle[i] != needle[k]) k = fail[k - 1];
    if (needle[i] == needle[k]) ++k;
    fail[i] = k;
  }
  for (size_t i = 0, k = 0; i < hay.size(); ++i) {
    while (k > 0 && hay[i] != needle[k]) k = fail[k - 1];
    if (hay[i] == needle[k]) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

}  // namespace

// [SECTION] Graph costs

Value eval_cost(CheckCall& call) {
  const std::string& f = call.name();
  const std::string arg0 = call.arg0();
  graph::OpCost cost;
  const graph::Graph& g = call.graph_of(call.model_id());
  if (call.is_subject(arg0)) {
    cost.flops = g.total_cost().flops;
    if (call.is_model(arg0)) {
      cost = g.total_cost();
    } else {
      // Each kernel reads its inputs and writes its outputs once at least; tensors folded into
      // a kernel (a fused intermediate) have no buffer and cost nothing.
      for (const auto& k : call.program(arg0)->program.kernels)
        for (const auto& t : k.tensors)
          (t.role == schedule::TensorRole::Input ? cost.bytes_read : cost.bytes_written) +=
              t.bytes();
    }
  } else {
    cost = g.op_cost(*g.find_op(arg0));
  }
  if (f == "flops") return Value::of(double(cost.flops));
  if (f == "bytes") return Value::of(double(cost.bytes()));
  if (f == "bytes_read") return Value::of(double(cost.bytes_read));
  if (f == "bytes_written") return Value::of(double(cost.bytes_written));
  return Value::of(cost.intensity());
}

Value eval_heaviest(CheckCall& call) {
  const graph::Graph& g = call.graph_of(call.model_for());
  const double n = call.num(0);
  if (n < 0 || n != std::floor(n)) throw EvalError{"heaviest() takes a whole number"};
  std::vector<graph::OpId> ids(g.ops().size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = graph::OpId(i);
  std::stable_sort(ids.begin(), ids.end(), [&](graph::OpId a, graph::OpId b) {
    return g.op_cost(a).flops > g.op_cost(b).flops;
  });
  std::vector<Value> names;
  for (size_t i = 0; i < ids.size() && i < size_t(n); ++i)
    names.push_back(Value::of(g.op(ids[i]).name));
  return Value::list(std::move(names));
}

Value eval_model_counts(CheckCall& call) {
  const std::string& f = call.name();
  const graph::Graph& g = call.graph_of(call.model_id());
  if (f == "ops") return Value::of(double(g.ops().size()));
  if (f == "params") {
    double n = 0;
    for (const auto& t : g.tensors())
      if (t.role == graph::Role::Weight && t.producer < 0) n += double(t.numel());
    return Value::of(n);
  }
  std::vector<Value> kinds;
  for (const auto& op : g.ops()) kinds.push_back(Value::of(graph::op_kind_name(op.kind)));
  return Value::list(std::move(kinds));
}

Value eval_op(CheckCall& call) {
  const graph::Graph& g = call.graph_of(call.model_for());
  const graph::OpId id = *g.find_op(call.arg0());
  if (call.name() == "kind") return Value::of(graph::op_kind_name(g.op(id).kind));
  const double total = double(g.total_cost().flops);
  return Value::of(total > 0 ? double(g.op_cost(id).flops) / total : 0.0);
}

Value eval_tensor(CheckCall& call) {
  const std::string& f = call.name();
  const graph::Graph& g = call.graph_of(call.model_for());
  const graph::Tensor& t = g.tensor(*g.find_tensor(call.arg0()));
  if (f == "numel") return Value::of(double(t.numel()));
  if (f == "tensor_bytes") return Value::of(double(t.bytes()));
  std::vector<Value> dims;
  for (int64_t d : t.shape) dims.push_back(Value::of(double(d)));
  return Value::list(std::move(dims));
}

// [SECTION] Schedules

Value eval_program(CheckCall& call) {
  const std::string& f = call.name();
  const std::string arg0 = call.arg0();
  const LessonProgram* lp = call.program(arg0);
  if (f == "kernels") return Value::of(double(lp->program.kernels.size()));
  if (f == "refused") return Value::of(lp->refused ? 1.0 : 0.0);
  if (f == "refusal") {
    if (!lp->refused) throw EvalError{arg0 + " was not refused"};
    return Value::of(lp->refusal);
  }
  if (f == "applied") return Value::of(double(lp->applied.size()));
  const double n = call.num(1);  // explanation(S, N)
  if (n < 1 || n > double(lp->explanations.size()) || n != std::floor(n))
    throw EvalError{arg0 + " applied " + std::to_string(lp->explanations.size()) +
                    " steps; explanation(" + arg0 + ", N) takes N from 1 to that"};
  return Value::of(lp->explanations[size_t(n) - 1]);
}

Value eval_launch(CheckCall& call) {
  const std::string& f = call.name();
  const std::string arg0 = call.arg0();
  const LessonProgram* lp = call.program(arg0);
  const schedule::Kernel& k = lp->program.kernels.at(size_t(lp->program.current));
  if (f == "conflicts") {
    // The passes one warp's read takes: 1 conflict-free, N for an N-way conflict. A read no
    // thread index reaches (degree 0 in the schedule's terms) is a broadcast: one pass too.
    const int64_t degree = schedule::shared_read_conflict_degree(k, call.str(1), {});
    return Value::of(double(std::max<int64_t>(degree, 1)));
  }
  if (f == "blocks" && call.e.args.size() > 1) {
    // blocks(S, "matmul0.sum"): a kernel named, not the one the steps act on (split_k's two).
    const std::string name = call.str(1);
    std::vector<std::string> names;
    for (const schedule::Kernel& other : lp->program.kernels) {
      if (other.name == name) return Value::of(double(schedule::launch_config(other).blocks()));
      names.push_back(other.name);
    }
    throw EvalError{arg0 + " has no kernel named " + name + "; its kernels are " +
                    join(names, names.size())};
  }
  const schedule::LaunchConfig lc = schedule::launch_config(k);
  if (f == "blocks") return Value::of(double(lc.blocks()));
  if (f == "threads") return Value::of(double(lc.threads()));
  return Value::of(double(lc.dynamic_smem_bytes));
}

// One warp's coalescing: the sectors of warp 0's first load of a tensor on a GPU machine.
Value eval_sectors(CheckCall& call) {
  const std::string arg0 = call.arg0();
  const LessonProgram* lp = call.program(arg0);
  const schedule::Kernel& k = lp->program.kernels.at(size_t(lp->program.current));
  const std::string mname = call.machine_for();
  const predict::Machine& m = call.machine(mname);
  if (m.kind != "gpu")
    throw EvalError{"sectors() follows a warp of a GPU, and machine " + mname + " is a CPU"};
  const schedule::WarpLoad w = schedule::first_warp_load(k, call.str(1), predict::trace_options_for(m));
  if (w.lanes == 0)
    throw EvalError{"warp 0 of block 0 of " + arg0 + " never loads " + call.str(1) +
                    " from global memory"};
  return Value::of(double(w.sectors));
}

// [SECTION] Simulated traffic

Value eval_dram(CheckCall& call) {
  const SimResult& s = call.simulate(call.arg0(), call.machine_for());
  const memory::Counters& mem = s.levels.back();
  if (call.name() == "dram_reads") return Value::of(double(mem.read_bytes));
  if (call.name() == "dram_writes") return Value::of(double(mem.write_bytes));
  return Value::of(double(mem.read_bytes + mem.write_bytes));
}

Value eval_level(CheckCall& call) {
  const std::string& f = call.name();
  const SimResult& s = call.simulate(call.arg0(), call.machine_for());
  const std::string level = call.e.args[1].text;
  const auto at = std::find(s.level_names.begin(), s.level_names.end(), level);
  const size_t li = size_t(at - s.level_names.begin());
  // A third argument narrows the count to one tensor (a tensor the trace never touched: 0).
  memory::Counters none;
  const memory::Counters* counters = &s.levels[li];
  if (call.e.positional() > 2) {
    const auto t = s.by_tensor.find(call.e.args[2].text);
    counters = t == s.by_tensor.end() ? &none : &t->second[li];
  }
  const memory::Counters& lc = *counters;
  if (f == "accesses") return Value::of(double(lc.accesses));
  if (f == "hits") return Value::of(double(lc.hits));
  if (f == "misses") return Value::of(double(lc.misses));
  return Value::of(lc.accesses ? double(lc.misses) / double(lc.accesses) : 0.0);
}

// [SECTION] Machines

Value eval_peak(CheckCall& call) {
  const std::string arg0 = call.arg0();
  const predict::Machine& m = call.machine(arg0);
  const std::string dtype = call.str(1);
  double p = 0;
  if (call.e.positional() > 2) {
    p = m.peak(dtype, call.str(2));
  } else {
    for (const auto& pk : m.peaks)
      if (pk.dtype == dtype) p = std::max(p, pk.ops_per_s);
  }
  if (p <= 0) throw EvalError{"machine " + arg0 + " gives no " + dtype + " peak"};
  return Value::of(p);
}

Value eval_bandwidth(CheckCall& call) {
  const predict::Machine& m = call.machine(call.arg0());
  if (m.memory.bandwidth_bytes_per_s <= 0)
    throw EvalError{"machine " + call.arg0() + " gives no memory bandwidth"};
  return Value::of(m.memory.bandwidth_bytes_per_s);
}

Value eval_latency(CheckCall& call) {
  const predict::Machine& m = call.machine(call.arg0());
  if (m.memory.latency_ns <= 0)
    throw EvalError{"machine " + call.arg0() + " gives no memory latency"};
  return Value::of(m.memory.latency_ns * 1e-9);
}

Value eval_cache_bytes(CheckCall& call) {
  const predict::Machine& m = call.machine(call.arg0());
  const std::string level = call.str(1);
  for (const auto& l : m.levels)
    if (l.name == level) return Value::of(double(l.size_bytes));
  throw EvalError{"machine " + call.arg0() + " has no cache level '" + level + "'"};
}

Value eval_scratchpad(CheckCall& call) {
  const predict::Machine& m = call.machine(call.arg0());
  if (!m.scratchpad)
    throw EvalError{"machine " + call.arg0() + " has no scratchpad (shared memory)"};
  return Value::of(double(m.scratchpad->size_bytes));
}

// [SECTION] Recordings and helpers

Value eval_recorded(CheckCall& call) {
  return recorded_value(resolve_lesson_path(call.str(0), call.lesson_file()), call.str(1));
}

Value eval_arithmetic(CheckCall& call) {
  const std::string& f = call.name();
  if (f == "abs") return Value::of(std::fabs(call.num(0)));
  if (f == "min") return Value::of(std::min(call.num(0), call.num(1)));
  return Value::of(std::max(call.num(0), call.num(1)));
}

Value eval_len(CheckCall& call) {
  const Value v = call.arg(0);
  if (v.kind == Value::Kind::List) return Value::of(double(v.items.size()));
  if (v.kind == Value::Kind::String) return Value::of(double(v.text.size()));
  throw EvalError{"len() takes a list or a string"};
}

Value eval_contains(CheckCall& call) {
  return Value::of(contains_linear(call.str(0), call.str(1)) ? 1.0 : 0.0);
}

}  // namespace tilescope::lesson::detail

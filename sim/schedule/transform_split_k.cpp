// split_k: a reduction cut into parallel slices. One kernel becomes two: the partial kernel runs
// PARTS slices of the reduction side by side (a new spatial loop LOOP.p over them) and writes one
// partial result per slice and output to a scratch tensor; the sum kernel combines the slices and
// applies the epilogue the kernel had. It is what cuBLAS and CUTLASS do when a GEMM's output tiles
// are too few to fill the GPU ("parallel split-K"); stream-K divides the same work over a fixed
// number of blocks instead.
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include "sim/schedule/lower.h"

#include <string>
#include <vector>

namespace tilescope::schedule::detail {

namespace {

// The loops lower_graph gave the kernel: one serial loop per axis, nothing staged or reordered.
bool has_default_schedule(const Kernel& k) {
  if (!k.stages.empty() || !k.guards.empty() || k.block_order != BlockOrder::RowMajor ||
      k.loops.size() != k.axes.size())
    return false;
  for (size_t a = 0; a < k.axes.size(); ++a)
    if (k.loops[a].name != k.axes[a].name || k.loops[a].kind != LoopKind::Serial) return false;
  return true;
}

std::string divisors_text(int64_t n) {
  std::vector<std::string> d;
  for (int64_t i = 2; i <= n && d.size() < 6; ++i)
    if (n % i == 0) d.push_back(std::to_string(i));
  return d.empty() ? "none" : join(d);
}

// Refuses (throws) a split_k of loop L of kernel k that cannot be done: L is no reduction, the
// kernel is already scheduled or reduces more than once, or the parts do not cut L evenly.
void check_split_k(const Kernel& k, const SplitKStep& s, const Loop& L, const std::string& head) {
  if (!L.reduce) {
    std::vector<std::string> reductions;
    for (const Loop& l : k.loops)
      if (l.reduce) reductions.push_back(l.name);
    refuse(
        head + ": loop " + L.name + " of " + k.name +
        " is not a reduction: its iterations write different outputs, so they are "
        "independent already (bind it instead). split_k cuts a loop that sums into each "
        "output" +
        (reductions.empty() ? std::string("; ") + k.name + " has none" : ": " + join(reductions)));
  }
  if (!has_default_schedule(k))
    refuse(head + ": kernel " + k.name +
           " already has loop steps; split_k builds the loops of two new kernels, so it comes "
           "first: undo the kernel's tile, reorder, bind and stage steps, split K, then schedule "
           "both kernels");
  int reduces = 0;
  bool output_pass = false;
  for (const Phase& ph : k.phases) {
    reduces += ph.kind == PhaseKind::Reduce ? 1 : 0;
    output_pass = output_pass || (ph.kind == PhaseKind::Map && ph.over_reduce_axes);
  }
  if (reduces != 1 || k.num_accs != 1 || output_pass || k.phases.size() < 3 ||
      k.phases[0].kind != PhaseKind::Init || k.phases[1].kind != PhaseKind::Reduce)
    refuse(head + ": " + k.name + " (" + k.summary +
           ") reduces in more than one pass, or reads the whole reduction again to write its "
           "outputs (softmax divides by the row's sum, layer norm by its variance); a slice "
           "cannot finish its outputs from its own part. split_k takes a kernel with one sum or "
           "max per output: a matrix multiply, a convolution, a pooling or a row sum");
  if (s.parts < 2)
    refuse(head + ": " + std::to_string(s.parts) +
           " part is the kernel as it is; cut the loop into 2 or more parts");
  if (s.parts > L.extent)
    refuse(head + ": loop " + L.name + " has only " + std::to_string(L.extent) +
           " iterations, fewer than " + std::to_string(s.parts) + " parts");
  if (L.extent % s.parts != 0)
    refuse(head + ": the " + std::to_string(L.extent) + " iterations of " + L.name +
           " do not cut into " + std::to_string(s.parts) + " equal parts; use a divisor of " +
           std::to_string(L.extent) + " (" + divisors_text(L.extent) + ", …)");
  const std::string pl = L.name + ".p";
  for (const Axis& a : k.axes)
    if (a.name == pl)
      refuse(head + ": " + k.name + " already has a loop " + pl +
             " (split_k was applied to it); split the reduction once");
}

// What the two kernels of a split_k share: the cut loop, the slices' loop, the axes, the
// partial-results tensor, and which ops stay with the slices and which move to the sum.
struct SplitKPlan {
  Loop L;          // the reduction loop being cut
  std::string pl;  // the slices' loop, LOOP.p
  int64_t parts = 0, slice = 0, outputs = 1;
  std::vector<Axis> spatial, reduce;  // the kernel's axes, the cut one shortened to a slice
  graph::Shape partial_shape;
  std::vector<Affine> partial_index;
  KernelTensor partials;
  std::vector<graph::OpId> part_ops, epilogue_ops;
  std::string base;  // the reduction op's name: matmul0 and matmul0.sum
  std::vector<std::string> epilogue_names;
  int64_t epilogue_flops = 0;
};

// Plans the cut of loop L of kernel k into s.parts slices (the checks have passed).
SplitKPlan plan_split_k(const Program& p, const Kernel& k, const SplitKStep& s, const Loop& L) {
  SplitKPlan sk;
  sk.L = L;
  sk.pl = L.name + ".p";
  sk.parts = s.parts;
  sk.slice = L.extent / s.parts;
  for (Axis a : k.axes) {
    if (a.name == L.name) a.extent = sk.slice;
    (a.reduce ? sk.reduce : sk.spatial).push_back(a);
  }
  sk.partial_shape = {s.parts};
  sk.partial_index = {Affine::var(sk.pl)};
  for (const Axis& a : sk.spatial) {
    sk.outputs *= a.extent;
    sk.partial_shape.push_back(a.extent);
    sk.partial_index.push_back(Affine::var(a.name));
  }
  KernelTensor& partials = sk.partials;
  partials.id = -1;
  partials.role = TensorRole::Output;
  partials.shape = sk.partial_shape;
  partials.strides.assign(sk.partial_shape.size(), 1);
  for (size_t d = sk.partial_shape.size() - 1; d > 0; --d)
    partials.strides[d - 1] = partials.strides[d] * sk.partial_shape[d];
  partials.pad.assign(sk.partial_shape.size(), 0);

  // The ops: the reduction and what was computed into it stay with the slices; the epilogue ops
  // fused after it move to the sum kernel.
  sk.part_ops = k.ops;
  if (p.graph)
    for (size_t i = 0; i < k.ops.size(); ++i)
      if (!graph::is_elementwise(p.graph->op(k.ops[i]).kind)) {
        sk.part_ops.assign(k.ops.begin(), k.ops.begin() + std::ptrdiff_t(i) + 1);
        sk.epilogue_ops.assign(k.ops.begin() + std::ptrdiff_t(i) + 1, k.ops.end());
        break;
      }
  // Both kernels are named after the reduction's op: matmul0 and matmul0.sum.
  sk.base = p.graph && !sk.part_ops.empty() ? p.graph->op(sk.part_ops.back()).name : k.name;
  for (graph::OpId o : sk.epilogue_ops) {
    sk.epilogue_names.push_back(p.graph->op(o).name);
    sk.epilogue_flops += p.graph->op_cost(o).flops;
  }
  partials.name = sk.base + "_partials";
  return sk;
}

// The slices: LOOP.p outermost, then the outputs, then the shortened reduction; each slice
// stores its partial result into the partials tensor.
Kernel partial_kernel(const Program& p, const Kernel& k, const SplitKPlan& sk) {
  Kernel part = k;
  part.name = sk.base;
  part.ops = sk.part_ops;
  part.op_names.clear();
  for (graph::OpId o : sk.part_ops) part.op_names.push_back(p.graph ? p.graph->op(o).name : k.name);
  if (part.op_names.empty()) part.op_names = {k.name};
  part.axes = {Axis{sk.pl, sk.parts, false}};
  part.axes.insert(part.axes.end(), sk.spatial.begin(), sk.spatial.end());
  part.axes.insert(part.axes.end(), sk.reduce.begin(), sk.reduce.end());
  const Affine whole = Affine::var(sk.pl, sk.slice) + Affine::var(sk.L.name);
  Phase reduce_phase = k.phases[1];
  visit_indices(reduce_phase.value, [&](std::vector<Affine>& index) {
    for (Affine& ix : index) ix = ix.substitute(sk.L.name, whole);
  });
  Phase store;
  store.kind = PhaseKind::Map;
  store.value = VExpr::accumulator(k.phases[1].acc);
  part.tensors.push_back(sk.partials);
  store.out_tensor = int(part.tensors.size() - 1);
  store.out_index = sk.partial_index;
  part.phases = {k.phases[0], reduce_phase, store};
  std::string what;
  for (graph::OpId o : sk.part_ops)
    what += (what.empty() ? "" : " → ") + std::string(graph::op_kind_name(p.graph->op(o).kind));
  part.summary = sk.partials.name + graph::shape_to_string(sk.partial_shape) + " = " +
                 std::to_string(sk.parts) + " slices of " + sk.L.name + " of " +
                 (what.empty() ? k.summary : what);
  part.flops = -1;
  drop_unused_tensors(part);
  normalize_tensor_order(part);
  reset_schedule(part);
  return part;
}

// The sum: one accumulator per output over LOOP.p, then the kernel's own output statements.
Kernel sum_kernel(const Kernel& k, const SplitKPlan& sk) {
  Kernel sum = k;
  sum.name = sk.base + ".sum";
  sum.op_names = {sum.name};
  sum.op_names.insert(sum.op_names.end(), sk.epilogue_names.begin(), sk.epilogue_names.end());
  sum.ops = sk.epilogue_ops;
  sum.axes = sk.spatial;
  sum.axes.push_back(Axis{sk.pl, sk.parts, true});
  KernelTensor partials_in = sk.partials;
  partials_in.role = TensorRole::Input;
  sum.tensors.push_back(partials_in);
  sum.phases[1].value = VExpr::load(int(sum.tensors.size() - 1), sk.partial_index);
  const bool is_max = k.phases[1].op == ReduceOp::Max;
  sum.summary = std::string(is_max ? "max" : "sum") + " of the " + std::to_string(sk.parts) +
                " partial results" +
                (sk.epilogue_names.empty() ? "" : ", then " + join(sk.epilogue_names));
  sum.flops = sk.parts * sk.outputs + sk.epilogue_flops;
  drop_unused_tensors(sum);
  normalize_tensor_order(sum);
  reset_schedule(sum);
  return sum;
}

// What split_k did, for the learner: the slices, the partials, the sum kernel, what it buys and
// what it costs.
std::string split_k_message(const SplitKPlan& sk, const Kernel& part, const Kernel& sum,
                            bool is_max) {
  const Loop& L = sk.L;
  const std::string& pl = sk.pl;
  const KernelTensor& partials = sk.partials;
  const std::vector<std::string>& epilogue_names = sk.epilogue_names;
  const int64_t outputs = sk.outputs;
  const std::string combine = is_max ? "takes the largest of" : "adds";
  return "Loop " + L.name + " (" + std::to_string(L.extent) + " iterations) is cut into " +
         std::to_string(sk.parts) + " slices of " + std::to_string(sk.slice) + ": " + part.name +
         " runs them side by side (loop " + pl + ", " + std::to_string(sk.parts) +
         " iterations, no longer a reduction) and writes one partial result per slice and output "
         "to " +
         partials.name + graph::shape_to_string(sk.partial_shape) + " (" +
         format_bytes(partials.bytes()) + "); a second kernel, " + sum.name + ", " + combine +
         " the " + std::to_string(sk.parts) + " partials of each output" +
         (epilogue_names.empty() ? ""
                                 : " and applies the epilogue (" + join(epilogue_names) + ")") +
         ". The outputs alone are " + count_text(outputs) +
         " independent pieces of work; the slices make " + count_text(outputs * sk.parts) +
         " — bind " + pl + " to block.z and the grid has " + std::to_string(sk.parts) +
         "× the blocks, which a GEMM with few output tiles (a small batch) needs to fill the "
         "GPU. The price: " +
         format_bytes(partials.bytes()) + " written and read back (" +
         format_bytes(2 * partials.bytes()) + " of extra traffic) and " + std::to_string(sk.parts) +
         " more operations per output. Steps continue on " + part.name + "; kernel(" + sum.name +
         ") selects the sum kernel to map it too.";
}

}  // namespace

std::string do_split_k(Program& p, const SplitKStep& s, const Target& t) {
  const Kernel& k = p.kernels[size_t(p.current)];
  const int li = need_loop(k, s.kName, s.loop);
  const Loop L = k.loops[size_t(li)];
  const std::string head(s.kName);
  check_split_k(k, s, L, head);

  const SplitKPlan sk = plan_split_k(p, k, s, L);
  const Kernel part = partial_kernel(p, k, sk);
  const Kernel sum = sum_kernel(k, sk);
  const bool is_max = k.phases[1].op == ReduceOp::Max;

  check_or_refuse(part, t, head + ": ");
  check_or_refuse(sum, t, head + ": ");
  const int at = p.current;
  p.kernels[size_t(at)] = part;
  p.kernels.insert(p.kernels.begin() + at + 1, sum);
  p.current = at;

  return split_k_message(sk, part, sum, is_max);
}

}  // namespace tilescope::schedule::detail

// The fusion primitives: fuse (consumers into the producer's epilogue), compute_at (a producer
// inlined or tiled into its consumer) and im2col (a convolution rewritten as a GEMM).
#include "sim/schedule/transform.h"
#include "sim/schedule/transform_impl.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"
#include "sim/schedule/lower.h"

#include <cstdio>
#include <functional>
#include <optional>

namespace tilescope::schedule::detail {

// [SECTION] Fusion

namespace {

Affine subst_axes(const Affine& a, const std::vector<std::string>& names,
                  const std::vector<Affine>& values) {
  Affine r = Affine::lit(a.constant);
  for (const auto& [n, c] : a.terms) {
    bool done = false;
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == n) {
        r += values[i] * c;
        done = true;
        break;
      }
    if (!done) r += Affine::var(n, c);
  }
  return r;
}

bool identity_index(const std::vector<Affine>& idx, const Kernel& k) {
  size_t n = 0;
  for (const auto& a : k.axes)
    if (!a.reduce) ++n;
  if (idx.size() != n) return false;
  for (size_t d = 0; d < idx.size(); ++d)
    if (!(idx[d] == Affine::var(k.axes[d].name))) return false;
  return true;
}

struct Merge {
  std::vector<int> map_c;  // consumer slot → merged slot
};

// Adds the consumer's tensors (except `skip` graph id) to the producer, returns the slot map.
std::vector<int> merge_tensors(Kernel& into, const Kernel& from, graph::TensorId skip) {
  std::vector<int> map(from.tensors.size(), -1);
  for (size_t i = 0; i < from.tensors.size(); ++i) {
    const KernelTensor& t = from.tensors[i];
    if (t.id == skip && t.id >= 0) continue;
    int found = -1;
    for (size_t j = 0; j < into.tensors.size(); ++j)
      if ((t.id >= 0 && into.tensors[j].id == t.id) ||
          (t.id < 0 && into.tensors[j].id < 0 && into.tensors[j].name == t.name))
        found = int(j);
    if (found < 0) {
      into.tensors.push_back(t);
      found = int(into.tensors.size() - 1);
    }
    map[i] = found;
  }
  return map;
}

void remap(VExpr& e, const std::vector<int>& map) {
  visit_loads(e, [&](VExpr& l) {
    if (!l.computed) l.tensor = map[size_t(l.tensor)];
  });
}

bool is_elementwise_kernel(const Kernel& k) {
  for (const auto& a : k.axes)
    if (a.reduce) return false;
  return k.phases.size() == 1 && k.phases[0].kind == PhaseKind::Map;
}

std::string why_not_elementwise(const Kernel& k) {
  for (const auto& a : k.axes)
    if (a.reduce)
      return k.name + " is not elementwise: each of its outputs combines " +
             std::to_string(a.extent) + " inputs along axis " + a.name +
             ", but an epilogue only "
             "ever sees one finished value of its producer at a time";
  return k.name + " is not a plain elementwise kernel";
}

// What does fuse across a softmax, said where plain fusion refuses one: a different algorithm.
std::string softmax_way_out(const Program& p, const Kernel& cons) {
  for (graph::OpId o : cons.ops)
    if (p.graph && p.graph->op(o).kind == graph::OpKind::Softmax)
      return ". Fusing across a softmax takes a different algorithm first: the online softmax "
             "keeps each row's running maximum and sum, and rescales what it has summed when the "
             "maximum grows (online_softmax(" +
             p.graph->op(o).name +
             ") makes that rewrite inside the softmax; FlashAttention carries it through the "
             "second matmul too, as the GPU bench's attention versions 2-6 do)";
  return "";
}

// The producer output the consumer reads, checking that fusing saves its round trip.
graph::TensorId fused_tensor(const Program& p, const Kernel& prod, const Kernel& cons,
                             const std::string& step) {
  const Phase& last = prod.phases.back();
  const KernelTensor& out = prod.tensors[size_t(last.out_tensor)];
  bool reads = false;
  for (const auto& t : cons.tensors)
    reads = reads || (t.role == TensorRole::Input && t.id == out.id);
  if (!reads)
    refuse(step + ": " + cons.name + " does not read " + out.name + ", the output of " + prod.name);
  if (out.id >= 0) {
    for (graph::OpId c : p.graph->consumers(out.id)) {
      const std::string& n = p.graph->op(c).name;
      if (!cons.has_op(n))
        refuse(step + ": " + out.name + " is also read by " + n +
               ", so it would have to be "
               "written to memory anyway; fusing would not save its traffic");
    }
    for (graph::TensorId o : p.graph->graph_outputs())
      if (o == out.id)
        refuse(step + ": " + out.name + " is an output of the model and must be written");
  }
  return out.id;
}

}  // namespace

void drop_unused_tensors(Kernel& k) {
  std::vector<bool> used(k.tensors.size(), false);
  auto mark = [&](const VExpr& e) {
    visit_loads(e, [&](const VExpr& l) {
      if (!l.computed) used[size_t(l.tensor)] = true;
    });
  };
  for (const auto& p : k.phases) {
    mark(p.value);
    if (p.out_tensor >= 0) used[size_t(p.out_tensor)] = true;
  }
  for (const auto& c : k.computed) mark(c.definition);
  std::vector<int> map(k.tensors.size(), -1);
  std::vector<KernelTensor> kept;
  for (size_t i = 0; i < k.tensors.size(); ++i)
    if (used[i]) {
      map[i] = int(kept.size());
      kept.push_back(k.tensors[i]);
    }
  k.tensors = kept;
  for (auto& p : k.phases) {
    remap(p.value, map);
    if (p.out_tensor >= 0) p.out_tensor = map[size_t(p.out_tensor)];
  }
  for (auto& c : k.computed) remap(c.definition, map);
  for (auto& s : k.stages)
    if (!s.computed) s.tensor = map[size_t(s.tensor)];
}

int find_kernel_with_op(const Program& p, const std::string& op, const std::string& step) {
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (p.kernels[i].has_op(op) || p.kernels[i].name == op) return int(i);
  std::vector<std::string> names;
  for (const auto& k : p.kernels)
    for (const auto& o : k.op_names) names.push_back(o);
  refuse(step + ": there is no op named '" + op + "'; the ops are " + join(names));
}

std::string do_fuse(Program& p, const FuseStep& s, const Target& t) {
  // The producer, then the consumers in the order given.
  std::vector<std::string> ops = {s.producer};
  ops.insert(ops.end(), s.consumers.begin(), s.consumers.end());
  if (const size_t total =
          p.kernels[size_t(find_kernel_with_op(p, ops[0], "fuse"))].op_names.size() +
          s.consumers.size();
      total > kMaxFusedOps)
    refuse("fuse: the kernel would hold " + std::to_string(total) + " ops, past tilescope's " +
           "limit of " + std::to_string(kMaxFusedOps) +
           " (each fused op adds to one kernel's body and registers; fuse a shorter chain)");
  // An op named twice would fuse a kernel into itself: there is nothing to fuse, and saying so is
  // clearer than a success message about zero saved bytes.
  for (size_t a = 0; a < ops.size(); ++a)
    for (size_t b = a + 1; b < ops.size(); ++b)
      if (ops[a] == ops[b]) refuse("fuse: " + ops[a] + " is named twice");
  std::string e;
  int64_t saved = 0;
  std::vector<std::string> fused;
  int pi = find_kernel_with_op(p, ops[0], "fuse");
  for (size_t a = 1; a < ops.size(); ++a) {
    const int ci = find_kernel_with_op(p, ops[a], "fuse");
    if (ci == pi) continue;  // already fused
    Kernel prod = p.kernels[size_t(pi)];
    const Kernel& cons = p.kernels[size_t(ci)];
    if (!is_elementwise_kernel(cons))
      refuse("fuse(" + prod.name + ", " + ops[a] + ") refused: " + why_not_elementwise(cons) +
             softmax_way_out(p, cons));
    const graph::TensorId tid = fused_tensor(p, prod, cons, "fuse");
    Phase& pm = prod.phases.back();
    const KernelTensor tt = prod.tensors[size_t(pm.out_tensor)];
    const Phase& cm = cons.phases[0];
    const KernelTensor& u = cons.tensors[size_t(cm.out_tensor)];
    if (u.shape != tt.shape)
      refuse("fuse refused: " + cons.name + " writes " + u.name + graph::shape_to_string(u.shape) +
             " but reads " + tt.name + graph::shape_to_string(tt.shape) +
             "; an epilogue produces exactly one output per output of " + prod.name);
    // Every read of t in the consumer must be at the element it writes.
    bool ok = identity_index(cm.out_index, cons);
    visit_loads(cm.value, [&](const VExpr& l) {
      if (!l.computed && cons.tensors[size_t(l.tensor)].id == tid)
        ok = ok && identity_index(l.index, cons);
    });
    if (!ok)
      refuse("fuse refused: " + cons.name + " reads " + tt.name +
             " in a different order than it "
             "writes " +
             u.name +
             ", so an epilogue (which sees one element at a time) cannot "
             "compute it");
    const std::vector<int> map = merge_tensors(prod, cons, tid);
    std::vector<std::string> caxes;
    for (const auto& ax : cons.axes) caxes.push_back(ax.name);
    VExpr producer_value = pm.value;
    VExpr v = cm.value;
    const int coff = int(prod.computed.size());
    std::function<void(VExpr&)> go = [&](VExpr& x) {
      if (x.kind == VExpr::Kind::Load && !x.computed && cons.tensors[size_t(x.tensor)].id == tid) {
        x = producer_value;
        return;
      }
      if (x.kind == VExpr::Kind::Load) {
        for (auto& i : x.index) i = subst_axes(i, caxes, pm.out_index);
        x.tensor = x.computed ? x.tensor + coff : map[size_t(x.tensor)];
      }
      if (x.kind == VExpr::Kind::Index) x.index[0] = subst_axes(x.index[0], caxes, pm.out_index);
      for (auto& c : x.args) go(c);
    };
    go(v);
    std::vector<Affine> out_index;
    for (const auto& i : cm.out_index) out_index.push_back(subst_axes(i, caxes, pm.out_index));
    pm.value = v;
    pm.out_tensor = map[size_t(cm.out_tensor)];
    pm.out_index = out_index;
    for (const auto& c : cons.computed) {
      ComputedTensor cc = c;
      remap(cc.definition, map);
      prod.computed.push_back(cc);
    }
    for (const auto& n : cons.op_names) prod.op_names.push_back(n);
    for (auto o : cons.ops) prod.ops.push_back(o);
    prod.name += "+" + cons.name;
    prod.summary += " → " + cons.summary;
    drop_unused_tensors(prod);
    normalize_tensor_order(prod);
    saved += 2 * tt.bytes();
    fused.push_back(cons.name);
    // The fused kernel runs where the consumer ran: every input of both is ready there.
    p.kernels[size_t(ci)] = prod;
    p.kernels.erase(p.kernels.begin() + pi);
    pi = ci > pi ? ci - 1 : ci;
    (void)t;
  }
  p.current = pi;
  const Kernel& k = p.kernels[size_t(pi)];
  e = join(fused) + " now run" + (fused.size() == 1 ? "s" : "") + " in the epilogue of " +
      k.op_names[0] + ": each value is finished while it is still in a register, right after " +
      "it is computed. The intermediate tensor" + (fused.size() == 1 ? " is" : "s are") +
      " no longer written and read back: " + format_bytes(saved) + " of memory traffic and " +
      std::to_string(fused.size()) + " kernel launch" + (fused.size() == 1 ? "" : "es") +
      " saved. The loop nest of " + k.op_names[0] + " is unchanged.";
  return e;
}

std::string do_compute_at(Program& p, const ComputeAtStep& s, const Target& t) {
  const std::string at = s.at.value_or("inline");
  const int pi = find_kernel_with_op(p, s.producer, "compute_at");
  const int ci = find_kernel_with_op(p, s.consumer, "compute_at");
  if (pi == ci)
    refuse("compute_at: " + s.producer + " and " + s.consumer + " are already one kernel");
  const Kernel& prod = p.kernels[size_t(pi)];
  Kernel cons = p.kernels[size_t(ci)];
  if (!is_elementwise_kernel(prod))
    refuse("compute_at refused: " + prod.name + " is not elementwise, so computing it inside " +
           cons.name + " would repeat its whole reduction at every use");
  const graph::TensorId tid = fused_tensor(p, prod, cons, "compute_at");
  const Phase& pm = prod.phases[0];
  if (!identity_index(pm.out_index, prod))
    refuse("compute_at refused: " + prod.name + " writes its output in a permuted order");
  const KernelTensor tt = prod.tensors[size_t(pm.out_tensor)];
  // The definition over d0, d1, ... with the producer's inputs merged into the consumer.
  const std::vector<int> map = merge_tensors(cons, prod, tt.id);
  ComputedTensor c;
  c.id = tt.id;
  c.name = tt.name;
  c.op_name = prod.name;
  c.shape = tt.shape;
  c.dtype = tt.dtype;
  c.definition = pm.value;
  std::vector<std::string> paxes;
  std::vector<Affine> dvars;
  for (size_t d = 0; d < prod.axes.size(); ++d) {
    paxes.push_back(prod.axes[d].name);
    dvars.push_back(Affine::var(def_var(d)));
  }
  visit_indices(c.definition, [&](std::vector<Affine>& index) {
    for (auto& i : index) i = subst_axes(i, paxes, dvars);
  });
  visit_loads(c.definition, [&](VExpr& l) {
    if (!l.computed) l.tensor = map[size_t(l.tensor)];
    l.check_dims.assign(l.index.size(), false);
  });
  cons.computed.push_back(c);
  const int cslot = int(cons.computed.size() - 1);
  int tslot = -1;
  for (size_t i = 0; i < cons.tensors.size(); ++i)
    if (cons.tensors[i].id == tid) tslot = int(i);
  for (auto& ph : cons.phases)
    visit_loads(ph.value, [&](VExpr& l) {
      if (!l.computed && l.tensor == tslot) {
        l.computed = true;
        l.tensor = cslot;
      }
    });
  for (const auto& n : prod.op_names) cons.op_names.insert(cons.op_names.begin(), n);
  for (auto o : prod.ops) cons.ops.insert(cons.ops.begin(), o);
  cons.name = prod.name + "@" + cons.name;
  drop_unused_tensors(cons);
  normalize_tensor_order(cons);
  std::string e;
  // How often the producer is evaluated: once per read (inline) or once per tile element.
  if (at != "inline") {
    const int li = need_loop(cons, ComputeAtStep::kName, at);
    StageSpec st;
    st.tensor = cslot;
    st.computed = true;
    st.at = at;
    st.buffer = c_ident(tt.name) + "_tile";
    st.level = MemLevel::Scratchpad;
    cons.stages.push_back(st);
    LoweredKernel lk;
    try {
      lk = build_loop_tree(cons);
    } catch (const ScheduleError& err) {
      refuse(std::string("compute_at refused: ") + err.what());
    }
    int64_t bytes = 0, evals = 0;
    for (const auto& pl : lk.stages)
      if (pl.computed) {
        bytes = std::max(bytes, pl.bytes());
        evals += pl.executions * pl.footprint;
      }
    if (bytes <= t.register_bytes_per_thread) cons.stages.back().level = MemLevel::Registers;
    check_or_refuse(cons, t, "compute_at refused: ");
    (void)li;
    e = prod.name + " is computed inside " + cons.op_names.back() + " at loop " + at +
        ": a tile of " + tt.name + " (" + format_bytes(bytes) + ", in " +
        mem_level_name(cons.stages.back().level) + ") is filled at each iteration of " + at +
        " and then reused. " + prod.name + " is evaluated " + count_text(evals) + " times for " +
        count_text(tt.numel()) + " elements (" +
        (evals > tt.numel() ? "×" + std::to_string((evals + tt.numel() - 1) / tt.numel()) +
                                  " recompute where tiles overlap or repeat"
                            : "no recompute") +
        "), and " + tt.name + " (" + format_bytes(tt.bytes()) +
        ") is never written to memory or read back.";
  } else {
    check_or_refuse(cons, t, "compute_at refused: ");
    const LoweredKernel lk = build_loop_tree(cons);
    int64_t evals = 0;
    // Each read of the inlined value evaluates the producer once.
    std::function<int64_t(const std::vector<Node>&, int64_t)> walk =
        [&](const std::vector<Node>& nodes, int64_t mult) -> int64_t {
      int64_t n = 0;
      for (const auto& node : nodes) {
        if (node.kind == Node::Kind::Loop)
          n += walk(node.children, mult * lk.kernel.loops[size_t(node.loop)].extent);
        else if (node.kind == Node::Kind::If)
          n += walk(node.children, mult);
        else if (node.kind == Node::Kind::Stmt) {
          int reads = 0;
          visit_loads(cons.phases[size_t(node.phase)].value,
                      [&](const VExpr& l) { reads += l.computed && l.tensor == cslot ? 1 : 0; });
          n += mult * reads;
        }
      }
      return n;
    };
    evals = walk(lk.body, 1);
    e = prod.name + " is inlined into " + cons.op_names.back() + ": every read of " + tt.name +
        " recomputes it from its inputs. It is evaluated " + count_text(evals) + " times for " +
        count_text(tt.numel()) + " elements" +
        (evals > tt.numel()
             ? " (×" + std::to_string((evals + tt.numel() - 1) / tt.numel()) + " recompute)"
             : "") +
        ", and " + tt.name + " (" + format_bytes(tt.bytes()) +
        ") never goes to memory. Inlining trades arithmetic for traffic; compute_at with a loop "
        "stores a tile once and reuses it instead.";
  }
  p.kernels[size_t(ci)] = cons;
  p.kernels.erase(p.kernels.begin() + pi);
  p.current = ci > pi ? ci - 1 : ci;
  return e;
}

std::string do_im2col(Program& p, const Im2colStep& s, const Target& t) {
  const int ki = find_kernel_with_op(p, s.op, "im2col");
  Kernel conv = p.kernels[size_t(ki)];
  const graph::Op& op = p.graph->op(conv.ops[0]);
  if (op.kind != graph::OpKind::Conv2D)
    refuse("im2col: " + conv.name + " is a " + graph::op_kind_name(op.kind) +
           ", not a convolution");
  if (op.attrs.groups != 1)
    refuse("im2col: " + op.name + " is a grouped convolution (groups=" +
           std::to_string(op.attrs.groups) + "); im2col here builds one matrix for all channels");
  for (const auto& ts : conv.tensors)
    if (ts.id < 0) refuse("im2col: " + op.name + " already reads an unfolded matrix");
  const graph::Tensor& x = p.graph->tensor(op.inputs[0]);
  const graph::Tensor& w = p.graph->tensor(op.inputs[1]);
  const graph::Tensor& y = p.graph->tensor(op.outputs[0]);
  const int64_t N = x.shape[0], C = x.shape[1], R = w.shape[2], S = w.shape[3];
  const int64_t P = y.shape[2], Q = y.shape[3];
  const int64_t rows = N * P * Q, cols = C * R * S;
  // The unfold kernel: cols[(n*P + p)*Q + q, (c*R + r)*S + s] = x[n, c, h, w] (0 in the padding).
  Kernel unfold;
  unfold.name = op.name + ".im2col";
  unfold.op_names = {unfold.name};
  unfold.ops = {conv.ops[0]};
  unfold.summary = "im2col";
  unfold.flops = 0;  // a copy: the convolution's arithmetic stays in the GEMM
  int xs = -1;
  for (size_t i = 0; i < conv.tensors.size(); ++i)
    if (conv.tensors[i].id == op.inputs[0]) xs = int(i);
  if (xs < 0)
    refuse("im2col: " + op.name + "'s input is computed inside the kernel; undo that first");
  unfold.tensors.push_back(conv.tensors[size_t(xs)]);
  KernelTensor m;
  m.id = -1;
  m.name = op.name + "_cols";
  m.role = TensorRole::Output;
  m.shape = {rows, cols};
  m.strides = {cols, 1};
  m.pad = {0, 0};
  unfold.tensors.push_back(m);
  for (const char* a : {"n", "p", "q", "c", "r", "s"}) {
    int64_t ext = 1;
    for (const auto& ax : conv.axes)
      if (ax.name == a) ext = ax.extent;
    unfold.axes.push_back({a, ext, false});
  }
  Affine row = Affine::var("n", P * Q) + Affine::var("p", Q) + Affine::var("q");
  Affine col = Affine::var("c", R * S) + Affine::var("r", S) + Affine::var("s");
  VExpr xl;
  bool found = false;
  visit_loads(conv.phases[1].value, [&](const VExpr& l) {
    if (!l.computed && l.tensor == xs) {
      xl = l;
      found = true;
    }
  });
  if (!found) refuse("im2col: could not find the input read in " + conv.name);
  xl.tensor = 0;
  Phase mp;
  mp.kind = PhaseKind::Map;
  mp.value = xl;
  mp.out_tensor = 1;
  mp.out_index = {row, col};
  unfold.phases.push_back(mp);
  reset_schedule(unfold);
  // The GEMM reads the unfolded matrix instead of the image.
  KernelTensor min = m;
  min.role = TensorRole::Input;
  conv.tensors.push_back(min);
  const int ms = int(conv.tensors.size() - 1);
  visit_loads(conv.phases[1].value, [&](VExpr& l) {
    if (!l.computed && l.tensor == xs) {
      l.tensor = ms;
      l.index = {row, col};
      l.checked = false;
      l.pad_value = 0;
    }
  });
  for (auto& st : conv.stages)
    if (!st.computed && st.tensor == xs) st.tensor = ms;
  drop_unused_tensors(conv);
  normalize_tensor_order(conv);
  conv.summary = "GEMM on " + m.name;
  check_or_refuse(conv, t, "im2col refused: ");
  p.kernels[size_t(ki)] = conv;
  p.kernels.insert(p.kernels.begin() + ki, unfold);
  p.current = ki + 1;
  const int64_t xb = x.numel() * 4, mb = m.numel() * 4;
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.1f", double(mb) / double(xb));
  return op.name + " is now a matrix multiply: " + unfold.name +
         " copies every input window into "
         "one row of " +
         m.name + " [" + std::to_string(rows) + " × " + std::to_string(cols) +
         "] (rows = N·P·Q output pixels, columns = C·R·S window taps), and the convolution reads "
         "that matrix as a GEMM of " +
         std::to_string(rows) + "×" + std::to_string(y.shape[1]) + "×" + std::to_string(cols) +
         ". The price is explicit: " + m.name + " is " + format_bytes(mb) + " against " +
         format_bytes(xb) + " for the input itself (" + ratio + "×), written once and read back, " +
         format_bytes(2 * mb) +
         " of extra traffic, because overlapping windows copy the same pixel up to R·S = " +
         std::to_string(R * S) + " times.";
}

namespace {

bool same_value(const VExpr& a, const VExpr& b) {
  if (a.kind != b.kind || a.value != b.value || a.tensor != b.tensor || a.computed != b.computed ||
      !(a.index == b.index) || a.checked != b.checked || a.pad_value != b.pad_value ||
      a.acc != b.acc || a.uop != b.uop || a.bop != b.bop || a.args.size() != b.args.size())
    return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!same_value(a.args[i], b.args[i])) return false;
  return true;
}

// Reduce phase `sum` adds exp(x - m) where m is Reduce phase `max`'s result over the same x.
bool sums_shifted_exp(const Phase& sum, const Phase& max) {
  const VExpr& e = sum.value;
  if (sum.op != ReduceOp::Sum || e.kind != VExpr::Kind::Unary || e.uop != UnaryOp::Exp)
    return false;
  const VExpr& d = e.args[0];
  return d.kind == VExpr::Kind::Binary && d.bop == BinaryOp::Sub &&
         d.args[1].kind == VExpr::Kind::Acc && d.args[1].acc == max.acc &&
         same_value(d.args[0], max.value);
}

}  // namespace

std::string do_online_softmax(Program& p, const OnlineSoftmaxStep& s, const Target& t) {
  const int ki = find_kernel_with_op(p, s.op, "online_softmax");
  Kernel k = p.kernels[size_t(ki)];
  const std::optional<graph::OpId> id = p.graph ? p.graph->find_op(s.op) : std::nullopt;
  if (id && p.graph->op(*id).kind != graph::OpKind::Softmax)
    refuse("online_softmax: " + s.op + " is a " + graph::op_kind_name(p.graph->op(*id).kind) +
           ", not a softmax");
  int max_phase = -1, sum_phase = -1;
  for (size_t i = 0; i < k.phases.size(); ++i) {
    const Phase& ph = k.phases[i];
    if (ph.kind != PhaseKind::Reduce) continue;
    if (ph.op == ReduceOp::OnlineSum)
      refuse("online_softmax: " + k.name +
             " already computes its maximum and sum in one pass over each row");
    if (ph.op == ReduceOp::Max) max_phase = int(i);
    if (max_phase >= 0 && sum_phase < 0 && sums_shifted_exp(ph, k.phases[size_t(max_phase)]))
      sum_phase = int(i);
  }
  if (sum_phase < 0)
    refuse("online_softmax: " + k.name +
           " has no maximum pass followed by a sum of exp(x - maximum) over the same row to "
           "merge");
  const Phase max = k.phases[size_t(max_phase)];
  Phase& online = k.phases[size_t(sum_phase)];
  online.op = ReduceOp::OnlineSum;
  online.max_acc = max.acc;
  online.value = max.value;
  const int sum_acc = online.acc;
  k.phases.erase(k.phases.begin() + max_phase);
  check_or_refuse(k, t, "online_softmax refused: ");
  p.kernels[size_t(ki)] = k;
  p.current = ki;
  // What the row walks cost: every pass over the reduction axis reads each score once.
  int64_t row = 1, rows = 1;
  for (const Axis& a : k.axes) (a.reduce ? row : rows) *= a.extent;
  const int64_t score_bytes = k.tensors.empty() ? 4 : k.tensors[0].elem_bytes();  // inputs first
  return k.name + " now walks each row of " + std::to_string(row) +
         " scores twice instead of three times: one pass keeps the running maximum m (acc" +
         std::to_string(max.acc) + ") and the sum l of exp(x - m) (acc" + std::to_string(sum_acc) +
         "), and when a larger x arrives it rescales l by exp(m_old - x) before adding; the "
         "output pass then reads the row again for exp(x - m) / l. That is " +
         std::to_string(rows) + " rows × " + std::to_string(row) + " scores × " +
         std::to_string(score_bytes) + " B = " + format_bytes(rows * row * score_bytes) +
         " fewer reads, which reach DRAM when a row does not stay in cache between passes; the "
         "same running rescale is what lets FlashAttention stream keys in tiles without ever "
         "holding a whole row.";
}

}  // namespace tilescope::schedule::detail

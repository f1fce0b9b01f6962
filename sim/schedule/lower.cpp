// Default lowering of graph ops to kernels: iteration axes, index expressions under each tensor's
// strides, and the init / reduce / map phases of each op kind.
#include "sim/schedule/lower.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace tilescope::schedule {

using graph::OpKind;

// [SECTION] Small shared pieces

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "neg";
    case UnaryOp::ReLU:
      return "relu";
    case UnaryOp::GELU:
      return "gelu";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Rsqrt:
      return "rsqrt";
    case UnaryOp::Square:
      return "square";
  }
  return "?";
}

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Min:
      return "min";
    case BinaryOp::ReluMask:
      return "relu_mask";
    case BinaryOp::FillAbove:
      return "fill_above";
  }
  return "?";
}

const char* loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::Serial:
      return "serial";
    case LoopKind::Parallel:
      return "parallel";
    case LoopKind::Unrolled:
      return "unrolled";
    case LoopKind::Vectorized:
      return "vectorized";
    case LoopKind::BlockX:
      return "block.x";
    case LoopKind::BlockY:
      return "block.y";
    case LoopKind::BlockZ:
      return "block.z";
    case LoopKind::ThreadX:
      return "thread.x";
    case LoopKind::ThreadY:
      return "thread.y";
    case LoopKind::ThreadZ:
      return "thread.z";
  }
  return "?";
}

bool is_block(LoopKind k) {
  return k == LoopKind::BlockX || k == LoopKind::BlockY || k == LoopKind::BlockZ;
}
bool is_thread(LoopKind k) {
  return k == LoopKind::ThreadX || k == LoopKind::ThreadY || k == LoopKind::ThreadZ;
}

const char* mem_level_name(MemLevel l) {
  switch (l) {
    case MemLevel::Global:
      return "global";
    case MemLevel::Shared:
      return "shared";
    case MemLevel::Scratchpad:
      return "scratchpad";
    case MemLevel::Registers:
      return "registers";
  }
  return "?";
}

VExpr VExpr::constant(double v) {
  VExpr e;
  e.kind = Kind::Const;
  e.value = v;
  return e;
}
VExpr VExpr::load(int tensor, std::vector<Affine> index) {
  VExpr e;
  e.kind = Kind::Load;
  e.tensor = tensor;
  e.index = std::move(index);
  return e;
}
VExpr VExpr::accumulator(int slot) {
  VExpr e;
  e.kind = Kind::Acc;
  e.acc = slot;
  return e;
}
VExpr VExpr::unary(UnaryOp op, VExpr a) {
  VExpr e;
  e.kind = Kind::Unary;
  e.uop = op;
  e.args.push_back(std::move(a));
  return e;
}
VExpr VExpr::binary(BinaryOp op, VExpr a, VExpr b) {
  VExpr e;
  e.kind = Kind::Binary;
  e.bop = op;
  e.args.push_back(std::move(a));
  e.args.push_back(std::move(b));
  return e;
}
VExpr VExpr::index_value(Affine a) {
  VExpr e;
  e.kind = Kind::Index;
  e.index.push_back(std::move(a));
  return e;
}
VExpr VExpr::fill_above(VExpr a, Affine above, double fill) {
  VExpr e = binary(BinaryOp::FillAbove, std::move(a), index_value(std::move(above)));
  e.value = fill;
  return e;
}

int64_t KernelTensor::numel() const {
  return graph::shape_numel(shape);
}

int64_t KernelTensor::alloc_elems() const {
  int64_t last = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    last += (shape[d] - 1) * strides[d];
  }
  return last + 1;
}

int Kernel::find_loop(const std::string& n) const {
  for (size_t i = 0; i < loops.size(); ++i)
    if (loops[i].name == n) return static_cast<int>(i);
  return -1;
}
int Kernel::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}
int Kernel::find_computed(const std::string& n) const {
  for (size_t i = 0; i < computed.size(); ++i)
    if (computed[i].name == n) return static_cast<int>(i);
  return -1;
}
int Kernel::num_inputs() const {
  int n = 0;
  for (const auto& t : tensors) n += t.role == TensorRole::Input ? 1 : 0;
  return n;
}
bool Kernel::has_op(const std::string& op_name) const {
  return std::find(op_names.begin(), op_names.end(), op_name) != op_names.end();
}

std::vector<size_t> scratch_chain(const Program& p, size_t k) {
  std::vector<bool> in(p.kernels.size(), false);
  in.at(k) = true;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t a = 0; a < p.kernels.size(); ++a) {
      if (!in[a]) continue;
      for (const KernelTensor& t : p.kernels[a].tensors) {
        if (t.id >= 0) continue;
        for (size_t b = 0; b < p.kernels.size(); ++b)
          if (!in[b] && p.kernels[b].find_tensor(t.name) >= 0) in[b] = grew = true;
      }
    }
  }
  std::vector<size_t> chain;
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i]) chain.push_back(i);
  return chain;
}

std::vector<int64_t> repack_strides(const graph::Shape& shape, const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& pad) {
  const size_t r = shape.size();
  std::vector<size_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  // Innermost first: smallest stride; ties keep the later (more minor) logical dim inner.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (strides[a] != strides[b]) return strides[a] < strides[b];
    return a > b;
  });
  std::vector<int64_t> out(r, 1);
  int64_t pitch = 1;
  for (size_t d : order) {
    out[d] = pitch;
    pitch *= shape[d] + (d < pad.size() ? pad[d] : 0);
  }
  return out;
}

KernelTensor kernel_tensor(const graph::Tensor& t, graph::TensorId id, TensorRole role) {
  KernelTensor kt;
  kt.id = id;
  kt.name = t.name;
  kt.role = role;
  kt.shape = t.shape;
  kt.strides = t.strides;
  kt.dtype = t.dtype;
  kt.layout = t.layout;
  kt.pad.assign(t.shape.size(), 0);
  return kt;
}

namespace {

void remap_expr(VExpr& e, const std::vector<int>& map) {
  if (e.kind == VExpr::Kind::Load && !e.computed) e.tensor = map[static_cast<size_t>(e.tensor)];
  for (auto& a : e.args) remap_expr(a, map);
}

}  // namespace

void normalize_tensor_order(Kernel& k) {
  std::vector<size_t> order(k.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return k.tensors[a].role == TensorRole::Input && k.tensors[b].role == TensorRole::Output;
  });
  std::vector<int> map(k.tensors.size());
  std::vector<KernelTensor> sorted;
  for (size_t i = 0; i < order.size(); ++i) {
    map[order[i]] = static_cast<int>(i);
    sorted.push_back(k.tensors[order[i]]);
  }
  k.tensors = std::move(sorted);
  for (auto& p : k.phases) {
    remap_expr(p.value, map);
    if (p.out_tensor >= 0) p.out_tensor = map[static_cast<size_t>(p.out_tensor)];
  }
  for (auto& c : k.computed) remap_expr(c.definition, map);
  for (auto& s : k.stages)
    if (!s.computed) s.tensor = map[static_cast<size_t>(s.tensor)];
}

void reset_schedule(Kernel& k) {
  k.loops.clear();
  k.axis_value.clear();
  for (size_t a = 0; a < k.axes.size(); ++a) {
    const Axis& ax = k.axes[a];
    k.loops.push_back({ax.name, ax.extent, LoopKind::Serial, ax.reduce, static_cast<int>(a)});
    k.axis_value.push_back(Affine::var(ax.name));
  }
  k.guards.clear();
  k.stages.clear();
  k.block_order = BlockOrder::RowMajor;
  k.group = 8;
}

// [SECTION] Per-op lowering

namespace {

// Builds one op's kernel: tensors are added as they are referenced; axes are named by the op kind.
class OpLowering {
 public:
  OpLowering(const graph::Graph& g, graph::OpId id) : m_g(g), m_op(g.op(id)) {
    m_k.name = m_op.name;
    m_k.op_names = {m_op.name};
    m_k.ops = {id};
    m_k.summary = graph::op_kind_name(m_op.kind);
  }

  Kernel run() {
    lower();
    normalize_tensor_order(m_k);
    reset_schedule(m_k);
    return std::move(m_k);
  }

 private:
  const graph::Tensor& in_tensor(size_t i) const { return m_g.tensor(m_op.inputs.at(i)); }
  const graph::Tensor& out_tensor() const { return m_g.tensor(m_op.outputs.at(0)); }

  int tensor_slot(graph::TensorId id, TensorRole role) {
    for (size_t i = 0; i < m_k.tensors.size(); ++i)
      if (m_k.tensors[i].id == id) return static_cast<int>(i);
    m_k.tensors.push_back(kernel_tensor(m_g.tensor(id), id, role));
    return static_cast<int>(m_k.tensors.size() - 1);
  }
  int input(size_t i) { return tensor_slot(m_op.inputs.at(i), TensorRole::Input); }
  int output() { return tensor_slot(m_op.outputs.at(0), TensorRole::Output); }

  std::string axis(const std::string& name, int64_t extent, bool reduce) {
    m_k.axes.push_back({name, extent, reduce});
    return name;
  }

  // Axis names for an n-D output walked elementwise.
  static std::vector<std::string> dim_names(size_t rank) {
    if (rank == 1) return {"i"};
    if (rank == 2) return {"i", "j"};
    if (rank == 3) return {"b", "i", "j"};
    if (rank == 4) return {"n", "c", "h", "w"};
    std::vector<std::string> v;
    for (size_t d = 0; d < rank; ++d) v.push_back("d" + std::to_string(d));
    return v;
  }

  // Index of a broadcast operand of shape `s` inside an output walked by `axes` (numpy rules:
  // right-aligned, size-1 dims read element 0).
  static std::vector<Affine> broadcast_index(const graph::Shape& s,
                                             const std::vector<std::string>& axes,
                                             const graph::Shape& out) {
    std::vector<Affine> idx;
    const size_t off = out.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == 1 && out[off + d] != 1)
        idx.push_back(Affine::lit(0));
      else
        idx.push_back(Affine::var(axes[off + d]));
    }
    return idx;
  }

  std::vector<Affine> vars(const std::vector<std::string>& names) {
    std::vector<Affine> v;
    for (const auto& n : names) v.push_back(Affine::var(n));
    return v;
  }

  VExpr load_in(size_t i, const std::vector<std::string>& axes, const graph::Shape& out) {
    return VExpr::load(input(i), broadcast_index(in_tensor(i).shape, axes, out));
  }

  void map_phase(VExpr value, const std::vector<Affine>& out_index, bool over_reduce = false) {
    Phase p;
    p.kind = PhaseKind::Map;
    p.value = std::move(value);
    p.out_tensor = output();
    p.out_index = out_index;
    p.over_reduce_axes = over_reduce;
    m_k.phases.push_back(std::move(p));
  }

  int reduction(ReduceOp op, double init, VExpr body) {
    const int acc = m_k.num_accs++;
    Phase i;
    i.kind = PhaseKind::Init;
    i.acc = acc;
    i.value = VExpr::constant(init);
    m_k.phases.push_back(i);
    Phase r;
    r.kind = PhaseKind::Reduce;
    r.acc = acc;
    r.op = op;
    r.value = std::move(body);
    m_k.phases.push_back(std::move(r));
    return acc;
  }

  void elementwise() {
    for (size_t i = 0; i < m_op.inputs.size(); ++i) input(i);  // argument order = op input order
    const graph::Shape& out = out_tensor().shape;
    std::vector<std::string> ax = dim_names(out.size());
    for (size_t d = 0; d < out.size(); ++d) axis(ax[d], out[d], false);
    auto ld = [&](size_t i) { return load_in(i, ax, out); };
    auto k = [](double v) { return VExpr::constant(v); };
    using B = BinaryOp;
    using U = UnaryOp;
    VExpr v;
    switch (m_op.kind) {
      case OpKind::Add:
        v = VExpr::binary(B::Add, ld(0), ld(1));
        break;
      case OpKind::Sub:
        v = VExpr::binary(B::Sub, ld(0), ld(1));
        break;
      case OpKind::Mul:
        v = VExpr::binary(B::Mul, ld(0), ld(1));
        break;
      case OpKind::ReLU:
        v = VExpr::unary(U::ReLU, ld(0));
        break;
      case OpKind::ReLU6:  // min(relu(x), 6)
        v = VExpr::binary(B::Min, VExpr::unary(U::ReLU, ld(0)), k(6));
        break;
      case OpKind::GELU:
        v = VExpr::unary(U::GELU, ld(0));
        break;
      case OpKind::Sigmoid:
        v = VExpr::unary(U::Sigmoid, ld(0));
        break;
      case OpKind::Tanh:
        v = VExpr::unary(U::Tanh, ld(0));
        break;
      case OpKind::Scale:
        v = VExpr::binary(B::Mul, ld(0), k(m_op.attrs.alpha));
        break;
      case OpKind::CausalMask: {  // column - row > 0: above the diagonal
        const size_t r = ax.size();
        v = VExpr::fill_above(ld(0), Affine::var(ax[r - 1]) - Affine::var(ax[r - 2]),
                              m_op.attrs.alpha);
        break;
      }
      case OpKind::ReLUGrad:
        v = VExpr::binary(B::ReluMask, ld(0), ld(1));
        break;
      case OpKind::ReLU6Grad:  // (0 < x < 6) ? dy : 0, as two masks: x > 0, then 6 - x > 0
        v = VExpr::binary(B::ReluMask, VExpr::binary(B::ReluMask, ld(0), ld(1)),
                          VExpr::binary(B::Sub, k(6), ld(1)));
        break;
      case OpKind::SigmoidGrad:  // dy * y * (1 - y)
        v = VExpr::binary(B::Mul, VExpr::binary(B::Mul, ld(0), ld(1)),
                          VExpr::binary(B::Sub, k(1), ld(1)));
        break;
      case OpKind::TanhGrad:  // dy * (1 - y^2)
        v = VExpr::binary(B::Mul, ld(0),
                          VExpr::binary(B::Sub, k(1), VExpr::unary(U::Square, ld(1))));
        break;
      case OpKind::SGDUpdate:
        v = VExpr::binary(B::Sub, ld(0), VExpr::binary(B::Mul, k(m_op.attrs.alpha), ld(1)));
        break;
      case OpKind::MSELossGrad:
        v = VExpr::binary(B::Mul, k(2.0 / double(in_tensor(0).numel())),
                          VExpr::binary(B::Sub, ld(0), ld(1)));
        break;
      case OpKind::BatchNorm: {
        // y = (x - mean[c]) * rsqrt(var[c] + eps) * scale[c] + shift[c], channels in dim 1.
        std::vector<Affine> ch = {Affine::var(ax[1])};
        auto p = [&](size_t i) { return VExpr::load(input(i), ch); };
        VExpr norm =
            VExpr::binary(B::Mul, VExpr::binary(B::Sub, ld(0), p(3)),
                          VExpr::unary(U::Rsqrt, VExpr::binary(B::Add, p(4), k(m_op.attrs.eps))));
        v = VExpr::binary(B::Add, VExpr::binary(B::Mul, norm, p(1)), p(2));
        break;
      }
      default:
        unsupported();
    }
    map_phase(std::move(v), vars(ax));
  }

  void matmul() {
    input(0);
    input(1);
    const auto& A = in_tensor(0);
    const auto& Bt = in_tensor(1);
    const graph::Shape& out = out_tensor().shape;
    const size_t batch = out.size() - 2;
    std::vector<std::string> bnames;
    for (size_t d = 0; d < batch; ++d)
      bnames.push_back(axis(batch == 1 ? "b" : "b" + std::to_string(d), out[d], false));
    const int64_t ka = m_op.attrs.trans_a ? A.shape[A.shape.size() - 2] : A.shape.back();
    axis("i", out[batch], false);
    axis("j", out[batch + 1], false);
    axis("k", ka, true);
    auto operand = [&](const graph::Tensor& t, bool trans, const std::string& row,
                       const std::string& col) {
      std::vector<Affine> idx;
      const size_t tb = t.shape.size() - 2;
      for (size_t d = 0; d < tb; ++d) {  // batch dims broadcast right-aligned
        const size_t od = batch - tb + d;
        idx.push_back(t.shape[d] == 1 && out[od] != 1 ? Affine::lit(0) : Affine::var(bnames[od]));
      }
      idx.push_back(Affine::var(trans ? col : row));
      idx.push_back(Affine::var(trans ? row : col));
      return idx;
    };
    VExpr a = VExpr::load(input(0), operand(A, m_op.attrs.trans_a, "i", "k"));
    VExpr b = VExpr::load(input(1), operand(Bt, m_op.attrs.trans_b, "k", "j"));
    const int acc = reduction(ReduceOp::Sum, 0.0, VExpr::binary(BinaryOp::Mul, a, b));
    std::vector<std::string> onames = bnames;
    onames.push_back("i");
    onames.push_back("j");
    map_phase(VExpr::accumulator(acc), vars(onames));
  }

  void conv2d() {
    const auto& X = in_tensor(0);
    const auto& W = in_tensor(1);
    const graph::Shape& out = out_tensor().shape;
    const auto& at = m_op.attrs;
    const int64_t G = at.groups;
    const int64_t C = X.shape[1], K = W.shape[0];
    axis("n", out[0], false);
    if (G > 1) axis("g", G, false);
    axis("k", G > 1 ? K / G : K, false);
    axis("p", out[2], false);
    axis("q", out[3], false);
    axis("c", C / G, true);
    axis("r", W.shape[2], true);
    axis("s", W.shape[3], true);
    Affine kk = G > 1 ? Affine::var("g", K / G) + Affine::var("k") : Affine::var("k");
    Affine cc = G > 1 ? Affine::var("g", C / G) + Affine::var("c") : Affine::var("c");
    Affine h = Affine::var("p", at.stride[0]) + Affine::var("r", at.dilation[0]) +
               Affine::lit(-at.padding[0]);
    Affine w = Affine::var("q", at.stride[1]) + Affine::var("s", at.dilation[1]) +
               Affine::lit(-at.padding[1]);
    VExpr x = VExpr::load(input(0), {Affine::var("n"), cc, h, w});
    x.checked = at.padding[0] > 0 || at.padding[1] > 0;
    VExpr wt = VExpr::load(input(1), {kk, Affine::var("c"), Affine::var("r"), Affine::var("s")});
    const int acc = reduction(ReduceOp::Sum, 0.0, VExpr::binary(BinaryOp::Mul, x, wt));
    map_phase(VExpr::accumulator(acc), {Affine::var("n"), kk, Affine::var("p"), Affine::var("q")});
  }

  void pool() {
    const graph::Shape& out = out_tensor().shape;
    const auto& at = m_op.attrs;
    axis("n", out[0], false);
    axis("c", out[1], false);
    axis("p", out[2], false);
    axis("q", out[3], false);
    axis("r", at.kernel[0], true);
    axis("s", at.kernel[1], true);
    Affine h = Affine::var("p", at.stride[0]) + Affine::var("r", at.dilation[0]) +
               Affine::lit(-at.padding[0]);
    Affine w = Affine::var("q", at.stride[1]) + Affine::var("s", at.dilation[1]) +
               Affine::lit(-at.padding[1]);
    const bool is_max = m_op.kind == OpKind::MaxPool2D;
    VExpr x = VExpr::load(input(0), {Affine::var("n"), Affine::var("c"), h, w});
    x.checked = at.padding[0] > 0 || at.padding[1] > 0;
    x.pad_value = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
    const int acc = reduction(is_max ? ReduceOp::Max : ReduceOp::Sum,
                              is_max ? -std::numeric_limits<double>::infinity() : 0.0, x);
    VExpr v = VExpr::accumulator(acc);
    if (!is_max)  // count_include_pad: every window divides by R*S
      v = VExpr::binary(BinaryOp::Mul, v,
                        VExpr::constant(1.0 / double(at.kernel[0] * at.kernel[1])));
    map_phase(std::move(v),
              {Affine::var("n"), Affine::var("c"), Affine::var("p"), Affine::var("q")});
  }

  // Sum / Mean / ReduceToShape / MSELoss: spatial axes for kept dims, reduction axes for the rest.
  void reduce_dims(const std::vector<bool>& reduced, bool keepdim, double scale, bool mse) {
    const graph::Shape& in = in_tensor(0).shape;
    std::vector<Affine> in_idx, out_idx;
    int ns = 0, nr = 0;
    int64_t count = 1;
    for (size_t d = 0; d < in.size(); ++d) {
      if (reduced[d]) {
        const std::string n = "r" + std::to_string(nr++);
        axis(n, in[d], true);
        in_idx.push_back(Affine::var(n));
        if (keepdim) out_idx.push_back(Affine::lit(0));
        count *= in[d];
      } else {
        const std::string n = "d" + std::to_string(ns++);
        axis(n, in[d], false);
        in_idx.push_back(Affine::var(n));
        out_idx.push_back(Affine::var(n));
      }
    }
    // Reduction axes go last: reorder so spatial axes come first.
    std::stable_partition(m_k.axes.begin(), m_k.axes.end(),
                          [](const Axis& a) { return !a.reduce; });
    VExpr body = VExpr::load(input(0), in_idx);
    if (mse)
      body = VExpr::unary(UnaryOp::Square,
                          VExpr::binary(BinaryOp::Sub, body, VExpr::load(input(1), in_idx)));
    const int acc = reduction(ReduceOp::Sum, 0.0, body);
    VExpr v = VExpr::accumulator(acc);
    if (scale != 0) v = VExpr::binary(BinaryOp::Mul, v, VExpr::constant(scale / double(count)));
    map_phase(std::move(v), out_idx);
  }

  // Softmax / LayerNorm: the normalized axis is a reduction for the statistics passes and is walked
  // again by the output pass.
  void normalize() {
    const graph::Shape& in = in_tensor(0).shape;
    const int r = static_cast<int>(in.size());
    const int ax = m_op.kind == OpKind::LayerNorm ? r - 1 : (m_op.attrs.axis + r) % r;
    std::vector<Affine> idx;
    int ns = 0;
    std::string red;
    for (int d = 0; d < r; ++d) {
      if (d == ax) {
        red = r == 2 && ax == 1 ? "j" : "r0";
        idx.push_back(Affine::var(red));
      } else {
        const std::string n = r == 2 ? std::string("i") : "d" + std::to_string(ns++);
        axis(n, in[static_cast<size_t>(d)], false);
        idx.push_back(Affine::var(n));
      }
    }
    const int64_t D = in[static_cast<size_t>(ax)];
    axis(red, D, true);
    using B = BinaryOp;
    auto x = [&] { return VExpr::load(input(0), idx); };
    if (m_op.kind == OpKind::Softmax) {
      const int mx = reduction(ReduceOp::Max, -std::numeric_limits<double>::infinity(), x());
      auto shifted = [&] {
        return VExpr::unary(UnaryOp::Exp, VExpr::binary(B::Sub, x(), VExpr::accumulator(mx)));
      };
      const int sum = reduction(ReduceOp::Sum, 0.0, shifted());
      map_phase(VExpr::binary(B::Div, shifted(), VExpr::accumulator(sum)), idx, true);
      return;
    }
    const int s1 = reduction(ReduceOp::Sum, 0.0, x());
    auto mean = [&] {
      return VExpr::binary(B::Mul, VExpr::accumulator(s1), VExpr::constant(1.0 / double(D)));
    };
    auto centered = [&] { return VExpr::binary(B::Sub, x(), mean()); };
    const int s2 = reduction(ReduceOp::Sum, 0.0, VExpr::unary(UnaryOp::Square, centered()));
    VExpr inv = VExpr::unary(
        UnaryOp::Rsqrt,
        VExpr::binary(
            B::Add, VExpr::binary(B::Mul, VExpr::accumulator(s2), VExpr::constant(1.0 / double(D))),
            VExpr::constant(m_op.attrs.eps)));
    std::vector<Affine> last = {Affine::var(red)};
    VExpr y = VExpr::binary(
        B::Add,
        VExpr::binary(B::Mul, VExpr::binary(B::Mul, centered(), inv), VExpr::load(input(1), last)),
        VExpr::load(input(2), last));
    map_phase(std::move(y), idx, true);
  }

  void transpose() {
    const graph::Shape& out = out_tensor().shape;
    const int r = static_cast<int>(out.size());
    std::vector<int> perm = m_op.attrs.perm;
    if (perm.empty())
      for (int i = r - 1; i >= 0; --i) perm.push_back(i);
    std::vector<std::string> ax = dim_names(out.size());
    for (int d = 0; d < r; ++d) axis(ax[size_t(d)], out[size_t(d)], false);
    std::vector<Affine> in_idx(static_cast<size_t>(r));
    for (int d = 0; d < r; ++d) in_idx[size_t(perm[size_t(d)])] = Affine::var(ax[size_t(d)]);
    map_phase(VExpr::load(input(0), in_idx), vars(ax));
  }

  // A slice (torch.narrow, ONNX Split's parts) copies a box of the input: out[i] = in[i + start].
  void slice() {
    const graph::Shape& out = out_tensor().shape;
    std::vector<std::string> ax = dim_names(out.size());
    std::vector<Affine> in_idx;
    for (size_t d = 0; d < out.size(); ++d) {
      axis(ax[d], out[d], false);
      in_idx.push_back(Affine::var(ax[d]) + Affine::lit(m_op.attrs.starts.at(d)));
    }
    map_phase(VExpr::load(input(0), in_idx), vars(ax));
  }

  // A concatenation copies each input into its part of the output along the axis. The value is
  // a sum of one load per input, each shifted by the input's offset along the axis and checked
  // against its bounds: out of range a load reads 0 and makes no access, so exactly one input is
  // read for each output element — each input once, the output written once.
  void concat() {
    const graph::Shape& out = out_tensor().shape;
    const int rank = int(out.size());
    const size_t ax = size_t((m_op.attrs.axis % rank + rank) % rank);
    std::vector<std::string> names = dim_names(out.size());
    for (size_t d = 0; d < out.size(); ++d) axis(names[d], out[d], false);
    VExpr value;
    int64_t offset = 0;
    for (size_t i = 0; i < m_op.inputs.size(); ++i) {
      std::vector<Affine> idx = vars(names);
      idx[ax] = idx[ax] + Affine::lit(-offset);
      VExpr load = VExpr::load(input(i), idx);
      load.checked = true;
      value = i == 0 ? load : VExpr::binary(BinaryOp::Add, value, load);
      offset += in_tensor(i).shape[ax];
    }
    map_phase(value, vars(names));
  }

  // A reshape of dense row-major tensors is a copy of the flat element sequence.
  void reshape() {
    const auto& in = in_tensor(0);
    const auto& out = out_tensor();
    auto dense = [](const graph::Tensor& t) {
      return t.strides == graph::layout_strides(t.shape, graph::Layout::RowMajor);
    };
    if (!dense(in) || !dense(out))
      throw ScheduleError("op '" + m_op.name +
                          "' (Reshape): only reshapes of row-major tensors are lowered; '" +
                          in.name + "' is stored " + graph::layout_name(in.layout));
    const int a = input(0), o = output();
    for (int t : {a, o}) {
      m_k.tensors[size_t(t)].shape = {in.numel()};
      m_k.tensors[size_t(t)].strides = {1};
      m_k.tensors[size_t(t)].pad = {0};
    }
    axis("i", in.numel(), false);
    map_phase(VExpr::load(a, {Affine::var("i")}), {Affine::var("i")});
  }

  [[noreturn]] void unsupported() const {
    throw ScheduleError("op '" + m_op.name + "' (" + graph::op_kind_name(m_op.kind) +
                        ") has no loop-nest lowering yet");
  }

  void lower() {
    switch (m_op.kind) {
      case OpKind::MatMul:
        return matmul();
      case OpKind::Conv2D:
        return conv2d();
      case OpKind::MaxPool2D:
      case OpKind::AvgPool2D:
        return pool();
      case OpKind::Softmax:
      case OpKind::LayerNorm:
        return normalize();
      case OpKind::Transpose:
        return transpose();
      case OpKind::Reshape:
        return reshape();
      case OpKind::Slice:
        return slice();
      case OpKind::Concat:
        return concat();
      case OpKind::Sum:
      case OpKind::Mean: {
        const graph::Shape& in = in_tensor(0).shape;
        std::vector<bool> red(in.size(), m_op.attrs.axes.empty());
        for (int a : m_op.attrs.axes) red[size_t((a + int(in.size())) % int(in.size()))] = true;
        return reduce_dims(red, m_op.attrs.keepdim, m_op.kind == OpKind::Mean ? 1.0 : 0.0, false);
      }
      case OpKind::MSELoss: {
        std::vector<bool> red(in_tensor(0).shape.size(), true);
        return reduce_dims(red, false, 1.0, true);
      }
      case OpKind::ReduceToShape: {
        // Sum dy over the dims broadcasting added: leading extra dims, and dims that are 1 in the
        // target.
        const graph::Shape& in = in_tensor(0).shape;
        const graph::Shape& target = out_tensor().shape;
        const size_t off = in.size() - target.size();
        std::vector<bool> red(in.size(), false);
        for (size_t d = 0; d < in.size(); ++d)
          red[d] = d < off || (target[d - off] == 1 && in[d] != 1);
        // Leading dims vanish; target dims of size 1 are kept as index 0.
        std::vector<Affine> out_idx;
        Kernel& k = m_k;
        std::vector<Affine> in_idx;
        int ns = 0, nr = 0;
        for (size_t d = 0; d < in.size(); ++d) {
          const std::string n = red[d] ? "r" + std::to_string(nr++) : "d" + std::to_string(ns++);
          axis(n, in[d], red[d]);
          in_idx.push_back(Affine::var(n));
          if (d >= off) out_idx.push_back(red[d] ? Affine::lit(0) : Affine::var(n));
        }
        std::stable_partition(k.axes.begin(), k.axes.end(),
                              [](const Axis& a) { return !a.reduce; });
        const int acc = reduction(ReduceOp::Sum, 0.0, VExpr::load(input(0), in_idx));
        return map_phase(VExpr::accumulator(acc), out_idx);
      }
      default:
        if (graph::is_elementwise(m_op.kind) || m_op.kind == OpKind::BatchNorm ||
            m_op.kind == OpKind::ReLUGrad || m_op.kind == OpKind::ReLU6Grad ||
            m_op.kind == OpKind::SigmoidGrad || m_op.kind == OpKind::TanhGrad ||
            m_op.kind == OpKind::SGDUpdate || m_op.kind == OpKind::MSELossGrad ||
            m_op.kind == OpKind::Scale)
          return elementwise();
        unsupported();
    }
  }

  const graph::Graph& m_g;
  const graph::Op& m_op;
  Kernel m_k;
};

}  // namespace

Kernel lower_op(const graph::Graph& graph, graph::OpId op) {
  return OpLowering(graph, op).run();
}

Program lower_graph(std::shared_ptr<const graph::Graph> graph) {
  if (!graph) throw ScheduleError("lower_graph: no graph");
  Program p;
  p.graph = graph;
  for (size_t i = 0; i < graph->ops().size(); ++i)
    p.kernels.push_back(lower_op(*graph, static_cast<graph::OpId>(i)));
  // Steps apply to the first kernel that does real work (a MatMul or Conv) unless told otherwise.
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const auto kind = graph->op(p.kernels[i].ops[0]).kind;
    if (kind == OpKind::MatMul || kind == OpKind::Conv2D) {
      p.current = static_cast<int>(i);
      break;
    }
  }
  return p;
}

}  // namespace tilescope::schedule

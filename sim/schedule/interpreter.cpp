// The reference interpreter: walks the loop tree node by node in fp32.
#include "sim/schedule/interpreter.h"

#include "sim/schedule/affine_eval.h"
#include "sim/schedule/lower.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace tilescope::schedule {

float apply_unary(UnaryOp op, float a) {
  switch (op) {
    case UnaryOp::Neg:
      return -a;
    case UnaryOp::ReLU:
      return std::max(a, 0.0f);
    case UnaryOp::GELU: {
      const float c = 0.7978845608028654f;  // sqrt(2/pi)
      return 0.5f * a * (1.0f + std::tanh(c * (a + 0.044715f * a * a * a)));
    }
    case UnaryOp::Sigmoid:
      return 1.0f / (1.0f + std::exp(-a));
    case UnaryOp::Tanh:
      return std::tanh(a);
    case UnaryOp::Exp:
      return std::exp(a);
    case UnaryOp::Log:
      return std::log(a);
    case UnaryOp::Sqrt:
      return std::sqrt(a);
    case UnaryOp::Rsqrt:
      return 1.0f / std::sqrt(a);
    case UnaryOp::Square:
      return a * a;
  }
  return a;
}

float apply_binary(BinaryOp op, float a, float b, float fill) {
  switch (op) {
    case BinaryOp::Add:
      return a + b;
    case BinaryOp::Sub:
      return a - b;
    case BinaryOp::Mul:
      return a * b;
    case BinaryOp::Div:
      return a / b;
    case BinaryOp::Max:
      return std::max(a, b);
    case BinaryOp::Min:
      return std::min(a, b);
    case BinaryOp::ReluMask:
      return b > 0.0f ? a : 0.0f;
    case BinaryOp::FillAbove:
      return b > 0.0f ? fill : a;
  }
  return a;
}

namespace {

class Interpreter {
 public:
  Interpreter(const LoweredKernel& lk, std::vector<std::vector<float>>& buffers)
      : m_lk(lk), m_k(lk.kernel), m_buf(buffers), m_env(lk.kernel) {
    m_acc_elems = lk.acc_elems([](int) { return false; });
    m_acc.assign(size_t(std::max(1, m_k.num_accs) * m_acc_elems), 0.0f);
    m_acc_index = lk.acc_index([](int) { return false; });
    for (const auto& pl : lk.stages) m_stage.emplace_back(size_t(pl.elems), 0.0f);
    for (size_t i = 0; i < m_k.tensors.size(); ++i)
      if (int64_t(m_buf.at(i).size()) < m_k.tensors[i].alloc_elems())
        throw ScheduleError("interpreter: buffer for '" + m_k.tensors[i].name + "' has " +
                            std::to_string(m_buf[i].size()) + " floats, needs " +
                            std::to_string(m_k.tensors[i].alloc_elems()));
  }

  void run() { exec(m_lk.body); }

 private:
  int64_t eval(const Affine& a) { return m_env.eval(a); }

  bool in_bounds(const VExpr& l, const graph::Shape& shape) {
    for (size_t d = 0; d < l.index.size(); ++d) {
      if (d < l.check_dims.size() && !l.check_dims[d]) continue;
      const int64_t v = eval(l.index[d]);
      if (v < 0 || v >= shape[d]) return false;
    }
    return true;
  }

  float global_at(int tensor, const std::vector<int64_t>& g) {
    const KernelTensor& t = m_k.tensors[size_t(tensor)];
    int64_t off = 0;
    for (size_t d = 0; d < g.size(); ++d) off += g[d] * t.strides[d];
    return m_buf[size_t(tensor)][size_t(off)];
  }

  float value(const VExpr& e) {
    switch (e.kind) {
      case VExpr::Kind::Const:
        return float(e.value);
      case VExpr::Kind::Acc:
        return m_acc[size_t(e.acc * m_acc_elems + eval(m_acc_index))];
      case VExpr::Kind::Unary:
        return apply_unary(e.uop, value(e.args[0]));
      case VExpr::Kind::Binary:
        return apply_binary(e.bop, value(e.args[0]), value(e.args[1]), float(e.value));
      case VExpr::Kind::Index:
        return float(eval(e.index[0]));
      case VExpr::Kind::Load: {
        const graph::Shape& shape =
            e.computed ? m_k.computed[size_t(e.tensor)].shape : m_k.tensors[size_t(e.tensor)].shape;
        if (!in_bounds(e, shape)) return float(e.pad_value);
        if (e.stage >= 0) {
          const StagePlacement& pl = m_lk.stages[size_t(e.stage)];
          int64_t off = 0;
          for (size_t d = 0; d < e.buffer_index.size(); ++d)
            off += eval(e.buffer_index[d]) * pl.strides[d];
          return m_stage[size_t(e.stage)][size_t(off)];
        }
        std::vector<int64_t> g(e.index.size());
        for (size_t d = 0; d < g.size(); ++d) g[d] = eval(e.index[d]);
        return global_at(e.tensor, g);
      }
    }
    return 0.0f;
  }

  void copy_stage(int s) {
    const StagePlacement& pl = m_lk.stages[size_t(s)];
    const graph::Shape& shape =
        pl.computed ? m_k.computed[size_t(pl.tensor)].shape : m_k.tensors[size_t(pl.tensor)].shape;
    const size_t r = pl.extents.size();
    std::vector<int64_t> base(r), o(r, 0), g(r);
    for (size_t d = 0; d < r; ++d) base[d] = eval(pl.base[d]);
    std::vector<int64_t> src_base;
    if (pl.source >= 0)
      for (const auto& b : m_lk.stages[size_t(pl.source)].base) src_base.push_back(eval(b));
    auto& buf = m_stage[size_t(s)];
    std::fill(buf.begin(), buf.end(), 0.0f);
    for (;;) {
      bool inside = true;
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) {
        g[d] = base[d] + o[d];
        inside = inside && g[d] >= 0 && g[d] < shape[d];
        off += o[d] * pl.strides[d];
      }
      if (inside) buf[size_t(off)] = fetch(pl, g, src_base);
      size_t d = r;
      while (d > 0) {
        --d;
        if (++o[d] < pl.extents[d]) break;
        o[d] = 0;
        if (d == 0) return;
      }
      if (r == 0) return;
    }
  }

  // One element of a tile's source: the enclosing tile, the computed definition, or memory.
  float fetch(const StagePlacement& pl, const std::vector<int64_t>& g,
              const std::vector<int64_t>& src_base) {
    if (pl.source >= 0) {
      const StagePlacement& src = m_lk.stages[size_t(pl.source)];
      int64_t off = 0;
      for (size_t d = 0; d < g.size(); ++d) off += (g[d] - src_base[d]) * src.strides[d];
      return m_stage[size_t(pl.source)][size_t(off)];
    }
    if (pl.computed) {
      for (size_t d = 0; d < g.size(); ++d) m_env.set_def(d, g[d]);
      return value(m_k.computed[size_t(pl.tensor)].definition);
    }
    return global_at(pl.tensor, g);
  }

  void statement(int p) {
    const Phase& ph = m_lk.phases[size_t(p)].phase;
    switch (ph.kind) {
      case PhaseKind::Init:
        m_acc[size_t(ph.acc * m_acc_elems + eval(m_acc_index))] = value(ph.value);
        return;
      case PhaseKind::Reduce: {
        const int64_t at = eval(m_acc_index);
        float& a = m_acc[size_t(ph.acc * m_acc_elems + at)];
        const float v = value(ph.value);
        if (ph.op == ReduceOp::OnlineSum)
          online_sum_update(m_acc[size_t(ph.max_acc * m_acc_elems + at)], a, v);
        else
          a = ph.op == ReduceOp::Sum ? a + v : std::max(a, v);
        return;
      }
      case PhaseKind::Map: {
        const KernelTensor& t = m_k.tensors[size_t(ph.out_tensor)];
        int64_t off = 0;
        for (size_t d = 0; d < ph.out_index.size(); ++d)
          off += eval(ph.out_index[d]) * t.strides[d];
        m_buf[size_t(ph.out_tensor)][size_t(off)] = value(ph.value);
        return;
      }
    }
  }

  void exec(const std::vector<Node>& nodes) {
    for (const Node& n : nodes) {
      switch (n.kind) {
        case Node::Kind::Loop: {
          const int64_t ext = m_k.loops[size_t(n.loop)].extent;
          for (int64_t v = 0; v < ext; ++v) {
            m_env.set_loop(n.loop, v);
            exec(n.children);
          }
          break;
        }
        case Node::Kind::If: {
          bool ok = true;
          for (const auto& c : n.conds) ok = ok && eval(c.expr) < c.bound;
          if (ok) exec(n.children);
          break;
        }
        case Node::Kind::Stmt:
          statement(n.phase);
          break;
        case Node::Kind::Stage:
          copy_stage(n.stage);
          break;
        case Node::Kind::Barrier:
        case Node::Kind::AccDecl:
          break;
      }
    }
  }

  const LoweredKernel& m_lk;
  const Kernel& m_k;
  std::vector<std::vector<float>>& m_buf;
  AffineEnv m_env;
  int64_t m_acc_elems = 1;
  Affine m_acc_index;
  std::vector<float> m_acc;
  std::vector<std::vector<float>> m_stage;
};

}  // namespace

void interpret_kernel(const LoweredKernel& lk, std::vector<std::vector<float>>& buffers) {
  Interpreter(lk, buffers).run();
}

void interpret_kernel(const Kernel& k, std::vector<std::vector<float>>& buffers) {
  const LoweredKernel lk = build_loop_tree(k);
  interpret_kernel(lk, buffers);
}

namespace {

template <class F>
void for_each_index(const graph::Shape& shape, F f) {
  const int64_t n = graph::shape_numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    f(flat, idx);
    for (size_t d = shape.size(); d > 0; --d) {
      if (++idx[d - 1] < shape[d - 1]) break;
      idx[d - 1] = 0;
    }
  }
}

}  // namespace

std::vector<float> pack_tensor(const KernelTensor& t, const std::vector<float>& logical) {
  if (int64_t(logical.size()) != t.numel())
    throw ScheduleError("tensor '" + t.name + "' needs " + std::to_string(t.numel()) +
                        " values, got " + std::to_string(logical.size()));
  std::vector<float> mem(size_t(std::max<int64_t>(1, t.alloc_elems())), 0.0f);
  for_each_index(t.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides[d];
    mem[size_t(off)] = logical[size_t(flat)];
  });
  return mem;
}

std::vector<float> unpack_tensor(const KernelTensor& t, const std::vector<float>& memory) {
  std::vector<float> logical(size_t(t.numel()));
  for_each_index(t.shape, [&](int64_t flat, const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides[d];
    logical[size_t(flat)] = memory[size_t(off)];
  });
  return logical;
}

std::map<graph::TensorId, std::vector<float>> run_program(
    const Program& p, const std::map<graph::TensorId, std::vector<float>>& feeds) {
  std::map<graph::TensorId, std::vector<float>> values = feeds;
  std::map<std::string, std::vector<float>> scratch;  // transform-made tensors, by name
  for (const Kernel& k : p.kernels) {
    std::vector<std::vector<float>> bufs;
    for (const KernelTensor& t : k.tensors) {
      if (t.role == TensorRole::Output) {
        bufs.emplace_back(size_t(std::max<int64_t>(1, t.alloc_elems())), 0.0f);
        continue;
      }
      const std::vector<float>* v = nullptr;
      if (t.id >= 0) {
        auto it = values.find(t.id);
        if (it != values.end()) v = &it->second;
      } else {
        auto it = scratch.find(t.name);
        if (it != scratch.end()) v = &it->second;
      }
      if (!v)
        throw ScheduleError("kernel '" + k.name + "' reads '" + t.name +
                            "', which no feed and no earlier kernel provides");
      bufs.push_back(pack_tensor(t, *v));
    }
    interpret_kernel(k, bufs);
    for (size_t i = 0; i < k.tensors.size(); ++i) {
      const KernelTensor& t = k.tensors[i];
      if (t.role != TensorRole::Output) continue;
      if (t.id >= 0)
        values[t.id] = unpack_tensor(t, bufs[i]);
      else
        scratch[t.name] = unpack_tensor(t, bufs[i]);
    }
  }
  for (const auto& [id, v] : feeds) values.erase(id);
  return values;
}

}  // namespace tilescope::schedule

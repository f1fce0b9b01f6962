// The graph IR's implementation: names, errors, layouts, and the Graph itself. Shape inference for
// every op kind is in shape_inference.cpp, FLOP and byte costs in graph_costs.cpp.
//
// [SECTION] index: Names and errors · Shapes and layouts · Graph
#include "sim/graph/graph.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace tilescope::graph {

// [SECTION] Names and errors

std::string SourceLoc::to_string() const {
  if (line <= 0) return file;  // "" when unknown; just the file when only that is known
  std::string where = std::to_string(line);
  if (col > 0) where += ":" + std::to_string(col);
  return file.empty() ? where : file + ":" + where;
}

namespace {

std::string format_error(const SourceLoc& loc, const std::string& message,
                         const std::string& excerpt) {
  std::string out;
  const std::string where = loc.to_string();
  if (!where.empty()) out = where + ": ";
  out += "error: " + message;
  size_t begin = 0;
  while (begin < excerpt.size()) {
    size_t end = excerpt.find('\n', begin);
    if (end == std::string::npos) end = excerpt.size();
    out += "\n  " + excerpt.substr(begin, end - begin);
    begin = end + 1;
  }
  return out;
}

}  // namespace

GraphError::GraphError(SourceLoc loc, std::string message, std::string excerpt)
    : std::runtime_error(format_error(loc, message, excerpt)),
      m_loc(std::move(loc)),
      m_message(std::move(message)) {}

int dtype_size(DType d) {
  switch (d) {
    case DType::F32:
      return 4;
    case DType::F16:
      return 2;
    case DType::BF16:
      return 2;
    case DType::I8:
      return 1;
  }
  return 4;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32:
      return "fp32";
    case DType::F16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::I8:
      return "int8";
  }
  return "?";
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::RowMajor:
      return "row-major";
    case Layout::NCHW:
      return "NCHW";
    case Layout::NHWC:
      return "NHWC";
    case Layout::Transposed:
      return "transposed";
    case Layout::Strided:
      return "strided";
  }
  return "?";
}

const char* role_name(Role r) {
  switch (r) {
    case Role::Input:
      return "input";
    case Role::Weight:
      return "weight";
    case Role::Activation:
      return "activation";
    case Role::Gradient:
      return "gradient";
  }
  return "?";
}

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::MatMul:
      return "MatMul";
    case OpKind::Conv2D:
      return "Conv2D";
    case OpKind::Add:
      return "Add";
    case OpKind::Sub:
      return "Sub";
    case OpKind::Mul:
      return "Mul";
    case OpKind::ReLU:
      return "ReLU";
    case OpKind::GELU:
      return "GELU";
    case OpKind::Sigmoid:
      return "Sigmoid";
    case OpKind::Tanh:
      return "Tanh";
    case OpKind::MaxPool2D:
      return "MaxPool2D";
    case OpKind::AvgPool2D:
      return "AvgPool2D";
    case OpKind::BatchNorm:
      return "BatchNorm";
    case OpKind::LayerNorm:
      return "LayerNorm";
    case OpKind::Softmax:
      return "Softmax";
    case OpKind::Reshape:
      return "Reshape";
    case OpKind::Transpose:
      return "Transpose";
    case OpKind::Concat:
      return "Concat";
    case OpKind::Sum:
      return "Sum";
    case OpKind::Mean:
      return "Mean";
    case OpKind::CausalMask:
      return "CausalMask";
    case OpKind::MSELoss:
      return "MSELoss";
    case OpKind::CrossEntropyLoss:
      return "CrossEntropyLoss";
    case OpKind::ReLUGrad:
      return "ReLUGrad";
    case OpKind::ReLU6Grad:
      return "ReLU6Grad";
    case OpKind::ReLU6:
      return "ReLU6";
    case OpKind::GELUGrad:
      return "GELUGrad";
    case OpKind::SigmoidGrad:
      return "SigmoidGrad";
    case OpKind::TanhGrad:
      return "TanhGrad";
    case OpKind::MaxPool2DGrad:
      return "MaxPool2DGrad";
    case OpKind::AvgPool2DGrad:
      return "AvgPool2DGrad";
    case OpKind::Conv2DGradInput:
      return "Conv2DGradInput";
    case OpKind::Conv2DGradWeight:
      return "Conv2DGradWeight";
    case OpKind::SoftmaxGrad:
      return "SoftmaxGrad";
    case OpKind::LayerNormGrad:
      return "LayerNormGrad";
    case OpKind::BatchNormGrad:
      return "BatchNormGrad";
    case OpKind::MSELossGrad:
      return "MSELossGrad";
    case OpKind::CrossEntropyLossGrad:
      return "CrossEntropyLossGrad";
    case OpKind::ReduceToShape:
      return "ReduceToShape";
    case OpKind::Scale:
      return "Scale";
    case OpKind::SGDUpdate:
      return "SGDUpdate";
    case OpKind::Slice:
      return "Slice";
    case OpKind::BroadcastTo:
      return "BroadcastTo";
    case OpKind::BatchNormScaleGrad:
      return "BatchNormScaleGrad";
    case OpKind::LayerNormGammaGrad:
      return "LayerNormGammaGrad";
  }
  return "?";
}

bool is_elementwise(OpKind k) {
  // BatchNorm is a per-channel affine map but broadcasts along dim 1, not by numpy rules, so a
  // fuser must treat it on its own; it is not listed here.
  return op_family(k) == OpFamily::Elementwise;
}

OpFamily op_family(OpKind k) {
  switch (k) {
    case OpKind::MatMul:
    case OpKind::Conv2D:
    case OpKind::Conv2DGradInput:
    case OpKind::Conv2DGradWeight:
      return OpFamily::Gemm;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::ReLU:
    case OpKind::GELU:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::ReLU6:
    case OpKind::ReLUGrad:
    case OpKind::ReLU6Grad:
    case OpKind::GELUGrad:
    case OpKind::SigmoidGrad:
    case OpKind::TanhGrad:
    case OpKind::MSELossGrad:
    case OpKind::Scale:
    case OpKind::SGDUpdate:
    case OpKind::CausalMask:
      return OpFamily::Elementwise;
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
    case OpKind::MaxPool2DGrad:
    case OpKind::AvgPool2DGrad:
    case OpKind::BatchNorm:
    case OpKind::BatchNormGrad:
    case OpKind::BatchNormScaleGrad:
    case OpKind::LayerNorm:
    case OpKind::LayerNormGrad:
    case OpKind::LayerNormGammaGrad:
      return OpFamily::PoolNorm;
    case OpKind::Softmax:
    case OpKind::SoftmaxGrad:
    case OpKind::MSELoss:
    case OpKind::CrossEntropyLoss:
    case OpKind::CrossEntropyLossGrad:
      return OpFamily::SoftmaxLoss;
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::ReduceToShape:
    case OpKind::BroadcastTo:
      return OpFamily::LayoutReduce;
  }
  return OpFamily::LayoutReduce;  // unreachable: every kind is listed
}

bool is_backward(OpKind k) {
  // Scale sits among the backward helpers but is also the forward `x * c` / `x / c` of the model
  // language, so it does not mark an op as backward on its own (Op::origin does).
  return static_cast<int>(k) >= static_cast<int>(OpKind::ReLUGrad) && k != OpKind::Scale;
}

// [SECTION] Shapes and layouts

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (__builtin_mul_overflow(n, d, &n))
      throw GraphError({},
                       "shape " + shape_to_string(s) + " has more elements than fit in 64 bits");
  }
  return n;
}

namespace {

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

}  // namespace

std::vector<int64_t> layout_strides(const Shape& shape, Layout layout) {
  switch (layout) {
    case Layout::RowMajor:
      return row_major_strides(shape);
    case Layout::NCHW:
    case Layout::NHWC: {
      if (shape.size() != 4)
        throw GraphError({}, std::string("layout ") + layout_name(layout) +
                                 " needs a 4-D shape [N, C, H, W], got " + shape_to_string(shape));
      if (layout == Layout::NCHW) return row_major_strides(shape);
      // Logical N,C,H,W stored as N,H,W,C: channels are adjacent in memory.
      const int64_t c = shape[1], w = shape[3];
      return {shape[2] * w * c, 1, w * c, c};
    }
    case Layout::Transposed: {
      if (shape.size() < 2) return row_major_strides(shape);
      // Memory holds the shape with its last two dims swapped; logical strides swap back.
      Shape mem = shape;
      std::swap(mem[mem.size() - 1], mem[mem.size() - 2]);
      std::vector<int64_t> strides = row_major_strides(mem);
      std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
      return strides;
    }
    case Layout::Strided:
      throw GraphError({}, "a Strided tensor has no default strides: give them explicitly (shape " +
                               shape_to_string(shape) + ")");
  }
  return row_major_strides(shape);
}

// [SECTION] Graph

TensorId Graph::add_tensor(Tensor t) {
  if (t.name.empty()) throw GraphError(t.loc, "a tensor needs a name");
  if (find_tensor(t.name)) throw GraphError(t.loc, "tensor '" + t.name + "' is already defined");
  for (size_t i = 0; i < t.shape.size(); ++i)
    if (t.shape[i] < 1)
      throw GraphError(t.loc, "tensor '" + t.name + "' " + shape_to_string(t.shape) + ": dim " +
                                  std::to_string(i) + " is " + std::to_string(t.shape[i]) +
                                  "; sizes must be >= 1");
  try {
    shape_numel(t.shape);
    if (t.strides.empty()) t.strides = layout_strides(t.shape, t.layout);
  } catch (const GraphError& e) {
    throw GraphError(t.loc, "tensor '" + t.name + "': " + e.message());
  }
  if (t.strides.size() != t.shape.size())
    throw GraphError(t.loc, "tensor '" + t.name + "' " + shape_to_string(t.shape) + " has " +
                                std::to_string(t.strides.size()) + " strides; needs one per dim");
  m_tensors.push_back(std::move(t));
  const TensorId id = static_cast<TensorId>(m_tensors.size() - 1);
  m_tensor_index.emplace(m_tensors.back().name, id);
  return id;
}

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Attributes in one canonical form so later passes need not re-derive them (non-negative axes,
// the conv kernel taken from the weight, Transpose's default perm written out).
void normalize_attrs(Op& op, const std::vector<const Tensor*>& in, const Shape& out) {
  OpAttrs& a = op.attrs;
  auto pos = [](int axis, int rank) { return axis < 0 ? axis + rank : axis; };
  switch (op.kind) {
    case OpKind::Conv2D:
    case OpKind::Conv2DGradInput:
      a.kernel[0] = in[1]->shape[2];
      a.kernel[1] = in[1]->shape[3];
      break;
    case OpKind::Conv2DGradWeight:
      a.kernel[0] = out[2];
      a.kernel[1] = out[3];
      break;
    case OpKind::Softmax:
    case OpKind::SoftmaxGrad:
    case OpKind::Concat:
      a.axis = pos(a.axis, in[0]->rank());
      break;
    case OpKind::LayerNorm:
      a.axis = in[0]->rank() - 1;
      break;
    case OpKind::Sum:
    case OpKind::Mean: {
      std::vector<int> axes;
      if (a.axes.empty())
        for (int i = 0; i < in[0]->rank(); ++i) axes.push_back(i);
      for (int x : a.axes) axes.push_back(pos(x, in[0]->rank()));
      std::sort(axes.begin(), axes.end());
      a.axes = axes;
      break;
    }
    case OpKind::Transpose:
      if (a.perm.empty())
        for (int i = in[0]->rank() - 1; i >= 0; --i) a.perm.push_back(i);
      break;
    case OpKind::Reshape:
      a.shape = out;
      break;  // the -1 resolved
    default:
      break;
  }
}

}  // namespace

TensorId Graph::add_op(Op op, const std::string& out_name, Role out_role) {
  if (op.name.empty()) op.name = unique_op_name(lower(op_kind_name(op.kind)));
  if (find_op(op.name)) throw GraphError(op.loc, "an op named '" + op.name + "' already exists");
  std::vector<const Tensor*> in;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorId id = op.inputs[i];
    if (id < 0 || static_cast<size_t>(id) >= m_tensors.size())
      throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): input " +
                                   std::to_string(i) + " is tensor id " + std::to_string(id) +
                                   ", which does not exist");
    in.push_back(&m_tensors[static_cast<size_t>(id)]);
  }
  const Shape shape = infer_shape(op, in);
  normalize_attrs(op, in, shape);

  Tensor out;
  out.name = out_name.empty() ? op.name : out_name;
  if (find_tensor(out.name))
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): its output name '" +
                                 out.name + "' is already a tensor");
  out.shape = shape;
  out.dtype = in[0]->dtype;
  // Image-shaped ops keep their input's image layout; everything else is written row-major.
  const Layout lin = in[0]->layout;
  out.layout = (shape.size() == 4 && in[0]->rank() == 4 && op.kind != OpKind::Reshape &&
                op.kind != OpKind::Transpose && (lin == Layout::NCHW || lin == Layout::NHWC))
                   ? lin
                   : Layout::RowMajor;
  out.role = out_role;
  out.loc = op.loc;
  out.producer = static_cast<OpId>(m_ops.size());
  try {
    shape_numel(out.shape);
  } catch (const GraphError& e) {
    throw GraphError(op.loc, op.name + " (" + op_kind_name(op.kind) + "): output " + e.message());
  }
  out.strides = layout_strides(out.shape, out.layout);

  // Check the cost fits in 64 bits now, so op_cost() never overflows later.
  m_tensors.push_back(out);
  const TensorId out_id = static_cast<TensorId>(m_tensors.size() - 1);
  op.outputs = {out_id};
  m_ops.push_back(op);
  try {
    op_cost(static_cast<OpId>(m_ops.size() - 1));
  } catch (...) {
    m_ops.pop_back();
    m_tensors.pop_back();
    throw;
  }
  m_tensor_index.emplace(m_tensors.back().name, out_id);
  m_op_index.emplace(m_ops.back().name, static_cast<OpId>(m_ops.size() - 1));
  return out_id;
}

std::optional<TensorId> Graph::find_tensor(const std::string& name) const {
  const auto it = m_tensor_index.find(name);
  if (it == m_tensor_index.end()) return std::nullopt;
  return it->second;
}

std::optional<OpId> Graph::find_op(const std::string& name) const {
  const auto it = m_op_index.find(name);
  if (it == m_op_index.end()) return std::nullopt;
  return it->second;
}

std::vector<OpId> Graph::consumers(TensorId id) const {
  std::vector<OpId> out;
  for (size_t i = 0; i < m_ops.size(); ++i) {
    const auto& ins = m_ops[i].inputs;
    if (std::find(ins.begin(), ins.end(), id) != ins.end()) out.push_back(static_cast<OpId>(i));
  }
  return out;
}

std::vector<TensorId> Graph::graph_inputs() const {
  std::vector<TensorId> out;
  for (size_t i = 0; i < m_tensors.size(); ++i) {
    const Tensor& t = m_tensors[i];
    if (t.producer < 0 && (t.role == Role::Input || t.role == Role::Weight))
      out.push_back(static_cast<TensorId>(i));
  }
  return out;
}

std::vector<TensorId> Graph::graph_outputs() const {
  std::vector<bool> consumed(m_tensors.size(), false);
  for (const Op& op : m_ops)
    for (TensorId id : op.inputs) consumed[static_cast<size_t>(id)] = true;
  std::vector<TensorId> out;
  for (size_t i = 0; i < m_tensors.size(); ++i)
    if (m_tensors[i].producer >= 0 && !consumed[i]) out.push_back(static_cast<TensorId>(i));
  return out;
}

std::string Graph::unique_op_name(const std::string& stem) const {
  // The suffix stays at the name returned: the caller may not use it, and then it is still free.
  for (int& i = m_next_op_suffix[stem];; ++i) {
    std::string name = stem + std::to_string(i);
    if (!find_op(name)) return name;
  }
}

std::string Graph::unique_tensor_name(const std::string& stem) const {
  for (int& i = m_next_tensor_suffix[stem];; ++i) {
    std::string name = stem + std::to_string(i);
    if (!find_tensor(name)) return name;
  }
}

}  // namespace tilescope::graph

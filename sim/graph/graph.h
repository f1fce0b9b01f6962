// The computation graph IR: tensors (shape, dtype, layout, strides, role) and ops, with shape inference.
//
// A Graph is built op by op; add_op() infers the output shape and throws GraphError (naming the op,
// the shapes and the source location) when the inputs do not fit. Ops are kept in insertion order,
// which is always a topological order because an op can only consume tensors that already exist.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::graph {

// [SECTION] Source locations and errors

struct SourceLoc {
  std::string file;  // "" when built in code or typed in the app
  int line = 0;      // 1-based; 0 = unknown
  int col = 0;       // 1-based; 0 = unknown
  std::string to_string() const;  // "file:line:col", or "line:col", or "" when unknown
};

// Any error in a user's model: parse errors, unknown names, shape mismatches.
// what() is the full message "file:line:col: error: ...\n  <source line>\n  ^~~~" when known.
class GraphError : public std::runtime_error {
 public:
  // `excerpt` is the source line and the caret line, unindented; what() indents each by two spaces.
  GraphError(SourceLoc loc, std::string message, std::string excerpt = {});
  const SourceLoc& loc() const { return m_loc; }
  const std::string& message() const { return m_message; }  // without location or excerpt
 private:
  SourceLoc m_loc;
  std::string m_message;
};

// [SECTION] Tensors

enum class DType { F32, F16, BF16, I8 };
int dtype_size(DType);
const char* dtype_name(DType);  // "fp32", "fp16", "bf16", "int8"

// How a tensor's logical indices map to memory. RowMajor is the general "last dim contiguous";
// NCHW / NHWC name the two 4-D image layouts (logical shape is always N,C,H,W); Transposed is a
// view whose last two dims are swapped in memory; Strided is anything else given by explicit strides.
enum class Layout { RowMajor, NCHW, NHWC, Transposed, Strided };
const char* layout_name(Layout);

enum class Role { Input, Weight, Activation, Gradient };
const char* role_name(Role);

using Shape = std::vector<int64_t>;
std::string shape_to_string(const Shape&);  // "[64, 1024]"
int64_t shape_numel(const Shape&);

// Strides in elements for a logical shape under a layout.
std::vector<int64_t> layout_strides(const Shape& shape, Layout layout);

using TensorId = int;
using OpId = int;

struct Tensor {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  Layout layout = Layout::RowMajor;
  std::vector<int64_t> strides;  // elements, one per dim (filled from layout when not given)
  Role role = Role::Activation;
  OpId producer = -1;  // -1 for graph inputs and weights
  SourceLoc loc;

  int64_t numel() const { return shape_numel(shape); }
  int64_t bytes() const { return numel() * dtype_size(dtype); }
  int rank() const { return static_cast<int>(shape.size()); }
};

// [SECTION] Ops

enum class OpKind {
  // forward
  MatMul,      // C = op(A) @ op(B); op = transpose when the flag is set; batched over leading dims of A
  Conv2D,      // NCHW input [N,C,H,W], weight [K,C/groups,R,S] → [N,K,P,Q] (no bias: bias is an Add)
  Add,         // broadcasting, numpy rules
  Sub,         // broadcasting
  Mul,         // broadcasting
  ReLU,
  GELU,        // tanh approximation
  Sigmoid,
  Tanh,
  ReLU6,       // min(max(x, 0), 6): MobileNet's activation (ONNX Clip(0, 6))
  MaxPool2D,
  AvgPool2D,
  BatchNorm,   // inference form: inputs x [N,C,H,W], scale [C], shift [C], mean [C], var [C]
  LayerNorm,   // over the last dim; inputs x, gamma [D], beta [D]
  Softmax,     // along attrs.axis
  Reshape,     // Flatten is a Reshape; attrs.shape (-1 allowed once)
  Transpose,   // attrs.perm
  Concat,      // along attrs.axis
  Sum,         // reduce over attrs.axes (keepdim)
  Mean,        // reduce over attrs.axes (keepdim)
  CausalMask,  // x with every entry above the diagonal of its last two dims (column j > row i)
               // set to attrs.alpha: -inf before attention's softmax, 0 in its gradient
  // losses (scalar output)
  MSELoss,           // mean((pred - target)^2)
  CrossEntropyLoss,  // mean over rows of -log softmax(logits)[target]; target holds class indices
  // backward helpers (appear in training graphs)
  ReLUGrad,     // (dy, x) → dy * (x > 0)
  GELUGrad,     // (dy, x) → dy * gelu'(x)
  SigmoidGrad,  // (dy, y) → dy * y * (1 - y)
  TanhGrad,     // (dy, y) → dy * (1 - y^2)
  ReLU6Grad,    // (dy, x) → dy * (0 < x < 6)
  MaxPool2DGrad,  // (dy, x) → dx
  AvgPool2DGrad,  // (dy) with attrs + input shape → dx
  Conv2DGradInput,   // (dy, w) → dx   attrs as the forward conv, attrs.shape = dx shape
  Conv2DGradWeight,  // (x, dy) → dw   attrs as the forward conv, attrs.shape = dw shape
  SoftmaxGrad,  // (dy, y) → dx
  LayerNormGrad,     // (dy, x, gamma) → dx
  BatchNormGrad,     // (dy, scale, var) → dx  (inference-form BN is affine per channel)
  MSELossGrad,       // (pred, target) → dpred
  CrossEntropyLossGrad,  // (logits, target) → dlogits
  ReduceToShape,     // (dy) → sum over broadcast dims down to attrs.shape (gradient of broadcasting)
  Scale,             // x * attrs.alpha
  SGDUpdate,         // (w, dw) → w - attrs.alpha * dw
  // backward helpers added with autodiff (graph.cpp's cost table and eval.cpp cover them too)
  Slice,               // (x) → x[starts[d] : starts[d] + shape[d]] per dim d (gradient of Concat)
  BroadcastTo,         // (x) → x broadcast by numpy rules to attrs.shape (gradient of Sum / Mean)
  BatchNormScaleGrad,  // (dy, x, mean, var) → dscale [C] = sum over all but dim 1 of dy * x̂
  LayerNormGammaGrad,  // (dy, x) → dgamma [D] = sum over all but the last dim of dy * x̂
};
const char* op_kind_name(OpKind);  // "MatMul", "Conv2D", ...
bool is_elementwise(OpKind);       // same-shaped (or broadcast) map with no reduction
// The families the reference evaluator and shape inference are written in, one function each:
// GEMM-like (MatMul, the convolutions and their gradients), element-wise (is_elementwise),
// pooling and normalization, softmax and the losses, layout and reductions.
enum class OpFamily { Gemm, Elementwise, PoolNorm, SoftmaxLoss, LayoutReduce };
OpFamily op_family(OpKind);
bool is_backward(OpKind);

struct OpAttrs {
  // MatMul
  bool trans_a = false;
  bool trans_b = false;
  // Conv2D / pooling (2-D: [0] = height, [1] = width)
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
  // Softmax / Concat / LayerNorm
  int axis = -1;
  // Sum / Mean
  std::vector<int> axes;
  bool keepdim = false;
  // Reshape / Transpose / grads that need a target shape
  Shape shape;
  std::vector<int> perm;
  // Slice: first index taken in each dim (attrs.shape is the slice's shape)
  std::vector<int64_t> starts;
  // BatchNorm / LayerNorm
  double eps = 1e-5;
  // Scale / SGDUpdate (learning rate)
  double alpha = 1.0;
};

struct Op {
  OpKind kind;
  std::string name;  // unique within the graph, e.g. "conv1", "matmul0"
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;  // every op has exactly one output today
  OpAttrs attrs;
  SourceLoc loc;
  // For ops made by lowering a user's layer (Linear → MatMul + Add), the layer they came from.
  std::string origin;
};

// [SECTION] Costs
//
// FLOP convention: one multiply-add is 2 FLOPs; other arithmetic (add, max, compare, exp, ...)
// counts 1 FLOP per output element per operation as listed in graph.cpp's cost table.
// Minimum bytes: every input read once and every output written once, at their dtypes.
struct OpCost {
  int64_t flops = 0;
  int64_t bytes_read = 0;
  int64_t bytes_written = 0;
  int64_t bytes() const { return bytes_read + bytes_written; }
  double intensity() const { return bytes() ? double(flops) / double(bytes()) : 0.0; }  // FLOP/byte
};

// [SECTION] Graph

class Graph {
 public:
  TensorId add_tensor(Tensor t);  // fills strides from layout when empty; throws on a duplicate name
  // Infers the output shape/dtype, creates the output tensor (named `out_name`, or op name when
  // empty) and appends the op. Throws GraphError naming the op, the shapes and `op.loc`.
  TensorId add_op(Op op, const std::string& out_name = {}, Role out_role = Role::Activation);

  const std::vector<Tensor>& tensors() const { return m_tensors; }
  const std::vector<Op>& ops() const { return m_ops; }
  const Tensor& tensor(TensorId id) const { return m_tensors.at(static_cast<size_t>(id)); }
  // Names are indexed: change anything but a tensor's name through this.
  Tensor& tensor(TensorId id) { return m_tensors.at(static_cast<size_t>(id)); }
  const Op& op(OpId id) const { return m_ops.at(static_cast<size_t>(id)); }
  std::optional<TensorId> find_tensor(const std::string& name) const;  // O(1): a hash look-up
  std::optional<OpId> find_op(const std::string& name) const;
  std::vector<OpId> consumers(TensorId id) const;
  std::vector<TensorId> graph_inputs() const;   // Input and Weight tensors with no producer
  std::vector<TensorId> graph_outputs() const;  // produced tensors nobody consumes

  // A fresh name with the given stem ("matmul" → "matmul0", "matmul1", ...).
  std::string unique_op_name(const std::string& stem) const;
  std::string unique_tensor_name(const std::string& stem) const;

  OpCost op_cost(OpId id) const;
  OpCost total_cost() const;

 private:
  std::vector<Tensor> m_tensors;
  std::vector<Op> m_ops;
  // Every add checks that its names are new; scanning all earlier tensors for that made a model
  // of n declarations parse in O(n^2) (200,000 lines: minutes). Names are unique, so one index
  // entry per tensor and per op.
  std::unordered_map<std::string, TensorId> m_tensor_index;
  std::unordered_map<std::string, OpId> m_op_index;
  // Per stem, the suffix unique_*_name() tries first. Names are never removed, so every lower
  // suffix is taken; without it a training graph adding n "grad_add" ops probed O(n^2) names.
  // (Mutated by const calls: do not call unique_*_name() on one Graph from several threads.)
  mutable std::unordered_map<std::string, int> m_next_op_suffix, m_next_tensor_suffix;
};

// Shape inference alone (what add_op uses): the output shape of `op` for these input tensors.
// Throws GraphError that names the op kind, the input shapes and op.loc.
Shape infer_shape(const Op& op, const std::vector<const Tensor*>& inputs);

}  // namespace tilescope::graph

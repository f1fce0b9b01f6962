// The ONNX importer's inside, shared by onnx.cpp (values, names, patterns, the whole run) and
// onnx_ops.cpp (one function per ONNX operator). Private to sim/import: front ends use onnx.h.
#pragma once

#include "sim/graph/graph.h"
#include "sim/import/onnx.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tilescope::import::detail {

using graph::Shape;

// [SECTION] Values

// An ONNX value as the import knows it: a tensor of the model text (by its identifier), or a
// constant (an initializer or a Constant node's output) with its shape and, when stored in the
// file, its values.
struct Val {
  bool is_const = false;
  std::string ident;  // model-text name (tensors; constants once declared as weights)
  Shape shape;        // known for constants and inputs; tensors: after shape_of()
  bool shape_known = false;
  std::vector<double> data;  // constants whose values the file holds
  bool has_data = false;
  std::string dtype_word;  // "" (fp32), "fp16", "bf16", "int8"
  std::string onnx_name;
};

// A constant from a TensorProto: its shape, and its values when the file holds them inline.
Val const_from_tensor(const onnx::TensorProto& t);
const char* dtype_word(int elem_type);

// [SECTION] Text

// An ONNX name as a model-text identifier: "/features/features.0/Conv" →
// "features_features_0_conv", "0.weight" → "layer0_weight". Lower case, [a-z0-9_], not a name the
// language reserves.
std::string identifier(std::string_view name, std::string_view fallback);
// A number with the fewest digits that read back as the same value ("1e-05", "8.0").
std::string fmt_number(double v);
// "[1, 2, 3]", or "(1, 2)" with other brackets.
std::string fmt_ints(const std::vector<int64_t>& v, char open = '[', char close = ']');

// [SECTION] The importer

struct Unsupported {
  int index;
  std::string what;
};

// A recognised pattern of several nodes, emitted at its last node as one call:
// fn(inputs…, extra).
struct PatternCall {
  std::string fn;                   // "gelu", "layer_norm"
  std::vector<std::string> inputs;  // ONNX value names
  std::string extra;                // ", eps=1e-05" or ""
};

class Importer {
 public:
  Importer(const onnx::ModelProto& model, std::string source, const ImportOptions& options)
      : m_model(model), m_graph(model.graph()), m_source(std::move(source)), m_options(options) {}

  OnnxImport run();

 private:
  const onnx::ModelProto& m_model;
  const onnx::GraphProto& m_graph;
  std::string m_source;
  const ImportOptions& m_options;

  OnnxImport m_out;
  std::unordered_map<std::string, Val> m_vals;                      // by ONNX value name
  std::unordered_map<std::string, int> m_producer;                  // ONNX value → node index
  std::unordered_map<std::string, std::vector<int>> m_consumer_of;  // ONNX value → node indices
  std::set<std::string> m_idents;                                   // identifiers taken
  std::vector<std::string> m_header, m_decls, m_stmts;
  std::vector<Unsupported> m_unsupported;
  std::set<std::string> m_after_unsupported;       // values an unsupported node (or its users) made
  std::unordered_map<int, PatternCall> m_pattern;  // last node of a pattern → its call
  std::unordered_map<int, int> m_folded_into;      // pattern member → last node
  int m_node = -1;                                 // the node being translated

  [[noreturn]] void fail(const std::string& message) const {
    throw graph::GraphError(graph::SourceLoc{m_source, 0, 0}, message);
  }
  const onnx::NodeProto& node(int i) const { return m_graph.node(i); }
  std::string node_desc(int i) const;
  std::string fresh(std::string_view name, std::string_view fallback);
  std::string text_so_far() const;
  graph::Graph parse_text(const std::string& text, const std::string& what) const;

  // Attributes
  const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) const;
  int64_t attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt) const;
  double attr_float(const onnx::NodeProto& n, const char* name, double dflt) const;
  std::vector<int64_t> attr_ints(const onnx::NodeProto& n, const char* name) const;
  std::string attr_string(const onnx::NodeProto& n, const char* name, const std::string& d) const;

  // Values
  Val* val(const std::string& name);
  bool has_input(const onnx::NodeProto& n, int i) const {
    return i < n.input_size() && !n.input(i).empty();
  }
  Val& input(const onnx::NodeProto& n, int i);
  Val& value(const std::string& name);                   // any value, by ONNX name
  std::string operand(Val& v);                           // a tensor operand's identifier
  std::string operand(const onnx::NodeProto& n, int i);  // input i's
  void declare_weight(const Val& v);
  void check_constant(const Val& v, const onnx::TensorProto& t) const;
  std::optional<double> scalar(const onnx::NodeProto& n, int i);
  std::vector<int64_t> const_ints(const onnx::NodeProto& n, int i, const char* what);
  const Shape& shape_of(Val& v);
  int rank_of(Val& v) { return static_cast<int>(shape_of(v).size()); }

  // Emission
  void emit(const onnx::NodeProto& n, const std::string& expr, const std::string& out_value);
  void alias(const std::string& out_value, const std::string& in_value, const std::string& why);
  void unsupported(const std::string& what);
  void input_declarations();
  void check_outputs(const graph::Graph& g);
  void check_with_onnx_inference(const graph::Graph& g);

  // Patterns (onnx.cpp)
  int single_consumer(const std::string& value) const;
  bool is_const_near(const std::string& value, double target);
  void check_arity() const;
  void find_patterns();
  bool match_gelu(int erf);
  bool match_layer_norm(int reduce);

  // One node (onnx_ops.cpp): the dispatch, then one function per operator family.
  void translate(int i);
  using OpFn = void (Importer::*)(const onnx::NodeProto&, const std::string&);
  static const std::unordered_map<std::string, OpFn>& op_table();
  void op_pattern(const onnx::NodeProto& n, const std::string& out, const PatternCall& call);
  void op_unknown(const onnx::NodeProto& n);
  void op_constant(const onnx::NodeProto& n, const std::string& out);
  void op_identity(const onnx::NodeProto& n, const std::string& out);
  void op_activation(const onnx::NodeProto& n, const std::string& out);
  void op_gelu(const onnx::NodeProto& n, const std::string& out);
  void op_clip(const onnx::NodeProto& n, const std::string& out);
  void op_arith(const onnx::NodeProto& n, const std::string& out);
  void op_matmul(const onnx::NodeProto& n, const std::string& out);
  void op_gemm(const onnx::NodeProto& n, const std::string& out);
  void op_window(const onnx::NodeProto& n, const std::string& out);
  void op_global_pool(const onnx::NodeProto& n, const std::string& out);
  void op_batch_norm(const onnx::NodeProto& n, const std::string& out);
  void op_layer_norm(const onnx::NodeProto& n, const std::string& out);
  void op_softmax(const onnx::NodeProto& n, const std::string& out);
  void op_reduce(const onnx::NodeProto& n, const std::string& out);
  void op_flatten(const onnx::NodeProto& n, const std::string& out);
  void op_reshape(const onnx::NodeProto& n, const std::string& out);
  void op_transpose(const onnx::NodeProto& n, const std::string& out);
  void op_concat(const onnx::NodeProto& n, const std::string& out);
  void op_erf(const onnx::NodeProto& n, const std::string& out);
  void op_split(const onnx::NodeProto& n, const std::string& out);
};

}  // namespace tilescope::import::detail

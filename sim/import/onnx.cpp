// ONNX → model text. See onnx.h. The reading is in three passes over the file's nodes:
//   1. values: every initializer and Constant node is a constant; graph inputs are tensors;
//   2. patterns: the decomposed forms exporters write for GELU (Erf) and LayerNorm (ReduceMean …)
//      are found and their nodes marked, so each becomes one function call;
//   3. emission: one assignment per remaining node (or none: Identity, Dropout, constants),
//      with every node that has no tilescope op collected and reported together.
#include "sim/import/onnx.h"

#include "sim/graph/graph.h"
#include "sim/io/input.h"
#include "sim/lang/parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#ifdef TILESCOPE_HAVE_ONNX
#include "sim/import/onnx_importer.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>
#endif

namespace tilescope::import {

bool is_onnx_path(std::string_view path) {
  if (path.size() < 5) return false;
  std::string ext(path.substr(path.size() - 5));
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".onnx";
}

OnnxImport import_onnx_file(const std::string& path, const ImportOptions& options) {
  io::TextInput in = io::read_text_input(path, kMaxOnnxBytes, "an ONNX file");
  if (!in.ok) throw graph::GraphError(graph::SourceLoc{path, 0, 0}, in.error);
  return import_onnx(in.text, path, options);
}

#ifndef TILESCOPE_HAVE_ONNX

bool onnx_supported() {
  return false;
}

OnnxImport import_onnx(std::string_view, const std::string& source, const ImportOptions&) {
  throw graph::GraphError(graph::SourceLoc{source, 0, 0},
                          "this build of tilescope cannot read ONNX files: it was built without "
                          "libonnx (on Debian: apt-get install libonnx-dev libprotobuf-dev, then "
                          "rebuild)");
}

#else

bool onnx_supported() {
  return true;
}

namespace detail {

// [SECTION] Values

const char* dtype_word(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT16:
      return "fp16";
    case onnx::TensorProto::BFLOAT16:
      return "bf16";
    case onnx::TensorProto::INT8:
      return "int8";
    default:
      return "";
  }
}

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0) return (sign ? -1.f : 1.f) * std::ldexp(float(mant), -24);
  if (exp == 31) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  const uint32_t bits = sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// The values of a TensorProto the file holds inline; nullopt when they are external or of a type
// the import does not read (strings, complex).
std::optional<std::vector<double> > tensor_values(const onnx::TensorProto& t) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<double> out;
  const std::string& raw = t.raw_data();
  auto from_raw = [&](size_t width, auto convert) {
    if (raw.size() % width) return false;
    for (size_t i = 0; i < raw.size(); i += width) out.push_back(convert(raw.data() + i));
    return true;
  };
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (!raw.empty())
        return from_raw(4,
                        [](const char* p) {
                          float f;
                          std::memcpy(&f, p, 4);
                          return double(f);
                        })
                   ? std::optional(out)
                   : std::nullopt;
      for (float f : t.float_data()) out.push_back(f);
      return out;
    case onnx::TensorProto::DOUBLE:
      if (!raw.empty())
        return from_raw(8,
                        [](const char* p) {
                          double d;
                          std::memcpy(&d, p, 8);
                          return d;
                        })
                   ? std::optional(out)
                   : std::nullopt;
      for (double d : t.double_data()) out.push_back(d);
      return out;
    case onnx::TensorProto::FLOAT16:
      if (!raw.empty())
        return from_raw(2,
                        [](const char* p) {
                          uint16_t h;
                          std::memcpy(&h, p, 2);
                          return double(half_to_float(h));
                        })
                   ? std::optional(out)
                   : std::nullopt;
      for (int32_t h : t.int32_data()) out.push_back(half_to_float(uint16_t(h)));
      return out;
    case onnx::TensorProto::INT64:
      if (!raw.empty())
        return from_raw(8,
                        [](const char* p) {
                          int64_t v;
                          std::memcpy(&v, p, 8);
                          return double(v);
                        })
                   ? std::optional(out)
                   : std::nullopt;
      for (int64_t v : t.int64_data()) out.push_back(double(v));
      return out;
    case onnx::TensorProto::INT32:
      if (!raw.empty())
        return from_raw(4,
                        [](const char* p) {
                          int32_t v;
                          std::memcpy(&v, p, 4);
                          return double(v);
                        })
                   ? std::optional(out)
                   : std::nullopt;
      for (int32_t v : t.int32_data()) out.push_back(v);
      return out;
    default:
      return std::nullopt;
  }
}

Val const_from_tensor(const onnx::TensorProto& t) {
  Val v;
  v.is_const = true;
  v.onnx_name = t.name();
  for (int64_t d : t.dims()) v.shape.push_back(d);
  v.shape_known = true;
  v.dtype_word = dtype_word(t.data_type());
  if (auto d = tensor_values(t)) {
    v.data = std::move(*d);
    v.has_data = true;
  }
  return v;
}

// [SECTION] Names

// An ONNX name as a model-text identifier: "/features/features.0/Conv" →
// "features_features_0_conv", "0.weight" → "layer0_weight". Lower case, [a-z0-9_], not a name the
// language reserves.
std::string identifier(std::string_view name, std::string_view fallback) {
  std::string out;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.empty()) out = std::string(fallback);
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out = "layer" + out;
  static const std::set<std::string> kReserved = {
      "torch",      "nn",      "f",          "true",       "false",   "none",    "relu",
      "relu6",      "narrow",  "gelu",       "sigmoid",    "tanh",    "softmax", "layer_norm",
      "batch_norm", "conv2d",  "max_pool2d", "avg_pool2d", "flatten", "reshape", "view",
      "transpose",  "permute", "concat",     "cat",        "sum",     "mean",    "matmul",
      "mm",         "add",     "sub",        "mul",        "input",   "and",     "or",
      "not",        "in",      "is",         "if",         "else",    "for",     "while",
      "def",        "class",   "return",     "lambda",     "weight",  "fp32",    "fp16",
      "bf16",       "int8",    "nchw",       "nhwc",       "rowmajor"};
  if (kReserved.count(out)) out = "t_" + out;
  return out;
}

std::string fmt_number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    std::ostringstream s;
    s << static_cast<int64_t>(v) << ".0";
    return s.str();
  }
  // The fewest digits that read back as the same value: a float32 epsilon stored as
  // 9.99999975e-06 is written 1e-05.
  const bool is_float = double(float(v)) == v;
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    const double back = std::strtod(buf, nullptr);
    if (is_float ? float(back) == float(v) : back == v) break;
  }
  return buf;
}

std::string fmt_ints(const std::vector<int64_t>& v, char open, char close) {
  std::string s(1, open);
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + close;
}

// [SECTION] The importer's small parts

std::string Importer::node_desc(int i) const {
  const auto& n = node(i);
  return "node " + std::to_string(i) + (n.name().empty() ? "" : " '" + n.name() + "'") + " (" +
         n.op_type() + ")";
}

std::string Importer::fresh(std::string_view name, std::string_view fallback) {
  std::string base = identifier(name, fallback), id = base;
  for (int k = 2; m_idents.count(id); ++k) id = base + "_" + std::to_string(k);
  m_idents.insert(id);
  return id;
}

std::string Importer::text_so_far() const {
  std::string text;
  for (const auto* part : {&m_header, &m_decls, &m_stmts})
    for (const auto& l : *part) text += l + "\n";
  return text;
}

const onnx::AttributeProto* Importer::attr(const onnx::NodeProto& n, const char* name) const {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t Importer::attr_int(const onnx::NodeProto& n, const char* name, int64_t dflt) const {
  const auto* a = attr(n, name);
  return a ? a->i() : dflt;
}
double Importer::attr_float(const onnx::NodeProto& n, const char* name, double dflt) const {
  const auto* a = attr(n, name);
  return a ? a->f() : dflt;
}
std::vector<int64_t> Importer::attr_ints(const onnx::NodeProto& n, const char* name) const {
  const auto* a = attr(n, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}
std::string Importer::attr_string(const onnx::NodeProto& n, const char* name,
                                  const std::string& d) const {
  const auto* a = attr(n, name);
  return a ? a->s() : d;
}

Val* Importer::val(const std::string& name) {
  auto it = m_vals.find(name);
  return it == m_vals.end() ? nullptr : &it->second;
}

void Importer::unsupported(const std::string& what) {
  m_unsupported.push_back({m_node, what});
  for (const auto& out : node(m_node).output()) m_after_unsupported.insert(out);
}

// [SECTION] Values of the node being translated

Val& Importer::input(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) fail(node_desc(m_node) + ": input " + std::to_string(i) + " is missing");
  return value(n.input(i));
}

Val& Importer::value(const std::string& name) {
  Val* v = val(name);
  if (!v) {
    fail(node_desc(m_node) + ": input '" + name +
         "' is not produced by an earlier node, an initializer or a graph input (a cycle, or nodes "
         "out of the topological order the ONNX standard requires)");
  }
  return *v;
}

std::string Importer::operand(const onnx::NodeProto& n, int i) {
  Val& v = input(n, i);
  // An exporter's generated name ("onnx::MatMul_105", a Linear's weight transposed) says nothing
  // to a learner: such a weight is named after the layer that reads it ("/attn/q/MatMul" →
  // attn_q_weight; a Conv's input 2 → its bias).
  if (v.is_const && v.ident.empty() && v.onnx_name.rfind("onnx::", 0) == 0 && !n.name().empty()) {
    const std::string layer = n.name().substr(0, n.name().rfind('/'));
    const char* role = i == 1 ? "weight" : i == 2 && n.op_type() == "Conv" ? "bias" : "const";
    v.ident = fresh(layer + "/" + role, role);
    declare_weight(v);
  }
  return operand(v);
}

std::string Importer::operand(Val& v) {
  if (v.is_const && v.ident.empty()) {
    v.ident = fresh(v.onnx_name, "const");
    declare_weight(v);
  }
  return v.ident;
}

// A constant used as a tensor: declared as a weight (its shape; a scalar is [1]).
// A constant's dims against what tilescope holds and what the file holds: a tensor of 2^40
// elements or more, or dims the stored values do not fill, is a damaged or hostile file.
void Importer::check_constant(const Val& v, const onnx::TensorProto& t) const {
  int64_t n = 1;
  for (int64_t d : v.shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 40))
      fail("initializer '" + t.name() + "' claims dims " + graph::shape_to_string(v.shape) +
           ": more than 2^40 elements, or a negative size (the file is damaged)");
  }
  if (t.data_location() != onnx::TensorProto::EXTERNAL && v.has_data &&
      int64_t(v.data.size()) != n) {
    fail("initializer '" + t.name() + "' claims dims " + graph::shape_to_string(v.shape) + " (" +
         std::to_string(n) + " values) but holds " + std::to_string(v.data.size()) +
         " (the file is damaged or truncated)");
  }
}

void Importer::declare_weight(const Val& v) {
  for (int64_t d : v.shape)
    if (d < 1)
      fail(node_desc(m_node) + ": reads '" + v.onnx_name + "' of shape " +
           graph::shape_to_string(v.shape) + ", an empty tensor (tilescope's have an element)");
  const Shape s = v.shape.empty() ? Shape{1} : v.shape;
  std::string decl = v.ident + ": " + graph::shape_to_string(s) + " weight";
  if (!v.dtype_word.empty() && v.dtype_word != "int8") decl += " " + v.dtype_word;
  m_decls.push_back(decl + (v.onnx_name.empty() ? "" : "    # initializer '" + v.onnx_name + "'"));
}

std::optional<double> Importer::scalar(const onnx::NodeProto& n, int i) {
  if (!has_input(n, i)) return std::nullopt;
  Val* v = val(n.input(i));
  if (!v || !v->is_const || !v->has_data || v->data.size() != 1) return std::nullopt;
  return v->data[0];
}

std::vector<int64_t> Importer::const_ints(const onnx::NodeProto& n, int i, const char* what) {
  Val& v = input(n, i);
  if (!v.is_const || !v.has_data) {
    fail(node_desc(m_node) + ": its " + what + " ('" + n.input(i) +
         "') is computed while the model runs; tilescope needs it fixed in the file (export with "
         "static input shapes and constant folding: torch.onnx.export(..., "
         "do_constant_folding=True) without dynamic_axes)");
  }
  std::vector<int64_t> out;
  for (double d : v.data) {
    if (!(std::fabs(d) <= 9007199254740992.0) || d != std::floor(d))  // 2^53: exact in a double
      fail(node_desc(m_node) + ": its " + what + " holds " + fmt_number(d) +
           ", not a whole number tilescope can use");
    out.push_back(static_cast<int64_t>(d));
  }
  return out;
}

// The model text parsed, or a GraphError that says `what` does not hold together and why.
graph::Graph Importer::parse_text(const std::string& text, const std::string& what) const {
  try {
    return lang::parse_model(text, m_source + " (imported)");
  } catch (const graph::GraphError& e) {
    fail(what +
         " does not hold together (a shape the file gets wrong, which python3 -m "
         "onnx.checker would say too, or a tilescope bug to report with the file):\n" +
         e.what());
  }
}

// Shapes of tensors come from tilescope's own inference: the text so far is parsed and every
// tensor's shape read back (once per node that needs one: Flatten, Reshape, pooling …).
const Shape& Importer::shape_of(Val& v) {
  if (v.shape_known) return v.shape;
  const std::string text = text_so_far();
  const graph::Graph g = parse_text(text, node_desc(m_node) + ": the model made so far");
  for (auto& [name, other] : m_vals) {
    if (other.is_const || other.shape_known || other.ident.empty()) continue;
    if (auto id = g.find_tensor(other.ident)) {
      other.shape = g.tensor(*id).shape;
      other.shape_known = true;
    }
  }
  if (!v.shape_known) fail(node_desc(m_node) + ": no shape for '" + v.onnx_name + "'");
  return v.shape;
}

void Importer::emit(const onnx::NodeProto& n, const std::string& expr,
                    const std::string& out_value) {
  // A graph output keeps its ONNX name; other tensors are named after their node.
  bool is_output = false;
  for (const auto& o : m_graph.output()) is_output = is_output || o.name() == out_value;
  std::string ident =
      is_output ? fresh(out_value, "y") : fresh(n.name().empty() ? out_value : n.name(), "t");
  Val v;
  v.ident = ident;
  v.onnx_name = out_value;
  m_vals[out_value] = v;
  std::string line = ident + " = " + expr;
  std::string note = "# node " + std::to_string(m_node) +
                     (n.name().empty() ? "" : " '" + n.name() + "'") + " (" + n.op_type() + ")";
  if (m_pattern.count(m_node)) {
    int first = m_node;
    for (const auto& [member, last] : m_folded_into)
      if (last == m_node) first = std::min(first, member);
    note = "# nodes " + std::to_string(first) + "–" + std::to_string(m_node) + " (" +
           node(first).op_type() + " … " + n.op_type() + ")";
  }
  m_stmts.push_back(line + "    " + note);
  std::string& tensor = m_out.nodes[size_t(m_node)].tensor;
  tensor = tensor.empty() ? ident : tensor + ", " + ident;  // Split makes one per output
}

void Importer::alias(const std::string& out_value, const std::string& in_value,
                     const std::string& why) {
  Val* in = val(in_value);
  if (!in) fail(node_desc(m_node) + ": input '" + in_value + "' is unknown");
  m_vals[out_value] = *in;
  m_vals[out_value].onnx_name = out_value;
  m_out.nodes[size_t(m_node)].note = why;
}

// [SECTION] Patterns

int Importer::single_consumer(const std::string& value) const {
  auto it = m_consumer_of.find(value);
  if (it == m_consumer_of.end() || it->second.size() != 1) return -1;
  for (const auto& o : m_graph.output())
    if (o.name() == value) return -1;  // an output is seen outside the pattern
  return it->second[0];
}

bool Importer::is_const_near(const std::string& value, double target) {
  Val* v = val(value);
  return v && v->is_const && v->has_data && v->data.size() == 1 &&
         std::fabs(v->data[0] - target) <= 1e-3 * std::fabs(target);
}

// gelu(x) = 0.5 · x · (1 + erf(x / √2)), as exporters write it:
//   Div(x, √2) | Mul(x, 1/√2) → Erf → Add(·, 1) → Mul(x, ·) → Mul(·, 0.5)   (either Mul first)
bool Importer::match_gelu(int erf) {
  const auto& e = node(erf);
  auto pit = m_producer.find(e.input(0));
  if (pit == m_producer.end()) return false;
  const int scale = pit->second;
  const auto& s = node(scale);
  if (s.input_size() != 2 || single_consumer(s.output(0)) != erf) return false;
  const bool div = s.op_type() == "Div" && is_const_near(s.input(1), std::sqrt(2.0));
  const bool mul = s.op_type() == "Mul" && is_const_near(s.input(1), std::sqrt(0.5));
  if (!div && !mul) return false;
  const std::string x = s.input(0);
  const int add = single_consumer(e.output(0));
  if (add < 0 || node(add).op_type() != "Add") return false;
  const auto& a = node(add);
  const std::string one = a.input(0) == e.output(0) ? a.input(1) : a.input(0);
  if (!is_const_near(one, 1.0)) return false;
  // Two Muls follow: one by x, one by 0.5, in either order.
  const int m1 = single_consumer(a.output(0));
  if (m1 < 0 || node(m1).op_type() != "Mul") return false;
  auto other = [&](int m, const std::string& in) {
    const auto& mn = node(m);
    return mn.input(0) == in ? mn.input(1) : mn.input(0);
  };
  const std::string o1 = other(m1, a.output(0));
  const int m2 = single_consumer(node(m1).output(0));
  if (m2 < 0 || node(m2).op_type() != "Mul") return false;
  const std::string o2 = other(m2, node(m1).output(0));
  if (!((o1 == x && is_const_near(o2, 0.5)) || (is_const_near(o1, 0.5) && o2 == x))) return false;
  for (int member : {scale, erf, add, m1}) m_folded_into[member] = m2;
  m_pattern[m2] = {"gelu", {x}, ""};
  return true;
}

// layer_norm(x, γ, β) over the last dim, as exporters before LayerNormalization (opset 17) write
// it:
//   ReduceMean(x) → Sub(x, ·) → Pow(·, 2) → ReduceMean → Add(·, ε) → Sqrt → Div(sub, ·) → Mul(·, γ)
//   → Add(·, β)
bool Importer::match_layer_norm(int r1) {
  const auto& mean = node(r1);
  const std::string x = mean.input(0);
  auto last_axis_only = [&](const onnx::NodeProto& r) {
    std::vector<int64_t> axes = attr_ints(r, "axes");
    if (axes.empty() && r.input_size() > 1) {  // opset 18: axes as an input
      Val* v = val(r.input(1));
      if (!v || !v->has_data) return false;
      for (double d : v->data) axes.push_back(int64_t(d));
    }
    return axes.size() == 1 && axes[0] == -1 && attr_int(r, "keepdims", 1) == 1;
  };
  if (!last_axis_only(mean)) return false;
  auto it = m_consumer_of.find(mean.output(0));
  if (it == m_consumer_of.end() || it->second.size() != 1) return false;
  const int sub = it->second[0];
  if (node(sub).op_type() != "Sub" || node(sub).input(0) != x) return false;
  auto subs = m_consumer_of.find(node(sub).output(0));
  if (subs == m_consumer_of.end() || subs->second.size() != 2) return false;
  int pow = -1, div = -1;
  for (int c : subs->second) {
    if (node(c).op_type() == "Pow") pow = c;
    if (node(c).op_type() == "Div") div = c;
  }
  if (pow < 0 || div < 0 || !is_const_near(node(pow).input(1), 2.0)) return false;
  const int r2 = single_consumer(node(pow).output(0));
  if (r2 < 0 || node(r2).op_type() != "ReduceMean" || !last_axis_only(node(r2))) return false;
  const int add = single_consumer(node(r2).output(0));
  if (add < 0 || node(add).op_type() != "Add") return false;
  Val* eps = val(node(add).input(1));
  if (!eps || !eps->is_const || !eps->has_data || eps->data.size() != 1) return false;
  const int sqrt = single_consumer(node(add).output(0));
  if (sqrt < 0 || node(sqrt).op_type() != "Sqrt" || single_consumer(node(sqrt).output(0)) != div)
    return false;
  if (node(div).input(0) != node(sub).output(0)) return false;
  const int mul = single_consumer(node(div).output(0));
  if (mul < 0 || node(mul).op_type() != "Mul") return false;
  const int badd = single_consumer(node(mul).output(0));
  if (badd < 0 || node(badd).op_type() != "Add") return false;
  for (int member : {r1, sub, pow, r2, add, sqrt, div, mul}) m_folded_into[member] = badd;
  const std::string gamma =
      node(mul).input(0) == node(div).output(0) ? node(mul).input(1) : node(mul).input(0);
  const std::string beta =
      node(badd).input(0) == node(mul).output(0) ? node(badd).input(1) : node(badd).input(0);
  m_pattern[badd] = {"layer_norm", {x, gamma, beta}, ", eps=" + fmt_number(eps->data[0])};
  return true;
}

// Every node has an output and the inputs its operator takes, before anything reads them (the
// patterns look at inputs 0 and 1 of the nodes they test).
void Importer::check_arity() const {
  static const std::map<std::string, int> kInputs = {{"Add", 2},
                                                     {"Sub", 2},
                                                     {"Mul", 2},
                                                     {"Div", 2},
                                                     {"Pow", 2},
                                                     {"MatMul", 2},
                                                     {"Gemm", 2},
                                                     {"Conv", 2},
                                                     {"Reshape", 2},
                                                     {"BatchNormalization", 5},
                                                     {"LayerNormalization", 2}};
  for (int i = 0; i < m_graph.node_size(); ++i) {
    const auto& n = node(i);
    if (n.output_size() < 1 || n.output(0).empty()) fail(node_desc(i) + ": has no output");
    if (n.op_type() == "Constant") continue;
    auto it = kInputs.find(n.op_type());
    // The operators read take at least one input; others are listed as unsupported later.
    const bool read = op_table().count(n.op_type()) || n.op_type() == "Sqrt";
    const int need = it != kInputs.end() ? it->second : read ? 1 : 0;
    int have = 0;
    while (have < n.input_size() && !n.input(have).empty()) ++have;
    if (have < need)
      fail(node_desc(i) + ": has " + std::to_string(have) + " input" + (have == 1 ? "" : "s") +
           "; " + n.op_type() + " takes " + std::to_string(need));
  }
}

void Importer::find_patterns() {
  for (int i = 0; i < m_graph.node_size(); ++i) {
    for (const auto& in : node(i).input())
      if (!in.empty()) m_consumer_of[in].push_back(i);
    for (const auto& out : node(i).output())
      if (!out.empty()) m_producer[out] = i;
  }
  // Constant nodes' values first: the patterns test them (√2, 1, 0.5, ε) before translation.
  for (int i = 0; i < m_graph.node_size(); ++i) {
    if (node(i).op_type() != "Constant" || node(i).output_size() != 1) continue;
    m_node = i;
    op_constant(node(i), node(i).output(0));
  }
  m_unsupported.clear();  // translation reports them again, in node order
  m_after_unsupported.clear();
  for (int i = 0; i < m_graph.node_size(); ++i) {
    if (m_folded_into.count(i)) continue;
    if (node(i).op_type() == "Erf") match_gelu(i);
    if (node(i).op_type() == "ReduceMean") match_layer_norm(i);
  }
}

// [SECTION] The whole file

// The graph's inputs that are not initializers: declarations with their shapes (a dynamic
// dimension as the options say, or 1) and dtypes.
void Importer::input_declarations() {
  for (const auto& in : m_graph.input()) {
    if (m_vals.count(in.name())) continue;
    const auto& type = in.type();
    if (!type.has_tensor_type()) fail("input '" + in.name() + "' is not a tensor");
    Val v;
    v.onnx_name = in.name();
    v.dtype_word = dtype_word(type.tensor_type().elem_type());
    if (!type.tensor_type().has_shape()) fail("input '" + in.name() + "' has no shape in the file");
    for (const auto& d : type.tensor_type().shape().dim()) {
      if (d.has_dim_value() && d.dim_value() > 0) {
        v.shape.push_back(d.dim_value());
        continue;
      }
      const std::string name = d.has_dim_param() ? d.dim_param() : "";
      auto it = m_options.dims.find(name);
      const int64_t value = it != m_options.dims.end() ? it->second : 1;
      v.shape.push_back(value);
      m_header.push_back("# Input '" + in.name() + "' has a dynamic dimension" +
                         (name.empty() ? "" : " '" + name + "'") + ": " + std::to_string(value) +
                         (it != m_options.dims.end()
                              ? " (as asked)"
                              : " here (tilescope-cli import --dim " +
                                    (name.empty() ? "NAME" : name) + "=N sets it)"));
    }
    v.shape_known = true;
    v.ident = fresh(in.name(), "x");
    m_vals[in.name()] = v;
    std::string decl = v.ident + ": " + graph::shape_to_string(v.shape);
    if (!v.dtype_word.empty()) decl += " " + v.dtype_word;
    m_decls.push_back(decl);
  }
}

// Each output's model-text name, and its shape as tilescope infers it against the file's.
void Importer::check_outputs(const graph::Graph& g) {
  for (const auto& o : m_graph.output()) {
    Val* v = val(o.name());
    if (!v || v->ident.empty()) fail("output '" + o.name() + "' is computed by no node");
    m_out.outputs.push_back(v->ident);
    auto id = g.find_tensor(v->ident);
    if (!id || !o.type().has_tensor_type() || !o.type().tensor_type().has_shape()) continue;
    Shape declared;
    bool static_shape = true;
    for (const auto& d : o.type().tensor_type().shape().dim()) {
      static_shape = static_shape && d.has_dim_value();
      declared.push_back(d.dim_value());
    }
    if (static_shape && declared != g.tensor(*id).shape) {
      fail("output '" + o.name() + "': tilescope computes " +
           graph::shape_to_string(g.tensor(*id).shape) + " where the file declares " +
           graph::shape_to_string(declared));
    }
  }
}

// ONNX's shape inference on a copy of the file whose inputs have the shapes the import gave them
// (a dynamic dimension as chosen): every value it gives a static shape that tilescope computes as
// an op's output must have that shape. Weights and constants are not compared (a scalar is [1]
// in the model language, [] in ONNX).
void Importer::check_with_onnx_inference(const graph::Graph& g) {
  onnx::ModelProto copy = m_model;
  onnx::GraphProto* cg = copy.mutable_graph();
  cg->clear_value_info();
  for (auto& in : *cg->mutable_input()) {
    const Val* v = val(in.name());
    if (!v || v->is_const || !in.type().has_tensor_type()) continue;
    onnx::TensorShapeProto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : v->shape) shape->add_dim()->set_dim_value(d);
  }
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& e) {
    m_out.shape_check =
        "ONNX's shape inference could not run on the file: " + io::printable(e.what(), 200);
    return;
  }
  std::vector<std::string> disagree;
  std::set<std::string> compared;
  auto compare = [&](const onnx::ValueInfoProto& info) {
    const Val* v = val(info.name());
    if (!v || v->ident.empty() || !info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    const auto id = g.find_tensor(v->ident);
    if (!id || g.tensor(*id).producer < 0) return;
    Shape inferred;
    for (const auto& d : info.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;  // symbolic: nothing to compare
      inferred.push_back(d.dim_value());
    }
    if (!compared.insert(info.name()).second) return;
    ++m_out.shapes_checked;
    if (inferred != g.tensor(*id).shape)
      disagree.push_back("'" + info.name() + "' (" + v->ident + "): ONNX infers " +
                         graph::shape_to_string(inferred) + ", tilescope computes " +
                         graph::shape_to_string(g.tensor(*id).shape));
  };
  for (const auto& info : copy.graph().value_info()) compare(info);
  for (const auto& info : copy.graph().output()) compare(info);
  if (!disagree.empty()) {
    std::string msg = "tilescope's shapes disagree with ONNX's shape inference for " +
                      std::to_string(disagree.size()) + " value" +
                      (disagree.size() == 1 ? "" : "s") + ":";
    for (size_t i = 0; i < disagree.size() && i < 12; ++i) msg += "\n  " + disagree[i];
    fail(msg);
  }
  // Values tilescope computes that ONNX gave no static shape (an operator newer than the ONNX
  // library's opsets, a symbolic dimension): said, not hidden.
  int unknown = 0;
  for (const auto& n : m_graph.node())
    for (const auto& out : n.output()) {
      const Val* v = val(out);
      const auto id = v && !v->ident.empty() ? g.find_tensor(v->ident) : std::nullopt;
      if (id && g.tensor(*id).producer >= 0 && !compared.count(out)) ++unknown;
    }
  m_out.shape_check = "the shapes of " + std::to_string(m_out.shapes_checked) +
                      " values agree with ONNX's shape inference";
  if (unknown > 0)
    m_out.shape_check +=
        " (" + std::to_string(unknown) + " more it gave no static shape" +
        (m_out.opset > onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second
             ? ": opset " + std::to_string(m_out.opset) + " is newer than this ONNX library's"
             : std::string()) +
        ")";
}

OnnxImport Importer::run() {
  // The opset of the default domain.
  for (const auto& o : m_model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m_out.opset = o.version();
  if (m_out.opset == 0) fail("the file imports no opset of the standard ONNX domain");
  if (m_out.opset < kMinOpset || m_out.opset > kMaxOpset) {
    fail("opset " + std::to_string(m_out.opset) + ": tilescope reads opsets " +
         std::to_string(kMinOpset) + "–" + std::to_string(kMaxOpset) +
         " (re-export with torch.onnx.export(..., opset_version=17))");
  }
  if (!m_model.producer_name().empty())
    m_out.producer = m_model.producer_name() +
                     (m_model.producer_version().empty() ? "" : " " + m_model.producer_version());
  m_header.push_back("# Imported from " + m_source + " (opset " + std::to_string(m_out.opset) +
                     (m_out.producer.empty() ? "" : ", made by " + m_out.producer) +
                     ") by tilescope-cli import.");
  m_header.push_back("# Each line names the ONNX node it comes from; weights keep their shapes.");

  for (const auto& init : m_graph.initializer()) {
    Val v = const_from_tensor(init);
    check_constant(v, init);
    m_vals[init.name()] = std::move(v);
  }
  input_declarations();
  m_out.nodes.resize(size_t(m_graph.node_size()));
  for (int i = 0; i < m_graph.node_size(); ++i) {
    m_out.nodes[size_t(i)].index = i;
    m_out.nodes[size_t(i)].name = node(i).name();
    m_out.nodes[size_t(i)].op_type = node(i).op_type();
  }
  check_arity();
  find_patterns();
  for (int i = 0; i < m_graph.node_size(); ++i) translate(i);

  if (!m_unsupported.empty()) {
    std::string msg = std::to_string(m_unsupported.size()) + " of the file's " +
                      std::to_string(m_graph.node_size()) +
                      " ONNX nodes have no tilescope op, so nothing was imported:";
    for (const auto& u : m_unsupported) msg += "\n  " + node_desc(u.index) + ": " + u.what;
    fail(msg);
  }
  if (m_stmts.empty()) fail("the graph computes nothing (no node has a tilescope op)");

  std::string text = text_so_far();
  // The whole text must parse, and the outputs must have the shapes the file declares.
  const graph::Graph g = parse_text(text, "the imported model");
  check_outputs(g);
  check_with_onnx_inference(g);
  m_out.text = std::move(text);
  return m_out;
}

}  // namespace detail

OnnxImport import_onnx(std::string_view bytes, const std::string& source,
                       const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > kMaxOnnxBytes || !model.ParseFromArray(bytes.data(), int(bytes.size()))) {
    throw graph::GraphError(graph::SourceLoc{source, 0, 0},
                            "not an ONNX model: the file does not decode as an ONNX ModelProto "
                            "(truncated, or not protobuf)");
  }
  if (!model.has_graph() || model.graph().node_size() == 0) {
    throw graph::GraphError(graph::SourceLoc{source, 0, 0}, "the ONNX model has no graph nodes");
  }
  return detail::Importer(model, source, options).run();
}

#endif  // TILESCOPE_HAVE_ONNX

}  // namespace tilescope::import

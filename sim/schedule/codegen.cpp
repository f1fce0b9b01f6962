// One tree walker, three dialects: pseudo-code for the learner, C++ for the CPU JIT, CUDA C++ for
// NVRTC. Sharing the walker is what makes "the same schedule" literal across the three.
//
// Index: [SECTION] Names  [SECTION] Expressions  [SECTION] Nodes  [SECTION] Entry points
#include "sim/schedule/codegen.h"

#include "sim/schedule/loop_tree.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace tilescope::schedule {

namespace {

enum class Dialect { Pseudo, Cpp, Cuda };

std::string literal(double v, Dialect d) {
  if (std::isinf(v)) {
    if (d == Dialect::Pseudo) return v < 0 ? "-inf" : "inf";
    if (d == Dialect::Cpp) return v < 0 ? "-INFINITY" : "INFINITY";
    return v < 0 ? "__int_as_float(0xff800000)" : "__int_as_float(0x7f800000)";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (d == Dialect::Pseudo) return s;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s + "f";
}

std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 < s.size()) return s;
  }
  return s.substr(1, s.size() - 2);
}

// Names a tensor may not take in generated C++ or CUDA: the languages' keywords and alternative
// tokens, the generated code's own names, and the macros its headers (<cmath>, <cstdint>,
// <algorithm>, NVRTC's built-ins) or the compiler define in lower case. A model's tensor named
// INFINITY or NAN made a legal model's kernel fail to compile (issue #25).
bool is_keyword(const std::string& s) {
  static const std::set<std::string> kw = {
      // C++20 keywords and alternative tokens
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
      "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
      "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
      "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
      "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
      "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq", "restrict",
      // names the generated code uses
      "args", "std", "int64_t", "min", "max", "dim3", "threadIdx", "blockIdx", "blockDim",
      "gridDim", "warpSize", "acc", "half", "nv_bfloat16",
      // lower-case macros of the headers and the compiler
      "assert", "errno", "stdin", "stdout", "stderr", "offsetof", "math_errhandling", "isnan",
      "isinf", "isfinite", "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal",
      "isless", "islessequal", "islessgreater", "isunordered", "setjmp", "linux", "unix", "i386"};
  return kw.count(s) > 0;
}

// A name in capitals, as macros are written (INFINITY, NAN, M_PI, INT64_MAX, EOF, FP_NAN), but
// not one capital and digits (W, A, W1, B2 are a model's everyday tensors and no header's macro).
bool looks_like_macro(const std::string& s) {
  bool letter = false;
  for (const char c : s) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    letter = letter || std::isupper(static_cast<unsigned char>(c));
  }
  if (!letter) return false;
  return !(std::isupper(static_cast<unsigned char>(s[0])) &&
           std::all_of(s.begin() + 1, s.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }));
}

std::string sanitize(const std::string& name) {
  std::string s;
  for (char c : name) {
    const char out = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    // "__" anywhere and "_X" in front are reserved for the implementation (its macros among
    // them): runs of underscores become one, and a leading one gets a letter in front.
    if (out == '_' && !s.empty() && s.back() == '_') continue;
    s += out;
  }
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    s = "t_" + s;
  else if (s[0] == '_')
    s = "t" + s;
  if (looks_like_macro(s)) s += "_";
  return s;
}

class Writer {
 public:
  Writer(const Kernel& k, Dialect d)
      : m_lk(build_loop_tree(k)),
        m_k(m_lk.kernel),
        m_d(d),
        // 32-bit indices on the GPU (64-bit integer math is slow there); tensors stay < 2^31
        // elements.
        m_itype(d == Dialect::Cuda ? "int" : "int64_t") {
    std::set<std::string> used;
    for (const auto& l : m_k.loops) used.insert(c_ident(l.name));
    m_acc_single = m_k.num_accs == 1;
    for (int a = 0; a < m_k.num_accs; ++a) used.insert(acc_name(a));
    for (const auto& s : m_k.stages) used.insert(c_ident(s.buffer));
    for (const auto& t : m_k.tensors) {
      std::string n = d == Dialect::Pseudo ? t.name : sanitize(t.name);
      if (d != Dialect::Pseudo) {
        // ts_ names belong to the generated code (ts_kernel, ts_tid, ...); appending would keep
        // the prefix forever, so a model's ts_x becomes t_ts_x, which no longer starts with it.
        if (n.rfind("ts_", 0) == 0) n = "t_" + n;
        while (used.count(n) || is_keyword(n)) n += "_";
      }
      used.insert(n);
      m_tensor_ident.push_back(n);
    }
    m_drop_thread = [this](int l) {
      return m_d == Dialect::Cuda && is_thread(m_k.loops[size_t(l)].kind);
    };
    m_acc_elems = m_lk.acc_elems(m_drop_thread);
    m_acc_index = m_lk.acc_index(m_drop_thread);
    // The C++ follows accumulator_home(), as the trace does: a small tile becomes scalars (its
    // loops unrolled in the source so each reference names one), a larger one a stack array.
    const AccumulatorHome home = accumulator_home(m_k, false);
    m_acc_scalars = d == Dialect::Cpp && home.registers && m_acc_elems > 1;
    m_acc_registers_cpu = home.registers;
  }

  std::string run() {
    header();
    body(m_lk.body, m_d == Dialect::Pseudo ? 0 : 1);
    if (m_d != Dialect::Pseudo) line(0, "}");
    return m_out.str();
  }

 private:
  // [SECTION] Names

  std::string acc_name(int a) const { return m_acc_single ? "acc" : "acc" + std::to_string(a); }
  std::string ident(const std::string& loop) const {
    return m_d == Dialect::Pseudo ? loop : c_ident(loop);
  }
  std::string code(const Affine& a) const {
    return a.to_code([this](const std::string& n) { return ident(n); });
  }
  void line(int indent, const std::string& s) {
    m_out << std::string(size_t(indent) * 2, ' ') << s << "\n";
  }
  const graph::Shape& shape_of(int tensor, bool computed) const {
    return computed ? m_k.computed[size_t(tensor)].shape : m_k.tensors[size_t(tensor)].shape;
  }
  std::string name_of(int tensor, bool computed) const {
    return computed ? m_k.computed[size_t(tensor)].name : m_tensor_ident[size_t(tensor)];
  }

  // [SECTION] Expressions

  std::string bounds_condition(const std::vector<Affine>& idx, const std::vector<bool>& check,
                               const graph::Shape& shape) const {
    std::string c;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (d < check.size() && !check[d]) continue;
      auto [lo, hi] = loop_range(m_k, idx[d]);
      const std::string e = code(idx[d]);
      auto add = [&](const std::string& s) { c += (c.empty() ? "" : " && ") + s; };
      if (lo < 0) add(e + " >= 0");
      if (hi >= shape[d]) add(e + " < " + std::to_string(shape[d]));
    }
    return c;
  }

  std::string load(const VExpr& e) const {
    const graph::Shape& shape = shape_of(e.tensor, e.computed);
    std::string ref;
    if (m_d == Dialect::Pseudo) {
      std::vector<std::string> parts;
      const auto& idx = e.stage >= 0 ? e.buffer_index : e.index;
      for (const auto& i : idx) parts.push_back(code(i));
      std::string joined;
      for (size_t i = 0; i < parts.size(); ++i) joined += (i ? ", " : "") + parts[i];
      ref = (e.stage >= 0 ? m_lk.stages[size_t(e.stage)].buffer : name_of(e.tensor, e.computed)) +
            "[" + joined + "]";
    } else if (e.stage >= 0) {
      const StagePlacement& pl = m_lk.stages[size_t(e.stage)];
      Affine off;
      for (size_t d = 0; d < e.buffer_index.size(); ++d) off += e.buffer_index[d] * pl.strides[d];
      ref = c_ident(pl.buffer) + "[" + code(off) + "]";
    } else {
      const KernelTensor& t = m_k.tensors[size_t(e.tensor)];
      Affine off;
      for (size_t d = 0; d < e.index.size(); ++d) off += e.index[d] * t.strides[d];
      ref = m_tensor_ident[size_t(e.tensor)] + "[" + code(off) + "]";
    }
    const std::string cond = bounds_condition(e.index, e.check_dims, shape);
    if (cond.empty()) return ref;
    if (m_d == Dialect::Pseudo)
      return "(" + ref + " if " + cond + " else " + literal(e.pad_value, m_d) + ")";
    return "(" + cond + " ? " + ref + " : " + literal(e.pad_value, m_d) + ")";
  }

  std::string acc_ref(int slot) const {
    if (m_d == Dialect::Pseudo) {
      std::string idx;
      for (int l : m_lk.acc_loops) idx += (idx.empty() ? "" : ", ") + m_k.loops[size_t(l)].name;
      return acc_name(slot) + (idx.empty() ? "" : "[" + idx + "]");
    }
    if (m_acc_elems == 1) return acc_name(slot);
    if (m_acc_scalars) {
      int64_t idx = m_acc_index.constant;
      for (const auto& [name, c] : m_acc_index.terms) idx += c * m_unrolled.at(name);
      return acc_name(slot) + "_" + std::to_string(idx);
    }
    return acc_name(slot) + "[" + code(m_acc_index) + "]";
  }

  std::string unary(UnaryOp op, const std::string& a) {
    const bool cuda = m_d == Dialect::Cuda;
    if (m_d == Dialect::Pseudo) return std::string(unary_name(op)) + "(" + strip_parens(a) + ")";
    switch (op) {
      case UnaryOp::Neg:
        return "(-" + a + ")";
      case UnaryOp::ReLU:
        return (cuda ? "fmaxf(" : "std::max(") + strip_parens(a) + ", 0.0f)";
      case UnaryOp::GELU:
        m_helpers.insert("gelu");
        return "ts_gelu(" + strip_parens(a) + ")";
      case UnaryOp::Sigmoid:
        m_helpers.insert("sigmoid");
        return "ts_sigmoid(" + strip_parens(a) + ")";
      case UnaryOp::Tanh:
        return (cuda ? "tanhf(" : "std::tanh(") + strip_parens(a) + ")";
      case UnaryOp::Exp:
        return (cuda ? "expf(" : "std::exp(") + strip_parens(a) + ")";
      case UnaryOp::Log:
        return (cuda ? "logf(" : "std::log(") + strip_parens(a) + ")";
      case UnaryOp::Sqrt:
        return (cuda ? "sqrtf(" : "std::sqrt(") + strip_parens(a) + ")";
      case UnaryOp::Rsqrt:
        return cuda ? "rsqrtf(" + strip_parens(a) + ")"
                    : "(1.0f / std::sqrt(" + strip_parens(a) + "))";
      case UnaryOp::Square:
        m_helpers.insert("square");
        return "ts_square(" + strip_parens(a) + ")";
    }
    return a;
  }

  std::string binary(BinaryOp op, const std::string& a, const std::string& b) const {
    const bool cuda = m_d == Dialect::Cuda;
    switch (op) {
      case BinaryOp::Add:
        return "(" + a + " + " + b + ")";
      case BinaryOp::Sub:
        return "(" + a + " - " + b + ")";
      case BinaryOp::Mul:
        return "(" + a + " * " + b + ")";
      case BinaryOp::Div:
        return "(" + a + " / " + b + ")";
      case BinaryOp::Max:
        return std::string(m_d == Dialect::Pseudo ? "max("
                           : cuda                 ? "fmaxf("
                                                  : "std::max(") +
               strip_parens(a) + ", " + strip_parens(b) + ")";
      case BinaryOp::Min:
        return std::string(m_d == Dialect::Pseudo ? "min("
                           : cuda                 ? "fminf("
                                                  : "std::min(") +
               strip_parens(a) + ", " + strip_parens(b) + ")";
      case BinaryOp::ReluMask:
        if (m_d == Dialect::Pseudo) return "(" + a + " if " + strip_parens(b) + " > 0 else 0)";
        return "(" + strip_parens(b) + " > 0.0f ? " + strip_parens(a) + " : 0.0f)";
      case BinaryOp::FillAbove:  // fill_above() prints it: the fill is not an operand
        break;
    }
    return a;
  }

  // A causal mask: `above` is an integer expression of the indices (column minus row).
  std::string fill_above(const std::string& a, const std::string& above, double fill) const {
    const std::string f = literal(fill, m_d);
    if (m_d == Dialect::Pseudo)
      return "(" + f + " if " + above + " > 0 else " + strip_parens(a) + ")";
    return "(" + above + " > 0 ? " + f + " : " + strip_parens(a) + ")";
  }

  std::string expr(const VExpr& e) {
    switch (e.kind) {
      case VExpr::Kind::Const:
        return literal(e.value, m_d);
      case VExpr::Kind::Acc:
        return acc_ref(e.acc);
      case VExpr::Kind::Load:
        return load(e);
      case VExpr::Kind::Unary:
        return unary(e.uop, expr(e.args[0]));
      case VExpr::Kind::Binary:
        if (e.bop == BinaryOp::FillAbove)
          return fill_above(expr(e.args[0]), expr(e.args[1]), e.value);
        return binary(e.bop, expr(e.args[0]), expr(e.args[1]));
      case VExpr::Kind::Index:
        return "(" + code(e.index[0]) + ")";
    }
    return "";
  }

  // [SECTION] Nodes

  void header() {
    if (m_d == Dialect::Pseudo) {
      std::string ops;
      for (size_t i = 0; i < m_k.op_names.size(); ++i) ops += (i ? " → " : "") + m_k.op_names[i];
      line(0, "kernel " + m_k.name + "   # " + m_k.summary);
      for (size_t i = 0; i < m_k.tensors.size(); ++i) {
        const auto& t = m_k.tensors[i];
        std::string strides;
        for (size_t d = 0; d < t.strides.size(); ++d)
          strides += (d ? ", " : "") + std::to_string(t.strides[d]);
        line(0, std::string("#   ") + (t.role == TensorRole::Input ? "in  " : "out ") + t.name +
                    graph::shape_to_string(t.shape) + " " + graph::dtype_name(t.dtype) +
                    ", strides [" + strides + "]" +
                    (t.id < 0 ? "  (scratch, made by a transform)" : ""));
      }
      for (const auto& c : m_k.computed)
        line(0, "#   computed " + c.name + graph::shape_to_string(c.shape) + " = " + c.op_name +
                    "(...), recomputed where it is read");
      return;
    }
    const bool cuda = m_d == Dialect::Cuda;
    line(0, std::string("// tilescope: generated ") + (cuda ? "CUDA C++" : "C++") +
                " for kernel '" + m_k.name + "' (" + m_k.summary + ")");
    std::string order;
    for (const auto& l : m_k.loops)
      order += (order.empty() ? "" : " ") + l.name + "(" + std::to_string(l.extent) +
               (l.kind == LoopKind::Serial ? "" : std::string(",") + loop_kind_name(l.kind)) + ")";
    line(0, "// loops, outermost first: " + order);
    for (size_t i = 0; i < m_k.tensors.size(); ++i) {
      const auto& t = m_k.tensors[i];
      std::string strides;
      for (size_t d = 0; d < t.strides.size(); ++d)
        strides += (d ? ", " : "") + std::to_string(t.strides[d]);
      line(0, "// arg " + std::to_string(i) + ": " + t.name + " " +
                  graph::shape_to_string(t.shape) + " fp32, strides [" + strides + "]" +
                  (t.role == TensorRole::Input ? " (input)" : " (output)") +
                  (t.dtype == graph::DType::F32
                       ? std::string()
                       : std::string("; ") + graph::dtype_name(t.dtype) +
                             " in the model: this code holds it as fp32 (" +
                             std::to_string(4 / graph::dtype_size(t.dtype)) +
                             "× the bytes the schedule's simulation counts)"));
    }
    // Helpers are only known after the body is rendered: the comment block waits in a side buffer.
    m_pending_header << m_out.str();
    m_out.str("");
    m_out.clear();
    if (cuda) {
      m_out << "extern \"C\" __global__ void ts_kernel(";
      for (size_t i = 0; i < m_k.tensors.size(); ++i) {
        const auto& t = m_k.tensors[i];
        m_out << (i ? ", " : "")
              << (t.role == TensorRole::Input ? "const float* __restrict__ "
                                              : "float* __restrict__ ")
              << m_tensor_ident[i];
      }
      m_out << ") {\n";
      cuda_prologue();
    } else {
      m_out << "extern \"C\" void ts_kernel(float* const* args) {\n";
      for (size_t i = 0; i < m_k.tensors.size(); ++i) {
        const auto& t = m_k.tensors[i];
        line(1, std::string(t.role == TensorRole::Input ? "const float* const " : "float* const ") +
                    m_tensor_ident[i] + " = args[" + std::to_string(i) + "];");
      }
    }
  }

  void cuda_prologue() {
    int64_t off = 0;
    bool any_shared = false;
    for (const auto& s : m_k.stages) any_shared = any_shared || s.level == MemLevel::Shared;
    if (any_shared) line(1, "extern __shared__ float ts_smem[];");
    for (size_t s = 0; s < m_k.stages.size(); ++s) {
      const StageSpec& spec = m_k.stages[s];
      if (spec.level != MemLevel::Shared) continue;
      int64_t elems = 0;
      for (const auto& pl : m_lk.stages)
        if (pl.spec == int(s)) elems = std::max(elems, pl.elems);
      m_smem_offset[spec.buffer] = off;
      m_smem_elems[spec.buffer] = elems;
      off += elems * (spec.double_buffer ? 2 : 1);
    }
    // The block shape is fixed by the schedule's bindings, so the thread count is a compile-time
    // constant: tile-copy loops then have constant strides and trip counts and unroll fully.
    const LaunchConfig lc = launch_config(m_k);
    m_block_threads = lc.threads();
    line(1, "const int ts_tid = threadIdx.x + " + std::to_string(lc.block[0]) +
                " * (threadIdx.y + " + std::to_string(lc.block[1]) + " * threadIdx.z);");
    line(1, "constexpr int ts_nthreads = " + std::to_string(m_block_threads) + ";");
    line(1, "(void)ts_tid;");
    line(1, "(void)ts_nthreads;");
    if (m_k.block_order == BlockOrder::Grouped) {
      int64_t num_m = 1, num_n = 1;
      for (const auto& l : m_k.loops) {
        if (l.kind == LoopKind::BlockY) num_m = l.extent;
        if (l.kind == LoopKind::BlockX) num_n = l.extent;
      }
      line(1, "// Grouped block order: " + std::to_string(m_k.group) +
                  " rows of tiles are walked column by column, so their tiles stay in L2.");
      line(1, "const " + m_itype + " ts_pid = blockIdx.x;");
      line(1, "const " + m_itype + " ts_in_group = " + std::to_string(m_k.group * num_n) + ";");
      line(1, "const " + m_itype + " ts_first_m = (ts_pid / ts_in_group) * " +
                  std::to_string(m_k.group) + ";");
      line(1, "const " + m_itype + " ts_group_m = " + std::to_string(num_m) + " - ts_first_m < " +
                  std::to_string(m_k.group) + " ? " + std::to_string(num_m) +
                  " - ts_first_m : " + std::to_string(m_k.group) + ";");
      line(1,
           "const " + m_itype + " ts_block_y = ts_first_m + (ts_pid % ts_in_group) % ts_group_m;");
      line(1, "const " + m_itype + " ts_block_x = (ts_pid % ts_in_group) / ts_group_m;");
    }
  }

  std::string loop_open_pseudo(const Loop& L) const {
    std::string s = "for " + L.name + " in 0.." + std::to_string(L.extent) + ":";
    if (L.kind != LoopKind::Serial) s += "   # " + std::string(loop_kind_name(L.kind));
    return s;
  }

  void loop(const Node& n, int ind) {
    const Loop& L = m_k.loops[size_t(n.loop)];
    const std::string v = ident(L.name);
    const std::string ext = std::to_string(L.extent);
    if (m_d == Dialect::Pseudo) {
      line(ind, loop_open_pseudo(L));
      body(n.children, ind + 1);
      return;
    }
    if (m_d == Dialect::Cuda && (is_block(L.kind) || is_thread(L.kind))) {
      std::string src;
      if (is_block(L.kind)) {
        const char axis = L.kind == LoopKind::BlockX ? 'x' : L.kind == LoopKind::BlockY ? 'y' : 'z';
        src = m_k.block_order == BlockOrder::Grouped ? std::string("ts_block_") + axis
                                                     : std::string("blockIdx.") + axis;
      } else {
        src = std::string("threadIdx.") + (L.kind == LoopKind::ThreadX   ? "x"
                                           : L.kind == LoopKind::ThreadY ? "y"
                                                                         : "z");
      }
      line(ind, "{  // " + L.name + " → " + loop_kind_name(L.kind));
      line(ind + 1, "const " + m_itype + " " + v + " = " + src + ";");
      // A phase may not index by every bound loop (the accumulator init ignores the thread's
      // position along a reduction-free axis); say so, so compile logs stay clean for students.
      line(ind + 1, "(void)" + v + ";");
      body(n.children, ind + 1);
      line(ind, "}");
      return;
    }
    if (m_d == Dialect::Cpp && L.kind == LoopKind::Parallel) {
      parallel_loop(n, ind);
      return;
    }
    if (m_acc_scalars &&
        std::find(m_lk.acc_loops.begin(), m_lk.acc_loops.end(), n.loop) != m_lk.acc_loops.end()) {
      // An accumulator dim: unrolled here, so every accumulator reference names one scalar.
      line(ind, "// " + L.name + " unrolled: each accumulator reference names a scalar");
      for (int64_t i = 0; i < L.extent; ++i) {
        m_unrolled[L.name] = i;
        line(ind, "{  // " + L.name + " = " + std::to_string(i));
        line(ind + 1,
             "[[maybe_unused]] const " + m_itype + " " + v + " = " + std::to_string(i) + ";");
        body(n.children, ind + 1);
        line(ind, "}");
      }
      m_unrolled.erase(L.name);
      return;
    }
    if (L.kind == LoopKind::Unrolled || (m_d == Dialect::Cuda && L.kind == LoopKind::Vectorized))
      line(ind, m_d == Dialect::Cuda ? "#pragma unroll" : "#pragma GCC unroll " + ext);
    if (m_d == Dialect::Cpp && L.kind == LoopKind::Vectorized) line(ind, "#pragma GCC ivdep");
    std::string comment;
    if (m_d == Dialect::Cpp && (is_block(L.kind) || is_thread(L.kind)))
      comment = "  // " + std::string(loop_kind_name(L.kind)) + " on the GPU";
    line(ind,
         "for (" + m_itype + " " + v + " = 0; " + v + " < " + ext + "; ++" + v + ") {" + comment);
    body(n.children, ind + 1);
    line(ind, "}");
  }

  // Contiguous chunks of the loop, one per hardware thread; the calling thread takes chunk 0.
  void parallel_loop(const Node& n, int ind) {
    const Loop& L = m_k.loops[size_t(n.loop)];
    const std::string v = c_ident(L.name);
    const std::string ext = std::to_string(L.extent);
    m_uses_thread = true;
    line(ind, "{  // " + L.name + " is spread over CPU threads in contiguous chunks");
    line(ind + 1, "const unsigned ts_hw = std::thread::hardware_concurrency();");
    line(ind + 1, "const int64_t ts_workers = std::min<int64_t>(" + ext +
                      ", std::min<int64_t>(ts_hw ? ts_hw : 1, 256));");
    line(ind + 1, "auto ts_chunk = [&](int64_t ts_w) {");
    line(ind + 2, "const int64_t ts_begin = ts_w * " + ext + " / ts_workers;");
    line(ind + 2, "const int64_t ts_end = (ts_w + 1) * " + ext + " / ts_workers;");
    line(ind + 2, "for (int64_t " + v + " = ts_begin; " + v + " < ts_end; ++" + v + ") {");
    body(n.children, ind + 3);
    line(ind + 2, "}");
    line(ind + 1, "};");
    line(ind + 1, "std::thread ts_pool[256];");
    line(ind + 1,
         "for (int64_t ts_w = 1; ts_w < ts_workers; ++ts_w) ts_pool[ts_w] = std::thread(ts_chunk, "
         "ts_w);");
    line(ind + 1, "ts_chunk(0);");
    line(ind + 1, "for (int64_t ts_w = 1; ts_w < ts_workers; ++ts_w) ts_pool[ts_w].join();");
    line(ind, "}");
  }

  void cond(const Node& n, int ind) {
    std::string c;
    for (const auto& g : n.conds)
      c += (c.empty() ? "" : " && ") + code(g.expr) + " < " + std::to_string(g.bound);
    if (m_d == Dialect::Pseudo) {
      line(ind, "if " + c + ":   # partial tile");
      body(n.children, ind + 1);
      return;
    }
    line(ind, "if (" + c + ") {  // partial tile");
    body(n.children, ind + 1);
    line(ind, "}");
  }

  void statement(const Node& n, int ind) {
    const Phase& p = m_lk.phases[size_t(n.phase)].phase;
    const std::string v = strip_parens(expr(p.value));
    const std::string semi = m_d == Dialect::Pseudo ? "" : ";";
    switch (p.kind) {
      case PhaseKind::Init:
        line(ind, acc_ref(p.acc) + " = " + v + semi);
        return;
      case PhaseKind::Reduce:
        if (p.op == ReduceOp::Sum) {
          line(ind, acc_ref(p.acc) + " += " + v + semi);
        } else if (p.op == ReduceOp::OnlineSum) {
          online_sum(p, v, ind);
        } else {
          const std::string a = acc_ref(p.acc);
          line(ind, a + " = " + strip_parens(binary(BinaryOp::Max, a, v)) + semi);
        }
        return;
      case PhaseKind::Map: {
        const KernelTensor& t = m_k.tensors[size_t(p.out_tensor)];
        std::string ref;
        if (m_d == Dialect::Pseudo) {
          std::string idx;
          for (const auto& i : p.out_index) idx += (idx.empty() ? "" : ", ") + code(i);
          ref = t.name + "[" + idx + "]";
        } else {
          Affine off;
          for (size_t d = 0; d < p.out_index.size(); ++d) off += p.out_index[d] * t.strides[d];
          ref = m_tensor_ident[size_t(p.out_tensor)] + "[" + code(off) + "]";
        }
        line(ind, ref + " = " + v + semi);
        return;
      }
    }
  }

  // The online softmax's update, spelled out in pseudocode; C++ and CUDA call ts_online_sum.
  void online_sum(const Phase& p, const std::string& v, int ind) {
    const std::string m = acc_ref(p.max_acc), l = acc_ref(p.acc);
    if (m_d != Dialect::Pseudo) {
      m_helpers.insert("online_sum");
      line(ind, "ts_online_sum(" + m + ", " + l + ", " + v + ");");
      return;
    }
    line(ind, "if " + v + " > " + m + ":   # a new running maximum: rescale the sum so far");
    line(ind + 1, l + " = " + l + " * exp(" + m + " - " + v + ") + 1");
    line(ind + 1, m + " = " + v);
    line(ind, "else:");
    line(ind + 1, l + " += exp(" + v + " - " + m + ")");
  }

  void acc_decl(int ind) {
    if (m_d == Dialect::Pseudo) {
      std::string dims;
      int64_t all = 1;
      for (int l : m_lk.acc_loops) {
        dims += "[" + std::to_string(m_k.loops[size_t(l)].extent) + "]";
        all *= m_k.loops[size_t(l)].extent;
      }
      const int64_t gpu =
          m_lk.acc_elems([&](int l) { return is_thread(m_k.loops[size_t(l)].kind); });
      std::string note =
          all == 1 ? "one running value, kept in a register"
                   : "one running value per output of the tile (" +
                         format_bytes(all * 4 * m_k.num_accs) +
                         (m_acc_registers_cpu ? ", scalars in registers on the CPU)"
                                              : ", a stack array on the CPU: memory traffic)");
      if (gpu != all) note += "; on the GPU each thread keeps " + std::to_string(gpu);
      for (int a = 0; a < m_k.num_accs; ++a)
        line(ind, "float " + acc_name(a) + dims + "   # " + note);
      return;
    }
    if (m_acc_scalars) {
      for (int a = 0; a < m_k.num_accs; ++a) {
        std::string names;
        for (int64_t e = 0; e < m_acc_elems; ++e)
          names += (e ? ", " : "") + acc_name(a) + "_" + std::to_string(e) + " = 0.0f";
        // Initialised here too: Init may sit under a partial-tile guard, which compilers cannot
        // see through (-Wmaybe-uninitialized); the dead stores cost nothing.
        line(ind, "float " + names + ";  // accumulator tile, one scalar (register) per element");
      }
      return;
    }
    const bool stack = m_d == Dialect::Cpp && m_acc_elems > 1;
    for (int a = 0; a < m_k.num_accs; ++a)
      line(ind,
           std::string(stack ? "alignas(64) " : "") + "float " + acc_name(a) +
               (m_acc_elems == 1 ? "" : "[" + std::to_string(m_acc_elems) + "]") + ";" +
               (stack ? "  // accumulator tile on the stack (" + format_bytes(m_acc_elems * 4) +
                            "): its loads and stores are memory traffic"
                      : ""));
  }

  bool tile_dim_needs_check(const StagePlacement& pl, size_t d, const graph::Shape& shape,
                            bool* low, bool* high) const {
    auto [lo, hi] = loop_range(m_k, pl.base[d]);
    *low = lo < 0;
    *high = hi + pl.extents[d] - 1 >= shape[d];
    return *low || *high;
  }

  void stage(const Node& n, int ind) {
    const StagePlacement& pl = m_lk.stages[size_t(n.stage)];
    const StageSpec& spec = m_k.stages[size_t(pl.spec)];
    const graph::Shape& shape = shape_of(pl.tensor, pl.computed);
    const std::string src_name = pl.computed ? m_k.computed[size_t(pl.tensor)].op_name + "(" +
                                                   m_k.computed[size_t(pl.tensor)].name + ")"
                                             : name_of(pl.tensor, false);
    const size_t r = pl.extents.size();
    if (m_d == Dialect::Pseudo) {
      std::string dst, src;
      for (size_t d = 0; d < r; ++d) {
        dst += (d ? ", " : "") + std::string("0:") + std::to_string(pl.extents[d]);
        // A nested tile is addressed inside its source tile, not in the whole tensor.
        const std::string b =
            code(pl.source >= 0 ? pl.base[d] - m_lk.stages[size_t(pl.source)].base[d] : pl.base[d]);
        src += (d ? ", " : "") + (b == "0" ? "" : b + " + ") + "0:" + std::to_string(pl.extents[d]);
      }
      std::string from = pl.source >= 0 ? m_lk.stages[size_t(pl.source)].buffer : src_name;
      line(ind, pl.buffer + "[" + dst + "] = " + from + "[" + src + "]   # " +
                    mem_level_name(pl.level) + " tile, " + format_bytes(pl.bytes()) +
                    (spec.double_buffer ? ", double-buffered" : ""));
      return;
    }
    const bool cuda = m_d == Dialect::Cuda;
    const std::string buf = c_ident(pl.buffer);
    if (cuda && pl.level == MemLevel::Shared) {
      std::string at = "ts_smem + " + std::to_string(m_smem_offset[spec.buffer]);
      if (spec.double_buffer)
        at += " + (" + ident(m_k.loops[size_t(pl.at)].name) + " & 1) * " +
              std::to_string(m_smem_elems[spec.buffer]);
      line(ind, "float* const " + buf + " = " + at + ";  // " + mem_level_name(pl.level) +
                    " tile of " + src_name);
    } else {
      line(ind, "float " + buf + "[" + std::to_string(pl.elems) + "];  // " +
                    mem_level_name(pl.level) + " tile of " + src_name);
    }
    // Element (s0, s1, ...) of the tile; g_d = base_d + s_d in the tensor.
    std::vector<std::string> s(r);
    for (size_t d = 0; d < r; ++d) s[d] = "ts_s" + std::to_string(d);
    int in = ind;
    if (cuda && pl.level == MemLevel::Shared) {
      if (m_block_threads > 0 && pl.footprint % m_block_threads == 0) {
        // Every thread copies the same number of elements: a constant trip count, unrolled.
        line(in, "#pragma unroll");
        line(in, "for (int ts_n = 0; ts_n < " + std::to_string(pl.footprint / m_block_threads) +
                     "; ++ts_n) {  // all threads of the block copy together");
        ++in;
        line(in, "const int ts_e = ts_tid + ts_n * ts_nthreads;");
      } else {
        line(in, "for (int ts_e = ts_tid; ts_e < " + std::to_string(pl.footprint) +
                     "; ts_e += ts_nthreads) {  // all threads of the block copy together");
        ++in;
      }
      int64_t div = 1;
      for (size_t d = r; d > 0; --d) {
        const std::string q = div == 1 ? "ts_e" : "(ts_e / " + std::to_string(div) + ")";
        line(in, "const int " + s[d - 1] + " = " +
                     (d == 1 ? q : q + " % " + std::to_string(pl.extents[d - 1])) + ";");
        div *= pl.extents[d - 1];
      }
    } else {
      for (size_t d = 0; d < r; ++d) {
        if (cuda) line(in, "#pragma unroll");
        line(in, "for (" + m_itype + " " + s[d] + " = 0; " + s[d] + " < " +
                     std::to_string(pl.extents[d]) + "; ++" + s[d] + ") {");
        ++in;
      }
    }
    std::vector<Affine> g(r);
    std::string check;
    for (size_t d = 0; d < r; ++d) {
      g[d] = pl.base[d] + Affine::var("#" + s[d]);
      bool lo = false, hi = false;
      tile_dim_needs_check(pl, d, shape, &lo, &hi);
      const std::string gd = code_s(g[d]);
      if (lo) check += (check.empty() ? "" : " && ") + gd + " >= 0";
      if (hi) check += (check.empty() ? "" : " && ") + gd + " < " + std::to_string(shape[d]);
    }
    Affine dst;
    for (size_t d = 0; d < r; ++d) dst += Affine::var("#" + s[d], pl.strides[d]);
    std::string value;
    if (pl.source >= 0) {
      const StagePlacement& src = m_lk.stages[size_t(pl.source)];
      Affine off;
      for (size_t d = 0; d < r; ++d) off += (g[d] - src.base[d]) * src.strides[d];
      value = c_ident(src.buffer) + "[" + code_s(off) + "]";
    } else if (pl.computed) {
      const ComputedTensor& c = m_k.computed[size_t(pl.tensor)];
      VExpr def = c.definition;
      std::vector<std::pair<std::string, Affine>> subst;
      for (size_t d = 0; d < r; ++d) subst.emplace_back(def_var(d), g[d]);
      substitute_def(def, subst);
      value = strip_parens(expr_s(def));
    } else {
      const KernelTensor& t = m_k.tensors[size_t(pl.tensor)];
      Affine off;
      for (size_t d = 0; d < r; ++d) off += g[d] * t.strides[d];
      value = m_tensor_ident[size_t(pl.tensor)] + "[" + code_s(off) + "]";
    }
    const std::string dst_ref = buf + "[" + code_s(dst) + "]";
    if (check.empty())
      line(in, dst_ref + " = " + value + ";");
    else
      line(in, dst_ref + " = (" + check + ") ? " + value + " : 0.0f;");
    if (cuda && pl.level == MemLevel::Shared) {
      line(in - 1, "}");
    } else {
      for (size_t d = 0; d < r; ++d) line(ind + int(r - d) - 1, "}");
    }
  }

  // Tile element variables are marked with '#' in affine names so they print as themselves.
  std::string code_s(const Affine& a) const {
    return a.to_code([this](const std::string& n) { return n[0] == '#' ? n.substr(1) : ident(n); });
  }
  std::string expr_s(const VExpr& e) {
    // Loads inside a computed definition index by '#'-marked tile variables too.
    if (e.kind == VExpr::Kind::Load) {
      const KernelTensor& t = m_k.tensors[size_t(e.tensor)];
      Affine off;
      for (size_t d = 0; d < e.index.size(); ++d) off += e.index[d] * t.strides[d];
      return m_tensor_ident[size_t(e.tensor)] + "[" + code_s(off) + "]";
    }
    if (e.kind == VExpr::Kind::Unary) return unary(e.uop, expr_s(e.args[0]));
    if (e.kind == VExpr::Kind::Binary && e.bop == BinaryOp::FillAbove)
      return fill_above(expr_s(e.args[0]), expr_s(e.args[1]), e.value);
    if (e.kind == VExpr::Kind::Binary) return binary(e.bop, expr_s(e.args[0]), expr_s(e.args[1]));
    if (e.kind == VExpr::Kind::Index) return "(" + code_s(e.index[0]) + ")";
    return expr(e);
  }
  static void substitute_def(VExpr& e, const std::vector<std::pair<std::string, Affine>>& s) {
    if (e.kind == VExpr::Kind::Load || e.kind == VExpr::Kind::Index)
      for (auto& i : e.index) {
        Affine r = Affine::lit(i.constant);
        for (const auto& [n, c] : i.terms) {
          bool done = false;
          for (const auto& [from, to] : s)
            if (from == n) {
              r += to * c;
              done = true;
            }
          if (!done) r += Affine::var(n, c);
        }
        i = r;
      }
    for (auto& a : e.args) substitute_def(a, s);
  }

  void barrier(const std::vector<Node>& siblings, size_t i, int ind) {
    if (m_d == Dialect::Cpp) return;
    // The trailing barrier protects the tile from the next iteration's copy; with two buffers
    // alternating, the next copy writes the other one and the barrier after it suffices.
    if (i + 1 == siblings.size()) {
      bool all_double = true, any = false;
      for (const Node& s : siblings)
        if (s.kind == Node::Kind::Stage) {
          const auto& spec = m_k.stages[size_t(m_lk.stages[size_t(s.stage)].spec)];
          if (spec.level != MemLevel::Shared) continue;
          any = true;
          all_double = all_double && spec.double_buffer;
        }
      if (any && all_double) {
        if (m_d == Dialect::Pseudo)
          line(ind, "# no barrier: the next copy fills the other buffer of each tile");
        return;
      }
    }
    line(ind, m_d == Dialect::Pseudo ? "barrier   # every thread of the block waits here"
                                     : "__syncthreads();");
  }

  void body(const std::vector<Node>& nodes, int ind) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Node& n = nodes[i];
      switch (n.kind) {
        case Node::Kind::Loop:
          loop(n, ind);
          break;
        case Node::Kind::If:
          cond(n, ind);
          break;
        case Node::Kind::Stmt:
          statement(n, ind);
          break;
        case Node::Kind::Stage:
          stage(n, ind);
          break;
        case Node::Kind::Barrier:
          barrier(nodes, i, ind);
          break;
        case Node::Kind::AccDecl:
          acc_decl(ind);
          break;
      }
    }
  }

 public:
  std::string finish() {
    std::string bodytext = run();
    if (m_d == Dialect::Pseudo) return bodytext;
    std::ostringstream o;
    o << m_pending_header.str();
    const bool cuda = m_d == Dialect::Cuda;
    if (!cuda) {
      o << "#include <algorithm>\n#include <cmath>\n#include <cstdint>\n";
      if (m_uses_thread) o << "#include <thread>\n";
    }
    const std::string fn = cuda ? "__device__ __forceinline__ float " : "static inline float ";
    if (m_helpers.count("gelu"))
      o << fn << "ts_gelu(float x) {  // tanh approximation\n"
        << "  return 0.5f * x * (1.0f + " << (cuda ? "tanhf" : "std::tanh")
        << "(0.7978845608028654f * (x + 0.044715f * x * x * x)));\n}\n";
    if (m_helpers.count("sigmoid"))
      o << fn << "ts_sigmoid(float x) { return 1.0f / (1.0f + " << (cuda ? "expf" : "std::exp")
        << "(-x)); }\n";
    if (m_helpers.count("square")) o << fn << "ts_square(float x) { return x * x; }\n";
    if (m_helpers.count("online_sum")) {
      const std::string e = cuda ? "expf" : "std::exp";
      o << (cuda ? "__device__ __forceinline__ void " : "static inline void ")
        << "ts_online_sum(float& max, float& sum, float x) {\n"
        << "  // online softmax: sum holds the sum of exp(x' - max) over the x' seen so far\n"
        << "  if (x > max) {  // a new maximum: rescale what was summed\n"
        << "    sum = sum * " << e << "(max - x) + 1.0f;\n"
        << "    max = x;\n"
        << "  } else if (x > " << literal(-INFINITY, m_d) << ") {  // a masked score adds nothing\n"
        << "    sum += " << e << "(x - max);\n  }\n}\n";
    }
    o << "\n" << bodytext;
    return o.str();
  }

 private:
  LoweredKernel m_lk;
  const Kernel& m_k;
  Dialect m_d;
  std::string m_itype;
  int64_t m_block_threads = 0;  // CUDA: threads per block, from the bindings
  std::ostringstream m_out;
  std::ostringstream m_pending_header;
  std::vector<std::string> m_tensor_ident;
  bool m_acc_single = true;
  std::function<bool(int)> m_drop_thread;
  int64_t m_acc_elems = 1;
  Affine m_acc_index;
  bool m_acc_scalars = false;                 // C++: accumulators are scalars acc_0, acc_1, ...
  bool m_acc_registers_cpu = true;            // accumulator_home(CPU).registers
  std::map<std::string, int64_t> m_unrolled;  // accumulator loops unrolled in the source: value
  std::set<std::string> m_helpers;
  bool m_uses_thread = false;
  std::map<std::string, int64_t> m_smem_offset, m_smem_elems;
};

}  // namespace

// [SECTION] Entry points

std::string print_loop_nest(const Kernel& k) {
  return Writer(k, Dialect::Pseudo).finish();
}

std::string print_program(const Program& p) {
  std::string s;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    if (i) s += "\n";
    if (int(i) == p.current && p.kernels.size() > 1) s += "# ▶ steps apply to this kernel\n";
    s += print_loop_nest(p.kernels[i]);
  }
  return s;
}

std::string emit_cpp(const Kernel& k) {
  return Writer(k, Dialect::Cpp).finish();
}
std::string emit_cuda(const Kernel& k) {
  return Writer(k, Dialect::Cuda).finish();
}

}  // namespace tilescope::schedule

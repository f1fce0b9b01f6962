// Reading a PyTorch profiler trace (trace.h): events, operator nesting, kernel launches; and the
// kernel-name explainer.
#include "sim/import/trace.h"

#include "sim/io/input.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace tilescope::import {

namespace {

struct Event {
  std::string name, cat, thread;
  double ts = 0, dur = 0;
  const nlohmann::json* args = nullptr;
};

std::string id_text(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.is_number() ? v.dump() : "";
}

// A field that is a string, else "" (a trace from another tool may use other types).
std::string text_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t arg_int(const nlohmann::json* args, const char* key) {
  if (!args || !args->is_object() || !args->contains(key)) return -1;
  const auto& v = (*args)[key];
  return v.is_number_integer() ? v.get<int64_t>() : -1;
}

std::array<int64_t, 3> arg_dim3(const nlohmann::json* args, const char* key) {
  std::array<int64_t, 3> out{};
  if (!args || !args->is_object() || !args->contains(key) || !(*args)[key].is_array()) return out;
  const auto& a = (*args)[key];
  for (size_t i = 0; i < 3 && i < a.size(); ++i)
    if (a[i].is_number_integer()) out[i] = a[i].get<int64_t>();
  return out;
}

std::vector<graph::Shape> input_dims(const nlohmann::json* args) {
  std::vector<graph::Shape> out;
  if (!args || !args->is_object() || !args->contains("Input Dims")) return out;
  for (const auto& dims : (*args)["Input Dims"]) {
    graph::Shape s;
    if (dims.is_array())
      for (const auto& d : dims)
        if (d.is_number_integer()) s.push_back(d.get<int64_t>());
    out.push_back(s);
  }
  return out;
}

bool is_cpu_op(const Event& e, bool legacy) {
  return legacy ? true : e.cat == "cpu_op" || e.cat == "operator";
}

}  // namespace

ProfilerTrace read_profiler_trace(std::string_view json_text, const std::string& source) {
  auto fail = [&](const std::string& what) -> ProfilerTrace {
    throw graph::GraphError(graph::SourceLoc{source, 0, 0}, what);
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, or a number out of range
    return fail(std::string("not a profiler trace: the JSON does not parse (") + e.what() + ")");
  }
  ProfilerTrace t;
  t.source = source;
  const nlohmann::json* list = nullptr;
  if (doc.is_array()) {
    list = &doc;
    t.format = "legacy";
  } else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) {
    list = &doc["traceEvents"];
    t.format = "kineto";
  } else {
    return fail(
        "not a profiler trace: expected a list of events or {\"traceEvents\": [...]}, as "
        "torch.profiler's export_chrome_trace writes");
  }
  const bool legacy = t.format == "legacy";
  std::vector<Event> cpu, runtime, kernels;
  for (const auto& j : *list) {
    if (!j.is_object() || text_field(j, "ph") != "X" || !j.contains("ts")) continue;
    Event e;
    e.name = text_field(j, "name");
    e.cat = text_field(j, "cat");
    e.thread = id_text(j.contains("pid") ? j["pid"] : nlohmann::json()) + "/" +
               id_text(j.contains("tid") ? j["tid"] : nlohmann::json());
    e.ts = j["ts"].is_number() ? j["ts"].get<double>() : 0;
    e.dur = j.contains("dur") && j["dur"].is_number() ? j["dur"].get<double>() : 0;
    if (!std::isfinite(e.ts) || !std::isfinite(e.dur) || e.dur < 0) continue;  // not a real event
    if (j.contains("args")) e.args = &j["args"];
    if (e.cat == "kernel" || e.cat == "Kernel") {
      kernels.push_back(e);
    } else if (e.cat == "cuda_runtime" || e.cat == "cuda_driver") {
      runtime.push_back(e);
    } else if (is_cpu_op(e, legacy) && !e.name.empty()) {
      cpu.push_back(e);
    }
  }
  if (cpu.empty()) return fail("the trace has no framework operators (cpu_op events)");

  // Top-level operators per thread: an operator inside another's interval is its callee.
  std::stable_sort(cpu.begin(), cpu.end(), [](const Event& a, const Event& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
  });
  std::map<std::string, int> open;  // thread → index of its current top-level op in t.ops
  std::vector<std::string> op_thread;
  for (const Event& e : cpu) {
    auto it = open.find(e.thread);
    if (it != open.end()) {
      const TraceOp& top = t.ops[size_t(it->second)];
      if (e.ts < top.ts_us + top.dur_us) {
        t.ops[size_t(it->second)].callees.push_back(e.name);
        t.ops[size_t(it->second)].callee_us.push_back(e.dur);
        continue;
      }
    }
    TraceOp op;
    op.name = e.name;
    op.ts_us = e.ts;
    op.dur_us = e.dur;
    op.inputs = input_dims(e.args);
    open[e.thread] = int(t.ops.size());
    t.ops.push_back(std::move(op));
    op_thread.push_back(e.thread);
  }
  // Kernels: the runtime call with the same correlation id, inside a top-level operator.
  std::map<int64_t, const Event*> launch;
  for (const Event& r : runtime)
    if (int64_t c = arg_int(r.args, "correlation"); c >= 0) launch[c] = &r;
  std::sort(kernels.begin(), kernels.end(),
            [](const Event& a, const Event& b) { return a.ts < b.ts; });
  for (const Event& k : kernels) {
    TraceKernel tk;
    tk.name = k.name;
    tk.dur_us = k.dur;
    tk.grid = arg_dim3(k.args, "grid");
    tk.block = arg_dim3(k.args, "block");
    if (auto it = launch.find(arg_int(k.args, "correlation")); it != launch.end()) {
      const Event& r = *it->second;
      for (size_t i = 0; i < t.ops.size(); ++i) {
        const TraceOp& op = t.ops[i];
        if (op_thread[i] == r.thread && r.ts >= op.ts_us && r.ts <= op.ts_us + op.dur_us) {
          tk.op = int(i);
          break;
        }
      }
    }
    if (tk.op >= 0) t.ops[size_t(tk.op)].kernels.push_back(int(t.kernels.size()));
    t.kernels.push_back(std::move(tk));
  }
  t.gpu = !t.kernels.empty();
  if (!t.gpu) {
    t.notes.push_back(
        "no GPU kernels in the trace: the shares are of CPU operator time (record "
        "with activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA] on a GPU to "
        "see the kernels)");
  }
  int orphans = 0;
  double orphan_us = 0;
  for (const TraceKernel& k : t.kernels) {
    if (k.op >= 0) continue;
    ++orphans;
    orphan_us += k.dur_us;
  }
  if (orphans > 0) {
    t.notes.push_back(std::to_string(orphans) + " kernel" + (orphans > 1 ? "s" : "") + " (" +
                      std::to_string(int64_t(orphan_us)) +
                      " µs) launched by no operator in the trace: not mapped");
  }
  return t;
}

std::string TraceOp::worker() const {
  std::string w;
  for (size_t i = 0; i < callees.size(); ++i)
    if (callee_us[i] >= 0.5 * dur_us) w = callees[i];
  return w;
}

int launches(const ProfilerTrace& trace, const TraceOp& op) {
  return trace.gpu ? int(op.kernels.size()) : 1;
}

ProfilerTrace read_profiler_trace_file(const std::string& path) {
  io::TextInput in = io::read_text_input(path, kMaxTraceBytes, "a profiler trace");
  if (!in.ok) throw graph::GraphError(graph::SourceLoc{path, 0, 0}, in.error);
  return read_profiler_trace(in.text, path);
}

// [SECTION] Kernel names

namespace {

// The digits at `i`, or "" (and `i` unmoved).
std::string digits_at(const std::string& s, size_t& i) {
  size_t j = i;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  std::string d = s.substr(i, j - i);
  if (!d.empty()) i = j;
  return d;
}

// A tile size as cuBLAS and CUTLASS names carry it: "tilesize128x128x32", or "_128x64_" /
// "_128x64x32_" between underscores. ", tiles 128 × 128 × 32", or "".
std::string tile_text(const std::string& name) {
  auto dims_at = [&](size_t i, bool between_underscores) -> std::string {
    std::vector<std::string> dims;
    for (std::string d = digits_at(name, i); !d.empty(); d = digits_at(name, i)) {
      dims.push_back(d);
      if (i >= name.size() || name[i] != 'x') break;
      ++i;
    }
    const bool closed = !between_underscores || (i < name.size() && name[i] == '_');
    if (dims.size() < 2 || dims.size() > 3 || !closed) return {};
    std::string out = ", tiles " + dims[0];
    for (size_t k = 1; k < dims.size(); ++k) out += " × " + dims[k];
    return out;
  };
  if (const size_t at = name.find("tilesize"); at != std::string::npos) {
    if (std::string t = dims_at(at + 8, false); !t.empty()) return t;
  }
  for (size_t at = name.find('_'); at != std::string::npos; at = name.find('_', at + 1)) {
    if (std::string t = dims_at(at + 1, true); !t.empty()) return t;
  }
  return {};
}

}  // namespace

KernelName explain_kernel(std::string_view name_view) {
  const std::string name(name_view);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // A lower-case needle matches any case ("softmax" in cunn_SoftMaxForward).
  auto has = [&](const char* s) {
    return name.find(s) != std::string::npos || lower.find(s) != std::string::npos;
  };
  const std::string tile = tile_text(name);
  const bool conv = has("conv") || has("fprop") || has("dgrad") || has("wgrad");
  if (has("cudnn") || (conv && (has("xmma") || has("cutlass") || has("sm90") || has("sm80")))) {
    return {"cuDNN", conv || has("cudnn") ? std::string("convolution as an implicit GEMM") + tile
                                          : "a cuDNN kernel"};
  }
  if (has("implicit_convolve") || has("precomputed_convolve") || has("winograd") || has("fft"))
    return {"cuDNN", has("winograd") ? "Winograd convolution"
                     : has("fft")    ? "FFT convolution"
                                     : "convolution as an implicit GEMM" + tile};
  if (has("gemv")) return {"cuBLAS", "matrix-vector product (GEMV)"};
  if (has("gemm") || has("cutlass") || has("cublas")) {
    std::string what = "matrix product (GEMM)" + tile;
    if (has("splitK") || has("splitk")) what += ", split over K";
    return {has("cutlass") && !has("cublas") ? "CUTLASS" : "cuBLAS", what};
  }
  if (has("mkldnn_convolution")) return {"oneDNN", "convolution (CPU)"};
  if (name == "aten::addmm" || name == "aten::mm" || name == "aten::bmm")
    return {"BLAS", "matrix product on the CPU"};
  if (has("elementwise_kernel") || has("unrolled_elementwise")) {
    std::string what = "element-wise";
    if (has("clamp") || has("threshold"))
      what += ": clamp (ReLU / ReLU6)";
    else if (has("gelu") || has("GeluCUDA"))
      what += ": GELU";
    else if (has("AddFunctor") || has("CUDAFunctor_add"))
      what += ": add (a bias or a residual)";
    else if (has("MulFunctor"))
      what += ": multiply";
    else if (has("copy"))
      what += ": copy";
    return {"PyTorch", what};
  }
  if (has("max_pool") || has("avg_pool") || has("pooling") || has("adaptive"))
    return {"PyTorch", "pooling"};
  if (has("softmax")) return {"PyTorch", "softmax (a row reduction)"};
  if (has("layer_norm") || has("LayerNorm")) return {"PyTorch", "layer normalization"};
  if (has("batch_norm") || has("bn_fw")) return {"PyTorch", "batch normalization"};
  if (has("reduce_kernel")) return {"PyTorch", "reduction"};
  return {"", ""};
}

}  // namespace tilescope::import

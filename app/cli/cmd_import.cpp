// `tilescope-cli import model.onnx [-o OUT.model] [--dim NAME=N] [--json]`: a learner's ONNX model
// as tilescope model text (sim/import/onnx.h), which every other command then reads. --json
// reports what became of each ONNX node and the imported graph's shapes and FLOPs.
#include "commands.h"

#include "app/core/session.h"
#include "sim/graph/graph.h"
#include "sim/import/onnx.h"
#include "sim/lang/parser.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace tilescope::cli {
namespace {

struct ImportFlags {
  std::string file;
  std::string out;
  std::vector<std::string> dims;
  bool json = false;
};

// "batch=8" → {"batch", 8}; false with a message for anything else.
bool parse_dim(const std::string& spec, import::ImportOptions& options, std::string& error) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= spec.size()) {
    error = "--dim " + spec + ": write NAME=N, e.g. --dim batch_size=8";
    return false;
  }
  const std::string value = spec.substr(eq + 1);
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(value.c_str(), &end, 10);
  if (errno || *end || n < 1 || n > (int64_t{1} << 31)) {
    error = "--dim " + spec + ": the size must be a whole number from 1 to 2^31";
    return false;
  }
  options.dims[spec.substr(0, eq)] = n;
  return true;
}

nlohmann::json report(const import::OnnxImport& imported, const graph::Graph& g) {
  nlohmann::json j;
  j["opset"] = imported.opset;
  j["producer"] = imported.producer;
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : imported.nodes) {
    nodes.push_back({{"index", n.index},
                     {"name", n.name},
                     {"op_type", n.op_type},
                     {"tensor", n.tensor},
                     {"note", n.note}});
  }
  j["nodes"] = nodes;
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& name : imported.outputs) {
    const auto id = g.find_tensor(name);
    outputs.push_back({{"name", name}, {"shape", id ? g.tensor(*id).shape : graph::Shape{}}});
  }
  j["outputs"] = outputs;
  j["shapes_checked"] = imported.shapes_checked;  // against ONNX's own shape inference
  j["shape_check"] = imported.shape_check;
  // FLOPs as tilescope counts them (graph.h: a multiply-add is 2), the GEMM-like ops apart: those
  // are what PyTorch's FlopCounterMode counts.
  int64_t gemm = 0;
  for (size_t i = 0; i < g.ops().size(); ++i)
    if (graph::op_family(g.ops()[i].kind) == graph::OpFamily::Gemm)
      gemm += g.op_cost(static_cast<graph::OpId>(i)).flops;
  j["flops"] = g.total_cost().flops;
  j["gemm_conv_flops"] = gemm;
  j["ops"] = g.ops().size();
  return j;
}

int run_import(const ImportFlags& flags) {
  import::ImportOptions options;
  for (const auto& d : flags.dims) {
    std::string error;
    if (!parse_dim(d, options, error)) {
      std::cerr << "error: " << error << "\n";
      return 1;
    }
  }
  try {
    const import::OnnxImport imported = import::import_onnx_file(flags.file, options);
    const graph::Graph g = lang::parse_model(imported.text, flags.file);
    // The app's Save model writes the same way: atomically, never a half-written file.
    if (!flags.out.empty()) {
      if (std::string e = core::write_file_atomically(imported.text, flags.out, "model");
          !e.empty()) {
        std::cerr << "error: " << e << "\n";
        return 1;
      }
    }
    if (flags.json) {
      std::cout << report(imported, g).dump(2) << "\n";
    } else if (flags.out.empty()) {
      std::cout << imported.text;
    } else {
      std::cerr << "wrote " << flags.out << ": " << g.ops().size() << " ops from "
                << imported.nodes.size() << " ONNX nodes (opset " << imported.opset << "); "
                << imported.shape_check << "\n";
    }
    return 0;
  } catch (const graph::GraphError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}

const CommandRegistrar kRegistrar{
    "import",
    "Turn an ONNX model into tilescope model text (every other command also opens .onnx files)",
    [](CLI::App& sub, int& exit_code) {
      auto flags = std::make_shared<ImportFlags>();
      sub.add_option("FILE", flags->file, "the ONNX file (opsets 11-21)")->required();
      sub.add_option("-o,--output", flags->out, "write the model text here instead of stdout");
      sub.add_option("--dim", flags->dims,
                     "NAME=N: the size of an input's dynamic dimension (default 1)");
      sub.add_flag("--json", flags->json,
                   "print what became of each ONNX node, the outputs' shapes and the FLOPs");
      sub.footer(
          "Operators read: Conv, Gemm, MatMul, Add, Sub, Mul, Div (by a constant), Relu, Clip(0, "
          "inf) and Clip(0, 6) (ReLU6), Sigmoid, Tanh, Gelu and its Erf pattern, Softmax, "
          "LayerNormalization and its "
          "ReduceMean pattern, BatchNormalization, MaxPool, AveragePool, GlobalAveragePool, "
          "Flatten, Reshape, Transpose, Concat, Split, ReduceMean, ReduceSum, Identity, Dropout, "
          "Constant. A node with no tilescope op stops the import and is listed with what to do.");
      sub.callback([flags, &exit_code] { exit_code = run_import(*flags); });
    }};

}  // namespace
}  // namespace tilescope::cli

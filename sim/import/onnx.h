// A learner's own model from their framework: an ONNX file turned into tilescope's model text.
//
// The import writes form 1 of the model language (declarations, then one assignment per ONNX node
// that computes something), so every step, simulation and run that works on a typed model works
// on an imported one, and the session keeps the text (architecture rule 1). Each assignment ends
// with a comment naming the ONNX node it came from, which the inspector shows as the op's source
// line. Initializers become weights (their shapes; their values only where the import needs one:
// a scale, an epsilon, a reshape's target). Shapes are tilescope's own inference, checked against
// the shapes the file declares for its outputs and against ONNX's shape inference for every value
// both know.
//
// A node with no tilescope op is never dropped: the import fails and lists every such node by
// index, name and op type with what to do. Built without libonnx (the GPU machine), every call
// throws a GraphError that says what to install.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::import {

// An ONNX file's size limit: the graph and the small constants; weights are read as shapes.
inline constexpr uint64_t kMaxOnnxBytes = uint64_t{512} << 20;

// The opsets read (ONNX's default domain).
inline constexpr int kMinOpset = 11;
inline constexpr int kMaxOpset = 21;

// True when this build can read ONNX files (libonnx-dev and protobuf were found).
bool onnx_supported();

// True for a path that names an ONNX file (".onnx", any case).
bool is_onnx_path(std::string_view path);

struct ImportOptions {
  // Values for the inputs' dynamic dimensions, by their ONNX name ("batch_size" → 8); a dynamic
  // dimension not named here is 1, and the text's header says so.
  std::map<std::string, int64_t> dims;
};

// What became of one ONNX node.
struct OnnxNode {
  int index = 0;        // position in the file's node list
  std::string name;     // the node's name ("" when the file gives none)
  std::string op_type;  // "Conv"
  std::string tensor;   // the tensor it computes ("a, b" for Split's parts); "" for none
  std::string note;     // why no tensor: "folded into gelu 'h'", "constant", "same tensor as 'x'"
};

struct OnnxImport {
  std::string text;  // model text (form 1), parseable by lang::parse_model
  int64_t opset = 0;
  std::string producer;              // "pytorch 2.11.0" ("" when the file does not say)
  std::vector<OnnxNode> nodes;       // every node of the file, in its order
  std::vector<std::string> outputs;  // the model-text names of the graph's outputs
  // ONNX's own shape inference (onnx::shape_inference) run on the file with the same input
  // shapes: the values whose static shape it infers and tilescope computes too, all equal (a
  // disagreement fails the import); `shape_check` says so, or why ONNX's inference could not run.
  int shapes_checked = 0;
  std::string shape_check;
};

// Imports an ONNX model held in `bytes`; `source` names it in messages. Throws graph::GraphError
// (located at `source`) for a file that is not ONNX, an opset outside kMinOpset..kMaxOpset, and
// for nodes with no tilescope op (all of them listed).
OnnxImport import_onnx(std::string_view bytes, const std::string& source,
                       const ImportOptions& options = {});
// Reads `path` (capped at kMaxOnnxBytes) and imports it.
OnnxImport import_onnx_file(const std::string& path, const ImportOptions& options = {});

}  // namespace tilescope::import

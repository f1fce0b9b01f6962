// What the graph canvas draws: nodes (ops, graph inputs/weights, outputs) with their text and
// positions, and edges (tensors) with shape labels. Built once per parse, not every frame.
//
// Pure C++ (no ImGui): text widths come from a measuring function, so tests can use a fixed-width
// measure and the app uses the real font.
#pragma once

#include "app/core/dag_layout.h"
#include "sim/graph/graph.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// Colour classes for nodes; the theme maps each to a colour-blind-safe colour.
enum class NodeCategory {
  Contraction,  // MatMul, Conv2D and their gradients: where the FLOPs are
  Elementwise,  // Add, ReLU, ... : one output per input element, memory-bound
  Normalize,    // BatchNorm, LayerNorm, Softmax: reductions plus elementwise
  Pool,         // pooling and its gradients
  Reshape,      // Reshape, Transpose, Concat: data movement only
  Reduce,       // Sum, Mean, ReduceToShape
  Loss,         // losses and their gradients
  Update,       // SGD update
  Input,        // graph input tensor
  Weight,       // weight tensor
  Output,       // tensor nobody consumes
};
NodeCategory op_category(graph::OpKind kind);

struct SceneNode {
  enum class Kind { Op, Source, Output };
  Kind kind = Kind::Op;
  NodeCategory category = NodeCategory::Elementwise;
  std::string name;                              // op name, or tensor name for sources/outputs
  graph::OpId op = -1;                           // Op nodes
  graph::TensorId tensor = -1;                   // Source/Output nodes
  std::string title;                             // op or tensor name
  std::string kind_label;                        // "MatMul" / "input" / "weight" / "output"
  std::string detail;                            // "134 MFLOP · 2 MiB" or the tensor shape
  double flop_share = 0.0;                       // of total FLOPs, op nodes only
  float x = 0.0f, y = 0.0f, w = 0.0f, h = 0.0f;  // world units (pixels at zoom 1)
};

struct SceneEdge {
  int from = 0;  // index into nodes
  int to = 0;
  graph::TensorId tensor = -1;
  std::string label;  // tensor shape; empty when the source node already shows it
  std::vector<DagPoint> points;
};

struct GraphScene {
  std::vector<SceneNode> nodes;
  std::vector<SceneEdge> edges;
  float width = 0.0f, height = 0.0f;
  int crossings = 0;
  bool simplified = false;  // too large for the full layout: long edges straight, order as given
  float font_px = 0.0f;     // the font size the text was measured with
  bool compact = false;     // layers packed closer (presentation: a whole CNN at readable size)
  int find(std::string_view name, SceneNode::Kind kind) const;  // -1 when absent
};

// The fonts the canvas draws with: titles bold, labels regular, shapes monospaced.
enum class SceneFont { Bold, Regular, Mono };

// Width in pixels of `text` in `font` at the scene's font size.
using TextMeasure = std::function<float(std::string_view text, SceneFont font)>;

// Geometry of a node's box, shared by the builder (sizes) and the canvas (drawing).
struct NodeMetrics {
  float pad;        // inner padding
  float line;       // line height
  float bar;        // FLOP-share bar height
  float min_width;  // op nodes never narrower than this
  explicit NodeMetrics(float font_px);
};

// `compact` packs the layers closer (1.5 em between them instead of 2.6: one shape label's line
// and its margins), so presentation mode fits a 9-layer CNN on a 1080-pixel screen with its text
// at least kPresentTextPx high.
GraphScene build_graph_scene(const graph::Graph& g, const TextMeasure& measure, float font_px,
                             bool compact = false);

}  // namespace tilescope::core

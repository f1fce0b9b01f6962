// Builds the graph canvas's scene from a Graph: node text, sizes, layered positions, edge labels.
#include "app/core/graph_scene.h"

#include "app/core/format.h"

#include <algorithm>
#include <cmath>

namespace tilescope::core {

using graph::OpKind;

NodeCategory op_category(OpKind kind) {
  switch (kind) {
    case OpKind::MatMul:
    case OpKind::Conv2D:
    case OpKind::Conv2DGradInput:
    case OpKind::Conv2DGradWeight:
      return NodeCategory::Contraction;
    case OpKind::BatchNorm:
    case OpKind::LayerNorm:
    case OpKind::Softmax:
    case OpKind::BatchNormGrad:
    case OpKind::LayerNormGrad:
    case OpKind::SoftmaxGrad:
      return NodeCategory::Normalize;
    case OpKind::MaxPool2D:
    case OpKind::AvgPool2D:
    case OpKind::MaxPool2DGrad:
    case OpKind::AvgPool2DGrad:
      return NodeCategory::Pool;
    case OpKind::Reshape:
    case OpKind::Transpose:
    case OpKind::Concat:
      return NodeCategory::Reshape;
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::ReduceToShape:
      return NodeCategory::Reduce;
    case OpKind::MSELoss:
    case OpKind::CrossEntropyLoss:
    case OpKind::MSELossGrad:
    case OpKind::CrossEntropyLossGrad:
      return NodeCategory::Loss;
    case OpKind::SGDUpdate:
      return NodeCategory::Update;
    default:
      return NodeCategory::Elementwise;
  }
}

NodeMetrics::NodeMetrics(float font_px)
    : pad(std::round(font_px * 0.5f)),
      line(std::round(font_px * 1.3f)),
      bar(std::round(font_px * 0.45f)),
      min_width(std::round(font_px * 10.0f)) {}

int GraphScene::find(std::string_view name, SceneNode::Kind kind) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].kind == kind && nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

GraphScene build_graph_scene(const graph::Graph& g, const TextMeasure& measure, float font_px,
                             bool compact) {
  GraphScene scene;
  scene.font_px = font_px;
  scene.compact = compact;
  const NodeMetrics m(font_px);
  const double total_flops = static_cast<double>(g.total_cost().flops);

  // Nodes: sources first (inputs, weights), then ops in their (topological) order, then outputs.
  std::vector<int> source_node(g.tensors().size(), -1);
  std::vector<int> op_node(g.ops().size(), -1);
  for (graph::TensorId t : g.graph_inputs()) {
    const graph::Tensor& tensor = g.tensor(t);
    SceneNode node;
    node.kind = SceneNode::Kind::Source;
    node.category = tensor.role == graph::Role::Weight ? NodeCategory::Weight : NodeCategory::Input;
    node.name = tensor.name;
    node.tensor = t;
    node.title = tensor.name;
    node.kind_label = graph::role_name(tensor.role);
    node.detail = graph::shape_to_string(tensor.shape);
    source_node[size_t(t)] = static_cast<int>(scene.nodes.size());
    scene.nodes.push_back(std::move(node));
  }
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const graph::Op& op = g.ops()[i];
    const graph::OpCost cost = g.op_cost(static_cast<graph::OpId>(i));
    SceneNode node;
    node.kind = SceneNode::Kind::Op;
    node.category = op_category(op.kind);
    node.name = op.name;
    node.op = static_cast<graph::OpId>(i);
    node.title = op.name;
    node.kind_label = graph::op_kind_name(op.kind);
    node.detail = format_flops(cost.flops) + " \xC2\xB7 " + format_bytes(cost.bytes());
    node.flop_share = total_flops > 0 ? static_cast<double>(cost.flops) / total_flops : 0.0;
    op_node[i] = static_cast<int>(scene.nodes.size());
    scene.nodes.push_back(std::move(node));
  }
  for (graph::TensorId t : g.graph_outputs()) {
    const graph::Tensor& tensor = g.tensor(t);
    SceneNode node;
    node.kind = SceneNode::Kind::Output;
    node.category = NodeCategory::Output;
    node.name = tensor.name;
    node.tensor = t;
    node.title = tensor.name;
    node.kind_label = "output";
    node.detail = graph::shape_to_string(tensor.shape);
    scene.nodes.push_back(std::move(node));
  }

  // Sizes: op boxes hold title + kind on one line, the cost line, and the FLOP-share bar;
  // tensor boxes hold name + role on one line and the shape.
  for (SceneNode& node : scene.nodes) {
    const float gap = measure("  ", SceneFont::Regular);
    const float head =
        measure(node.title, SceneFont::Bold) + gap + measure(node.kind_label, SceneFont::Regular);
    // Op boxes also show the FLOP share ("100.0%" is the widest) right-aligned on the cost line;
    // tensor boxes show their shape in the monospaced font.
    const float body =
        node.kind == SceneNode::Kind::Op
            ? measure(node.detail, SceneFont::Regular) + gap + measure("100.0%", SceneFont::Bold)
            : measure(node.detail, SceneFont::Mono);
    float width = std::max(head, body) + 2 * m.pad;
    if (node.kind == SceneNode::Kind::Op) {
      width = std::max(width, m.min_width);
      node.h = 2 * m.pad + 2 * m.line + m.bar + m.pad * 0.5f;
    } else {
      node.h = 2 * m.pad + 2 * m.line - m.pad * 0.5f;
    }
    node.w = std::ceil(width);
  }

  // Edges: one per op input; the tensor's shape labels edges out of ops (sources show their own).
  std::vector<DagEdge> dag_edges;
  std::vector<bool> labelled(g.tensors().size(), false);  // a fanned-out tensor is labelled once
  for (size_t i = 0; i < g.ops().size(); ++i) {
    const graph::Op& op = g.ops()[i];
    for (graph::TensorId t : op.inputs) {
      const graph::Tensor& tensor = g.tensor(t);
      SceneEdge edge;
      edge.tensor = t;
      if (tensor.producer >= 0) {
        edge.from = op_node[size_t(tensor.producer)];
        if (!labelled[size_t(t)]) edge.label = graph::shape_to_string(tensor.shape);
        labelled[size_t(t)] = true;
      } else if (source_node[size_t(t)] >= 0) {
        edge.from = source_node[size_t(t)];
      } else {
        continue;  // an unproduced activation: nothing to draw it from
      }
      edge.to = op_node[i];
      dag_edges.push_back({edge.from, edge.to});
      scene.edges.push_back(std::move(edge));
    }
  }
  for (size_t k = 0; k < scene.nodes.size(); ++k) {
    const SceneNode& node = scene.nodes[k];
    if (node.kind != SceneNode::Kind::Output) continue;
    const graph::Tensor& tensor = g.tensor(node.tensor);
    if (tensor.producer < 0) continue;
    SceneEdge edge;
    edge.tensor = node.tensor;
    edge.from = op_node[size_t(tensor.producer)];
    edge.to = static_cast<int>(k);
    dag_edges.push_back({edge.from, edge.to});
    scene.edges.push_back(std::move(edge));
  }

  std::vector<DagNodeSize> sizes;
  for (const SceneNode& node : scene.nodes) sizes.push_back({node.w, node.h});
  DagLayoutOptions options;
  options.node_gap = std::round(font_px * 2.0f);
  // Room for a shape label between layers (compact: just its line and a margin).
  options.layer_gap = std::round(font_px * (compact ? 1.5f : 2.6f));
  options.dummy_width = std::round(font_px * 1.5f);
  const DagLayout layout = layout_dag(sizes, dag_edges, options);
  for (size_t k = 0; k < scene.nodes.size(); ++k) {
    scene.nodes[k].x = layout.pos[k].x;
    scene.nodes[k].y = layout.pos[k].y;
  }
  for (size_t e = 0; e < scene.edges.size(); ++e) scene.edges[e].points = layout.edge_points[e];
  scene.width = layout.width;
  scene.height = layout.height;
  scene.crossings = layout.crossings;
  scene.simplified = layout.simplified;
  return scene;
}

}  // namespace tilescope::core

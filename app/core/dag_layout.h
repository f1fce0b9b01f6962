// Layered layout of a directed acyclic graph (Sugiyama style), pure C++ so it can be unit-tested.
//
// Steps: (1) longest-path layering, then every node without predecessors (graph inputs, weights)
// is pulled down to sit just above its first consumer; (2) edges that span several layers get
// dummy nodes so every segment joins adjacent layers; (3) barycentre sweeps down and up reorder
// each layer, keeping the order with the fewest crossings; (4) x positions: each node is pulled
// towards the mean of its neighbours (sources follow their consumers, not the reverse), then
// ordered nodes are packed with a minimum gap by merging overlapping blocks (the least-squares
// placement that keeps the order).
// Layers run top to bottom: y grows with the layer index.
#pragma once

#include <cstdint>
#include <vector>

namespace tilescope::core {

struct DagNodeSize {
  float width = 0.0f;
  float height = 0.0f;
};

struct DagEdge {
  int from = 0;
  int to = 0;
};

struct DagLayoutOptions {
  float layer_gap = 60.0f;    // vertical space between the bottom of one layer and the next
  float node_gap = 30.0f;     // minimum horizontal space between neighbours in a layer
  float dummy_width = 16.0f;  // width reserved for an edge passing through a layer
  int sweeps = 12;            // barycentre sweeps (each is one pass down and one pass up)
  int placement_passes = 8;   // coordinate relaxation passes
  // Above this many dummy nodes the layout is simplified: long edges run straight, no sweeps.
  uint64_t max_dummies = 20000;
};

struct DagPoint {
  float x = 0.0f;
  float y = 0.0f;
};

struct DagLayout {
  std::vector<int> layer;     // per node
  std::vector<int> order;     // per node: position within its layer, dummies included
  std::vector<DagPoint> pos;  // per node: top-left corner
  // Per edge: polyline from the bottom centre of `from` through each dummy to the top centre of
  // `to`.
  std::vector<std::vector<DagPoint>> edge_points;
  int layer_count = 0;
  int crossings = 0;  // segment crossings between adjacent layers in the final order; -1 when
                      // the layout was simplified (not counted)
  bool simplified = false;  // too many long edges for the full layout (see max_dummies)
  float width = 0.0f;
  float height = 0.0f;
};

// Throws std::invalid_argument when an edge names a missing node or the graph has a cycle.
DagLayout layout_dag(const std::vector<DagNodeSize>& nodes, const std::vector<DagEdge>& edges,
                     const DagLayoutOptions& options = {});

}  // namespace tilescope::core

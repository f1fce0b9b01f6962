// Rules of the layered DAG layout: edges point down a layer or more, nodes never overlap, sources
// sit just above their first consumer, and barycentre ordering removes avoidable crossings.
#include "app/core/dag_layout.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

using namespace tilescope::core;

namespace {

bool overlap(const DagLayout& l, const std::vector<DagNodeSize>& n, size_t a, size_t b) {
  return l.pos[a].x < l.pos[b].x + n[b].width && l.pos[b].x < l.pos[a].x + n[a].width &&
         l.pos[a].y < l.pos[b].y + n[b].height && l.pos[b].y < l.pos[a].y + n[a].height;
}

// The invariants every layout must keep, whatever the graph.
void check_invariants(const std::vector<DagNodeSize>& nodes, const std::vector<DagEdge>& edges,
                      const DagLayout& l, const DagLayoutOptions& opt) {
  REQUIRE(l.pos.size() == nodes.size());
  REQUIRE(l.edge_points.size() == edges.size());
  for (const DagEdge& e : edges) {
    CHECK(l.layer[size_t(e.to)] > l.layer[size_t(e.from)]);
    // Layer bands stack downwards: the target's top is below the source's bottom.
    CHECK(l.pos[size_t(e.to)].y >= l.pos[size_t(e.from)].y + nodes[size_t(e.from)].height);
  }
  for (size_t a = 0; a < nodes.size(); ++a) {
    CHECK(l.pos[a].x >= -1e-3f);
    CHECK(l.pos[a].x + nodes[a].width <= l.width + 1e-3f);
    for (size_t b = a + 1; b < nodes.size(); ++b) {
      CHECK_FALSE(overlap(l, nodes, a, b));
      if (l.layer[a] == l.layer[b]) {
        // Same layer: the gap between neighbours is at least node_gap.
        const float gap = l.pos[a].x < l.pos[b].x ? l.pos[b].x - (l.pos[a].x + nodes[a].width)
                                                  : l.pos[a].x - (l.pos[b].x + nodes[b].width);
        CHECK(gap >= opt.node_gap - 1e-3f);
      }
    }
  }
  for (size_t i = 0; i < edges.size(); ++i) {
    const auto& pts = l.edge_points[i];
    const size_t f = size_t(edges[i].from), t = size_t(edges[i].to);
    REQUIRE(pts.size() == size_t(l.layer[t] - l.layer[f] + 1));  // one bend per skipped layer
    CHECK(pts.front().x == doctest::Approx(l.pos[f].x + nodes[f].width / 2));
    CHECK(pts.front().y == doctest::Approx(l.pos[f].y + nodes[f].height));
    CHECK(pts.back().x == doctest::Approx(l.pos[t].x + nodes[t].width / 2));
    CHECK(pts.back().y == doctest::Approx(l.pos[t].y));
  }
}

}  // namespace

TEST_CASE("a chain gets one layer per node, stacked top to bottom") {
  const std::vector<DagNodeSize> nodes(4, {100, 40});
  const std::vector<DagEdge> edges = {{0, 1}, {1, 2}, {2, 3}};
  DagLayoutOptions opt;
  const DagLayout l = layout_dag(nodes, edges, opt);
  CHECK(l.layer == std::vector<int>{0, 1, 2, 3});
  CHECK(l.layer_count == 4);
  // Four 40-tall bands with three gaps between them.
  CHECK(l.height == doctest::Approx(4 * 40 + 3 * opt.layer_gap));
  CHECK(l.crossings == 0);
  check_invariants(nodes, edges, l, opt);
}

TEST_CASE("layers are longest paths; sources move down to sit above their first consumer") {
  // y = relu(x @ W.T + b): x(0) W(1) b(2) matmul(3) add(4) relu(5).
  const std::vector<DagNodeSize> nodes(6, {80, 30});
  const std::vector<DagEdge> edges = {{0, 3}, {1, 3}, {3, 4}, {2, 4}, {4, 5}};
  const DagLayout l = layout_dag(nodes, edges);
  // By hand: matmul is one step below x and W; add is below matmul; b, with no inputs, is pulled
  // from layer 0 down to layer 1, just above add.
  CHECK(l.layer == std::vector<int>{0, 0, 1, 1, 2, 3});
  check_invariants(nodes, edges, l, {});
}

TEST_CASE("an edge that skips layers bends through one point per skipped layer") {
  // a → b → c → d and a skip edge a → d (a residual connection).
  const std::vector<DagNodeSize> nodes(4, {60, 20});
  const std::vector<DagEdge> edges = {{0, 1}, {1, 2}, {2, 3}, {0, 3}};
  const DagLayout l = layout_dag(nodes, edges);
  CHECK(l.edge_points[3].size() == 4);  // start, two bends (layers 1 and 2), end
  check_invariants(nodes, edges, l, {});
}

TEST_CASE("barycentre ordering removes a crossing the input order has") {
  // Inputs 0,1 and outputs 2,3 with 0→3 and 1→2: in index order the two edges cross once;
  // swapping either layer removes it.
  const std::vector<DagNodeSize> nodes(4, {50, 20});
  const std::vector<DagEdge> edges = {{0, 3}, {1, 2}, {0, 2}};
  // 0→3, 0→2, 1→2: index order [0,1] / [2,3] has 0→3 crossing 1→2; the order [0,1] / [3,2] has
  // none.
  const DagLayout l = layout_dag(nodes, edges);
  CHECK(l.crossings == 0);
  check_invariants(nodes, edges, l, {});
}

TEST_CASE("a node with one parent is centred under it when nothing is in the way") {
  const std::vector<DagNodeSize> nodes = {{200, 40}, {60, 20}};
  const DagLayout l = layout_dag(nodes, {{0, 1}});
  CHECK(l.pos[1].x + 30 == doctest::Approx(l.pos[0].x + 100));
}

TEST_CASE("a chain with a weight beside every op stays vertical") {
  // c0 → c1 → ... → c5, and weight k feeds c_k: a Sequential network. Weights sit beside the
  // chain; they must not pull it sideways, so every chain op keeps c0's centre.
  std::vector<DagNodeSize> nodes(6, {100, 40});
  std::vector<DagEdge> edges;
  for (int k = 1; k < 6; ++k) {
    edges.push_back({k - 1, k});
    nodes.push_back({60, 30});
    edges.push_back({static_cast<int>(nodes.size()) - 1, k});
  }
  const DagLayout l = layout_dag(nodes, edges);
  for (int k = 2; k < 6; ++k) {
    CAPTURE(k);
    CHECK(l.pos[size_t(k)].x == doctest::Approx(l.pos[1].x));
  }
  // c0 is a source too: it and weight 1 (node 6) share c1 as consumer, so they sit side by side
  // as one block centred over c1 (like x and W over a matmul).
  const float c1 = l.pos[1].x + 50;
  const float left_end = std::min(l.pos[0].x, l.pos[6].x);
  const float right_end = std::max(l.pos[0].x + 100, l.pos[6].x + 60);
  CHECK((left_end + right_end) / 2 == doctest::Approx(c1));
  check_invariants(nodes, edges, l, {});
}

TEST_CASE("bad input is an error that says what is wrong") {
  const std::vector<DagNodeSize> nodes(3, {10, 10});
  CHECK_THROWS_WITH_AS(layout_dag(nodes, {{0, 1}, {1, 2}, {2, 0}}), doctest::Contains("cycle"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(layout_dag(nodes, {{0, 5}}), doctest::Contains("outside 0..2"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(layout_dag(nodes, {{1, 1}}), doctest::Contains("self-loop"),
                       std::invalid_argument);
  CHECK(layout_dag({}, {}).pos.empty());
}

TEST_CASE("random DAGs keep every invariant") {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 14);
    std::vector<DagNodeSize> nodes;
    for (int i = 0; i < n; ++i)
      nodes.push_back({20.0f + float(rng() % 200), 10.0f + float(rng() % 60)});
    // Edges only from lower to higher index: acyclic by construction.
    std::vector<DagEdge> edges;
    for (int to = 1; to < n; ++to)
      for (int from = 0; from < to; ++from)
        if (rng() % 4 == 0) edges.push_back({from, to});
    DagLayoutOptions opt;
    opt.node_gap = 12.0f + float(rng() % 20);
    CAPTURE(trial);
    const DagLayout l = layout_dag(nodes, edges, opt);
    check_invariants(nodes, edges, l, opt);
  }
}

TEST_CASE("a long chain that shares one input is laid out in linear time, and says so") {
  // y = x + x + … + x with 5,000 adds: x feeds every add, so its edges span up to 5,000 layers —
  // 12.5 million dummies for the full layout. Past max_dummies the edges run straight.
  const int adds = 5000;
  std::vector<DagNodeSize> nodes(size_t(adds) + 1, DagNodeSize{80.0f, 30.0f});
  std::vector<DagEdge> edges;
  for (int i = 1; i <= adds; ++i) {
    edges.push_back({0, i});                  // x → add
    if (i > 1) edges.push_back({i - 1, i});  // the chain
  }
  const auto start = std::chrono::steady_clock::now();
  const DagLayout layout = layout_dag(nodes, edges);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(layout.simplified);
  CHECK(layout.crossings == -1);
  REQUIRE(layout.edge_points.size() == edges.size());
  for (const auto& pts : layout.edge_points) CHECK(pts.size() == 2);  // no dummies
  CHECK(layout.layer_count == adds + 1);  // x on top, then one add a layer
  // A small graph keeps the full layout.
  const DagLayout small = layout_dag({{80, 30}, {80, 30}, {80, 30}}, {{0, 1}, {1, 2}, {0, 2}});
  CHECK(!small.simplified);
  CHECK(small.edge_points[2].size() == 3);  // 0 → 2 passes one dummy in layer 1
}

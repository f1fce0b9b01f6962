// Layered layout of a directed acyclic graph (Sugiyama style), pure C++ so it can be unit-tested.
#include "app/core/dag_layout.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tilescope::core {
namespace {

// [SECTION] Layering

// Longest-path layers in topological order; throws on a cycle.
std::vector<int> assign_layers(int n, const std::vector<DagEdge>& edges) {
  std::vector<std::vector<int>> succ(static_cast<size_t>(n));
  std::vector<std::vector<int>> pred(static_cast<size_t>(n));
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  for (const DagEdge& e : edges) {
    succ[size_t(e.from)].push_back(e.to);
    pred[size_t(e.to)].push_back(e.from);
    ++indegree[size_t(e.to)];
  }
  std::vector<int> layer(static_cast<size_t>(n), 0);
  std::vector<int> ready;
  for (int v = 0; v < n; ++v)
    if (indegree[size_t(v)] == 0) ready.push_back(v);
  int visited = 0;
  // Process in index order so the result does not depend on container details.
  for (size_t head = 0; head < ready.size(); ++head) {
    const int v = ready[head];
    ++visited;
    for (int s : succ[size_t(v)]) {
      layer[size_t(s)] = std::max(layer[size_t(s)], layer[size_t(v)] + 1);
      if (--indegree[size_t(s)] == 0) ready.push_back(s);
    }
  }
  if (visited != n) {
    throw std::invalid_argument("layout_dag: the graph has a cycle (" +
                                std::to_string(n - visited) + " nodes are on or behind one)");
  }
  // A source (input or weight) belongs just above its first consumer, not at the very top:
  // a conv's weights deep in a network should sit next to that conv.
  for (int v = 0; v < n; ++v) {
    if (!pred[size_t(v)].empty() || succ[size_t(v)].empty()) continue;
    int first_consumer = layer[size_t(succ[size_t(v)][0])];
    for (int s : succ[size_t(v)]) first_consumer = std::min(first_consumer, layer[size_t(s)]);
    layer[size_t(v)] = std::max(0, first_consumer - 1);
  }
  return layer;
}

// [SECTION] Crossing reduction

struct Layered {
  std::vector<int> layer;                  // per virtual node (real nodes first, then dummies)
  std::vector<float> width;                // per virtual node
  std::vector<std::vector<int>> up, down;  // neighbours in the layer above / below
  std::vector<std::vector<int>> rows;      // per layer, node ids in left-to-right order
  std::vector<std::vector<int>> chains;    // per original edge: the virtual nodes from → to
};

int count_crossings(const Layered& g, const std::vector<int>& position) {
  int crossings = 0;
  for (size_t l = 0; l + 1 < g.rows.size(); ++l) {
    std::vector<std::pair<int, int>> segments;
    for (int a : g.rows[l])
      for (int b : g.down[size_t(a)])
        segments.emplace_back(position[size_t(a)], position[size_t(b)]);
    for (size_t i = 0; i < segments.size(); ++i)
      for (size_t j = i + 1; j < segments.size(); ++j) {
        const long da = segments[i].first - segments[j].first;
        const long db = segments[i].second - segments[j].second;
        if (da * db < 0) ++crossings;
      }
  }
  return crossings;
}

std::vector<int> positions_of(const Layered& g) {
  std::vector<int> position(g.layer.size(), 0);
  for (const auto& row : g.rows)
    for (size_t i = 0; i < row.size(); ++i) position[size_t(row[i])] = static_cast<int>(i);
  return position;
}

// Reorders one layer by the mean position of each node's neighbours in the adjacent layer.
void barycentre_pass(Layered& g, size_t l, bool use_up) {
  const std::vector<int> position = positions_of(g);
  std::vector<int>& row = g.rows[l];
  std::vector<std::pair<double, int>> keyed;
  for (size_t i = 0; i < row.size(); ++i) {
    const auto& nbrs = use_up ? g.up[size_t(row[i])] : g.down[size_t(row[i])];
    double key = static_cast<double>(i);  // no neighbours: stay where it is
    if (!nbrs.empty()) {
      double sum = 0.0;
      for (int u : nbrs) sum += position[size_t(u)];
      key = sum / static_cast<double>(nbrs.size());
    }
    keyed.emplace_back(key, row[i]);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < row.size(); ++i) row[i] = keyed[i].second;
}

// [SECTION] Coordinates

// Places one layer: node i wants its centre at desired[i]; keeps the order and gaps, minimising
// the squared displacement by merging blocks that would overlap (pool-adjacent-violators).
void place_row(const std::vector<int>& row, const std::vector<float>& width,
               const std::vector<double>& desired_centre, float gap, std::vector<double>& left) {
  struct Block {
    size_t first, last;  // range of members in row
    double sum_target;   // sum over members of (desired left - member offset in the block)
    int count;
    double left() const { return sum_target / count; }
  };
  std::vector<double> offset(row.size(), 0.0);  // each member's offset from its block's left
  std::vector<Block> blocks;
  for (size_t i = 0; i < row.size(); ++i) {
    blocks.push_back({i, i, desired_centre[i] - width[size_t(row[i])] / 2.0, 1});
    while (blocks.size() > 1) {
      Block& prev = blocks[blocks.size() - 2];
      const Block& cur = blocks.back();
      const double shift = offset[prev.last] + width[size_t(row[prev.last])] + gap;
      if (prev.left() + shift <= cur.left()) break;
      // Overlap: glue cur to the right end of prev; the merged block sits at its members' mean.
      for (size_t k = cur.first; k <= cur.last; ++k) offset[k] += shift;
      prev.sum_target += cur.sum_target - shift * cur.count;
      prev.count += cur.count;
      prev.last = cur.last;
      blocks.pop_back();
    }
  }
  for (const Block& b : blocks)
    for (size_t k = b.first; k <= b.last; ++k) left[size_t(row[k])] = b.left() + offset[k];
}

// Throws when an edge names a node outside 0..n-1 or is a self-loop.
void check_edges(int n, const std::vector<DagEdge>& edges) {
  for (size_t i = 0; i < edges.size(); ++i) {
    const DagEdge& e = edges[i];
    if (e.from < 0 || e.from >= n || e.to < 0 || e.to >= n) {
      throw std::invalid_argument("layout_dag: edge " + std::to_string(i) + " (" +
                                  std::to_string(e.from) + " -> " + std::to_string(e.to) +
                                  ") names a node outside 0.." + std::to_string(n - 1));
    }
    if (e.from == e.to) {
      throw std::invalid_argument("layout_dag: edge " + std::to_string(i) +
                                  " is a self-loop on node " + std::to_string(e.from));
    }
  }
}

// Builds the proper layered graph: dummies split edges that skip layers (none when `simplified`),
// and each layer's row starts in node index order.
Layered build_layered(const std::vector<DagNodeSize>& nodes, const std::vector<DagEdge>& edges,
                      const std::vector<int>& real_layer, const DagLayoutOptions& options,
                      bool simplified) {
  const int n = static_cast<int>(nodes.size());
  Layered g;
  g.layer = real_layer;
  for (const DagNodeSize& s : nodes) g.width.push_back(s.width);
  g.up.assign(size_t(n), {});
  g.down.assign(size_t(n), {});
  for (const DagEdge& e : edges) {
    std::vector<int> chain = {e.from};
    for (int l = real_layer[size_t(e.from)] + 1; !simplified && l < real_layer[size_t(e.to)]; ++l) {
      g.layer.push_back(l);
      g.width.push_back(options.dummy_width);
      g.up.emplace_back();
      g.down.emplace_back();
      chain.push_back(static_cast<int>(g.layer.size()) - 1);
    }
    chain.push_back(e.to);
    for (size_t k = 0; k + 1 < chain.size(); ++k) {
      g.down[size_t(chain[k])].push_back(chain[k + 1]);
      g.up[size_t(chain[k + 1])].push_back(chain[k]);
    }
    g.chains.push_back(std::move(chain));
  }
  int layer_count = 0;
  for (int l : g.layer) layer_count = std::max(layer_count, l + 1);
  g.rows.assign(size_t(layer_count), {});
  // Initial order: node index (ops arrive in topological order, which is a sensible start).
  for (size_t v = 0; v < g.layer.size(); ++v) g.rows[size_t(g.layer[v])].push_back(int(v));
  return g;
}

// Barycentre sweeps down and up, keeping the row order with the fewest crossings; returns that
// count (0 when `simplified`: the order is left as it came).
int reduce_crossings(Layered& g, const DagLayoutOptions& options, bool simplified) {
  std::vector<std::vector<int>> best_rows = g.rows;
  int best = simplified ? 0 : count_crossings(g, positions_of(g));
  for (int sweep = 0; sweep < options.sweeps && best > 0; ++sweep) {
    for (size_t l = 1; l < g.rows.size(); ++l) barycentre_pass(g, l, true);
    for (size_t l = g.rows.size(); l-- > 1;) barycentre_pass(g, l - 1, false);
    const int c = count_crossings(g, positions_of(g));
    if (c < best) {
      best = c;
      best_rows = g.rows;
    }
  }
  g.rows = best_rows;
  return best;
}

// Vertical bands: each layer is as tall as its tallest node; nodes are centred in the band.
struct Bands {
  std::vector<float> top, height;
  float total = 0.0f;  // the height of all bands with the gaps between them
};

// Computes the vertical band of each of the `layer_count` layers.
Bands vertical_bands(const std::vector<DagNodeSize>& nodes, const std::vector<int>& real_layer,
                     int layer_count, const DagLayoutOptions& options) {
  const int n = static_cast<int>(nodes.size());
  Bands b;
  b.top.assign(size_t(layer_count), 0.0f);
  b.height.assign(size_t(layer_count), 0.0f);
  for (int v = 0; v < n; ++v)
    b.height[size_t(real_layer[size_t(v)])] =
        std::max(b.height[size_t(real_layer[size_t(v)])], nodes[size_t(v)].height);
  float y = 0.0f;
  for (int l = 0; l < layer_count; ++l) {
    b.top[size_t(l)] = y;
    y += b.height[size_t(l)] + options.layer_gap;
  }
  b.total = layer_count ? y - options.layer_gap : 0.0f;
  return b;
}

// Horizontal placement state: each virtual node's left edge, which nodes are sources, and each
// layer's non-source nodes in order.
struct Placement {
  std::vector<double> left;
  std::vector<bool> is_source;
  std::vector<std::vector<int>> core_rows;
  // The x of virtual node v's centre.
  double centre(const Layered& g, int v) const {
    return left[size_t(v)] + g.width[size_t(v)] / 2.0;
  }
};

// Places the non-source nodes: packed, then relaxed towards neighbours, alternating directions.
// Sources (inputs, weights) follow their consumer and are placed last (place_sources), into the
// room the other nodes leave: if they took part in the relaxation, every op would lean towards
// the weight beside it and a deep chain would drift sideways.
Placement place_core(const Layered& g, int n, const DagLayoutOptions& options) {
  Placement pl;
  pl.left.assign(g.layer.size(), 0.0);
  for (const auto& row : g.rows) {
    double x = 0.0;
    for (int v : row) {
      pl.left[size_t(v)] = x;
      x += g.width[size_t(v)] + options.node_gap;
    }
  }
  pl.is_source.assign(g.layer.size(), false);
  for (int v = 0; v < n; ++v) pl.is_source[size_t(v)] = g.up[size_t(v)].empty();
  for (const auto& row : g.rows) {
    pl.core_rows.emplace_back();
    for (int v : row)
      if (!pl.is_source[size_t(v)]) pl.core_rows.back().push_back(v);
  }
  // The mean centre of v's non-source neighbours on one side; false when it has none.
  auto pull = [&](int v, bool upwards, double& out_centre) {
    double sum = 0.0;
    int count = 0;
    for (int u : upwards ? g.up[size_t(v)] : g.down[size_t(v)]) {
      if (pl.is_source[size_t(u)]) continue;
      sum += pl.centre(g, u);
      ++count;
    }
    if (count) out_centre = sum / count;
    return count > 0;
  };
  for (int pass = 0; pass < options.placement_passes; ++pass) {
    const bool downwards = pass % 2 == 0;
    for (size_t k = 0; k < pl.core_rows.size(); ++k) {
      const auto& row = pl.core_rows[downwards ? k : pl.core_rows.size() - 1 - k];
      std::vector<double> desired(row.size());
      for (size_t i = 0; i < row.size(); ++i) {
        // Prefer the neighbours on the side we come from; fall back to the other side.
        const int v = row[i];
        if (!pull(v, downwards, desired[i]) && !pull(v, !downwards, desired[i]))
          desired[i] = pl.centre(g, v);
      }
      place_row(row, g.width, desired, options.node_gap, pl.left);
    }
  }
  return pl;
}

// Places layer l's sources: each group that feeds the same consumer (x and W of one matmul) as
// one block, as close above that consumer as the room allows; then sorts the row by x.
void place_sources(Layered& g, size_t l, const DagLayoutOptions& options, Placement& pl) {
  std::vector<double>& left = pl.left;
  // Occupied intervals of this layer.
  std::vector<std::pair<double, double>> taken;
  for (int v : pl.core_rows[l])
    taken.emplace_back(left[size_t(v)], left[size_t(v)] + g.width[size_t(v)]);
  std::vector<std::pair<int, std::vector<int>>> groups;  // consumer (-1: none) → sources
  for (int v : g.rows[l]) {
    if (!pl.is_source[size_t(v)]) continue;
    const int consumer = g.down[size_t(v)].empty() ? -1 : g.down[size_t(v)].front();
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& grp) { return consumer >= 0 && grp.first == consumer; });
    if (it == groups.end())
      groups.push_back({consumer, {v}});
    else
      it->second.push_back(v);
  }
  for (const auto& [consumer, members] : groups) {
    double block_w = 0.0;
    for (int v : members) block_w += g.width[size_t(v)];
    block_w += options.node_gap * static_cast<double>(members.size() - 1);
    const double want =
        (consumer >= 0 ? pl.centre(g, consumer) : pl.centre(g, members.front())) - block_w / 2;
    auto fits = [&](double x) {
      for (const auto& [a, b] : taken)
        if (x < b + options.node_gap && a < x + block_w + options.node_gap) return false;
      return true;
    };
    // The best spot is the wanted one, or flush against the side of some occupied interval.
    double best_x = want;
    bool found = fits(want);
    for (const auto& [a, b] : taken) {
      for (double x : {a - options.node_gap - block_w, b + options.node_gap}) {
        if (fits(x) && (!found || std::abs(x - want) < std::abs(best_x - want))) {
          best_x = x;
          found = true;
        }
      }
    }
    double x = best_x;
    for (int v : members) {
      left[size_t(v)] = x;
      taken.emplace_back(x, x + g.width[size_t(v)]);
      x += g.width[size_t(v)] + options.node_gap;
    }
  }
  // The final order within the layer is the geometric one.
  std::stable_sort(g.rows[l].begin(), g.rows[l].end(),
                   [&](int a, int b) { return left[size_t(a)] < left[size_t(b)]; });
}

}  // namespace

DagLayout layout_dag(const std::vector<DagNodeSize>& nodes, const std::vector<DagEdge>& edges,
                     const DagLayoutOptions& options) {
  const int n = static_cast<int>(nodes.size());
  check_edges(n, edges);

  DagLayout out;
  const std::vector<int> real_layer = assign_layers(n, edges);

  // Dummies grow with the square of a long chain's length (a tensor read by every op of a
  // 20,000-op chain spans up to 20,000 layers), and crossing counts with the square of a layer's
  // segments: past the budget, long edges are drawn straight and the order is left as it came.
  uint64_t dummies = 0;
  for (const DagEdge& e : edges)
    dummies += uint64_t(std::max(0, real_layer[size_t(e.to)] - real_layer[size_t(e.from)] - 1));
  out.simplified = dummies > options.max_dummies;

  Layered g = build_layered(nodes, edges, real_layer, options, out.simplified);
  const int layer_count = static_cast<int>(g.rows.size());
  int best = reduce_crossings(g, options, out.simplified);

  const Bands bands = vertical_bands(nodes, real_layer, layer_count, options);
  out.height = bands.total;

  Placement pl = place_core(g, n, options);
  for (size_t l = 0; l < g.rows.size(); ++l) place_sources(g, l, options, pl);
  const std::vector<double>& left = pl.left;
  best = out.simplified ? -1 : count_crossings(g, positions_of(g));
  double min_x = 0.0, max_x = 0.0;
  bool any = false;
  for (size_t v = 0; v < g.layer.size(); ++v) {
    const double l = left[v], r = left[v] + g.width[v];
    min_x = any ? std::min(min_x, l) : l;
    max_x = any ? std::max(max_x, r) : r;
    any = true;
  }
  out.width = any ? static_cast<float>(max_x - min_x) : 0.0f;

  out.layer_count = layer_count;
  out.crossings = best;
  out.layer.assign(real_layer.begin(), real_layer.end());
  const std::vector<int> position = positions_of(g);
  out.order.assign(position.begin(), position.begin() + n);
  for (int v = 0; v < n; ++v) {
    const int l = real_layer[size_t(v)];
    out.pos.push_back(
        {static_cast<float>(left[size_t(v)] - min_x),
         bands.top[size_t(l)] + (bands.height[size_t(l)] - nodes[size_t(v)].height) / 2});
  }
  for (const auto& chain : g.chains) {
    std::vector<DagPoint> pts;
    const int from = chain.front(), to = chain.back();
    pts.push_back({out.pos[size_t(from)].x + nodes[size_t(from)].width / 2,
                   out.pos[size_t(from)].y + nodes[size_t(from)].height});
    for (size_t k = 1; k + 1 < chain.size(); ++k) {
      const int d = chain[k];
      const int l = g.layer[size_t(d)];
      pts.push_back({static_cast<float>(pl.centre(g, d) - min_x),
                     bands.top[size_t(l)] + bands.height[size_t(l)] / 2});
    }
    pts.push_back({out.pos[size_t(to)].x + nodes[size_t(to)].width / 2, out.pos[size_t(to)].y});
    out.edge_points.push_back(std::move(pts));
  }
  return out;
}

}  // namespace tilescope::core

// The tree's include graph (issues #12 and #27): no cycle between components anywhere, and the
// folders layered. A component is a header with its source file (autotune.h + autotune.cpp):
// autotune.cpp including workbench.h while workbench.h includes autotune.h is a cycle even though
// no file includes itself, because neither half can be built, tested or understood without the
// other. A header without a source file of its own whose functions another source defines belongs
// to that source's component (workbench.cpp defining tile_grid.h's make_tile_grids made the two
// one component, and closed a cycle no include line showed).
// Folders:
//   - sim/ includes neither kernels/ nor app/, and its rooms are ordered:
//     io < graph, memory < lang, schedule < predict < import < pipeline (sim/pipeline.h) < lesson;
//     a room includes only rooms before it;
//   - kernels/ never includes app/;
//   - app/gui and app/cli may include app/core; app/core includes neither, and the two front ends
//     never include each other.
// The checker reads the `#include "..."` lines of {app,sim,kernels}/**/*.{h,cpp,cuh,cu} (rooted at
// the source tree, "app/core/x.h", or beside the including file, "commands.h"); it is run on the
// real tree and on fixtures that break each rule, so it can fail.
#include "tests/support/source_tree.h"
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// [SECTION] The checker

struct Include {
  std::string from;  // the including file, "app/core/autotune.cpp"
  int line = 0;      // 1-based
  std::string to;    // the included file, resolved: "app/core/workbench.h"
};

struct IncludeGraph {
  std::set<std::string> files;
  std::vector<Include> includes;        // those that resolve to a file of `files`
  std::vector<std::string> unresolved;  // "app/x.cpp:3: includes app/gone.h, not a file of app/"
  // Component → the component it belongs to: a header without a source file whose functions are
  // defined in another component's source ("app/core/tile_grid" → "app/core/workbench").
  std::map<std::string, std::string> merged;
};

using tilescope::test::kSourceRoots;

bool is_source(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".cpp" || ext == ".cu";
}

// The names of the functions a header declares at namespace scope: a line starting in column 0
// (not a directive, comment, keyword or type definition) with "NAME(" and no body on it.
std::set<std::string> declared_functions(const std::string& header_text) {
  std::set<std::string> names;
  std::istringstream in(header_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '_'))
      continue;
    bool skip = false;
    for (const char* kw : {"namespace", "struct", "class", "enum", "using", "template", "inline",
                           "constexpr", "static", "extern", "typedef", "union", "friend"})
      if (line.rfind(kw, 0) == 0 && !std::isalnum(static_cast<unsigned char>(line[std::strlen(kw)])))
        skip = true;
    const size_t paren = line.find('(');
    if (skip || paren == std::string::npos || line.find('{') != std::string::npos ||
        line.find('=') < paren)
      continue;
    size_t b = paren;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(line[b - 1])) || line[b - 1] == '_')) --b;
    if (b < paren && b > 0 && line[b - 1] != ':') names.insert(line.substr(b, paren - b));
  }
  return names;
}

// True when `source_text` defines function `name` at namespace scope: a column-0 line with
// "NAME(" (or "::NAME(") whose statement opens a body before it ends.
bool defines_function(const std::string& source_text, const std::string& name) {
  size_t at = 0;
  while ((at = source_text.find(name + "(", at)) != std::string::npos) {
    const size_t line_start = source_text.rfind('\n', at) + 1;  // npos + 1 == 0
    const bool word_start =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(source_text[at - 1])) ||
                     source_text[at - 1] == '_');
    const char first = source_text[line_start];
    if (word_start && (std::isalpha(static_cast<unsigned char>(first)) || first == '_')) {
      const size_t brace = source_text.find('{', at), semi = source_text.find(';', at);
      if (brace != std::string::npos && brace < semi) return true;
    }
    at += name.size();
  }
  return false;
}

// The quoted path of an `#include "..."` line, or "" for any other line.
std::string quoted_include(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return {};
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return {};
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return {};
  const size_t end = line.find('"', i + 1);
  return end == std::string::npos ? std::string() : line.substr(i + 1, end - i - 1);
}

// `sources`: repository-relative path ("app/core/x.h") → file text.
IncludeGraph read_include_graph(const std::map<std::string, std::string>& sources) {
  IncludeGraph g;
  for (const auto& [path, text] : sources) g.files.insert(path);
  for (const auto& [path, text] : sources) {
    std::istringstream in(text);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string inc = quoted_include(line);
      if (inc.empty()) continue;
      // Rooted at the source tree (the build's include directory), else beside the includer.
      const std::string rooted = fs::path(inc).lexically_normal().generic_string();
      const std::string beside =
          (fs::path(path).parent_path() / inc).lexically_normal().generic_string();
      if (g.files.count(rooted))
        g.includes.push_back({path, n, rooted});
      else if (g.files.count(beside))
        g.includes.push_back({path, n, beside});
      else
        for (const char* root : kSourceRoots)
          if (inc.rfind(root, 0) == 0)
            g.unresolved.push_back(path + ":" + std::to_string(n) + ": includes " + inc +
                                   ", not a file of " + root);
      // Anything else (build_paths.h, a system header in quotes) is outside the tree.
    }
  }
  // Headers without a source of their own: where are their functions defined?
  for (const auto& [path, text] : sources) {
    const fs::path p(path);
    if (p.extension() != ".h") continue;
    const std::string stem = (p.parent_path() / p.stem()).generic_string();
    if (g.files.count(stem + ".cpp") || g.files.count(stem + ".cu")) continue;
    for (const std::string& name : declared_functions(text))
      for (const auto& [other, other_text] : sources)
        if (is_source(other) && defines_function(other_text, name)) {
          const fs::path o(other);
          g.merged.emplace(stem, (o.parent_path() / o.stem()).generic_string());
        }
  }
  return g;
}

std::string component_of(const IncludeGraph& g, const std::string& file) {
  const fs::path p(file);
  const std::string c = (p.parent_path() / p.stem()).generic_string();
  const auto m = g.merged.find(c);
  return m == g.merged.end() ? c : m->second;
}

// Each cycle between components, as "a -> b -> a (a.cpp:5 includes b.h; b.h:9 includes a.h)":
// one per strongly connected component of more than one component, the shortest cycle through
// its first component by name.
std::vector<std::string> find_component_cycles(const IncludeGraph& g) {
  std::map<std::string, std::map<std::string, const Include*>> edges;  // first include as evidence
  std::set<std::string> nodes;
  for (const std::string& f : g.files) nodes.insert(component_of(g, f));
  for (const Include& inc : g.includes) {
    const std::string a = component_of(g, inc.from), b = component_of(g, inc.to);
    if (a != b && !edges[a].count(b)) edges[a][b] = &inc;
  }
  // Tarjan's strongly connected components.
  std::map<std::string, int> index, low;
  std::set<std::string> on_stack;
  std::vector<std::string> stack;
  std::vector<std::vector<std::string>> sccs;
  int next = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    for (const auto& [w, inc] : edges[v]) {
      if (!index.count(w)) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack.count(w)) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] != index[v]) return;
    std::vector<std::string> scc;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      scc.push_back(w);
    } while (w != v);
    if (scc.size() > 1) sccs.push_back(scc);
  };
  for (const std::string& v : nodes)
    if (!index.count(v)) visit(v);

  std::vector<std::string> out;
  for (std::vector<std::string>& scc : sccs) {
    std::sort(scc.begin(), scc.end());
    const std::set<std::string> inside(scc.begin(), scc.end());
    // Breadth-first from the first component back to itself, inside the SCC.
    const std::string& start = scc.front();
    std::map<std::string, std::string> parent;
    std::vector<std::string> frontier{start};
    std::string last;
    while (last.empty() && !frontier.empty()) {
      std::vector<std::string> next_frontier;
      for (const std::string& v : frontier) {
        for (const auto& [w, inc] : edges[v]) {
          if (!inside.count(w)) continue;
          if (w == start) {
            last = v;
            break;
          }
          if (parent.count(w)) continue;
          parent[w] = v;
          next_frontier.push_back(w);
        }
        if (!last.empty()) break;
      }
      frontier = std::move(next_frontier);
    }
    std::vector<std::string> path{start};
    for (std::string v = last; v != start; v = parent[v]) path.insert(path.begin() + 1, v);
    std::string text, evidence;
    for (size_t i = 0; i < path.size(); ++i) {
      const std::string& a = path[i];
      const std::string& b = path[(i + 1) % path.size()];
      const Include* inc = edges[a][b];
      text += a + " -> ";
      evidence +=
          (i ? "; " : "") + inc->from + ":" + std::to_string(inc->line) + " includes " + inc->to;
    }
    out.push_back(text + start + " (" + evidence + ")");
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "app/core", "app/gui", "app/cli" for a file in (or below) one of them, else "".
std::string layer_of(const std::string& file) {
  for (const char* layer : {"app/core/", "app/gui/", "app/cli/"})
    if (file.rfind(layer, 0) == 0) return std::string(layer, std::strlen(layer) - 1);
  return {};
}

// sim's rooms in the order they may include each other (equal ranks do not include each other):
// "sim/pipeline.h" is the room "pipeline".
int sim_rank(const std::string& room) {
  static const std::map<std::string, int> ranks = {
      {"io", 0},      {"graph", 1},  {"memory", 1},   {"lang", 2},  {"schedule", 2},
      {"predict", 3}, {"import", 4}, {"pipeline", 5}, {"lesson", 6}};
  const auto it = ranks.find(room);
  return it == ranks.end() ? -1 : it->second;
}

std::string sim_room(const std::string& file) {
  const std::string rest = file.substr(4);  // after "sim/"
  const size_t slash = rest.find('/');
  return slash == std::string::npos ? fs::path(rest).stem().string() : rest.substr(0, slash);
}

// Includes that cross the folders the wrong way, and includes of tree files that do not exist.
std::vector<std::string> find_layer_violations(const IncludeGraph& g) {
  std::vector<std::string> out = g.unresolved;
  for (const Include& inc : g.includes) {
    const std::string where = inc.from + ":" + std::to_string(inc.line) + ": includes " + inc.to;
    const bool from_sim = inc.from.rfind("sim/", 0) == 0, to_sim = inc.to.rfind("sim/", 0) == 0;
    if (from_sim && !to_sim) {
      out.push_back(where + ": sim/ includes neither kernels/ nor app/");
      continue;
    }
    if (inc.from.rfind("kernels/", 0) == 0 && inc.to.rfind("app/", 0) == 0) {
      out.push_back(where + ": kernels/ never includes app/");
      continue;
    }
    if (from_sim) {
      const std::string a = sim_room(inc.from), b = sim_room(inc.to);
      const int ra = sim_rank(a), rb = sim_rank(b);
      if (ra < 0 || rb < 0)
        out.push_back(where + ": sim/" + (ra < 0 ? a : b) +
                      " is not a room of sim/ (io, graph, memory, lang, schedule, predict, "
                      "pipeline, lesson): add it to the order");
      else if (a != b && rb >= ra)
        out.push_back(where + ": sim's rooms go io < graph, memory < lang, schedule < predict < import < "
                              "pipeline < lesson, and " + a + " includes only rooms before it");
      continue;
    }
    const std::string from = layer_of(inc.from), to = layer_of(inc.to);
    if (from == to || to == "app/core" || from.empty() || to.empty()) continue;
    if (from == "app/core")
      out.push_back(where + ": app/core includes no front end (app/gui, app/cli)");
    else
      out.push_back(where + ": the front ends (app/gui, app/cli) do not include each other");
  }
  return out;
}

// Every .h, .cpp, .cuh, .cu and .inc under TILESCOPE_SOURCE_DIR/{app,sim,kernels}, and the headers
// their CMakeLists.txt generate, keyed by repository-relative path.
std::map<std::string, std::string> read_tree_sources() {
  std::map<std::string, std::string> sources =
      tilescope::test::read_source_tree([](const fs::path& p) {
        return tilescope::test::is_code_file(p) || p.extension() == ".inc" ||
               p.filename() == "CMakeLists.txt";
      });
  // Headers the build generates ("file(CONFIGURE OUTPUT …/generated/kernels/cpu/x_text.h"): files
  // of the tree, with no includes of their own. The CMakeLists themselves are not sources.
  for (auto it = sources.begin(); it != sources.end();) {
    if (fs::path(it->first).filename() != "CMakeLists.txt") {
      ++it;
      continue;
    }
    const std::string text = std::move(it->second);
    it = sources.erase(it);
    for (size_t at = 0; (at = text.find("/generated/", at)) != std::string::npos;) {
      at += std::strlen("/generated/");
      const std::string path = text.substr(at, text.find_first_of(" \t\n)\"", at) - at);
      for (const char* top : kSourceRoots)
        if (path.rfind(top, 0) == 0 && path.find('$') == std::string::npos) sources[path] = "";
    }
  }
  return sources;
}

bool has_include(const IncludeGraph& g, const std::string& from, const std::string& to) {
  return std::any_of(g.includes.begin(), g.includes.end(),
                     [&](const Include& i) { return i.from == from && i.to == to; });
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

}  // namespace

// [SECTION] The real tree

TEST_CASE("the tree's include graph: no cycle between components, sim's rooms and the folders in order") {
  const IncludeGraph g = read_include_graph(read_tree_sources());
  // The scan must see the tree, or an empty graph would pass: the folders' files and one include
  // of each kind (rooted, and beside the includer).
  CHECK(g.files.count("app/core/workbench.h") == 1);
  CHECK(g.files.count("app/gui/views/views.h") == 1);
  CHECK(g.files.count("app/cli/main.cpp") == 1);
  CHECK(g.files.count("sim/pipeline.h") == 1);
  CHECK(g.files.count("kernels/cuda/nvrtc_runner.h") == 1);
  CHECK(has_include(g, "app/gui/views/views.h", "app/core/app_state.h"));
  CHECK(has_include(g, "app/cli/main.cpp", "app/cli/commands.h"));
  CHECK(has_include(g, "sim/pipeline.h", "sim/predict/simulate.h"));
  // Headers without a source are seen: tile_grid.h has its own tile_grid.cpp now, so it is merged
  // into nobody; jobs.h (templates and inline functions only) defines nothing elsewhere.
  CHECK(g.merged.count("app/core/tile_grid") == 0);
  CHECK(g.merged.count("app/core/jobs") == 0);
  CHECK(g.merged.count("app/core/memory_grid") == 0);  // memory_grid.cpp of its own
  // gpu_kernels.h's launchers are all in gpu_runner.cu: one component, as the header says.
  CHECK(g.merged.count("kernels/cuda/gpu_kernels") == 1);
  // What the build generates is part of the tree.
  CHECK(g.files.count("kernels/cpu/matmul_3_tiled_text.h") == 1);
  const std::vector<std::string> cycles = find_component_cycles(g);
  INFO(joined(cycles));
  CHECK(cycles.empty());
  const std::vector<std::string> violations = find_layer_violations(g);
  INFO(joined(violations));
  CHECK(violations.empty());
}

// [SECTION] Fixtures that break the rules

TEST_CASE("include graph: a header and its source are one component, so a .cpp closes a cycle") {
  // The shape app/gui had before issue #12: no file includes itself, but autotune.cpp needs
  // workbench.h, which needs autotune.h.
  const IncludeGraph g = read_include_graph({
      {"app/core/autotune.h", "#pragma once\n#include \"app/core/jobs.h\"\n"},
      {"app/core/autotune.cpp",
       "#include \"app/core/autotune.h\"\n\n#include \"app/core/workbench.h\"\n"},
      {"app/core/workbench.h", "#pragma once\n#include \"app/core/autotune.h\"\n"},
      {"app/core/workbench.cpp", "#include \"app/core/workbench.h\"\n"},
      {"app/core/jobs.h", "#pragma once\n"},
  });
  const std::vector<std::string> cycles = find_component_cycles(g);
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0] ==
        "app/core/autotune -> app/core/workbench -> app/core/autotune "
        "(app/core/autotune.cpp:3 includes app/core/workbench.h; "
        "app/core/workbench.h:2 includes app/core/autotune.h)");
  CHECK(find_layer_violations(g).empty());
}

TEST_CASE("include graph: a three-file cycle through includes beside the includer is found") {
  // a.h → b.h → c.h → a.h (by relative paths, as app/cli writes them), beside a diamond
  // d → e, d → f, e → g, f → g that has no cycle.
  const IncludeGraph g = read_include_graph({
      {"app/cli/a.h", "#include \"b.h\"\n"},
      {"app/cli/b.h", "#include \"c.h\"\n"},
      {"app/cli/c.cpp", "// c\n#include \"c.h\"\n#include \"a.h\"\n"},
      {"app/cli/c.h", "#pragma once\n"},
      {"app/core/d.h", "#include \"app/core/e.h\"\n#include \"app/core/f.h\"\n"},
      {"app/core/e.h", "#include \"app/core/g.h\"\n"},
      {"app/core/f.h", "#include \"app/core/g.h\"\n"},
      {"app/core/g.h", "#pragma once\n"},
  });
  const std::vector<std::string> cycles = find_component_cycles(g);
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0] ==
        "app/cli/a -> app/cli/b -> app/cli/c -> app/cli/a (app/cli/a.h:1 includes app/cli/b.h; "
        "app/cli/b.h:1 includes app/cli/c.h; app/cli/c.cpp:3 includes app/cli/a.h)");
}

TEST_CASE("include graph: core including a front end, and the front ends each other, are refused") {
  const IncludeGraph g = read_include_graph({
      {"app/core/state.h", "#pragma once\n#include \"app/gui/theme.h\"\n"},
      {"app/gui/theme.h", "#pragma once\n#include \"app/core/format.h\"\n"},
      {"app/gui/views/panel.cpp", "#include \"app/cli/commands.h\"\n"},
      {"app/cli/commands.h", "#pragma once\n"},
      {"app/cli/cmd_x.cpp", "#include \"commands.h\"\n#include \"app/core/format.h\"\n"},
      {"app/core/format.h", "#pragma once\n#include \"app/gui/gone.h\"\n"},
  });
  const std::vector<std::string> v = find_layer_violations(g);
  INFO(joined(v));
  REQUIRE(v.size() == 3);
  CHECK(v[0] == "app/core/format.h:2: includes app/gui/gone.h, not a file of app/");
  CHECK(v[1] ==
        "app/core/state.h:2: includes app/gui/theme.h: app/core includes no front end (app/gui, "
        "app/cli)");
  CHECK(v[2] ==
        "app/gui/views/panel.cpp:1: includes app/cli/commands.h: the front ends (app/gui, app/cli) "
        "do not include each other");
}

TEST_CASE("include graph: only #include \"...\" lines count") {
  // Commented-out and angle-bracket includes, and a file including its own header, are not edges.
  const IncludeGraph g = read_include_graph({
      {"app/core/x.h", "#pragma once\n// #include \"app/core/y.h\"\n#include <app/core/y.h>\n"},
      {"app/core/x.cpp", "#include \"app/core/x.h\"\n  #  include  \"app/core/y.h\"\n"},
      {"app/core/y.h", "#pragma once\nconst char* s = \"#include \\\"app/core/x.h\\\"\";\n"},
  });
  REQUIRE(g.includes.size() == 2);
  CHECK(g.includes[0].from == "app/core/x.cpp");
  CHECK(g.includes[0].to == "app/core/x.h");
  CHECK(g.includes[1].to == "app/core/y.h");
  CHECK(g.includes[1].line == 2);
  CHECK(find_component_cycles(g).empty());
}

TEST_CASE("include graph: a header's function defined in another source joins that component") {
  // The shape app/core had before issue #27: tile_grid.h has no source of its own, workbench.cpp
  // defines its make_tile_grids, tiles_gpu.cpp calls it, and workbench.h includes tiles_gpu.h.
  // No include line closes a circle, but tiles_gpu cannot be built without workbench.cpp.
  const std::map<std::string, std::string> tree = {
      {"app/core/tile_grid.h",
       "#pragma once\nnamespace t {\ninline int bins() { return 48; }\n"
       "std::vector<TileGrid> make_tile_grids(const Kernel& k,\n"
       "                                      Spans& spans);\n}\n"},
      {"app/core/workbench.h", "#pragma once\n#include \"app/core/tiles_gpu.h\"\n"},
      {"app/core/workbench.cpp",
       "#include \"app/core/workbench.h\"\nnamespace t {\n"
       "std::vector<TileGrid> make_tile_grids(const Kernel& k,\n"
       "                                      Spans& spans) {\n  return {};\n}\n}\n"},
      {"app/core/tiles_gpu.h", "#pragma once\n"},
      {"app/core/tiles_gpu.cpp",
       "#include \"app/core/tiles_gpu.h\"\n#include \"app/core/tile_grid.h\"\n"
       "void f() {\n  make_tile_grids(k, s);\n}\n"},
  };
  const IncludeGraph g = read_include_graph(tree);
  REQUIRE(g.merged.count("app/core/tile_grid") == 1);
  CHECK(g.merged.at("app/core/tile_grid") == "app/core/workbench");
  const std::vector<std::string> cycles = find_component_cycles(g);
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0] ==
        "app/core/tiles_gpu -> app/core/workbench -> app/core/tiles_gpu "
        "(app/core/tiles_gpu.cpp:2 includes app/core/tile_grid.h; "
        "app/core/workbench.h:2 includes app/core/tiles_gpu.h)");
  // Moved into a tile_grid.cpp of its own (as now), the circle is gone.
  std::map<std::string, std::string> fixed = tree;
  fixed["app/core/tile_grid.cpp"] = fixed["app/core/workbench.cpp"];
  fixed["app/core/tile_grid.cpp"].replace(0, fixed["app/core/tile_grid.cpp"].find('\n'),
                                          "#include \"app/core/tile_grid.h\"");
  fixed["app/core/workbench.cpp"] = "#include \"app/core/workbench.h\"\n";
  const IncludeGraph h = read_include_graph(fixed);
  CHECK(h.merged.empty());
  CHECK(find_component_cycles(h).empty());
}

TEST_CASE("include graph: declared and defined functions are read from column-0 lines") {
  CHECK(declared_functions("#pragma once\n"
                           "std::vector<int> grids(int a);\n"
                           "inline int bins() { return 1; }\n"
                           "struct S {\n  int member();\n};\n"
                           "template <class T> T pick(T a);\n"
                           "// void commented(int);\n"
                           "double Area::scale(double);\n"
                           "constexpr int kLimit = f(3);\n"
                           "Result run_all(const A& a,\n              const B& b);\n") ==
        std::set<std::string>{"grids", "run_all"});
  CHECK(defines_function("int grids(int a) {\n  return a;\n}\n", "grids"));
  CHECK(defines_function("std::vector<int> grids(int a,\n                      int b) {}\n", "grids"));
  CHECK_FALSE(defines_function("void f() {\n  grids(3);\n}\n", "grids"));          // a call
  CHECK_FALSE(defines_function("int grids(int a);\nvoid g() {}\n", "grids"));        // a declaration
  CHECK_FALSE(defines_function("int my_grids(int a) { return a; }\n", "grids"));     // another name
}

TEST_CASE("include graph: sim's rooms in order, sim apart from kernels and app, kernels apart from app") {
  const IncludeGraph g = read_include_graph({
      {"sim/graph/graph.h", "#pragma once\n#include \"sim/predict/machine.h\"\n"},
      {"sim/predict/machine.h", "#pragma once\n#include \"sim/schedule/kernel.h\"\n"},
      {"sim/schedule/kernel.h", "#pragma once\n#include \"sim/graph/graph.h\"\n"},
      {"sim/memory/cache.h", "#pragma once\n#include \"sim/graph/graph.h\"\n"},
      {"sim/schedule/lower.cpp", "#include \"kernels/cpu/jit.h\"\n"},
      {"sim/pipeline.h", "#pragma once\n#include \"sim/predict/machine.h\"\n"},
      {"sim/lesson/checker.cpp", "#include \"sim/pipeline.h\"\n#include \"sim/extra/x.h\"\n"},
      {"sim/extra/x.h", "#pragma once\n"},
      {"kernels/cpu/jit.h", "#pragma once\n#include \"sim/pipeline.h\"\n"},
      {"kernels/cpu/jit.cpp", "#include \"kernels/cpu/jit.h\"\n#include \"app/core/jobs.h\"\n"},
      {"app/core/jobs.h", "#pragma once\n#include \"sim/predict/gone.h\"\n"},
  });
  const std::vector<std::string> v = find_layer_violations(g);
  INFO(joined(v));
  REQUIRE(v.size() == 6);
  CHECK(v[0] == "app/core/jobs.h:2: includes sim/predict/gone.h, not a file of sim/");
  CHECK(v[1] == "kernels/cpu/jit.cpp:2: includes app/core/jobs.h: kernels/ never includes app/");
  CHECK(v[2] ==
        "sim/graph/graph.h:2: includes sim/predict/machine.h: sim's rooms go io < graph, memory < "
        "lang, schedule < predict < import < pipeline < lesson, and graph includes only rooms before it");
  CHECK(v[3].find("sim/lesson/checker.cpp:2: includes sim/extra/x.h: sim/extra is not a room") == 0);
  CHECK(v[4] ==
        "sim/memory/cache.h:2: includes sim/graph/graph.h: sim's rooms go io < graph, memory < "
        "lang, schedule < predict < import < pipeline < lesson, and memory includes only rooms before it");
  CHECK(v[5] ==
        "sim/schedule/lower.cpp:1: includes kernels/cpu/jit.h: sim/ includes neither kernels/ nor "
        "app/");
}

// The app's include graph (issue #12): no cycle between its components, and its folders layered.
// A component is a header with its source file (autotune.h + autotune.cpp): autotune.cpp
// including workbench.h while workbench.h includes autotune.h is a cycle even though no file
// includes itself, because neither half can be built, tested or understood without the other.
// Folders: app/gui and app/cli may include app/core; app/core includes neither, and the two front
// ends never include each other. The checker reads the `#include "..."` lines of app/**/*.{h,cpp}
// (rooted at the source tree, "app/core/x.h", or beside the including file, "commands.h"); it is
// run on the real tree and on fixtures that break each rule, so it can fail.
#include "build_paths.h"
#include <doctest/doctest.h>

#include <algorithm>
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
};

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
      else if (inc.rfind("app/", 0) == 0)
        g.unresolved.push_back(path + ":" + std::to_string(n) + ": includes " + inc +
                               ", not a file of app/");
      // Anything else (sim/..., kernels/..., a system header in quotes) is outside the app.
    }
  }
  return g;
}

std::string component_of(const std::string& file) {
  const fs::path p(file);
  return (p.parent_path() / p.stem()).generic_string();
}

// Each cycle between components, as "a -> b -> a (a.cpp:5 includes b.h; b.h:9 includes a.h)":
// one per strongly connected component of more than one component, the shortest cycle through
// its first component by name.
std::vector<std::string> find_component_cycles(const IncludeGraph& g) {
  std::map<std::string, std::map<std::string, const Include*>> edges;  // first include as evidence
  std::set<std::string> nodes;
  for (const std::string& f : g.files) nodes.insert(component_of(f));
  for (const Include& inc : g.includes) {
    const std::string a = component_of(inc.from), b = component_of(inc.to);
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

// Includes that cross the folders the wrong way, and includes of app files that do not exist.
std::vector<std::string> find_layer_violations(const IncludeGraph& g) {
  std::vector<std::string> out = g.unresolved;
  for (const Include& inc : g.includes) {
    const std::string from = layer_of(inc.from), to = layer_of(inc.to);
    if (from == to || to == "app/core" || from.empty() || to.empty()) continue;
    const std::string where = inc.from + ":" + std::to_string(inc.line) + ": includes " + inc.to;
    if (from == "app/core")
      out.push_back(where + ": app/core includes no front end (app/gui, app/cli)");
    else
      out.push_back(where + ": the front ends (app/gui, app/cli) do not include each other");
  }
  return out;
}

// Every .h and .cpp under TILESCOPE_SOURCE_DIR/app, keyed by its repository-relative path.
std::map<std::string, std::string> read_app_sources() {
  const fs::path root(TILESCOPE_SOURCE_DIR);
  std::map<std::string, std::string> sources;
  for (const auto& e : fs::recursive_directory_iterator(root / "app")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    sources[e.path().lexically_relative(root).generic_string()] = s.str();
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

TEST_CASE("app include graph: no cycle between components, and core includes no front end") {
  const IncludeGraph g = read_include_graph(read_app_sources());
  // The scan must see the tree, or an empty graph would pass: the three folders' files and one
  // include of each kind (rooted, and beside the includer).
  CHECK(g.files.count("app/core/workbench.h") == 1);
  CHECK(g.files.count("app/gui/views/views.h") == 1);
  CHECK(g.files.count("app/cli/main.cpp") == 1);
  CHECK(has_include(g, "app/gui/views/views.h", "app/core/app_state.h"));
  CHECK(has_include(g, "app/cli/main.cpp", "app/cli/commands.h"));
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

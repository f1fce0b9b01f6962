// Checks a GUI screenshot against its layout JSON: the image has the framebuffer's size, and every
// main panel's region holds drawn content (non-background pixels, several distinct colours).
//
// usage: gui_png_check SHOT.png LAYOUT.json [--expect-parsed true|false] [--min-ops N]
//                      [--expect-selection NAME] [--min-zoom Z] [--max-zoom Z]
//                      [--state STATE.json [--expect-view NAME] [--expect-history N]
//                       [--expect-memory true] [--expect-cpu-run true] [--min-tile-frames N]]
// Exits 0 when every check passes; otherwise prints each failure and exits 1.
#include <stb_image.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>

namespace {

int g_failures = 0;

void fail(const std::string& message) {
  std::fprintf(stderr, "FAIL: %s\n", message.c_str());
  ++g_failures;
}

struct Image {
  int w = 0, h = 0;
  unsigned char* px = nullptr;
  unsigned pixel(int x, int y) const {
    const unsigned char* p = px + (static_cast<size_t>(y) * static_cast<size_t>(w) + x) * 3;
    return (unsigned(p[0]) << 16) | (unsigned(p[1]) << 8) | p[2];
  }
};

// What a panel must show to count as drawn: enough pixels that differ from its most common
// colour (the background), in enough distinct colours (text, borders, fills — not one flat box).
struct PanelRule {
  double min_foreground;  // fraction of the region's pixels
  size_t min_colours;
};

void check_panel(const Image& img, const std::string& name, double sx, double sy,
                 const nlohmann::json& r, const PanelRule& rule) {
  const int x0 = static_cast<int>(r["x"].get<double>() * sx);
  const int y0 = static_cast<int>(r["y"].get<double>() * sy);
  const int x1 =
      std::min(img.w, static_cast<int>((r["x"].get<double>() + r["w"].get<double>()) * sx));
  const int y1 =
      std::min(img.h, static_cast<int>((r["y"].get<double>() + r["h"].get<double>()) * sy));
  if (x1 - x0 < 10 || y1 - y0 < 10 || x0 < 0 || y0 < 0) {
    fail("panel '" + name + "' has an unusable rect");
    return;
  }
  std::map<unsigned, long> counts;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) ++counts[img.pixel(x, y)];
  unsigned background = 0;
  long most = 0;
  for (const auto& [colour, n] : counts)
    if (n > most) most = n, background = colour;
  const long total = static_cast<long>(x1 - x0) * (y1 - y0);
  const double foreground = 1.0 - static_cast<double>(most) / static_cast<double>(total);
  std::printf("panel %-11s %4dx%-4d background #%06X, %.2f%% foreground, %zu colours\n",
              name.c_str(), x1 - x0, y1 - y0, background, foreground * 100.0, counts.size());
  if (foreground < rule.min_foreground) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "panel '%s': only %.3f%% non-background pixels (need %.3f%%)",
                  name.c_str(), foreground * 100, rule.min_foreground * 100);
    fail(buf);
  }
  if (counts.size() < rule.min_colours) {
    fail("panel '" + name + "': only " + std::to_string(counts.size()) +
         " distinct colours (need " + std::to_string(rule.min_colours) + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: gui_png_check SHOT.png LAYOUT.json [--expect-parsed true|false] "
                 "[--min-ops N] [--expect-selection NAME] [--min-zoom Z] [--max-zoom Z]\n");
    return 2;
  }
  std::string expect_parsed, expect_selection, state_path, expect_view, expect_memory,
      expect_cpu_run;
  int expect_history = -1, min_tile_frames = 0;
  int min_ops = 0;
  double min_zoom = 0.0, max_zoom = 1e9;
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--expect-parsed") {
      expect_parsed = value;
    } else if (flag == "--min-ops") {
      min_ops = std::stoi(value);
    } else if (flag == "--expect-selection") {
      expect_selection = value;
    } else if (flag == "--min-zoom") {
      min_zoom = std::stod(value);
    } else if (flag == "--max-zoom") {
      max_zoom = std::stod(value);
    } else if (flag == "--state") {
      state_path = value;
    } else if (flag == "--expect-view") {
      expect_view = value;
    } else if (flag == "--expect-history") {
      expect_history = std::stoi(value);
    } else if (flag == "--expect-memory") {
      expect_memory = value;
    } else if (flag == "--expect-cpu-run") {
      expect_cpu_run = value;
    } else if (flag == "--min-tile-frames") {
      min_tile_frames = std::stoi(value);
    } else {
      std::fprintf(stderr, "gui_png_check: unknown option '%s'\n", flag.c_str());
      return 2;
    }
  }

  Image img;
  int channels = 0;
  img.px = stbi_load(argv[1], &img.w, &img.h, &channels, 3);
  if (!img.px) {
    std::fprintf(stderr, "FAIL: cannot read PNG '%s': %s\n", argv[1], stbi_failure_reason());
    return 1;
  }
  std::ifstream in(argv[2]);
  if (!in) {
    std::fprintf(stderr, "FAIL: cannot read layout JSON '%s'\n", argv[2]);
    return 1;
  }
  nlohmann::json layout;
  try {
    in >> layout;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: layout JSON '%s' does not parse: %s\n", argv[2], e.what());
    return 1;
  }

  const int fb_w = layout["framebuffer"]["width"], fb_h = layout["framebuffer"]["height"];
  if (img.w != fb_w || img.h != fb_h) {
    fail("screenshot is " + std::to_string(img.w) + "x" + std::to_string(img.h) +
         " but the framebuffer was " + std::to_string(fb_w) + "x" + std::to_string(fb_h));
  }
  // Panel rects are in window pixels; the screenshot is in framebuffer pixels (HiDPI may differ).
  const double sx = fb_w / layout["window"]["width"].get<double>();
  const double sy = fb_h / layout["window"]["height"].get<double>();
  const std::map<std::string, PanelRule> rules = {
      {"model_text", {0.01, 8}},  // editor text and status lines
      {"tabs", {0.01, 3}},        // the view buttons
      {"graph", {0.03, 16}},      // nodes, edges, labels on the canvas
      {"inspector", {0.01, 8}},   // tables and bars
      {"status_bar", {0.01, 3}},  // one line of text
  };
  std::set<std::string> seen;
  for (const auto& panel : layout["panels"]) {
    const std::string name = panel["name"];
    seen.insert(name);
    if (auto it = rules.find(name); it != rules.end())
      check_panel(img, name, sx, sy, panel, it->second);
  }
  for (const auto& [name, rule] : rules)
    if (!seen.count(name)) fail("layout JSON has no panel '" + name + "'");

  if (!expect_parsed.empty()) {
    const bool parsed = layout["model"]["parsed"];
    if (parsed != (expect_parsed == "true")) {
      fail("model parsed = " + std::string(parsed ? "true" : "false") + ", expected " +
           expect_parsed);
    }
  }
  const int ops = layout["model"]["ops"];
  if (ops < min_ops)
    fail("graph has " + std::to_string(ops) + " ops, expected at least " + std::to_string(min_ops));
  int op_nodes = 0;
  for (const auto& n : layout["graph_nodes"]) op_nodes += n["kind"] == "op";
  if (op_nodes != ops)
    fail("canvas shows " + std::to_string(op_nodes) + " op nodes for " + std::to_string(ops) +
         " ops");
  if (!expect_selection.empty() && layout["selection"] != expect_selection) {
    fail("selection is '" + layout["selection"].get<std::string>() + "', expected '" +
         expect_selection + "'");
  }
  const double zoom = layout["view"]["zoom"];
  if (zoom < min_zoom || zoom > max_zoom) {
    fail("canvas zoom is " + std::to_string(zoom) + ", expected " + std::to_string(min_zoom) +
         " .. " + std::to_string(max_zoom));
  }
  if (!state_path.empty()) {
    // The workbench state the app wrote at exit (--state-json): view, history, results.
    std::ifstream sin(state_path);
    nlohmann::json st;
    try {
      sin >> st;
    } catch (const std::exception& e) {
      fail("state JSON '" + state_path + "' does not parse: " + e.what());
    }
    if (st.is_object()) {
      if (!expect_view.empty() && st["view"] != expect_view)
        fail("view is '" + st["view"].get<std::string>() + "', expected '" + expect_view + "'");
      if (expect_history >= 0 && st["history"]["cursor"] != expect_history)
        fail("history cursor is " + st["history"]["cursor"].dump() + ", expected " +
             std::to_string(expect_history) + " (steps: " + st["history"]["steps"].dump() + ")");
      if (expect_memory == "true" && !st.contains("memory"))
        fail("no memory simulation result for the final schedule");
      if (expect_cpu_run == "true") {
        if (!st.contains("cpu_run"))
          fail("no CPU run result for the final schedule");
        else if (!st["cpu_run"]["verified"].get<bool>() || st["cpu_run"]["median_ms"] <= 0)
          fail("the CPU run is not verified with a measured time: " + st["cpu_run"].dump());
      }
      if (st["tiles"]["frames"].get<int>() < min_tile_frames)
        fail("tiles animation has " + st["tiles"]["frames"].dump() + " frames, expected at least " +
             std::to_string(min_tile_frames));
    }
  }
  stbi_image_free(img.px);
  if (g_failures) return 1;
  std::printf("ok: %s\n", argv[1]);
  return 0;
}

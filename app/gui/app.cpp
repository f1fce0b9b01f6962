// The desktop app's platform layer: window, OpenGL, ImGui, the frame loop, screenshots.
//
// Index:
//   [SECTION] Startup inputs (model, script) — read before any window so bad files fail fast
//   [SECTION] Screenshot and layout JSON
//   [SECTION] Input: key events queued (no press lost), input wakes the loop (render on demand)
//   [SECTION] Frame loop: poll → apply commands → update → views → render → screenshot → swap
#include "app/gui/app.h"

#include "app/core/baseline.h"

#include "app/core/autotune_jobs.h"
#include "app/core/commands.h"
#include "app/core/counters_compare.h"
#include "app/core/lesson_commands.h"
#include "app/core/script_runner.h"
#include "app/core/session.h"
#include "app/gui/theme.h"
#include "app/gui/views/views.h"
#include "app/gui/widgets/opaque_draws.h"
#include "app/gui/widgets/partial_redraw.h"
#include "app/gui/widgets/screenshot.h"
#include "app/gui/widgets/text_mask.h"
#include "sim/io/input.h"
#include "sim/lang/parser.h"
#include "sim/pipeline.h"

#include <GLFW/glfw3.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <imgui.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace tilescope::gui {

// A sanitizer build runs the simulator several times slower: scenarios that time it
// (gui_memory_wait) read this from the state JSON and check their limits only without one.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerBuild = true;
#else
constexpr bool kSanitizerBuild = false;
#endif
#else
constexpr bool kSanitizerBuild = false;
#endif

using namespace tilescope::core;

namespace {

// [SECTION] Screenshot and layout JSON

std::string write_layout_json(const std::string& path, const AppState& state, int fb_w, int fb_h) {
  nlohmann::json j;
  j["window"] = {{"width", state.window_w}, {"height", state.window_h}};
  j["framebuffer"] = {{"width", fb_w}, {"height", fb_h}};
  j["theme"] = theme_name(state.theme);
  j["font_px"] = state.font_px();
  auto rect_json = [](const std::string& name, const Rect& r) {
    return nlohmann::json{{"name", name}, {"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}};
  };
  j["panels"] = nlohmann::json::array();
  for (const auto& [name, rect] : state.panels().named())
    j["panels"].push_back(rect_json(name, rect));
  j["model"] = {{"path", state.model.path},
                {"parsed", !state.model.error.has_value()},
                {"error", state.model.error ? state.model.error->full : ""},
                {"ops", state.graph() ? state.graph()->ops().size() : 0}};
  nlohmann::json nodes = nlohmann::json::array();
  if (state.scene) {
    // Window-pixel rects of the graph's nodes (clipped or not), so tests can click them.
    const Rect canvas = state.panels().graph;
    const float z = state.view.zoom;
    for (const SceneNode& n : state.scene->nodes) {
      const char* kind = n.kind == SceneNode::Kind::Op       ? "op"
                         : n.kind == SceneNode::Kind::Source ? "source"
                                                             : "output";
      nlohmann::json node =
          rect_json(n.name, Rect{canvas.x + state.view.pan_x + n.x * z,
                                 canvas.y + state.view.pan_y + n.y * z, n.w * z, n.h * z});
      node["kind"] = kind;
      nodes.push_back(node);
    }
  }
  j["graph_nodes"] = nodes;
  // Named widgets of the last frame (the lesson player's buttons and fields), so tests can click
  // them; `visible` says whether the centre is inside its panel (not scrolled away).
  nlohmann::json widgets = nlohmann::json::array();
  for (const WidgetRect& w : widget_rects()) {
    nlohmann::json r = rect_json(w.name, w.rect);
    r["visible"] = w.visible;
    widgets.push_back(r);
  }
  j["widgets"] = widgets;
  j["selection"] = state.selection.name;
  j["view"] = {{"zoom", state.view.zoom}, {"pan_x", state.view.pan_x}, {"pan_y", state.view.pan_y}};
  // The height the canvas draws node text at (font size × zoom): presentation mode keeps it at
  // kPresentTextPx or more.
  j["node_text_px"] = state.font_px() * state.view.zoom;
  // Texts the last frame cut off at the right edge of their clip rectangle (--layout-json runs
  // measure every text): a label no one can read whole.
  nlohmann::json clipped = nlohmann::json::array();
  for (const ClippedText& c : clipped_text())
    clipped.push_back({{"window", c.window}, {"text", c.text}, {"cut", c.cut}});
  j["clipped_text"] = clipped;
  std::ofstream out(path);
  if (!out) return "cannot write layout JSON '" + path + "'";
  // Replace, not throw, on invalid UTF-8: model text and its error excerpts are user bytes.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return out ? std::string() : "cannot write layout JSON '" + path + "'";
}

// The Timings view's "predicted" column for one timing report, as it draws it: every result the
// time model predicts, with the measured median beside it.
nlohmann::json timings_predicted_json(const Workbench& wb, const nlohmann::json& report) {
  nlohmann::json rows = nlohmann::json::array();
  if (!report.contains("suites") || !report["suites"].is_array()) return rows;
  for (const auto& suite : report["suites"]) {
    for (const auto& res : suite.value("results", nlohmann::json::array())) {
      const auto p = predicted_time_for(wb.counters_recorded, report, suite, res);
      if (!p) continue;
      rows.push_back({{"suite", suite.value("name", "")},
                      {"version", res.value("version", 0)},
                      {"measured_s", res.value("median_ms", 0.0) * 1e-3},
                      {"predicted_s", p->seconds},
                      {"limiter", p->limiter}});
    }
  }
  return rows;
}

// The Schedule panel's occupancy calculator as drawn: the resources it counts and their result.
nlohmann::json occupancy_state_json(const AppState& state) {
  const OccupancyShown o = occupancy_shown(state);
  const predict::KernelResources& r = o.resources;
  nlohmann::json j = {{"threads", r.threads_per_block},
                      {"registers", r.registers_per_thread},
                      {"smem", r.smem_per_block},
                      {"threads_from_kernel", o.threads_from_kernel},
                      {"smem_from_kernel", o.smem_from_kernel},
                      {"grid_blocks", o.grid_blocks}};
  if (!o.none.empty()) {
    j["none"] = o.none;
  } else if (!o.occupancy.error.empty()) {
    j["error"] = o.occupancy.error;
  } else {
    j.update(predict::occupancy_json(o.occupancy));
  }
  return j;
}

// The workbench's state for tests and tools: what a learner would read off the screen.
// The centre view of a tab and the side panel that goes with it.
void draw_centre_view(ViewContext& ctx, ViewTab tab, const PanelLayout& panels, bool sides) {
  using Draw = void (*)(ViewContext&, const Rect&);
  const auto [view, inspector] = [&]() -> std::pair<Draw, Draw> {
    switch (tab) {
      case ViewTab::Graph:
        return {draw_graph_view, draw_inspector_view};
      case ViewTab::Schedule:
        return {draw_schedule_view, draw_schedule_inspector};
      case ViewTab::Tiles:
        return {draw_tiles_view, draw_schedule_inspector};
      case ViewTab::Memory:
        return {draw_memory_view, draw_memory_inspector};
      case ViewTab::Roofline:
        return {draw_roofline_view, draw_memory_inspector};
      case ViewTab::Timings:
        return {draw_timings_view, draw_timings_inspector};
      case ViewTab::Lessons:
        return {draw_lessons_view, draw_inspector_view};
      case ViewTab::Trace:
        return {draw_trace_view, draw_trace_inspector};
    }
    return {draw_graph_view, draw_inspector_view};
  }();
  view(ctx, panels.graph);
  if (sides) inspector(ctx, panels.inspector);
}

namespace {

// The Memory view's part of the state: the result shown (sampled or not), the wait from the
// step to it, the hold before a long run and the numbers streaming in while one runs.
void memory_state_json(nlohmann::json& j, const Workbench& wb) {
  if (const MemoryResult* m = wb.memory_result()) {
    j["memory"] = {{"machine", m->machine},
                   {"accesses", m->trace_accesses},
                   {"dram_bytes", m->dram_bytes()},
                   {"levels", m->levels.size()},
                   {"flops", m->flops}};
    if (m->program)
      j["memory"]["program"] = {{"kernels", m->program->kernels},
                                {"dram_bytes", m->program->dram_bytes()}};
    else if (!m->program_note.empty())
      j["memory"]["program_note"] = m->program_note;
    j["memory"]["simulated_seconds"] = m->seconds;
    if (m->sampled)
      j["memory"]["sampled"] = {{"unit_loop", m->sampled->unit_loop},
                                {"units", m->sampled->units},
                                {"measured", m->sampled->measured},
                                {"dram_bytes_error", m->sampled->dram_bytes_error},
                                {"warm_capped", m->sampled->warm_capped}};
  }
  if (wb.memory_wait.seconds >= 0) j["memory_wait_seconds"] = wb.memory_wait.seconds;
  if (wb.kernel()) {
    if (auto held = wb.memory_held.find(wb.memory_key()); held != wb.memory_held.end())
      j["memory_held"] = held->second.message;
    if (wb.memory_job.running() && wb.memory_job.key() == wb.memory_key())
      j["memory_partial"] = wb.memory_job.partial();
  }
}

}  // namespace

std::string write_state_json(const std::string& path, const AppState& state) {
  const Workbench& wb = state.workbench;
  nlohmann::json j;
  j["view"] = view_tab_name(wb.tab);
  j["machine"] = wb.machine_name;
  j["trace"] = trace_state_json(state.trace);
  j["history"] = {{"cursor", wb.history ? wb.history->size() : 0},
                  {"entries", wb.step_texts.size()},
                  {"steps", wb.steps_text()}};
  j["kernel"] = wb.kernel() ? wb.kernel()->name : "";
  j["kernel_ops"] = wb.kernel() ? wb.kernel()->op_names : std::vector<std::string>{};
  if (wb.last)
    j["last_step"] = {
        {"step", wb.last->step}, {"ok", wb.last->ok}, {"explanation", wb.last->explanation}};
  memory_state_json(j, wb);
  if (nlohmann::json b = baseline_state_json(wb); !b.is_null()) j["baseline"] = std::move(b);
  if (wb.machine_draft) j["machine_edit"] = machine_draft_json(*wb.machine_draft);
  if (const CpuRunResult* r = wb.cpu_result()) {
    j["cpu_run"] = {{"verified", r->verified},
                    {"rel_error", r->rel_error},
                    {"median_ms", r->median_ms},
                    {"repeats", r->repeats},
                    {"flops", r->flops}};
  }
  {
    // "Run on this GPU" in the Timings view: whether this build offers it, and its outcome.
    nlohmann::json g = {{"available", gpu_run_unavailable().empty()},
                        {"running", wb.gpu_job.running()}};
    if (auto e = wb.gpu_errors.find(wb.schedule_key()); e != wb.gpu_errors.end())
      g["error"] = e->second;
    if (const GpuRunResult* r = wb.gpu_result())
      g["result"] = {{"device", r->device}, {"verified", r->verified}};
    j["gpu_run"] = g;
  }
  {
    // The Timings view's autotune sweep on the simulator: its loops, best time and flat hint.
    const AutotuneLoops l = autotune_loops(wb);
    nlohmann::json a = {{"loops", {l.a, l.b}}, {"running", wb.autotune.sim_job.running()}};
    if (const AutotuneGrid* g = autotune_sim_result(wb)) {
      a["points"] = g->points.size();
      if (g->best >= 0) a["best_seconds"] = g->points[size_t(g->best)].seconds;
      if (const schedule::Kernel* k = wb.kernel()) {
        const AutotuneHint h = autotune_flat_hint(*g, *k);
        if (!h.text.empty()) a["flat_hint"] = {{"text", h.text}, {"loops", {h.a, h.b}}};
      }
    }
    j["autotune"] = a;
  }
  j["memory_cache_entries"] = wb.memory_cache.size();
  j["sanitizer_build"] = kSanitizerBuild;
  j["recorded_reports"] = wb.recorded.size();
  // The recording the Timings view shows (control timings.report), as it clamps it.
  if (!wb.recorded.empty()) {
    const size_t i =
        size_t(std::clamp(state.controls.views.timings_report, 0, int(wb.recorded.size()) - 1));
    j["timings_report"] = {{"index", i},
                           {"file", std::filesystem::path(wb.recorded[i].first).filename().string()}};
    nlohmann::json files = nlohmann::json::array();
    for (const auto& [file, report] : wb.recorded)
      files.push_back(std::filesystem::path(file).filename().string());
    j["timings_report"]["files"] = files;
    j["timings_report"]["predicted"] = timings_predicted_json(wb, wb.recorded[i].second);
  }
  // The Memory view's predicted-vs-measured table as it is drawn for this machine.
  if (const auto* rec = counters_for_machine_kind(wb.counters_recorded,
                                                  wb.machine ? wb.machine->kind : "cpu",
                                                  wb.machine ? wb.machine->name : "");
      rec && !rec->second.runs.empty()) {
    const auto& runs = rec->second.runs;
    const size_t i = size_t(std::clamp(state.controls.views.measured_run, 0, int(runs.size()) - 1));
    nlohmann::json rows = nlohmann::json::array();
    for (const CounterLevelRow& row : counter_level_rows(rec->second, runs[i])) {
      nlohmann::json r = {{"level", row.level}, {"measured", row.measured}, {"within", row.within}};
      if (row.predicted) r["predicted"] = *row.predicted;
      if (row.error_pct) r["error_pct"] = *row.error_pct;
      if (!row.cause.empty()) r["cause"] = row.cause;
      rows.push_back(r);
    }
    j["measured"] = {{"file", std::filesystem::path(rec->first).filename().string()},
                     {"tool", rec->second.tool},
                     {"run", i},
                     {"label", counter_run_label(runs[i])},
                     {"rows", rows}};
  }
  j["tiles"] = {{"frames", wb.tiles ? wb.tiles->frames.size() : 0}, {"frame", wb.tiles_frame},
                {"gpu", wb.tiles_gpu}, {"block", wb.tiles_block}, {"warp", wb.tiles_warp}};
  if (wb.gpu_tiles) {
    const GpuTilesResult& g = *wb.gpu_tiles;
    j["tiles"]["gpu_wave"] = {{"frames", g.frames.size()}, {"block", g.block}, {"warp", g.warp},
                              {"wave", g.wave}, {"waves", g.waves}, {"resident", g.resident},
                              {"sm", g.sm}, {"warp_sectors", g.warp_sectors},
                              {"warp_ideal_sectors", g.warp_ideal_sectors}};
    if (g.frame_counters.size() > 1)
      j["tiles"]["gpu_wave"]["counters"] = counters_window_json(
          g, size_t(std::clamp(wb.tiles_frame, 0.0, double(g.frame_counters.size() - 1))));
  }
  if (!wb.gpu_tiles_error.empty()) j["tiles"]["gpu_error"] = wb.gpu_tiles_error;
  if (wb.tiles && wb.tiles->frame_counters.size() > 1)
    j["tiles"]["counters"] = counters_window_json(
        *wb.tiles, size_t(std::clamp(wb.tiles_frame, 0.0, double(wb.tiles->frames.size() - 1))));
  j["status"] = {{"message", state.status_message}, {"is_error", state.status_is_error}};
  j["occupancy"] = occupancy_state_json(state);
  const PredictedTimeShown predicted = predicted_time_shown(state);
  j["predicted_time"] = predicted.none.empty()
                            ? predict::time_prediction_json(predicted.time)
                            : nlohmann::json{{"none", predicted.none}};
  if (predicted.none.empty()) {
    j["predicted_time"]["flops"] = predicted.flops;
    j["predicted_time"]["intensity"] = predicted.intensity;
    if (!predicted.launch_note.empty()) j["predicted_time"]["launch_note"] = predicted.launch_note;
  }
  j["controls"] = nlohmann::json::object();
  for (const auto& [name, value] : panel_control_values(state.controls))
    j["controls"][name] = value;
  j["lesson"] = lesson_state_json(state);
  j["presentation"] = {{"on", state.presentation}, {"indicator", presentation_indicator(state)}};
  j["theme"] = theme_name(state.theme);
  j["ui_scale"] = state.ui_scale;
  j["model_path"] = state.model.path;
  j["model_text"] = state.model.text;
  j["recent_files"] = state.recent_files;
  j["autosave_paused"] = state.autosave_paused;
  j["file_browser"] = {{"open", state.files.mode != FileBrowser::Mode::Closed},
                       {"dir", state.files.dir},
                       {"name", state.files.name}};
  j["model_edited"] = model_text_edited(state);
  if (const auto& p = state.pending_open)
    j["open_choice"] = {{"path", p->path},         {"steps", p->trial.steps},
                        {"apply", p->trial.apply}, {"refused", p->trial.refused},
                        {"text_edited", p->text_edited}, {"parse_error", p->parse_error}};
  j["replaced_model"] = state.replaced_model.has_value();
  std::ofstream out(path);
  if (!out) return "cannot write state JSON '" + path + "'";
  // Replace, not throw, on invalid UTF-8: model text and its error excerpts are user bytes.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return out ? std::string() : "cannot write state JSON '" + path + "'";
}

// [SECTION] Input: key events queued (no press lost), input wakes the loop (render on demand)

// GLFW calls back with no context pointer of ours; one window, so file-level state is enough.
KeyEventQueue* g_keys = nullptr;
GLFWkeyfun g_imgui_key = nullptr;  // ImGui's key callback, fed from the queue
GLFWcursorposfun g_imgui_cursor = nullptr;
GLFWmousebuttonfun g_imgui_button = nullptr;
GLFWscrollfun g_imgui_scroll = nullptr;
GLFWcharfun g_imgui_char = nullptr;
bool g_exposed = false;  // the window's pixels were lost (exposed, resized): draw it whole
int g_input_events = 0;  // events since the loop last looked: it draws a few frames after each
std::vector<std::string> g_dropped;  // paths dropped on the window, opened between frames

void queue_key(GLFWwindow*, int key, int scancode, int action, int mods) {
  ++g_input_events;
  // ImGui 1.86 ignores GLFW_REPEAT; a held key's repeats come from ImGui's own repeat timer.
  if (action == GLFW_REPEAT || !g_keys) return;
  g_keys->push({key, scancode, mods, action == GLFW_PRESS});
}
void on_cursor(GLFWwindow* w, double x, double y) {
  ++g_input_events;
  if (g_imgui_cursor) g_imgui_cursor(w, x, y);
}
void on_button(GLFWwindow* w, int button, int action, int mods) {
  ++g_input_events;
  if (g_imgui_button) g_imgui_button(w, button, action, mods);
}
void on_scroll(GLFWwindow* w, double dx, double dy) {
  ++g_input_events;
  if (g_imgui_scroll) g_imgui_scroll(w, dx, dy);
}
void on_char(GLFWwindow* w, unsigned int c) {
  ++g_input_events;
  if (g_imgui_char) g_imgui_char(w, c);
}
void on_window_change(GLFWwindow*, int, int) {
  ++g_input_events;
  g_exposed = true;
}
void on_refresh(GLFWwindow*) {
  ++g_input_events;
  g_exposed = true;
}
void on_drop(GLFWwindow*, int count, const char** paths) {
  ++g_input_events;
  for (int i = 0; i < count; ++i) g_dropped.emplace_back(paths[i]);
}

// Installed after ImGui's own callbacks (install_callbacks = true), keeping them to chain to:
// the key callback queues instead, the others count the event and pass it on.
void install_input_callbacks(GLFWwindow* window, KeyEventQueue& keys) {
  g_keys = &keys;
  g_imgui_key = glfwSetKeyCallback(window, queue_key);
  g_imgui_cursor = glfwSetCursorPosCallback(window, on_cursor);
  g_imgui_button = glfwSetMouseButtonCallback(window, on_button);
  g_imgui_scroll = glfwSetScrollCallback(window, on_scroll);
  g_imgui_char = glfwSetCharCallback(window, on_char);
  glfwSetWindowSizeCallback(window, on_window_change);
  glfwSetFramebufferSizeCallback(window, on_window_change);
  glfwSetWindowRefreshCallback(window, on_refresh);
  glfwSetDropCallback(window, on_drop);
}

// Hands ImGui this frame's share of the queued key events (key_queue.h).
void feed_keys(GLFWwindow* window, KeyEventQueue& keys) {
  for (const KeyEvent& e : keys.take_frame())
    if (g_imgui_key)
      g_imgui_key(window, e.key, e.scancode, e.down ? GLFW_PRESS : GLFW_RELEASE, e.mods);
}

// A scripted `key` command as the keyboard would send a quick tap: modifiers down, the key down
// and up, modifiers up — all before the next frame, the case that used to lose presses.
void queue_tap(KeyEventQueue& keys, const SyntheticInput& in) {
  std::vector<int> mods;
  if (in.ctrl) mods.push_back(GLFW_KEY_LEFT_CONTROL);
  if (in.alt) mods.push_back(GLFW_KEY_LEFT_ALT);
  if (in.shift) mods.push_back(GLFW_KEY_LEFT_SHIFT);
  const int bits = (in.ctrl ? GLFW_MOD_CONTROL : 0) | (in.alt ? GLFW_MOD_ALT : 0) |
                   (in.shift ? GLFW_MOD_SHIFT : 0);
  for (int m : mods) keys.push({m, 0, bits, true});
  keys.push({in.key, 0, bits, true});
  keys.push({in.key, 0, bits, false});
  for (auto m = mods.rbegin(); m != mods.rend(); ++m) keys.push({*m, 0, bits, false});
}

void glfw_error(int code, const char* description) {
  std::fprintf(stderr, "tilescope: GLFW error %d: %s\n", code, description);
}

}  // namespace

// --bench-frames: frame times are swap-to-swap wall time, so they include rendering and the
// wait for the X server; medians and the 95th percentile, since single frames are noisy.
// Where a measured frame's time went: building the UI (ImGui + views, CPU), handing the draw
// lists to GL, and the swap (where llvmpipe rasterises and Xvfb copies the image).
struct FramePhases {
  std::vector<double> ui_ms, submit_ms, swap_ms;
  std::vector<double> vertices;
  std::vector<double> draw_calls;  // ImDrawCmds with elements: one glDrawElements each
  std::vector<double> covered_px;  // sum of triangle areas: the pixels llvmpipe shades
  std::vector<double> redrawn_px;  // the area of the rectangles redrawn (partial_redraw.h)
  std::string present;             // how frames reach the window (FramePresenter::why)
  // CPU time of the whole process (the UI thread and llvmpipe's rasteriser threads) over the
  // measured frames: what a frame costs, whatever else the machine is running.
  double cpu_start_s = -1, cpu_end_s = 0;
};

static double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Pixels the rasteriser shades for a frame's draw data: the sum of its triangles' areas, clipped
// to nothing finer than that (overlaps count twice, as they are shaded twice).
static double covered_pixels(const ImDrawData* dd) {
  double area = 0;
  for (int l = 0; l < dd->CmdListsCount; ++l) {
    const ImDrawList* list = dd->CmdLists[l];
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (cmd.UserCallback) continue;
      for (unsigned i = 0; i + 2 < cmd.ElemCount; i += 3) {
        const ImVec2 a =
            list->VtxBuffer[int(cmd.VtxOffset + list->IdxBuffer[int(cmd.IdxOffset + i)])].pos;
        const ImVec2 b =
            list->VtxBuffer[int(cmd.VtxOffset + list->IdxBuffer[int(cmd.IdxOffset + i + 1)])].pos;
        const ImVec2 c =
            list->VtxBuffer[int(cmd.VtxOffset + list->IdxBuffer[int(cmd.IdxOffset + i + 2)])].pos;
        area += std::abs((b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y)) * 0.5;
      }
    }
  }
  return area;
}

static double draw_call_count(const ImDrawData* dd) {
  double n = 0;
  for (int l = 0; l < dd->CmdListsCount; ++l)
    for (const ImDrawCmd& cmd : dd->CmdLists[l]->CmdBuffer) n += !cmd.UserCallback && cmd.ElemCount;
  return n;
}

// ImGui draws glyphs on whole pixels from an atlas at 1:1 scale and fills shapes from one white
// texel, so nearest sampling gives the same pixels as the backend's bilinear filter — and on a
// software rasteriser (llvmpipe) the bilinear fetch is the costliest part of every pixel.
// Anti-aliased lines drawn from the atlas need the filter, so they are drawn as geometry instead.
static void use_nearest_font_sampling(ImGuiIO& io) {
  ImGui::GetStyle().AntiAliasedLinesUseTex = false;
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(reinterpret_cast<intptr_t>(io.Fonts->TexID)));
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
}

static std::string load_average_text() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one.empty() ? "unknown" : one + " " + five + " " + fifteen;
}

static double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void print_frame_bench(std::vector<double> ms, double first_frame_ms, int fb_w, int fb_h,
                              const FramePhases& phases) {
  if (ms.empty()) {
    std::printf("bench-frames: no frames measured\n");
    return;
  }
  std::sort(ms.begin(), ms.end());
  const auto pct = [&](double q) {
    const size_t i = static_cast<size_t>(q * static_cast<double>(ms.size() - 1) + 0.5);
    return ms[std::min(i, ms.size() - 1)];
  };
  std::printf(
      "bench-frames: %zu frames at %dx%d: median %.2f ms, p95 %.2f ms, worst %.2f ms; first frame "
      "%.0f ms after start\n",
      ms.size(), fb_w, fb_h, pct(0.5), pct(0.95), ms.back(), first_frame_ms);
  std::printf(
      "bench-frames: medians per phase: UI %.2f ms, GL submit %.2f ms, swap %.2f ms; %.0f "
      "vertices in %.0f draw calls per frame covering %.2f Mpx (%.2f× the window)\n",
      median_of(phases.ui_ms), median_of(phases.submit_ms), median_of(phases.swap_ms),
      median_of(phases.vertices), median_of(phases.draw_calls), median_of(phases.covered_px) / 1e6,
      median_of(phases.covered_px) / std::max(1.0, double(fb_w) * double(fb_h)));
  std::printf("bench-frames: present: %s; redrawn %.2f Mpx per frame (median)\n",
              phases.present.c_str(), median_of(phases.redrawn_px) / 1e6);
  if (phases.cpu_start_s >= 0 && ms.size() > 1)
    std::printf(
        "bench-frames: CPU time %.2f ms per frame (this process, all threads, mean of %zu); load "
        "average %s\n",
        1e3 * (phases.cpu_end_s - phases.cpu_start_s) / double(ms.size() - 1), ms.size() - 1,
        load_average_text().c_str());
}

static bool automated_run(const AppOptions& options) {
  return options.frames > 0 || options.bench_frames > 0 || !options.script.empty();
}

namespace {

// The app's window with its OpenGL 3.3 context current, or nullptr after saying why on stderr.
GLFWwindow* open_window(const AppOptions& options) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr,
                 "tilescope: error: cannot initialise GLFW (no display? set DISPLAY or run under "
                 "xvfb-run)\n");
    return nullptr;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  GLFWwindow* window =
      glfwCreateWindow(options.width, options.height, "tilescope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "tilescope: error: cannot create an OpenGL 3.3 window\n");
    glfwTerminate();
    return nullptr;
  }
  glfwMakeContextCurrent(window);
  // Below about 800×600 the side panels overlap the centre; a window manager keeps the window at
  // least that large (a smaller --size, asked for on purpose, is kept as the floor instead).
  glfwSetWindowSizeLimits(window, std::min(options.width, 800), std::min(options.height, 600),
                          GLFW_DONT_CARE, GLFW_DONT_CARE);
  // Scripted and benchmark runs should not wait for vsync.
  glfwSwapInterval(options.frames > 0 || options.bench_frames > 0 ? 0 : 1);
  return window;
}

}  // namespace

int run_app(const AppOptions& options) {
  // --bench-frames measures from here: "first frame" is process work up to the first swap.
  const auto start_time = std::chrono::steady_clock::now();
  // [SECTION] Startup inputs (model, script)
  AppState state;
  ViewCaches caches;  // what the views keep between frames (views/view_caches.h)
  state.theme = options.theme;
  if (!options.lessons_dir.empty()) state.lessons.dir = options.lessons_dir;
  ScriptRunner script;
  try {
    if (!options.script.empty()) {
      // A script is a list of commands written by hand: a model file's cap is plenty.
      script = ScriptRunner(
          parse_script(read_text_file(options.script, io::kMaxModelBytes, "a script file"),
                       options.script),
          options.script);
    }
    if (!options.model_path.empty()) {
      state.model.text = pipeline::read_model_file(options.model_path).text;
      state.model.path = options.model_path;
      state.model.path_chosen = true;
    } else {
      state.model.text = std::string(lang::default_model_text());
    }
  } catch (const CommandError& e) {
    std::fprintf(stderr, "tilescope: error: %s\n", e.what());
    return 1;
  } catch (const graph::GraphError& e) {
    std::fprintf(stderr, "tilescope: error: %s\n", e.message().c_str());
    return 1;
  }
  workbench_load_recorded(state.workbench, "assets/recorded");
  workbench_set_machine(state.workbench, state.workbench.machine_name);
  // A model with an error still opens: the error is shown next to the text, as when typing.
  reparse_model(state);
  // The last session comes back unless a model was named or the run is automated (tests);
  // --session FILE names one explicitly, for automated runs too.
  const bool use_session = !options.no_session && options.script.empty() && options.frames == 0 &&
                           options.bench_frames == 0;
  std::string session_path = options.no_session              ? std::string()
                             : !options.session_path.empty() ? options.session_path
                             : use_session                   ? default_session_path()
                                                             : std::string();
  std::string saved_session;
  std::error_code exists_error;
  const bool had_session =
      !session_path.empty() && std::filesystem::exists(session_path, exists_error);
  // --model opens that file, and the saved session stays as it was until the learner chooses to
  // keep this work as the session (File ▸ Keep as my session); before, --model overwrote it.
  state.autosave_paused = !options.model_path.empty() && options.session_path.empty();
  if (!session_path.empty() && options.model_path.empty()) {
    // Never fatal: whatever the file holds, the app starts (the message says what happened).
    const SessionRestore restored = restore_session(state, session_path);
    if (!restored.message.empty()) {
      std::fprintf(stderr, "tilescope: %s\n", restored.message.c_str());
      state.status_message = restored.message;
      state.status_is_error = restored.is_error;
    }
    if (!restored.autosave_ok) session_path.clear();
  }
  state.session_path = session_path;
  // [SECTION] Lessons: the catalogue, --teacher, and "start here" on a first start
  lesson_ensure_catalogue(state.lessons);
  if (options.teacher) state.lessons.teacher = true;
  // No session to come back to: the first screen points at the lessons. Automated runs show it
  // only when they name a session file that does not exist yet (a first start, scripted).
  state.start_here = !had_session && (!session_path.empty() || !automated_run(options));

  GLFWwindow* window = open_window(options);
  if (!window) return 1;

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  GuiStore store;  // what the GUI keeps between frames, for as long as this context lives
  attach_gui_store(&store);
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is computed, there is nothing to remember
  float xscale = 1.0f, yscale = 1.0f;
  glfwGetWindowContentScale(window, &xscale, &yscale);
  state.content_scale = std::max(1.0f, std::max(xscale, yscale));
  // The UI scale re-rasterises the fonts at the larger size (sharp type on a projector, not a
  // bitmap stretched); `fonts_scale` is the scale the atlas was built for.
  float fonts_scale = state.type_scale();
  Fonts fonts = load_fonts(fonts_scale);
  io.Fonts->Build();  // the scene measures text before the first frame
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  install_input_callbacks(window, state.requests.keys);
  // The layout JSON lists the texts cut off: measured in the runs that may write it.
  set_clip_check(!options.layout_json.empty() || !options.script.empty());

  std::vector<Command> queue;  // pushed by views during a frame, applied before the next
  std::optional<Theme> applied_theme;
  int exit_code = 0;
  // A file the run was asked to write could not be: said, and the run ends with status 1.
  const auto report = [&exit_code](const std::string& error) {
    if (error.empty()) return;
    std::fprintf(stderr, "tilescope: error: %s\n", error.c_str());
    exit_code = 1;
  };
  int frame = 0;
  const bool automated = options.frames > 0 || options.bench_frames > 0 || !options.script.empty();
  double first_frame_ms = -1.0;
  std::vector<double> frame_ms;  // --bench-frames: measured frames, swap to swap
  FramePhases phases;
  auto last_swap = start_time;
  int fb_w = 0, fb_h = 0;
  // Render on demand: frames still to draw after the last input event (ImGui needs a couple to
  // settle hover and the commands a click pushed) before the loop may sleep.
  constexpr int kFramesAfterInput = 3;
  int eager_frames = kFramesAfterInput;
  FramePresenter presenter;
  presenter.init(window);
  phases.present = presenter.why();
  FrameDamage damage;
  bool redraw_whole_next = true;

  // [SECTION] Frame loop
  while (!glfwWindowShouldClose(window)) {
    // [SECTION] Render on demand: sleep until input (or the next animation frame) when idle.
    const double wait = frame_wait_seconds(state);
    if ((automated && !script.waiting_for_jobs()) || eager_frames > 0 || !queue.empty() ||
        wait <= 0)
      glfwPollEvents();
    else
      glfwWaitEventsTimeout(wait);
    if (g_input_events > 0) {
      eager_frames = kFramesAfterInput;
      g_input_events = 0;
    } else if (eager_frames > 0) {
      --eager_frames;
    }
    int win_w = 0, win_h = 0;
    glfwGetWindowSize(window, &win_w, &win_h);
    state.window_w = static_cast<float>(std::max(win_w, 1));
    state.window_h = static_cast<float>(std::max(win_h, 1));
    state.now = glfwGetTime();

    // Commands: last frame's UI actions first, then whatever the script has due now.
    // Files dropped on the window open as a user's Open would (a .json as a session).
    for (const std::string& path : g_dropped) {
      Command drop;
      drop.kind = CommandKind::Drop;
      drop.text = path;
      queue.push_back(drop);
    }
    g_dropped.clear();
    for (const Command& c : queue) {
      const std::string error = apply_command(state, c);
      // A panel control is a setting, not an action: moving the tile slider leaves the status bar
      // saying what the last action did.
      if (c.kind == CommandKind::Control && error.empty()) continue;
      state.status_message = error.empty() ? state.notice : error;
      state.status_is_error = !error.empty();
      state.notice.clear();
    }
    queue.clear();
    // Bring derived state (debounced parse, scene, theme) up to date before the script runs, so
    // script lines such as click-node see what the user would see, and again after it.
    const auto settle = [&] {
      update_state(state);
      if (const float want = state.type_scale(); want != fonts_scale) {
        fonts = load_fonts(want);
        io.Fonts->Build();
        ImGui_ImplOpenGL3_DestroyFontsTexture();
        ImGui_ImplOpenGL3_CreateFontsTexture();
        use_nearest_font_sampling(io);
        fonts_scale = want;
        redraw_whole_next = true;  // a new atlas may reuse the old texture's name
        applied_theme.reset();  // the style's sizes follow the scale, too
        state.scene_stale = true;
      }
      if (applied_theme != state.theme) {
        apply_imgui_style(state.theme, fonts_scale);
        io.FontDefault = fonts.for_theme(state.theme).ui;
        applied_theme = state.theme;
      }
      const FontSet& set = fonts.for_theme(state.theme);
      refresh_scene(state, [&](std::string_view s, SceneFont f) {
        ImFont* font = f == SceneFont::Bold      ? set.ui_bold
                       : f == SceneFont::Regular ? set.ui
                                                 : set.mono;
        return font->CalcTextSizeA(set.px, FLT_MAX, 0.0f, s.data(), s.data() + s.size()).x;
      });
    };
    settle();
    if (const std::string error = script.run_frame(state); !error.empty()) {
      std::fprintf(stderr, "%s\n", error.c_str());
      exit_code = 1;
      break;
    }
    if (state.requests.toggle_fullscreen) {
      state.requests.toggle_fullscreen = false;
      if (GLFWmonitor* full = glfwGetWindowMonitor(window)) {
        (void)full;
        glfwSetWindowMonitor(window, nullptr, 80, 80, options.width, options.height, 0);
      } else if (GLFWmonitor* monitor = glfwGetPrimaryMonitor()) {
        const GLFWvidmode* mode = glfwGetVideoMode(monitor);
        glfwSetWindowMonitor(window, monitor, 0, 0, mode->width, mode->height, mode->refreshRate);
      }
    }
    // Autosave when what a session holds changed (cheap: a few strings compared per frame).
    if (!session_path.empty() && !state.autosave_paused) {
      std::string now = session_text(state);
      if (now != saved_session) {
        if (std::string e = save_session(state, session_path); !e.empty()) {
          state.status_message = e;
          state.status_is_error = true;
        }
        saved_session = std::move(now);
      }
    }
    if (state.requests.resize_w > 0) {
      glfwSetWindowSize(window, state.requests.resize_w, state.requests.resize_h);
      state.requests.resize_w = state.requests.resize_h = 0;
    }
    settle();
    const FontSet& font_set = fonts.for_theme(state.theme);

    const auto ui_start = std::chrono::steady_clock::now();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // Scripted and --frames runs ignore the pointer: under Xvfb it sits mid-screen and would
    // hover a node, so the same script would not give the same screenshot.
    if (!state.requests.input.empty()) {
      const SyntheticInput in = state.requests.input.front();
      state.requests.input.erase(state.requests.input.begin());
      io.MousePos = in.x < 0 ? ImVec2(-FLT_MAX, -FLT_MAX) : ImVec2(in.x, in.y);
      io.MouseDown[0] = in.down;
      io.MouseWheel += in.wheel;
      if (!in.text.empty()) io.AddInputCharactersUTF8(in.text.c_str());
      if (in.key > 0 && in.key < IM_ARRAYSIZE(io.KeysDown)) queue_tap(state.requests.keys, in);
    } else if (automated) {
      io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    }
    feed_keys(window, state.requests.keys);
    // Every text this frame draws passes the mask of the open predictions (text_mask.h).
    set_text_mask([&] {
      AnswerMask mask;
      mask.set(hidden_answers(state.lessons, state.presentation));
      return mask;
    }());
    const bool record_text = !state.requests.frame_text_path.empty();
    if (record_text) record_frame_text();
    clear_clipped_text();
    ImGui::NewFrame();
    if (frame == 0) use_nearest_font_sampling(io);  // the backend made the atlas in NewFrame
    {
      ViewContext ctx{state, queue, caches, font_set, palette(state.theme), &fonts.projector};
      const PanelLayout panels = state.panels();
      widget_rects().clear();
      handle_global_keys(ctx);
      // Presentation mode draws the centre view alone; the side panels have no width (except the
      // lesson text, which a lesson open in presentation keeps on the left in large type).
      const bool sides = !state.presentation;
      if (state.lessons.reading())
        draw_lesson_text_view(ctx, panels.model_text);
      else if (sides)
        draw_model_text_view(ctx, panels.model_text);
      if (sides) draw_tabs_view(ctx, panels.tabs);
      draw_centre_view(ctx, state.workbench.tab, panels, sides);
      if (state.start_here && sides && state.workbench.tab != ViewTab::Lessons)
        draw_start_here(ctx, panels.graph);
      draw_status_bar_view(ctx, panels.status_bar);
      draw_file_browser(ctx, Rect{0, 0, state.window_w, state.window_h});
      draw_open_choice(ctx, Rect{0, 0, state.window_w, state.window_h});
    }
    ImGui::Render();
    if (record_text) {
      std::string lines;
      for (const std::string& t : take_frame_text()) lines += io::printable(t, 100000) + "\n";
      if (std::ofstream out(state.requests.frame_text_path); !(out << lines))
        report("cannot write frame text '" + state.requests.frame_text_path + "'");
      state.requests.frame_text_path.clear();
    }
    const auto ui_end = std::chrono::steady_clock::now();
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    glViewport(0, 0, fb_w, fb_h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    // [SECTION] Render: large opaque fills unblended (the same pixels; see opaque_draws.h), and
    // on a software rasteriser only the rectangles that changed (partial_redraw.h).
    ImDrawData* draw_data = ImGui::GetDrawData();
    draw_opaque_fills_unblended(draw_data);
    // Swapping whole frames needs no comparison with the last one: skip hashing the lists.
    const std::vector<PixelRect> redraw =
        presenter.partial()
            ? damage.update(*draw_data, fb_w, fb_h,
                            g_exposed || redraw_whole_next || presenter.must_draw_whole(fb_w, fb_h))
            : std::vector<PixelRect>{PixelRect{0, 0, fb_w, fb_h}};
    g_exposed = false;
    redraw_whole_next = false;
    render_rects(*draw_data, redraw, fb_h, bg);
    const auto submit_end = std::chrono::steady_clock::now();
    ++frame;

    const bool last = (options.frames > 0 && frame >= options.frames) || state.requests.quit;
    std::vector<std::string> shots;
    if (!state.requests.screenshot_path.empty()) shots.push_back(state.requests.screenshot_path);
    if (last && !options.screenshot.empty()) shots.push_back(options.screenshot);
    state.requests.screenshot_path.clear();
    for (const std::string& path : shots) report(save_screenshot(path, fb_w, fb_h));
    if (!state.requests.view_png_path.empty()) {
      // File > Export > this view: the centre view's rectangle alone, in framebuffer pixels.
      const Rect v = state.panels().graph;
      const float sx = float(fb_w) / std::max(state.window_w, 1.0f),
                  sy = float(fb_h) / std::max(state.window_h, 1.0f);
      report(save_screenshot(state.requests.view_png_path, fb_w, fb_h,
                             PixelBox{int(v.x * sx), int(v.y * sy), int(v.w * sx), int(v.h * sy)}));
      state.requests.view_png_path.clear();
    }
    presenter.present(redraw, fb_w, fb_h);
    if (!state.requests.screen_shot_path.empty()) {
      report(save_screen_shot(state.requests.screen_shot_path, window));
      state.requests.screen_shot_path.clear();
    }
    const auto swapped = std::chrono::steady_clock::now();
    const double since_last =
        std::chrono::duration<double, std::milli>(swapped - last_swap).count();
    last_swap = swapped;
    if (first_frame_ms < 0) first_frame_ms = since_last;
    bool bench_done = false;
    if (options.bench_frames > 0 && script.done() && frame > 1) {
      // CPU time from the end of the first measured frame to the end of the last: as many frames
      // as intervals between them.
      if (phases.cpu_start_s < 0) phases.cpu_start_s = process_cpu_seconds();
      phases.cpu_end_s = process_cpu_seconds();
      frame_ms.push_back(since_last);
      using Ms = std::chrono::duration<double, std::milli>;
      phases.ui_ms.push_back(Ms(ui_end - ui_start).count());
      phases.submit_ms.push_back(Ms(submit_end - ui_end).count());
      phases.swap_ms.push_back(Ms(swapped - submit_end).count());
      phases.vertices.push_back(ImGui::GetDrawData()->TotalVtxCount);
      phases.draw_calls.push_back(draw_call_count(ImGui::GetDrawData()));
      phases.covered_px.push_back(covered_pixels(ImGui::GetDrawData()));
      double redrawn = 0;
      for (const PixelRect& r : redraw) redrawn += double(r.area());
      phases.redrawn_px.push_back(redrawn);
      bench_done = static_cast<int>(frame_ms.size()) >= options.bench_frames;
    }
    if (!state.requests.state_json_path.empty()) {
      report(write_state_json(state.requests.state_json_path, state));
      state.requests.state_json_path.clear();
    }
    if (!state.requests.layout_json_path.empty()) {
      report(write_layout_json(state.requests.layout_json_path, state, fb_w, fb_h));
      state.requests.layout_json_path.clear();
    }
    if (last || bench_done || exit_code != 0) break;
    // --frame-delay: a slow frame on purpose (tests of input under software OpenGL's pace).
    if (options.frame_delay_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(options.frame_delay_ms));
  }

  if (options.bench_frames > 0) print_frame_bench(frame_ms, first_frame_ms, fb_w, fb_h, phases);
  if (!options.layout_json.empty()) report(write_layout_json(options.layout_json, state, fb_w, fb_h));
  if (!options.state_json.empty()) report(write_state_json(options.state_json, state));
  // Quitting never waits on a job (issue #25): each is asked to stop, and one that has not within
  // two seconds (a compile, a simulation that does not look at its flag) is left behind — the
  // session is saved, so the process ends without joining it.
  workbench_cancel(state.workbench);
  lesson_cancel_jobs(state.lessons);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  attach_gui_store(nullptr);
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  if (!wait_for_job_threads(2.0)) {
    std::fprintf(stderr, "tilescope: a background job did not stop within 2 s; quitting without it\n");
    std::fflush(nullptr);
    std::_Exit(exit_code);
  }
  return exit_code;  // the jobs' threads are joined when the state goes away
}

}  // namespace tilescope::gui

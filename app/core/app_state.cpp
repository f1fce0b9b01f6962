// The app's state and the state-level operations the commands build on (parse, fit, scene).
#include "app/core/app_state.h"

#include "sim/lang/parser.h"
#include "sim/io/input.h"
#include "sim/pipeline.h"

#include <algorithm>
#include <cmath>

namespace tilescope::core {

const char* theme_name(Theme theme) {
  switch (theme) {
    case Theme::Light:
      return "light";
    case Theme::Dark:
      return "dark";
    case Theme::Projector:
      return "projector";
  }
  return "light";
}

std::optional<Theme> theme_from_name(std::string_view name) {
  if (name == "light") return Theme::Light;
  if (name == "dark") return Theme::Dark;
  if (name == "projector") return Theme::Projector;
  return std::nullopt;
}

float theme_font_px(Theme theme, float content_scale) {
  const float scale = content_scale > 0.0f ? content_scale : 1.0f;
  // 16 px reads well at a desk; the projector theme is for the back row of a lecture room.
  const float base = theme == Theme::Projector ? 22.0f : 16.0f;
  return std::round(base * scale);
}

float type_scale_for(Theme theme, float content_scale, float ui_scale, float window_w,
                     float window_h) {
  const float cs = content_scale > 0.0f ? content_scale : 1.0f;
  const float chosen = cs * ui_scale;
  const float floor = cs * std::min(ui_scale, 1.0f);
  if (window_w <= 0.0f || window_h <= 0.0f) return chosen;
  const float base = theme_font_px(theme, 1.0f);
  // Whole pixels of type, so a window dragged wider re-rasterises the fonts once a pixel step.
  const float fits = std::floor(std::min(window_w / kMinEmAcross, window_h / kMinEmDown)) / base;
  return std::clamp(fits, floor, chosen);
}

bool model_text_edited(const AppState& state) {
  const std::string& t = state.model.text;
  return t != state.model.loaded_text && t != lang::default_model_text() &&
         t.find_first_not_of(" \n\r\t") != std::string::npos;
}

bool reparse_model(AppState& state) {
  ModelDoc& doc = state.model;
  doc.reparse_pending = false;
  // Every way in (a file, a drop, a session, a lesson, a script) ends here before the editor
  // shows the text: NUL bytes and invalid UTF-8 become visible characters the parser then points
  // at, so ImGui's NUL-terminated editor never holds a text of another length (issue #25).
  if (doc.text.find('\0') != std::string::npos || !io::valid_utf8(doc.text))
    doc.text = io::editor_safe_text(doc.text);
  try {
    auto parsed = pipeline::parse({doc.text, doc.path.empty() ? "<editor>" : doc.path});
    // Refit only when the structure changed, so an edit to a number does not move the camera.
    const graph::Graph* old = doc.graph.get();
    bool same_structure = old && old->ops().size() == parsed->ops().size() &&
                          old->tensors().size() == parsed->tensors().size();
    if (same_structure) {
      for (size_t i = 0; i < parsed->ops().size(); ++i)
        same_structure = same_structure && parsed->ops()[i].name == old->ops()[i].name;
    }
    doc.graph = std::move(parsed);
    doc.graph_text = doc.text;
    doc.error.reset();
    ++doc.generation;
    state.scene_stale = true;
    if (!same_structure) state.view.fit_pending = true;
    return true;
  } catch (const graph::GraphError& e) {
    doc.error = ModelError{e.message(), e.what(), e.loc().line, e.loc().col};
  } catch (const std::exception& e) {
    // The parser promises GraphError; anything else is still shown, never fatal.
    doc.error = ModelError{e.what(), e.what(), 0, 0};
  }
  return false;
}

void update_state(AppState& state) {
  if (state.model.reparse_pending && state.now - state.model.edit_time >= kReparseDebounceSeconds) {
    reparse_model(state);
  }
  workbench_set_graph(state.workbench, state.model.graph, state.model.graph_text,
                      state.model.generation);
  workbench_poll(state.workbench);
  workbench_track_memory_wait(state.workbench, state.now);
  workbench_tick(state.workbench, state.now);
  lesson_poll(state.lessons, state.workbench, state.model.graph, state.model.graph_text);
  refresh_trace(state);
  if (!state.outline_text || *state.outline_text != state.model.text) {
    state.outline = outline_model(state.model.text);
    state.outline_text = state.model.text;
  }
  // A selection whose op or tensor vanished in the new graph is dropped, not left dangling.
  const graph::Graph* g = state.graph();
  if (state.selection.kind == Selection::Kind::Op && (!g || !g->find_op(state.selection.name))) {
    state.selection = {};
  }
  if (state.selection.kind == Selection::Kind::Tensor &&
      (!g || !g->find_tensor(state.selection.name))) {
    state.selection = {};
  }
}

void refresh_trace(AppState& state) {
  const Workbench& wb = state.workbench;
  refresh_trace_mapping(state.trace, state.graph(), state.model.graph_text,
                        wb.machine ? &*wb.machine : nullptr, wb.machine_name);
}

std::string presentation_indicator(const AppState& state) {
  if (!state.presentation) return {};
  const LessonPlayer& lp = state.lessons;
  std::string where;
  if (lp.is_open() && lp.lesson && !lp.lesson->steps.empty()) {
    where = "lesson step " + std::to_string(lp.step + 1) + " of " +
            std::to_string(lp.lesson->steps.size());
  } else if (state.workbench.history && state.workbench.step_texts.empty()) {
    where = "no steps yet";
  } else if (state.workbench.history) {
    where = "step " + std::to_string(state.workbench.history->size()) + " of " +
            std::to_string(state.workbench.step_texts.size());
  }
  const std::string keys = "\u2190 \u2192 step  \u00B7  Esc or F5 leaves";
  return where.empty() ? keys : where + "  \u00B7  " + keys;
}

double frame_wait_seconds(const AppState& state) {
  const PlatformRequests& r = state.requests;
  if (!r.input.empty() || !r.keys.empty() || !r.screenshot_path.empty() || !r.screen_shot_path.empty() ||
      !r.state_json_path.empty() || !r.frame_text_path.empty() || !r.layout_json_path.empty() ||
      r.quit || r.resize_w > 0 || r.toggle_fullscreen ||
      state.view.fit_pending || state.scene_stale)
    return 0.0;
  if (state.workbench.busy() || state.workbench.tiles_playing || state.lessons.busy())
    return kBusyFrameSeconds;
  if (state.model.reparse_pending)
    return std::clamp(state.model.edit_time + kReparseDebounceSeconds - state.now, 0.0,
                      kIdleWaitSeconds);
  return kIdleWaitSeconds;
}

void refresh_scene(AppState& state, const TextMeasure& measure) {
  const graph::Graph* g = state.graph();
  if (!g) {
    state.scene.reset();
    return;
  }
  if (state.scene_stale || !state.scene || state.scene->font_px != state.font_px() ||
      state.scene->compact != state.presentation) {
    try {
      state.scene = build_graph_scene(*g, measure, state.font_px(), state.presentation);
    } catch (const std::exception& e) {
      state.scene.reset();
      state.status_message = std::string("cannot lay out the graph: ") + e.what();
      state.status_is_error = true;
    }
    state.scene_stale = false;
  }
  follow_canvas_size(state);
  if (state.view.fit_pending && state.scene) fit_view(state);
}

void follow_canvas_size(AppState& state) {
  CanvasView& v = state.view;
  const Rect canvas = state.panels().graph;
  if (v.canvas_w > 0.0f && (canvas.w != v.canvas_w || canvas.h != v.canvas_h)) {
    if (v.fitted) {
      v.fit_pending = true;
      v.fit_whole = v.fit_whole || v.fitted_whole;
    } else {
      v.pan_x = std::round(v.pan_x + (canvas.w - v.canvas_w) / 2);
      v.pan_y = std::round(v.pan_y + (canvas.h - v.canvas_h) / 2);
    }
  }
  v.canvas_w = canvas.w;
  v.canvas_h = canvas.h;
}

void fit_view(AppState& state) {
  state.view.fit_pending = false;
  if (!state.scene) return;
  state.view.fitted = true;
  state.view.fitted_whole = state.view.fit_whole;
  const Rect canvas = state.panels().graph;
  // Leave room for the canvas's overlays: the title line on top, legend and hints at the bottom.
  const float em = state.font_px();
  // Presentation mode has no hint line and no palette: the legend stands as a column on the left
  // under the title (view_graph.cpp), so the bottom needs only a margin and the left the legend.
  const bool present = state.presentation;
  const float side = em * 1.2f, top = em * 2.4f, bottom = present ? em * 0.6f : em * 3.6f;
  // An open palette stands on the canvas's left (view_graph.cpp): F fits the graph beside it.
  const float left = present ? em * kPresentLegendEm
                     : state.controls.palette.open
                         ? std::min(em * kPaletteEm, canvas.w * 0.42f) + side
                         : side;
  const float sw = std::max(state.scene->width, 1.0f);
  const float sh = std::max(state.scene->height, 1.0f);
  const float avail_w = std::max(canvas.w - left - side, 1.0f);
  const float avail_h = std::max(canvas.h - top - bottom, 1.0f);
  // Past 1.25x the text is only blurrier, and a tiny graph blown up looks like a different app.
  float zoom = std::clamp(std::min(avail_w / sw, avail_h / sh), 0.1f, 1.25f);
  // Presentation mode reads from the back of a room: node text at least kPresentTextPx high.
  const float readable =
      state.presentation ? std::max(kReadableZoom, kPresentTextPx / em) : kReadableZoom;
  const bool readable_only = !state.view.fit_whole && zoom < readable;
  state.view.fit_whole = false;
  if (readable_only) zoom = readable;
  state.view.zoom = zoom;
  // A graph too big to read whole starts at its top (where the inputs are), centred if it fits
  // across, else from its left edge.
  state.view.pan_x =
      std::round(sw * zoom <= avail_w || !readable_only ? left + (avail_w - sw * zoom) / 2 : left);
  state.view.pan_y = std::round(readable_only ? top : top + (avail_h - sh * zoom) / 2);
}

namespace {

// Sets the view from values computed in double: each clamped before it becomes a float, since
// converting a double outside float's range is undefined (and gives inf in practice).
void set_view(AppState& state, double zoom, double pan_x, double pan_y) {
  CanvasView& v = state.view;
  if (!std::isfinite(zoom) || !std::isfinite(pan_x) || !std::isfinite(pan_y)) {
    v.zoom = 1.0f;
    v.pan_x = v.pan_y = 0.0f;
    v.fit_pending = true;  // the next refresh_scene puts the graph back in view
    return;
  }
  const double z = std::clamp(zoom, double(kMinZoom), double(kMaxZoom));
  const Rect canvas = state.panels().graph;
  const double gw = state.scene ? double(state.scene->width) * z : 0.0;
  const double gh = state.scene ? double(state.scene->height) * z : 0.0;
  const double cw = std::max(double(canvas.w), 1.0), ch = std::max(double(canvas.h), 1.0);
  v.zoom = static_cast<float>(z);
  v.pan_x = static_cast<float>(std::clamp(pan_x, -gw - cw, 2 * cw));
  v.pan_y = static_cast<float>(std::clamp(pan_y, -gh - ch, 2 * ch));
}

}  // namespace

void pan_view(AppState& state, double dx, double dy) {
  state.view.fit_pending = false;
  state.view.fitted = false;
  set_view(state, state.view.zoom, double(state.view.pan_x) + dx, double(state.view.pan_y) + dy);
}

void zoom_view(AppState& state, double factor, double ax, double ay) {
  state.view.fit_pending = false;
  state.view.fitted = false;
  const double old_zoom = state.view.zoom;
  const double new_zoom = std::clamp(old_zoom * factor, double(kMinZoom), double(kMaxZoom));
  // Keep the world point under the anchor where it is.
  const double ratio = new_zoom / old_zoom;
  set_view(state, new_zoom, ax - (ax - state.view.pan_x) * ratio,
           ay - (ay - state.view.pan_y) * ratio);
}

std::string_view line_of(std::string_view text, int line) {
  if (line < 1) return {};
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string_view::npos) end = text.size();
  return text.substr(start, end - start);
}

}  // namespace tilescope::core

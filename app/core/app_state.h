// Everything the desktop app shows, in one place: the model text, its last good Graph or its
// error, the selection, the canvas view and the theme. Views read it; only commands change it.
//
// Pure C++ (no ImGui): the tests drive it with commands and no display.
#pragma once

#include "app/core/graph_edit.h"
#include "app/core/graph_scene.h"
#include "app/core/key_queue.h"
#include "app/core/lesson_player.h"
#include "app/core/panel_controls.h"
#include "app/core/panel_layout.h"
#include "app/core/trace_doc.h"
#include "app/core/workbench.h"
#include "sim/graph/graph.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// [SECTION] Theme

enum class Theme { Light, Dark, Projector };
const char* theme_name(Theme);
std::optional<Theme> theme_from_name(std::string_view);

// UI font size in pixels for a theme and the monitor's content scale (projector: large type).
float theme_font_px(Theme theme, float content_scale);

// The window must hold this many lines of type across and down: the side panels, the centre at
// 40 % and the status bar need about that (the projector theme at 100 % on 1280x720: 58 x 33).
inline constexpr float kMinEmAcross = 58.0f, kMinEmDown = 30.0f;

// The type scale for a theme: content_scale × ui_scale, held to what a window_w × window_h window
// can hold (kMinEmAcross, kMinEmDown) — UI scale 200 % in the projector theme on a 1280x720 window
// would be 44 px type, 29 characters across, and no panel could show its numbers — but never
// below content_scale × min(ui_scale, 1): the cap only takes back enlargement.
float type_scale_for(Theme theme, float content_scale, float ui_scale, float window_w,
                     float window_h);

// [SECTION] Model document

struct ModelError {
  std::string message;  // without location
  std::string full;     // GraphError::what(): location, message and caret excerpt
  int line = 0;         // 1-based; 0 when unknown
  int col = 0;
};

struct ModelDoc {
  std::string text;                           // what the editor holds
  std::string path;                           // file it came from; "" for the built-in example
  // The learner chose `path` in this run (opened it, saved as, --model, a drop). A path that
  // came from a session, a hand-out or a lesson is never written until they do: Save model
  // opens Save as… on it instead (a hand-out's model_path could name /etc/passwd).
  bool path_chosen = false;
  // The text as it was last opened, saved or loaded by a lesson or a session: the text differs
  // from it once the learner edits (model_text_edited), and then nothing replaces it unasked.
  std::string loaded_text;
  std::shared_ptr<const graph::Graph> graph;  // the last good parse (kept while text is broken)
  std::string graph_text;                     // the text `graph` was parsed from
  std::optional<ModelError> error;            // the current text's error, if any
  bool reparse_pending = false;               // edited, waiting for the debounce
  double edit_time = 0.0;                     // when the last edit happened (seconds)
  int generation = 0;                         // bumps on every successful parse
};

// [SECTION] Selection and canvas view

struct Selection {
  enum class Kind { None, Op, Tensor };
  Kind kind = Kind::None;
  std::string name;
};

// Canvas transform: screen = canvas top-left + pan + world * zoom.
struct CanvasView {
  float zoom = 1.0f;
  float pan_x = 0.0f;
  float pan_y = 0.0f;
  bool fit_pending = true;  // fit once the scene exists
  bool fit_whole = false;   // the pending fit must show everything (F), not just stay readable
  // The canvas size the view was last placed for, and whether the view is still the fitted one
  // (no pan or zoom since): when the window (so the canvas) changes size, a fitted view is fitted
  // again and a moved one keeps its centre, so a maximise or a shrink never loses the graph.
  float canvas_w = 0.0f, canvas_h = 0.0f;
  bool fitted = false, fitted_whole = false;
};

// [SECTION] Requests to the platform layer (handled by the frame loop, not by views)

// One frame of scripted pointer/keyboard input, fed to ImGui in place of the real devices, so
// scripts exercise the same view code a user's clicks do.
struct SyntheticInput {
  float x = 0.0f, y = 0.0f;  // pointer position, window pixels
  bool down = false;         // left button held
  float wheel = 0.0f;        // wheel notches this frame
  int key = 0;               // key pressed this frame (GLFW code; letters are ASCII capitals)
  bool ctrl = false, alt = false, shift = false;  // modifiers held with it
  std::string text;                               // characters typed this frame (UTF-8)
};

// Window sides a resize may ask for. A window of 20000 x 20000 needs a framebuffer and
// screenshot buffers of gigabytes (20000² × 4 bytes = 1.6 GB, twice) and ended in bad_alloc.
inline constexpr int kMinWindowSide = 16;
inline constexpr int kMaxWindowSide = 8192;

struct PlatformRequests {
  std::string screenshot_path;  // save a PNG after this frame renders
  std::string view_png_path;    // save a PNG of the centre view alone after this frame renders
  std::string screen_shot_path;  // save a PNG of the window as the display shows it, presented
  bool quit = false;
  int resize_w = 0, resize_h = 0;     // 0 = no request
  std::vector<SyntheticInput> input;  // played one per frame, front first
  bool toggle_fullscreen = false;     // F11
  // Key presses and releases not yet handed to ImGui: the real keyboard's and the scripted `key`
  // commands' alike, fed one transition per key per frame (key_queue.h).
  KeyEventQueue keys;
  std::string state_json_path;  // write the state JSON after this frame (`write-state FILE`)
  std::string frame_text_path;  // write every text this frame draws (`write-frame-text FILE`)
  std::string layout_json_path;  // write the layout JSON after this frame (`write-layout FILE`)
};

// [SECTION] Files: the in-app file browser, recent files

// ImGui 1.86 has no file dialog and no Debian package offers one: the browser is a list of a
// folder's entries, "up", and a path field (views/view_files.cpp draws it; files.h lists folders).
struct FileBrowser {
  enum class Mode {
    Closed,
    OpenModel,
    SaveModel,
    OpenSession,
    SaveSession,
    SaveGrade,
    OpenTrace,
    Export,
    SaveMachine
  };
  Mode mode = Mode::Closed;
  std::string export_name;  // Export: what is written (exports.h: "memory-levels", "view", ...)
  std::string dir;   // the folder listed
  std::string name;  // the path field: a file name in `dir`, or a path
};
inline constexpr size_t kMaxRecentFiles = 8;

// File ▸ Open model (or a drop) over a schedule or edited text: the file is read and waits here
// while the learner chooses to replay the schedule on it, start it without steps, or cancel; the
// trial says which steps would not apply (issue #26: nothing is replaced or dropped unasked).
struct PendingOpen {
  std::string path;
  std::string text;         // the file's text, read when it was chosen
  ReplayTrial trial;        // the current schedule replayed on it, tried
  bool text_edited = false;  // the editor holds text the learner changed and did not save
  std::string parse_error;  // the file's model does not parse ("" = it does)
};

// The model an open replaced (text, path and applied schedule steps): `files restore-model`
// brings it back, and puts the model it replaces here in turn.
struct ReplacedModel {
  std::string text;
  std::string path;
  bool path_chosen = false;
  std::vector<std::string> steps;
};

// The UI scale's range (fonts re-rasterised at font size × scale; 1 = the theme's size).
inline constexpr float kMinUiScale = 0.75f, kMaxUiScale = 2.5f;

// [SECTION] AppState

struct AppState {
  ModelDoc model;
  Selection selection;
  CanvasView view;
  Theme theme = Theme::Light;
  float content_scale = 1.0f;
  float ui_scale = 1.0f;  // the learner's choice on top of the monitor's scale (ui-scale command)
  float window_w = 1280.0f, window_h = 800.0f;  // logical pixels, set by the platform each frame
  double now = 0.0;                             // seconds, set by the platform each frame

  // Derived from the graph and the font; rebuilt by refresh_scene() when stale.
  std::optional<GraphScene> scene;
  bool scene_stale = true;

  std::string status_message;  // the last command error or notice, shown in the status bar
  bool status_is_error = false;
  std::string notice;  // what a command that succeeded wants said (saved to …); shown, then cleared
  std::string palette_note;  // the graph palette's last outcome: what it added, or why not
  bool palette_note_ok = false;
  std::vector<std::string> palette_picks;  // the palette's operands B, C (Shift+click a node)
  PanelControls controls;  // the side panels' widget choices: tile factor, palette form, ...
  // The outline of model.text (its named lines, identifiers) the palette draws from; update_state
  // remakes it when the text has changed since `outline_text`.
  ModelOutline outline;
  std::optional<std::string> outline_text;
  PlatformRequests requests;
  Workbench workbench;        // centre view, schedule history, machine, background jobs
  bool presentation = false;  // F5: the centre view fills the window (projector)
  LessonPlayer lessons;       // the lesson catalogue, the open lesson and the learner's progress
  bool start_here = false;    // a first start (no session): the window points at the lessons
  FileBrowser files;          // Open / Save dialogs (files.h)
  TraceDoc trace;             // the profiler trace opened, mapped onto the model (trace_doc.h)
  std::optional<PendingOpen> pending_open;     // an open waiting for the learner's choice
  std::optional<ReplacedModel> replaced_model;  // what the last open replaced
  std::vector<std::string> recent_files;  // opened or saved, newest first, kMaxRecentFiles at most
  // The session file the app autosaves to ("" = none); set by the platform layer.
  std::string session_path;
  // Started with --model: the saved session is neither restored nor overwritten until the learner
  // chooses to keep this work as the session (File ▸ Keep as my session: `save-session`).
  bool autosave_paused = false;

  // The scale the type is drawn at: the monitor's times the learner's UI scale, held where the
  // window cannot hold that much type (type_scale_for).
  float type_scale() const { return type_scale_for(theme, content_scale, ui_scale, window_w, window_h); }
  float font_px() const { return theme_font_px(theme, type_scale()); }
  PanelLayout panels() const {
    return presentation
               ? compute_presentation_layout(window_w, window_h, font_px(), lessons.reading())
               : compute_panel_layout(window_w, window_h, font_px(), lessons.reading());
  }
  const graph::Graph* graph() const { return model.graph.get(); }
};

// Seconds of quiet typing before the editor's text is re-parsed.
inline constexpr double kReparseDebounceSeconds = 0.35;

// The editor holds text the learner changed: not what was last opened, saved or loaded, not the
// built-in example, not blank.
bool model_text_edited(const AppState& state);

// Parses model.text now. On success replaces the graph; on failure records the error and keeps
// the last good graph on screen. Returns true on success.
bool reparse_model(AppState& state);

// Called once per frame before the views: runs a due debounced parse, brings the workbench and
// the outline up to date with the model, takes finished jobs' results.
void update_state(AppState& state);
// The opened trace mapped onto the current model and machine (when either changed): update_state
// does it every frame, opening a trace at once.
void refresh_trace(AppState& state);

// [SECTION] Render on demand

// A frame period while something moves on screen (an animation, a job's progress bar).
inline constexpr double kBusyFrameSeconds = 1.0 / 30.0;
// The longest the frame loop sleeps with nothing to do; input wakes it at once.
inline constexpr double kIdleWaitSeconds = 1.0;

// How long the frame loop may wait for input before it must draw the next frame: 0 while
// scripted input, queued keys or a platform request wait; kBusyFrameSeconds while an animation
// plays or a job (workbench, lesson) runs; the rest of the typing debounce while a parse waits;
// otherwise kIdleWaitSeconds. An idle app then draws about one frame a second instead of all it
// can.
double frame_wait_seconds(const AppState& state);

// Rebuilds the scene when stale (new graph, new font size); follows the canvas's size; fits the
// view when asked.
void refresh_scene(AppState& state, const TextMeasure& measure);

// When the graph canvas changed size since the view was placed (a resize, maximise, full
// screen): a view still as fitted is fitted again, a panned or zoomed one keeps its centre.
void follow_canvas_size(AppState& state);

// Below this zoom the canvas text is too small to read (16 px type drawn under 12 px).
inline constexpr float kReadableZoom = 0.75f;
// Presentation mode's floor for the canvas text (pixels): readable from the back of a room.
inline constexpr float kPresentTextPx = 20.0f;
// Presentation mode's legend column on the canvas's left, in font sizes (the fit keeps clear of
// it).
inline constexpr float kPresentLegendEm = 9.0f;
// The graph palette's width when open, in font sizes (it is at most 42% of the canvas).
inline constexpr float kPaletteEm = 13.5f;

// Presentation mode's corner line: "step 3 of 7" (the schedule history, or the open lesson's
// steps) and how to move and leave. "" outside presentation mode.
std::string presentation_indicator(const AppState& state);

// Sets zoom and pan so the scene fits the graph panel, centred. A fit on load (not whole) stops
// at kReadableZoom and shows the top of a tall graph; fit_whole (key F) always shows everything.
void fit_view(AppState& state);

// The canvas zoom's range (wheel, zoom command): past these the graph is a dot or one letter.
inline constexpr float kMinZoom = 0.05f;
inline constexpr float kMaxZoom = 8.0f;

// Moves the canvas content by (dx, dy) pixels, or zooms it by `factor` about canvas point
// (ax, ay). Both compute in double, then clamp the zoom to [kMinZoom, kMaxZoom] and the pan so
// the graph stays within one canvas size of the canvas's edges (pan_x in [-graph width - canvas
// width, 2 × canvas width], and so for y): always reachable by dragging back, and never
// coordinates so large that float arithmetic on them gives inf or NaN in the drawing code
// (`pan 1e308 -1e308` crashed it). A view that is not finite is refitted.
void pan_view(AppState& state, double dx, double dy);
void zoom_view(AppState& state, double factor, double ax, double ay);

// The text of a 1-based line of `text` ("" when out of range).
std::string_view line_of(std::string_view text, int line);

}  // namespace tilescope::core

// Named commands applied to the AppState: one function per family (the model text, the canvas and
// raw input, the window and the script, the workbench, lessons and sessions) behind
// apply_command's dispatch (commands.cpp parses and prints them).
#include "app/core/baseline.h"
#include "app/core/commands.h"
#include "app/core/commands_impl.h"
#include "app/core/exports.h"

#include "app/core/autotune_jobs.h"
#include "app/core/files.h"
#include "app/core/graph_edit.h"
#include "app/core/lesson_commands.h"
#include "app/core/memory_model.h"
#include "app/core/session.h"
#include "sim/pipeline.h"

#include <algorithm>
#include <cmath>

namespace tilescope::core {

namespace {

SyntheticInput pointer_at(float x, float y, bool down, float wheel = 0.0f) {
  SyntheticInput in;
  in.x = x;
  in.y = y;
  in.down = down;
  in.wheel = wheel;
  return in;
}

// A click as the devices would deliver it: hover, press, release, each on its own frame.
void queue_click(AppState& state, float x, float y) {
  auto& in = state.requests.input;
  in.push_back(pointer_at(x, y, false));
  in.push_back(pointer_at(x, y, true));
  in.push_back(pointer_at(x, y, false));
}

}  // namespace

namespace {

// The model text: files, edits, the palette, drops and the file browser.
std::string apply_model_command(AppState& state, const Command& c) {
  switch (c.kind) {
    case CommandKind::SetModelFile: {
      std::string text;
      try {
        text = pipeline::read_model_file(c.text).text;
      } catch (const graph::GraphError& e) {
        return e.message();
      }
      state.model.text = std::move(text);
      state.model.loaded_text = state.model.text;
      state.model.path = model_path_of(c.text);  // an .onnx is saved beside it, never over it
      state.model.path_chosen = state.model.path == c.text;
      state.view.fit_pending = true;
      reparse_model(state);
      return {};
    }
    case CommandKind::SetModelText:
      state.model.text = c.text;
      reparse_model(state);
      return {};
    case CommandKind::EditModelText:
      state.model.text = c.text;
      state.model.reparse_pending = true;
      state.model.edit_time = state.now;
      return {};
    case CommandKind::ReplaceLine: {
      const int target = static_cast<int>(c.a);
      std::string& text = state.model.text;
      size_t start = 0;
      for (int l = 1; l < target; ++l) {
        const size_t nl = text.find('\n', start);
        if (nl == std::string::npos) {
          return "replace-line: the model has only " + std::to_string(l) + " lines, not " +
                 std::to_string(target);
        }
        start = nl + 1;
      }
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      text.replace(start, end - start, c.text);
      reparse_model(state);
      return {};
    }
    case CommandKind::Palette: {
      // `pick NAME` / `unpick` choose the operands after the selection (B, C); no text changes.
      if (c.text.rfind("pick ", 0) == 0) {
        const std::string name(trim(std::string_view(c.text).substr(5)));
        const std::vector<std::string> named = named_tensors(outline_model(state.model.text));
        if (std::find(named.begin(), named.end(), name) == named.end())
          return "palette pick: no line of the model text names a tensor '" + name + "'";
        // With nothing selected the first pick is operand A (the selection), as a click on its
        // node would make it: "pick y" on a fresh palette used to fill B and leave A empty.
        if (state.selection.kind == Selection::Kind::None) {
          if (const graph::Graph* g = state.graph()) {
            if (const auto t = g->find_tensor(name)) {
              const graph::Tensor& tensor = g->tensor(*t);
              if (tensor.producer >= 0)
                state.selection = {Selection::Kind::Op, g->op(tensor.producer).name};
              else
                state.selection = {Selection::Kind::Tensor, name};
              return {};
            }
          }
        }
        auto& picks = state.palette_picks;
        picks.erase(std::remove(picks.begin(), picks.end(), name), picks.end());
        picks.push_back(name);
        if (picks.size() > 2) picks.erase(picks.begin());
        return {};
      }
      if (trim(c.text) == "unpick") {
        // "clear" starts the operands over: A (the selection) as well as B and C.
        state.palette_picks.clear();
        state.selection = {};
        return {};
      }
      // The palette edits the text the editor shows, so a pending debounced edit is parsed first.
      if (state.model.reparse_pending) reparse_model(state);
      TextEdit edit = apply_palette_command(state.model.text, c.text);
      state.palette_note = edit.message;
      state.palette_note_ok = edit.ok;
      if (!edit.ok) return "palette: " + edit.message;
      const bool deleted = c.text.rfind("delete", 0) == 0;
      state.model.text = std::move(edit.text);
      reparse_model(state);
      state.palette_picks.clear();
      if (deleted) {
        if (state.selection.name == edit.name) state.selection = {};
      } else if (!state.model.error && state.graph() && state.graph()->find_tensor(edit.name)) {
        state.selection = {Selection::Kind::Tensor, edit.name};  // the next op chains from it
      }
      return {};
    }
    case CommandKind::SaveModel:
      return save_model_file(state, c.text);
    case CommandKind::Drop:
      return open_dropped_file(state, c.text);
    case CommandKind::Files:
      return file_browser_command(state, c.text);
    case CommandKind::OpenTrace:
      return open_trace_file(state, c.text);
    case CommandKind::Trace: {
      std::string op;  // the picked node's op is selected in the graph too
      std::string e = trace_command(state.trace, state.graph(), c.text, op);
      if (!op.empty()) state.selection = {Selection::Kind::Op, op};
      return e;
    }
    default:
      break;
  }
  return {};
}

// The graph canvas and raw input: selection, zoom and pan, clicks, drags, keys, typing.
std::string apply_canvas_command(AppState& state, const Command& c) {
  const graph::Graph* g = state.graph();
  switch (c.kind) {
    case CommandKind::SelectOp:
      if (!g) return "select-op: no model is loaded";
      if (!g->find_op(c.text)) return "select-op: the graph has no op named '" + c.text + "'";
      state.selection = {Selection::Kind::Op, c.text};
      return {};
    case CommandKind::SelectTensor:
      if (!g) return "select-tensor: no model is loaded";
      if (!g->find_tensor(c.text))
        return "select-tensor: the graph has no tensor named '" + c.text + "'";
      state.selection = {Selection::Kind::Tensor, c.text};
      return {};
    case CommandKind::ClearSelection:
      state.selection = {};
      return {};
    case CommandKind::Zoom: {
      // Views push zooms too (the wheel), so the factor is checked here as well as when parsed.
      if (!(std::isfinite(c.a) && c.a > 0)) return "zoom: factor must be a finite number > 0";
      const Rect canvas = state.panels().graph;
      zoom_view(state, c.a, c.anchored ? c.c : canvas.w / 2, c.anchored ? c.d : canvas.h / 2);
      return {};
    }
    case CommandKind::Pan:
      if (!std::isfinite(c.a) || !std::isfinite(c.b)) return "pan: dx and dy must be finite";
      pan_view(state, c.a, c.b);
      return {};
    case CommandKind::Fit:
      state.view.fit_pending = true;  // done by refresh_scene, once the scene matches the font
      state.view.fit_whole = true;
      return {};
    case CommandKind::Click:
      queue_click(state, static_cast<float>(c.a), static_cast<float>(c.b));
      return {};
    case CommandKind::ClickNode: {
      if (!state.scene || state.workbench.tab != ViewTab::Graph)
        return "click-node: no graph is on screen (use: view graph)";
      int index = -1;
      for (size_t i = 0; i < state.scene->nodes.size(); ++i)
        if (state.scene->nodes[i].name == c.text) index = static_cast<int>(i);
      if (index < 0) return "click-node: the graph has no node named '" + c.text + "'";
      const SceneNode& n = state.scene->nodes[size_t(index)];
      const Rect canvas = state.panels().graph;
      const float x = canvas.x + state.view.pan_x + (n.x + n.w / 2) * state.view.zoom;
      const float y = canvas.y + state.view.pan_y + (n.y + n.h / 2) * state.view.zoom;
      if (!canvas.contains(x, y)) {
        return "click-node: '" + c.text + "' is outside the visible canvas (try fit first)";
      }
      queue_click(state, x, y);
      return {};
    }
    case CommandKind::Drag: {
      auto& in = state.requests.input;
      const float x1 = static_cast<float>(c.a), y1 = static_cast<float>(c.b);
      const float x2 = static_cast<float>(c.c), y2 = static_cast<float>(c.d);
      in.push_back(pointer_at(x1, y1, false));
      in.push_back(pointer_at(x1, y1, true));
      constexpr int kSteps = 8;  // a hand moves over several frames
      for (int s = 1; s <= kSteps; ++s) {
        const float t = static_cast<float>(s) / kSteps;
        in.push_back(pointer_at(x1 + (x2 - x1) * t, y1 + (y2 - y1) * t, true));
      }
      in.push_back(pointer_at(x2, y2, false));
      return {};
    }
    case CommandKind::Scroll: {
      auto& in = state.requests.input;
      const float x = static_cast<float>(c.a), y = static_cast<float>(c.b);
      in.push_back(pointer_at(x, y, false));
      in.push_back(pointer_at(x, y, false, static_cast<float>(c.c)));
      return {};
    }
    case CommandKind::Key: {
      SyntheticInput press;
      press.x = -1.0f;  // pointer off the window: a key press does not hover anything
      press.y = -1.0f;
      const std::optional<KeyChord> chord = parse_key_chord(c.text);
      if (!chord) return "key: unknown key '" + c.text + "'";
      press.key = chord->code;
      press.ctrl = chord->ctrl;
      press.alt = chord->alt;
      press.shift = chord->shift;
      state.requests.input.push_back(press);
      return {};
    }
    case CommandKind::Type: {
      // Pointer off the window so it hovers nothing; the focused widget receives the characters.
      SyntheticInput typing;
      typing.x = -1.0f;
      typing.y = -1.0f;
      typing.text = c.text;
      state.requests.input.push_back(typing);
      return {};
    }
    default:
      break;
  }
  return {};
}

// The window and the script's own commands: theme, views, presentation, screenshots, waits.
std::string apply_window_command(AppState& state, const Command& c) {
  switch (c.kind) {
    case CommandKind::SetTheme:
      state.theme = *theme_from_name(c.text);
      state.view.fit_pending = true;  // new type size, new scene size
      return {};
    case CommandKind::Screenshot:
      state.requests.screenshot_path = c.text;
      return {};
    case CommandKind::ScreenshotScreen:
      state.requests.screen_shot_path = c.text;
      return {};
    case CommandKind::Resize:
      if (std::string e = check_window_size(c.a, c.b); !e.empty()) return e;
      state.requests.resize_w = static_cast<int>(c.a);
      state.requests.resize_h = static_cast<int>(c.b);
      return {};  // the view follows the canvas's new size (follow_canvas_size)
    case CommandKind::Quit:
      state.requests.quit = true;
      return {};
    case CommandKind::SetView:
      state.workbench.tab = *view_tab_from_name(c.text);
      if (state.workbench.tab == ViewTab::Lessons) {
        state.start_here = false;  // found them
        lesson_ensure_catalogue(state.lessons);
      }
      if (state.workbench.tab == ViewTab::Graph) state.view.fit_pending = true;  // the canvas moved
      return {};
    case CommandKind::Present:
      state.presentation = c.text.empty() ? !state.presentation : c.text == "on";
      state.view.fit_pending = true;  // the canvas changed size
      return {};
    case CommandKind::Fullscreen:
      state.requests.toggle_fullscreen = true;
      return {};
    case CommandKind::StartHere:
      state.start_here = c.text == "on";
      return {};
    case CommandKind::WriteState:
      state.requests.state_json_path = c.text;
      return {};
    case CommandKind::WriteFrameText:
      state.requests.frame_text_path = c.text;
      return {};
    case CommandKind::WriteLayout:
      state.requests.layout_json_path = c.text;
      return {};
    case CommandKind::UiScale:
      state.ui_scale = static_cast<float>(c.a);
      state.view.fit_pending = true;  // new type size, new scene size
      return {};
    case CommandKind::WaitFrames:
    case CommandKind::WaitSeconds:
    case CommandKind::WaitResize:
    case CommandKind::WaitJobs:
      return {};
    default:
      break;
  }
  return {};
}

// The workbench: steps, history, machine, jobs, panel controls, the Tiles animation.
std::string apply_workbench_command(AppState& state, const Command& c) {
  switch (c.kind) {
    case CommandKind::Apply:
      return workbench_apply(state.workbench, c.text);
    case CommandKind::Undo:
      return workbench_undo(state.workbench) ? std::string() : "undo: nothing to undo";
    case CommandKind::Redo:
      return workbench_redo(state.workbench) ? std::string() : "redo: nothing to redo";
    case CommandKind::GoToStep:
      return workbench_go_to(state.workbench, static_cast<size_t>(c.a));
    case CommandKind::SetMachine:
      return workbench_set_machine(state.workbench, c.text);
    case CommandKind::Simulate:
      if (c.text == "exactly") return workbench_simulate_exactly(state.workbench);
      return workbench_simulate(state.workbench, c.text == "anyway");
    case CommandKind::RunCpu:
      return workbench_run_cpu(state.workbench, c.text == "anyway");
    case CommandKind::RunGpu:
      return workbench_run_gpu(state.workbench);
    case CommandKind::Cancel:
      workbench_cancel(state.workbench);
      return {};
    case CommandKind::Autotune:
      return autotune_command(state.workbench, c.text);
    case CommandKind::Control: {
      const size_t space = c.text.find(' ');
      return set_panel_control(state.controls, std::string_view(c.text).substr(0, space),
                               space == std::string::npos
                                   ? std::string_view()
                                   : std::string_view(c.text).substr(space + 1));
    }
    case CommandKind::MemoryFormula:
      return workbench_memory_formula(state.workbench, c.text);
    case CommandKind::Baseline:
      return workbench_baseline(state.workbench, c.text, c.a);
    case CommandKind::MachineEdit:
      return workbench_machine_edit(state.workbench, c.text);
    case CommandKind::Export: {
      const size_t space = c.text.find(' ');
      const std::string name = c.text.substr(0, space), path = c.text.substr(space + 1);
      return name == "grade" ? save_grade_file(state, path) : export_to_file(state, name, path);
    }
    case CommandKind::Tiles:
      if (c.text == "record" || c.text == "record anyway")
        return state.workbench.tiles_gpu
                   ? workbench_record_gpu_tiles(state.workbench, c.text == "record anyway")
                   : workbench_record_tiles(state.workbench, c.text == "record anyway");
      return workbench_tiles_control(state.workbench, c.text, c.a);
    default:
      break;
  }
  return {};
}

// Lessons, the teacher's view, sessions.
std::string apply_lesson_session_command(AppState& state, const Command& c) {
  switch (c.kind) {
    case CommandKind::Lesson:
      return lesson_command(state, c.text);
    case CommandKind::Teacher:
      return teacher_command(state, c.text.empty() ? !state.lessons.teacher : c.text == "on");
    case CommandKind::OpenSession:
      return open_session_file(state, c.text);
    case CommandKind::SaveSession:
      if (!c.text.empty()) return save_session_file(state, c.text);
      // Bare: keep this work as the autosaved session, the choice --model leaves to the learner.
      if (state.session_path.empty())
        return "save-session: no session file to keep (started with --no-session); give a path";
      state.autosave_paused = false;
      return {};
    default:
      break;
  }
  return {};
}

}  // namespace

std::string apply_command(AppState& state, const Command& c) {
  switch (c.kind) {
    case CommandKind::SetModelFile:
    case CommandKind::SetModelText:
    case CommandKind::EditModelText:
    case CommandKind::ReplaceLine:
    case CommandKind::Palette:
    case CommandKind::SaveModel:
    case CommandKind::Drop:
    case CommandKind::Files:
    case CommandKind::OpenTrace:
    case CommandKind::Trace:
      return apply_model_command(state, c);
    case CommandKind::SelectOp:
    case CommandKind::SelectTensor:
    case CommandKind::ClearSelection:
    case CommandKind::Zoom:
    case CommandKind::Pan:
    case CommandKind::Fit:
    case CommandKind::Click:
    case CommandKind::ClickNode:
    case CommandKind::Drag:
    case CommandKind::Scroll:
    case CommandKind::Key:
    case CommandKind::Type:
      return apply_canvas_command(state, c);
    case CommandKind::SetTheme:
    case CommandKind::Screenshot:
    case CommandKind::ScreenshotScreen:
    case CommandKind::Resize:
    case CommandKind::Quit:
    case CommandKind::SetView:
    case CommandKind::Present:
    case CommandKind::Fullscreen:
    case CommandKind::WriteState:
    case CommandKind::WriteFrameText:
    case CommandKind::WriteLayout:
    case CommandKind::UiScale:
    case CommandKind::StartHere:
    case CommandKind::WaitFrames:
    case CommandKind::WaitSeconds:
    case CommandKind::WaitResize:
    case CommandKind::WaitJobs:
      return apply_window_command(state, c);
    case CommandKind::Apply:
    case CommandKind::Undo:
    case CommandKind::Redo:
    case CommandKind::GoToStep:
    case CommandKind::SetMachine:
    case CommandKind::Simulate:
    case CommandKind::RunCpu:
    case CommandKind::RunGpu:
    case CommandKind::Cancel:
    case CommandKind::Autotune:
    case CommandKind::Control:
    case CommandKind::MemoryFormula:
    case CommandKind::Baseline:
    case CommandKind::Export:
    case CommandKind::MachineEdit:
    case CommandKind::Tiles:
      return apply_workbench_command(state, c);
    case CommandKind::Lesson:
    case CommandKind::Teacher:
    case CommandKind::OpenSession:
    case CommandKind::SaveSession:
      return apply_lesson_session_command(state, c);
  }
  return {};
}

}  // namespace tilescope::core

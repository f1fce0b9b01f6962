// libFuzzer harness for GUI scripts (app/core/commands.h): any bytes in, parsed as a --script
// file; a CommandError is a correct answer. A script that parses is replayed into a fresh AppState
// frame by frame, as the app's frame loop drives ScriptRunner, with no display: update_state, the
// scene, the script's commands due this frame, the platform's requests answered (a resize takes
// effect, screenshots and state files are dropped, quit ends the run), one scripted input played
// per frame, and what the Schedule panel computes when it is on screen (fuse_options). A command
// that cannot be applied is a correct answer too (the app shows it in the status bar); anything
// else (a crash, an exception out of apply_command, a sanitizer report, a hang) is a bug.
//
// Commands that reach outside the process are left out, so the fuzzer never writes, reads or
// compiles where it should not: set-model-file, save-model, open-session, save-session, drop,
// files (the file system), run-cpu and autotune cpu (a compiler, the JIT cache), run-gpu.
// Lesson commands read lessons/ and simulate reads machines/: run from the repository root.
//
// Build and run (new inputs go to the first folder, which .gitignore keeps out of the tree;
// make_seeds.py writes the deep and long seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_script
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_script -dict=fuzz/script.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/script fuzz/corpus-script \
//       fuzz/corpus-run/seeds/script
#include "app/core/app_state.h"
#include "app/core/commands.h"
#include "app/core/fuse_options.h"
#include "app/core/script_runner.h"
#include "app/core/session.h"
#include "sim/lang/parser.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace tilescope::core;

namespace {

// A script of 64 KB holds a few thousand lines, each free to cost as much as one user action. The
// replay applies the first kMaxLines (one line still carries a whole model or step list), and
// stops after kMaxFrames (wait-frames and wait-seconds may ask for more than a run can afford).
constexpr size_t kMaxLines = 1000;
constexpr int kMaxFrames = 4096;
// A command that changes the model text parses all of it again (a palette edit twice: checked,
// then shown): 1,000 palette adds growing a model took 150 s under ASan, about 0.1 s each. Past
// this many bytes parsed in all, further edits are left out (slow per script, not per action).
constexpr size_t kModelParseBudget = size_t{1} << 20;
// Virtual seconds a frame lasts: the typing debounce (0.35 s) passes within two frames.
constexpr double kFrameSeconds = 0.25;

bool reaches_outside(const Command& c) {
  switch (c.kind) {
    case CommandKind::SetModelFile:
    case CommandKind::SaveModel:
    case CommandKind::OpenSession:
    case CommandKind::SaveSession:
    case CommandKind::Drop:
    case CommandKind::Files:
    case CommandKind::RunCpu:
    case CommandKind::RunGpu:
      return true;
    case CommandKind::Autotune:
      return c.text.rfind("cpu", 0) == 0;
    default:
      return false;
  }
}

// The text widths the GUI measures with its fonts: a fixed advance is enough for layout.
float fixed_measure(std::string_view s, SceneFont) {
  return 8.0f * static_cast<float>(s.size());
}

// Bytes of model text a command makes the app parse, given the text's size before it (an
// estimate: a palette edit adds one line); 0 for a command that leaves the text alone.
size_t model_parse_bytes(const Command& c, size_t& model_bytes) {
  switch (c.kind) {
    case CommandKind::SetModelText:
    case CommandKind::EditModelText:
      model_bytes = c.text.size();
      return model_bytes;
    case CommandKind::ReplaceLine:
      model_bytes += c.text.size();
      return model_bytes;
    case CommandKind::Palette:
      if (c.text.rfind("pick ", 0) == 0 || c.text == "unpick") return 0;
      model_bytes += 64;
      return 2 * model_bytes;
    default:
      return 0;
  }
}

void replay(std::vector<ScriptLine> lines) {
  const std::string_view start = tilescope::lang::default_model_text();
  std::vector<ScriptLine> kept;
  size_t model_bytes = start.size(), parsed = 0;
  for (ScriptLine& l : lines) {
    if (reaches_outside(l.command) || kept.size() >= kMaxLines) continue;
    size_t after = model_bytes;
    const size_t cost = model_parse_bytes(l.command, after);
    if (cost > 0 && parsed + cost > kModelParseBudget) continue;
    parsed += cost;
    model_bytes = after;
    kept.push_back(std::move(l));
  }
  AppState state;
  state.model.text = std::string(start);
  reparse_model(state);
  ScriptRunner runner(std::move(kept), "fuzz.script");
  std::string fuse_key;
  for (int frame = 0; frame < kMaxFrames && !runner.done(); ++frame) {
    update_state(state);
    refresh_scene(state, fixed_measure);
    // The app reports a command's error and stops; the views' commands only show theirs. Going
    // on reaches the lines after it, which a learner's clicks would.
    if (const std::string error = runner.run_frame(state); !error.empty()) {
      state.status_message = error;
      state.status_is_error = true;
    }
    PlatformRequests& r = state.requests;
    if (r.resize_w > 0) {
      state.window_w = static_cast<float>(r.resize_w);
      state.window_h = static_cast<float>(r.resize_h);
      r.resize_w = r.resize_h = 0;
    }
    r.toggle_fullscreen = false;
    r.screenshot_path.clear();
    r.state_json_path.clear();
    update_state(state);
    refresh_scene(state, fixed_measure);
    if (!r.input.empty()) r.input.erase(r.input.begin());
    (void)r.keys.take_frame();
    // What the frame draws without ImGui: the corner line, the layout, the Schedule panel's fuse
    // buttons (recomputed, as the panel does, when the schedule or the machine changed).
    (void)presentation_indicator(state);
    (void)state.panels();
    (void)frame_wait_seconds(state);
    const ViewTab tab = state.workbench.tab;
    if (!state.presentation && (tab == ViewTab::Schedule || tab == ViewTab::Tiles) &&
        state.workbench.program()) {
      const std::string key = state.workbench.schedule_key() + "\n@" + state.workbench.machine_name;
      if (key != fuse_key) {
        (void)fuse_options(state.workbench);
        fuse_key = key;
      }
    }
    if (r.quit) break;
    state.now += kFrameSeconds;
    // Jobs run on threads: let them work while the script waits for them.
    if (state.workbench.busy() || state.lessons.busy())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // The autosave's text of whatever the script built.
  if (session_text(state).empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<ScriptLine> lines;
  try {
    lines = parse_script(text, "fuzz.script");
  } catch (const CommandError& e) {
    // The message must be usable: non-empty, and it names the file.
    if (std::string_view(e.what()).rfind("fuzz.script:", 0) != 0) __builtin_trap();
    return 0;
  }
  // A command's text form is its script line: it parses back to the same command.
  for (const ScriptLine& l : lines) {
    const std::string once = command_to_string(l.command);
    try {
      if (command_to_string(parse_command(once)) != once) __builtin_trap();
    } catch (const CommandError&) {
      __builtin_trap();
    }
  }
  replay(std::move(lines));
  return 0;
}

// Replays a --script file one frame at a time.
#include "app/core/script_runner.h"

namespace tilescope::core {

std::string ScriptRunner::run_frame(AppState& state) {
  if (m_resize_from_w < 0) {
    m_resize_from_w = state.window_w;
    m_resize_from_h = state.window_h;
  }
  if (m_wait > 0) {
    --m_wait;
    return {};
  }
  if (state.now < m_wait_until) return {};
  if (m_wait_resize) {
    if (state.window_w == m_resize_from_w && state.window_h == m_resize_from_h) {
      if (state.now < m_resize_deadline) return {};
      m_wait_resize = false;
      return m_file + ":" + std::to_string(m_resize_line) +
             ": error: wait-resize: the window kept its size " +
             std::to_string(static_cast<int>(m_resize_from_w)) + "x" +
             std::to_string(static_cast<int>(m_resize_from_h));
    }
    m_wait_resize = false;
    m_resize_from_w = state.window_w;
    m_resize_from_h = state.window_h;
  }
  if (m_wait_jobs) {
    if (state.workbench.busy() || state.lessons.busy()) return {};
    m_wait_jobs = false;
  }
  // Scripted input still playing: the next line waits until its effects are in the state.
  if (!state.requests.input.empty() || !state.requests.keys.empty()) return {};
  while (m_next < m_lines.size()) {
    const ScriptLine& line = m_lines[m_next++];
    const Command& c = line.command;
    if (c.kind == CommandKind::WaitFrames) {
      // This frame counts as the first of the N.
      m_wait = static_cast<int>(c.a) - 1;
      return {};
    }
    if (c.kind == CommandKind::WaitResize) {
      m_wait_resize = true;
      m_resize_deadline = state.now + c.a;
      m_resize_line = line.line;
      return {};
    }
    if (c.kind == CommandKind::WaitJobs) {
      m_wait_jobs = true;
      return {};
    }
    if (c.kind == CommandKind::WaitSeconds) {
      m_wait_until = state.now + c.a;
      return {};
    }
    const std::string error = apply_command(state, c);
    if (!error.empty()) return m_file + ":" + std::to_string(line.line) + ": error: " + error;
    // Let the frame render before anything else changes: the screenshot must show the state the
    // script built up to this line, and a resize only takes effect on the next frame.
    if (c.kind == CommandKind::Screenshot || c.kind == CommandKind::ScreenshotScreen ||
        c.kind == CommandKind::Resize ||
        c.kind == CommandKind::Quit || !state.requests.input.empty()) {
      return {};
    }
  }
  return {};
}

}  // namespace tilescope::core

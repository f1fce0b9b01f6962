// Replays a --script file: hands the frame loop the commands due this frame, honouring
// wait-frames, and stops after a screenshot or resize so that frame renders what came before.
#pragma once

#include "app/core/commands.h"

#include <string>
#include <vector>

namespace tilescope::core {

class ScriptRunner {
 public:
  ScriptRunner() = default;
  ScriptRunner(std::vector<ScriptLine> lines, std::string file)
      : m_lines(std::move(lines)), m_file(std::move(file)) {}

  // Applies the commands due this frame. Returns "" or "file:line: error: message" for the first
  // command that could not be applied (the caller decides whether that is fatal).
  std::string run_frame(AppState& state);

  bool done() const { return m_next >= m_lines.size() && m_wait == 0; }
  // Waiting for background jobs (wait-jobs): the app may then pace its frames as it does for a
  // user (frame_wait_seconds) instead of drawing them back to back, so a timed job competes with
  // the frames a user's app would draw, not with more.
  bool waiting_for_jobs() const { return m_wait_jobs; }

 private:
  std::vector<ScriptLine> m_lines;
  std::string m_file;
  size_t m_next = 0;
  int m_wait = 0;             // frames still to let pass before the next line
  double m_wait_until = 0.0;  // AppState::now before which no line runs
  bool m_wait_jobs = false;   // wait-jobs: no line runs while a background job is running
  // wait-resize: no line runs until the window's size differs from the one the last wait-resize
  // ended with (at first: the size at the script's first frame), or the deadline passes
  bool m_wait_resize = false;
  float m_resize_from_w = -1, m_resize_from_h = -1;
  double m_resize_deadline = 0.0;
  int m_resize_line = 0;
};

}  // namespace tilescope::core

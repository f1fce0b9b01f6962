// Key events queued between frames, fed to ImGui at most one transition per key per frame.
//
// ImGui 1.86 keeps keys as "down this frame" flags: a key pressed and released between two frames
// (a short tap while a frame is slow, common under software OpenGL on classroom machines) never
// shows as down, so the press is lost. The platform layer queues every press and release here
// and hands ImGui, each frame, the events up to the first one that would change a key a second
// time; the rest wait for the next frame, in order. A tap inside one frame is then down for one
// frame and up the next, exactly as a slow tap on a fast machine.
//
// Pure C++ (no GLFW, no ImGui): key codes, scancodes and modifier bits are carried as the
// platform gave them.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

namespace tilescope::core {

struct KeyEvent {
  int key = 0;        // the platform's key code (GLFW_KEY_*)
  int scancode = 0;   // passed through
  int mods = 0;       // passed through (modifier bits as the platform reported them)
  bool down = false;  // press (true) or release (false); auto-repeat is not queued
};

class KeyEventQueue {
 public:
  void push(const KeyEvent& e) { m_events.push_back(e); }

  // The events to feed this frame: from the front, in order, stopping before the first event
  // whose key already changed in this frame's batch (the frame must see that key's first state).
  // An event that would not change its key (a press of a key already down, as the platform may
  // send after focus changes) is fed but counts as no transition.
  std::vector<KeyEvent> take_frame();

  bool empty() const { return m_events.empty(); }
  size_t size() const { return m_events.size(); }
  // Whether `key` is down after every event fed so far (what the app last told ImGui).
  bool is_down(int key) const;

 private:
  std::deque<KeyEvent> m_events;
  std::vector<int> m_down;  // keys down after the events fed so far
};

}  // namespace tilescope::core

// Key events fed to ImGui one transition per key per frame (see key_queue.h for why).
#include "app/core/key_queue.h"

#include <algorithm>

namespace tilescope::core {

bool KeyEventQueue::is_down(int key) const {
  return std::find(m_down.begin(), m_down.end(), key) != m_down.end();
}

std::vector<KeyEvent> KeyEventQueue::take_frame() {
  std::vector<KeyEvent> batch;
  std::vector<int> changed;  // keys that changed state in this batch
  while (!m_events.empty()) {
    const KeyEvent& e = m_events.front();
    const bool was_down = is_down(e.key);
    if (was_down != e.down) {
      if (std::find(changed.begin(), changed.end(), e.key) != changed.end()) break;
      changed.push_back(e.key);
      if (e.down)
        m_down.push_back(e.key);
      else
        m_down.erase(std::find(m_down.begin(), m_down.end(), e.key));
    }
    batch.push_back(e);
    m_events.pop_front();
  }
  return batch;
}

}  // namespace tilescope::core

// The lesson player's state machine: which steps of a lesson are done and which one is current.
//
// The UI marks a step done when the learner has done it (as Tracy's Achieve("id") does), and a step
// whose checks all pass is done by construction: apply_results() marks it. Steps are done in any
// order; current() is the first one not done, which is where the player scrolls to.
#pragma once

#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"

#include <string>
#include <vector>

namespace tilescope::lesson {

class LessonProgress {
 public:
  explicit LessonProgress(const Lesson& lesson);

  // Marks a step done; false (and no change) for an id the lesson does not have.
  bool mark_done(const std::string& step_id);
  bool is_done(const std::string& step_id) const;
  int current() const;  // index of the first step not done; -1 when every step is done
  size_t done_count() const;
  size_t step_count() const { return m_ids.size(); }
  bool finished() const { return current() < 0; }

  // Marks done every step that has checks and whose checks all pass. Returns how many it newly
  // marked. Checks before the first step belong to no step and mark nothing.
  size_t apply_results(const std::vector<CheckResult>& results);

  // The done ids in lesson order, to save; restore() takes them back, ignoring ids the lesson no
  // longer has (it may have been edited since).
  std::vector<std::string> done_ids() const;
  void restore(const std::vector<std::string>& ids);

 private:
  int index_of(const std::string& id) const;
  std::vector<std::string> m_ids;
  std::vector<bool> m_done;
};

}  // namespace tilescope::lesson

// The lesson player's step state: done flags per step id, the current step, checks marking steps.
#include "sim/lesson/progress.h"

#include <algorithm>
#include <map>

namespace tilescope::lesson {

LessonProgress::LessonProgress(const Lesson& lesson) {
  for (const LessonStep& s : lesson.steps) m_ids.push_back(s.id);
  m_done.assign(m_ids.size(), false);
}

int LessonProgress::index_of(const std::string& id) const {
  const auto it = std::find(m_ids.begin(), m_ids.end(), id);
  return it == m_ids.end() ? -1 : static_cast<int>(it - m_ids.begin());
}

bool LessonProgress::mark_done(const std::string& step_id) {
  const int i = index_of(step_id);
  if (i < 0) return false;
  m_done[static_cast<size_t>(i)] = true;
  return true;
}

bool LessonProgress::is_done(const std::string& step_id) const {
  const int i = index_of(step_id);
  return i >= 0 && m_done[static_cast<size_t>(i)];
}

int LessonProgress::current() const {
  for (size_t i = 0; i < m_done.size(); ++i)
    if (!m_done[i]) return static_cast<int>(i);
  return -1;
}

size_t LessonProgress::done_count() const {
  return static_cast<size_t>(std::count(m_done.begin(), m_done.end(), true));
}

size_t LessonProgress::apply_results(const std::vector<CheckResult>& results) {
  // A step passes when it has at least one check and none fails.
  std::map<std::string, bool> all_pass;
  for (const CheckResult& r : results) {
    if (r.step.empty()) continue;
    auto [it, inserted] = all_pass.emplace(r.step, r.pass);
    if (!inserted) it->second = it->second && r.pass;
  }
  size_t marked = 0;
  for (const auto& [id, pass] : all_pass) {
    if (!pass || is_done(id)) continue;
    if (mark_done(id)) ++marked;
  }
  return marked;
}

std::vector<std::string> LessonProgress::done_ids() const {
  std::vector<std::string> ids;
  for (size_t i = 0; i < m_ids.size(); ++i)
    if (m_done[i]) ids.push_back(m_ids[i]);
  return ids;
}

void LessonProgress::restore(const std::vector<std::string>& ids) {
  m_done.assign(m_ids.size(), false);
  for (const std::string& id : ids) mark_done(id);
}

}  // namespace tilescope::lesson

// History: the applied steps with undo / redo, replay from text, and re-targeting.
#include "sim/schedule/transform.h"

namespace tilescope::schedule {

// [SECTION] History

History::History(Program initial, Target target)
    : m_initial(std::move(initial)), m_target(target) {}

namespace {

// Why one more entry would make the history too large, or "".
std::string too_large(size_t entries, const Program& p) {
  if (entries + 1 > kMaxScheduleSteps)
    return "a schedule of " + std::to_string(entries + 1) + " steps is past the limit of " +
           std::to_string(kMaxScheduleSteps) + " (each step keeps a copy of the program)";
  if ((entries + 2) * p.kernels.size() > kMaxHistoryKernels)
    return "the history would hold " + std::to_string(entries + 2) + " copies of a " +
           std::to_string(p.kernels.size()) + "-kernel program, past the limit of " +
           std::to_string(kMaxHistoryKernels) +
           " kernels in all; a model this large takes fewer "
           "steps";
  return {};
}

}  // namespace

StepResult History::apply(const TransformStep& step) {
  if (std::string why = too_large(m_cursor, current()); !why.empty()) {
    StepResult refused;
    refused.explanation = std::move(why);
    return refused;
  }
  StepResult r = apply_step(current(), step, m_target);
  if (r.ok) record(step, r);
  return r;
}

StepResult History::apply(const StepSpec& step) {
  if (std::string why = too_large(m_cursor, current()); !why.empty()) {
    StepResult refused;
    refused.explanation = std::move(why);
    return refused;
  }
  StepResult r = apply_step(current(), step, m_target);
  if (r.ok) record(to_step(step), r);
  return r;
}

void History::record(TransformStep step, const StepResult& r) {
  m_entries.resize(m_cursor);
  m_entries.push_back({std::move(step), r.program, r.explanation});
  ++m_cursor;
}

bool History::undo() {
  if (!can_undo()) return false;
  --m_cursor;
  return true;
}

bool History::redo() {
  if (!can_redo()) return false;
  ++m_cursor;
  return true;
}

const Program& History::current() const {
  return m_cursor == 0 ? m_initial : m_entries[m_cursor - 1].program;
}

void History::set_target(Target t) {
  m_target = t;
  Program p = m_initial;
  std::vector<Entry> rederived;
  rederived.reserve(m_entries.size());
  for (const Entry& e : m_entries) {
    StepResult r = apply_step(p, e.step, m_target);
    if (!r.ok) break;
    rederived.push_back({e.step, r.program, r.explanation});
    p = std::move(r.program);
  }
  // Entries from the first refusal on stay as they were (see the header).
  for (size_t i = 0; i < rederived.size(); ++i) m_entries[i] = std::move(rederived[i]);
}

std::optional<StepRefusal> History::first_refused(const Target& t) const {
  Program p = m_initial;
  for (size_t i = 0; i < m_cursor; ++i) {
    const TransformStep& s = m_entries[i].step;
    StepResult r = apply_step(p, s, t);
    if (!r.ok) return StepRefusal{i, s.to_string(), r.explanation};
    p = std::move(r.program);
  }
  return std::nullopt;
}

std::vector<TransformStep> History::steps() const {
  std::vector<TransformStep> v;
  for (size_t i = 0; i < m_cursor; ++i) v.push_back(m_entries[i].step);
  return v;
}

History History::replay(Program initial, std::string_view text, Target target) {
  History h(std::move(initial), target);
  for (const TransformStep& s : parse_steps(text)) {
    StepResult r = h.apply(s);
    if (!r.ok)
      throw ScheduleError(
          (s.line ? std::to_string(s.line) + ":" + std::to_string(s.col) + ": " : "") +
          s.to_string() + " refused: " + r.explanation);
  }
  return h;
}

}  // namespace tilescope::schedule

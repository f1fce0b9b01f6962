// The lesson player's progress: done steps with their times, the current step, checks and
// predictions marking steps, predictions recorded once, and the JSON the app session embeds.
#include "sim/lesson/progress.h"

#include "sim/io/input.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <set>

namespace tilescope::lesson {

Timestamp now_timestamp() {
  return static_cast<Timestamp>(std::time(nullptr));
}

std::string timestamp_text(Timestamp t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Timestamp> parse_timestamp(std::string_view text) {
  const std::string s(text);
  std::tm tm{};
  int n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
      static_cast<size_t>(n) != s.size() || s.size() != 20)
    return std::nullopt;
  if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
      tm.tm_min > 59 || tm.tm_sec > 60)
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<Timestamp>(timegm(&tm));
}

// JSON holds valid UTF-8 only: the id (a file stem, when the front matter gives none) and the
// learner's input are kept printable, invalid bytes and control characters as \xNN.
LessonProgress::LessonProgress(const Lesson& lesson) : m_lesson_id(io::printable(lesson.id, 200)) {
  for (const LessonStep& s : lesson.steps) m_ids.push_back(s.id);
  m_done.assign(m_ids.size(), std::nullopt);
  for (const Block& b : lesson.blocks)
    if (b.kind == BlockKind::Predict) {
      m_predict_ids.push_back(b.predict.id);
      m_predict_step[b.predict.id] = b.step;
      m_predict_tries[b.predict.id] = b.predict.tries_allowed();
    } else if (b.kind == BlockKind::Checkpoint) {
      m_checkpoint_ids.push_back(b.checkpoint.id);
      m_checkpoint_step[b.checkpoint.id] = b.step;
    }
}

int LessonProgress::index_of(const std::string& id) const {
  const auto it = std::find(m_ids.begin(), m_ids.end(), id);
  return it == m_ids.end() ? -1 : static_cast<int>(it - m_ids.begin());
}

bool LessonProgress::mark_done(const std::string& step_id, Timestamp when) {
  const int i = index_of(step_id);
  if (i < 0) return false;
  auto& done = m_done[static_cast<size_t>(i)];
  if (!done) done = when;
  return true;
}

bool LessonProgress::is_done(const std::string& step_id) const {
  return done_at(step_id).has_value();
}

std::optional<Timestamp> LessonProgress::done_at(const std::string& step_id) const {
  const int i = index_of(step_id);
  return i < 0 ? std::nullopt : m_done[static_cast<size_t>(i)];
}

int LessonProgress::current() const {
  for (size_t i = 0; i < m_done.size(); ++i)
    if (!m_done[i]) return static_cast<int>(i);
  return -1;
}

size_t LessonProgress::done_count() const {
  return static_cast<size_t>(
      std::count_if(m_done.begin(), m_done.end(), [](const auto& d) { return d.has_value(); }));
}

std::vector<std::string> LessonProgress::predictions_missing(const std::string& step_id) const {
  std::vector<std::string> missing;
  for (const std::string& id : m_predict_ids)
    if (m_predict_step.at(id) == step_id && !prediction_settled(id)) missing.push_back(id);
  return missing;
}

std::vector<std::string> LessonProgress::checkpoints_missing(const std::string& step_id) const {
  std::vector<std::string> missing;
  for (const std::string& id : m_checkpoint_ids)
    if (m_checkpoint_step.at(id) == step_id && !m_checkpoints.count(id)) missing.push_back(id);
  return missing;
}

const char* checkpoint_state_name(CheckpointState s) {
  switch (s) {
    case CheckpointState::NotYet:
      return "not yet";
    case CheckpointState::Shown:
      return "shown";
    case CheckpointState::Reached:
      return "reached by you";
  }
  return "not yet";
}

bool LessonProgress::record_checkpoint(const std::string& checkpoint_id, Timestamp when,
                                       CheckpointState as) {
  if (!m_checkpoint_step.count(checkpoint_id) || as == CheckpointState::NotYet) return false;
  const bool by_learner = as == CheckpointState::Reached;
  // Kept as first recorded: a goal the learner was shown stays shown (a trivial edit after
  // "Show me" is not reaching it), and one reached stays reached.
  m_checkpoints.emplace(checkpoint_id, CheckpointRecord{when, by_learner});
  return true;
}

CheckpointState LessonProgress::checkpoint_state(const std::string& checkpoint_id) const {
  const auto it = m_checkpoints.find(checkpoint_id);
  if (it == m_checkpoints.end()) return CheckpointState::NotYet;
  return it->second.by_learner ? CheckpointState::Reached : CheckpointState::Shown;
}

bool LessonProgress::checkpoint_reached(const std::string& checkpoint_id) const {
  return checkpoint_state(checkpoint_id) == CheckpointState::Reached;
}

std::optional<Timestamp> LessonProgress::checkpoint_reached_at(
    const std::string& checkpoint_id) const {
  const auto it = m_checkpoints.find(checkpoint_id);
  return it == m_checkpoints.end() || !it->second.by_learner
             ? std::nullopt
             : std::optional<Timestamp>(it->second.when);
}

size_t LessonProgress::apply_results(const std::vector<CheckResult>& results, Timestamp when) {
  // A step qualifies when it has at least one check, prediction or checkpoint; it passes when no
  // check fails and no prediction or checkpoint is missing.
  std::map<std::string, bool> all_pass;
  for (const CheckResult& r : results) {
    if (r.step.empty()) continue;
    auto [it, inserted] = all_pass.emplace(r.step, r.pass);
    if (!inserted) it->second = it->second && r.pass;
  }
  for (const auto& [id, step] : m_predict_step)
    if (!step.empty()) all_pass.emplace(step, true);
  for (const auto& [id, step] : m_checkpoint_step)
    if (!step.empty()) all_pass.emplace(step, true);
  size_t marked = 0;
  for (const auto& [id, pass] : all_pass) {
    if (!pass || is_done(id) || !predictions_missing(id).empty() ||
        !checkpoints_missing(id).empty())
      continue;
    if (mark_done(id, when)) ++marked;
  }
  return marked;
}

size_t LessonProgress::mark_completed(Timestamp when) {
  return apply_results({}, when);
}

int LessonProgress::tries_for(const std::string& predict_id) const {
  if (m_teacher_tries > 0) return m_teacher_tries;
  const auto it = m_predict_tries.find(predict_id);
  return it == m_predict_tries.end() ? kDefaultPredictTries : it->second;
}

bool LessonProgress::record_prediction(const std::string& predict_id, std::string_view input,
                                       const Grade& grade, Timestamp when, int tries) {
  if (!m_predict_step.count(predict_id) || !grade.graded || prediction_settled(predict_id))
    return false;
  PredictionRecord& r = m_predictions[predict_id];
  r.id = predict_id;
  r.input = io::printable(input, kMaxPredictionInput);
  r.choice = grade.learner_choice >= 0;
  r.value = grade.learner;
  r.answer = grade.answer;
  r.relative_error = grade.relative_error;
  r.learner_choice = grade.learner_choice;
  r.answer_choice = grade.answer_choice;
  r.pass = grade.pass;
  r.when = when;
  ++r.attempts;
  if (!r.pass && r.attempts >= (tries > 0 ? tries : tries_for(predict_id))) r.revealed = true;
  return true;
}

bool LessonProgress::reveal_prediction(const std::string& predict_id, Timestamp when) {
  if (!m_predict_step.count(predict_id) || prediction_settled(predict_id)) return false;
  PredictionRecord& r = m_predictions[predict_id];
  r.id = predict_id;
  r.revealed = true;
  r.when = when;
  return true;
}

bool LessonProgress::prediction_settled(const std::string& predict_id) const {
  const PredictionRecord* r = prediction(predict_id);
  return r && r->settled();
}

const PredictionRecord* LessonProgress::prediction(const std::string& predict_id) const {
  const auto it = m_predictions.find(predict_id);
  return it == m_predictions.end() ? nullptr : &it->second;
}

std::vector<PredictionRecord> LessonProgress::predictions() const {
  std::vector<PredictionRecord> out;
  for (const std::string& id : m_predict_ids)
    if (const PredictionRecord* r = prediction(id)) out.push_back(*r);
  return out;
}

size_t LessonProgress::passed_predictions() const {
  return static_cast<size_t>(std::count_if(m_predictions.begin(), m_predictions.end(),
                                           [](const auto& p) { return p.second.pass; }));
}

LessonGrade LessonProgress::grade() const {
  LessonGrade g;
  g.lesson = m_lesson_id;
  g.steps = m_ids.size();
  g.steps_done = done_count();
  g.predictions = m_predict_ids.size();
  for (const std::string& id : m_predict_ids) {
    const PredictionRecord* r = prediction(id);
    if (r && r->pass)
      ++(r->attempts <= 1 ? g.first_try : g.after_retries);
    else if (r && r->revealed)
      ++g.revealed;
    else
      ++g.open;
  }
  g.checkpoints = m_checkpoint_ids.size();
  for (const std::string& id : m_checkpoint_ids) {
    const CheckpointState s = checkpoint_state(id);
    ++(s == CheckpointState::Reached ? g.reached
       : s == CheckpointState::Shown ? g.shown
                                     : g.not_yet);
  }
  return g;
}

void LessonProgress::reset() {
  m_done.assign(m_ids.size(), std::nullopt);
  m_predictions.clear();
  m_checkpoints.clear();
}

std::vector<std::string> LessonProgress::done_ids() const {
  std::vector<std::string> ids;
  for (size_t i = 0; i < m_ids.size(); ++i)
    if (m_done[i]) ids.push_back(m_ids[i]);
  return ids;
}

void LessonProgress::restore(const std::vector<std::string>& ids) {
  m_done.assign(m_ids.size(), std::nullopt);
  for (const std::string& id : ids) mark_done(id);
}

// [SECTION] JSON

nlohmann::json LessonProgress::to_json() const {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < m_ids.size(); ++i)
    if (m_done[i]) steps.push_back({{"id", m_ids[i]}, {"done", timestamp_text(*m_done[i])}});
  nlohmann::json predictions = nlohmann::json::array();
  for (const PredictionRecord& r : this->predictions()) {
    nlohmann::json p = {{"id", r.id},
                        {"input", r.input},
                        {"pass", r.pass},
                        {"attempts", r.attempts},
                        {"revealed", r.revealed},
                        {"when", timestamp_text(r.when)}};
    if (r.choice) {
      p["choice"] = r.learner_choice;
      p["answer_choice"] = r.answer_choice;
    } else {
      p["value"] = r.value;
      p["answer"] = r.answer;
      p["relative_error"] =
          std::isfinite(r.relative_error) ? nlohmann::json(r.relative_error) : nlohmann::json();
    }
    predictions.push_back(std::move(p));
  }
  nlohmann::json checkpoints = nlohmann::json::array();
  for (const std::string& id : m_checkpoint_ids)
    if (const auto it = m_checkpoints.find(id); it != m_checkpoints.end())
      checkpoints.push_back({{"id", id},
                             {"reached", timestamp_text(it->second.when)},
                             {"by", it->second.by_learner ? "you" : "shown"}});
  return {{"lesson", m_lesson_id},
          {"steps", steps},
          {"predictions", predictions},
          {"checkpoints", checkpoints}};
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& what) {
  throw ProgressError("lesson progress: " + (where.empty() ? "(top)" : where) + ": " + what);
}

const nlohmann::json& field(const nlohmann::json& object, const std::string& where,
                            const char* key) {
  if (!object.contains(key)) bad(where, std::string("missing \"") + key + "\"");
  return object.at(key);
}

std::string text_field(const nlohmann::json& object, const std::string& where, const char* key) {
  const nlohmann::json& v = field(object, where, key);
  if (!v.is_string()) bad(where + "/" + key, "expected a string");
  return v.get<std::string>();
}

double number_field(const nlohmann::json& object, const std::string& where, const char* key) {
  const nlohmann::json& v = field(object, where, key);
  if (!v.is_number()) bad(where + "/" + key, "expected a number");
  return v.get<double>();
}

Timestamp time_field(const nlohmann::json& object, const std::string& where, const char* key) {
  const std::string t = text_field(object, where, key);
  const auto parsed = parse_timestamp(t);
  if (!parsed) bad(where + "/" + key, "expected a UTC time such as \"2026-12-01T09:30:00Z\"");
  return *parsed;
}

const nlohmann::json& array_field(const nlohmann::json& object, const char* key) {
  const std::string top;  // named: GCC 13 warns of a dangling reference through a temporary
  const nlohmann::json& v = field(object, top, key);
  if (!v.is_array()) bad(std::string("/") + key, "expected a list");
  return v;
}

}  // namespace

void LessonProgress::restore_json(const nlohmann::json& j) {
  if (!j.is_object()) bad("(top)", "expected an object");
  const std::string lesson = text_field(j, "", "lesson");
  if (lesson != m_lesson_id)
    bad("/lesson", "this progress is lesson '" + lesson + "''s, not '" + m_lesson_id + "''s");
  // Built aside, so a malformed file leaves this progress untouched.
  std::vector<std::optional<Timestamp>> done(m_ids.size(), std::nullopt);
  const nlohmann::json& steps = array_field(j, "steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::string where = "/steps/" + std::to_string(i);
    if (!steps[i].is_object()) bad(where, "expected an object");
    const std::string id = text_field(steps[i], where, "id");
    const Timestamp when = time_field(steps[i], where, "done");
    const int k = index_of(id);
    if (k >= 0) done[static_cast<size_t>(k)] = when;
  }
  std::map<std::string, PredictionRecord> made;
  std::set<std::string> seen;
  const nlohmann::json& predictions = array_field(j, "predictions");
  for (size_t i = 0; i < predictions.size(); ++i) {
    const std::string where = "/predictions/" + std::to_string(i);
    const nlohmann::json& p = predictions[i];
    if (!p.is_object()) bad(where, "expected an object");
    PredictionRecord r;
    r.id = text_field(p, where, "id");
    r.input = text_field(p, where, "input");
    const nlohmann::json& pass = field(p, where, "pass");
    if (!pass.is_boolean()) bad(where + "/pass", "expected true or false");
    r.pass = pass.get<bool>();
    r.when = time_field(p, where, "when");
    // Written before tries existed: one try, settled, its answer revealed unless it was right.
    r.attempts = 1;
    r.revealed = !r.pass;
    if (p.contains("attempts")) {
      const nlohmann::json& a = p.at("attempts");
      if (!a.is_number_integer() || a.get<int64_t>() < 0 || a.get<int64_t>() > kMaxPredictTries)
        bad(where + "/attempts", "expected a whole number from 0 to " +
                                     std::to_string(kMaxPredictTries));
      r.attempts = a.get<int>();
      const nlohmann::json& rv = field(p, where, "revealed");
      if (!rv.is_boolean()) bad(where + "/revealed", "expected true or false");
      r.revealed = rv.get<bool>();
    }
    r.choice = p.contains("choice");
    if (r.choice) {
      for (const char* key : {"choice", "answer_choice"}) {
        const nlohmann::json& c = field(p, where, key);
        if (!c.is_number_integer() || c.get<int64_t>() < 0 || c.get<int64_t>() > 25)
          bad(where + "/" + key, "expected a choice index from 0 to 25");
      }
      r.learner_choice = p.at("choice").get<int>();
      r.answer_choice = p.at("answer_choice").get<int>();
    } else {
      r.value = number_field(p, where, "value");
      r.answer = number_field(p, where, "answer");
      const nlohmann::json& e = field(p, where, "relative_error");
      if (e.is_null())
        r.relative_error = std::numeric_limits<double>::infinity();
      else if (e.is_number() && e.get<double>() >= 0)
        r.relative_error = e.get<double>();
      else
        bad(where + "/relative_error", "expected a number of at least 0, or null");
    }
    if (!seen.insert(r.id).second) bad(where + "/id", "prediction '" + r.id + "' is given twice");
    if (m_predict_step.count(r.id)) made[r.id] = std::move(r);  // else: no longer in the lesson
  }
  std::map<std::string, CheckpointRecord> reached;
  std::set<std::string> seen_checkpoints;
  if (j.contains("checkpoints")) {  // absent in progress written before checkpoints existed
    const nlohmann::json& checkpoints = array_field(j, "checkpoints");
    for (size_t i = 0; i < checkpoints.size(); ++i) {
      const std::string where = "/checkpoints/" + std::to_string(i);
      if (!checkpoints[i].is_object()) bad(where, "expected an object");
      const std::string id = text_field(checkpoints[i], where, "id");
      const Timestamp when = time_field(checkpoints[i], where, "reached");
      bool by_learner = true;  // written before "shown" existed: the learner's
      if (checkpoints[i].contains("by")) {
        const std::string by = text_field(checkpoints[i], where, "by");
        if (by != "you" && by != "shown") bad(where + "/by", "expected \"you\" or \"shown\"");
        by_learner = by == "you";
      }
      if (!seen_checkpoints.insert(id).second)
        bad(where + "/id", "checkpoint '" + id + "' is given twice");
      if (m_checkpoint_step.count(id)) reached[id] = {when, by_learner};  // else: no longer in it
    }
  }
  m_done = std::move(done);
  m_predictions = std::move(made);
  m_checkpoints = std::move(reached);
}

}  // namespace tilescope::lesson

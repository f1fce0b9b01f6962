// The lesson player's state machine: which steps of a lesson are done and when, which one is
// current, and the learner's predictions — saved as JSON inside the app's session.
//
// The UI marks a step done when the learner has done it (as Tracy's Achieve("id") does), and a step
// is done by construction when its checks all pass, the learner has made each of its predictions
// and reached each of its checkpoints: apply_results() marks it. A checkpoint is reached once
// (record_checkpoint, when the learner's own state passes it) and stays reached. Steps are done in
// any order; current() is the first one not done, which is where the player scrolls to. A
// prediction is made once: the grade reveals the answer, so a second input for the same block is
// not a prediction and is not recorded.
#pragma once

#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/predict.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

// Seconds since 1970-01-01 00:00 UTC; JSON writes it as "2026-12-01T09:30:00Z".
using Timestamp = int64_t;
Timestamp now_timestamp();
std::string timestamp_text(Timestamp t);
std::optional<Timestamp> parse_timestamp(std::string_view text);  // the form timestamp_text writes

// The learner's input is kept up to this many characters (more is cut, as io::printable cuts).
inline constexpr size_t kMaxPredictionInput = 200;

struct PredictionRecord {
  std::string id;             // the predict block
  std::string input;          // as the learner typed it, made printable (control bytes as \xNN)
  bool choice = false;        // a multiple-choice prediction
  double value = 0;           // numeric: the learner's value in the unit's base
  double answer = 0;          // numeric: the computed answer
  double relative_error = 0;  // numeric: as Grade has it (+inf when the answer is 0 and the
                              // value is not)
  int learner_choice = -1, answer_choice = -1;  // multiple choice, 0-based
  bool pass = false;
  Timestamp when = 0;
};

// A progress JSON that does not have the shape to_json() writes; what() names the field by its
// JSON pointer ("/predictions/0/pass: expected true or false").
class ProgressError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class LessonProgress {
 public:
  explicit LessonProgress(const Lesson& lesson);

  // Marks a step done at `when`; false (and no change) for an id the lesson does not have. A step
  // already done keeps its first time.
  bool mark_done(const std::string& step_id, Timestamp when = now_timestamp());
  bool is_done(const std::string& step_id) const;
  std::optional<Timestamp> done_at(const std::string& step_id) const;
  int current() const;  // index of the first step not done; -1 when every step is done
  size_t done_count() const;
  size_t step_count() const { return m_ids.size(); }
  bool finished() const { return current() < 0; }

  // Marks done every step that has checks or predictions, whose checks all pass and whose
  // predictions have all been made. Returns how many it newly marked. Checks before the first
  // step belong to no step and mark nothing.
  size_t apply_results(const std::vector<CheckResult>& results, Timestamp when = now_timestamp());
  // The predict ids of a step that the learner has not answered yet, in lesson order.
  std::vector<std::string> predictions_missing(const std::string& step_id) const;

  // Records that the learner's own state reached a checkpoint; false (and no change) for an id
  // the lesson has no checkpoint block for. A checkpoint already reached keeps its first time.
  bool record_checkpoint(const std::string& checkpoint_id, Timestamp when = now_timestamp());
  bool checkpoint_reached(const std::string& checkpoint_id) const;
  std::optional<Timestamp> checkpoint_reached_at(const std::string& checkpoint_id) const;
  // The checkpoint ids of a step not reached yet, in lesson order.
  std::vector<std::string> checkpoints_missing(const std::string& step_id) const;
  // Marks done every step whose predictions are all made and checkpoints all reached, if it has
  // at least one of either (the player calls it after each prediction and checkpoint). Returns
  // how many it newly marked.
  size_t mark_completed(Timestamp when = now_timestamp());

  // Records the learner's prediction for a predict block. False (and no change) when the lesson
  // has no predict block `predict_id`, when the grade was not graded (the input did not parse, or
  // the answer could not be computed), or when the block was already predicted.
  bool record_prediction(const std::string& predict_id, std::string_view input, const Grade& grade,
                         Timestamp when = now_timestamp());
  const PredictionRecord* prediction(const std::string& predict_id) const;  // nullptr: not made
  std::vector<PredictionRecord> predictions() const;                        // in lesson order
  size_t passed_predictions() const;

  // Forgets every step and prediction of the lesson, as if it were opened for the first time.
  void reset();

  // The done ids in lesson order, to save; restore() takes them back, ignoring ids the lesson no
  // longer has (it may have been edited since).
  std::vector<std::string> done_ids() const;
  void restore(const std::vector<std::string>& ids);

  // {"lesson": ID, "steps": [{"id", "done"}], "predictions": [{"id", "input", "pass", "when",
  //  then "value", "answer", "relative_error" (null for +inf) or "choice", "answer_choice"}],
  //  "checkpoints": [{"id", "reached"}]}. A document without "checkpoints" (written before they
  //  existed) restores with none reached.
  nlohmann::json to_json() const;
  // Replaces this progress with the one `j` holds (as to_json wrote it). Steps and predict
  // blocks the lesson no longer has are dropped. Throws ProgressError, leaving this progress as
  // it was, when `j` is malformed or is another lesson's.
  void restore_json(const nlohmann::json& j);

 private:
  int index_of(const std::string& id) const;
  std::string m_lesson_id;
  std::vector<std::string> m_ids;
  std::vector<std::optional<Timestamp>> m_done;
  std::vector<std::string> m_predict_ids;                 // lesson order
  std::map<std::string, std::string> m_predict_step;      // predict id → its step ("" none)
  std::map<std::string, PredictionRecord> m_predictions;  // made, by predict id
  std::vector<std::string> m_checkpoint_ids;              // lesson order
  std::map<std::string, std::string> m_checkpoint_step;   // checkpoint id → its step ("" none)
  std::map<std::string, Timestamp> m_checkpoints;         // reached, by checkpoint id
};

}  // namespace tilescope::lesson

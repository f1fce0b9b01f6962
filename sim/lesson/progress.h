// The lesson player's state machine: which steps of a lesson are done and when, which one is
// current, and the learner's predictions — saved as JSON inside the app's session.
//
// The UI marks a step done when the learner has done it (as Tracy's Achieve("id") does), and a step
// is done by construction when its checks all pass and each of its predictions and checkpoints is
// settled: apply_results() marks it. Steps are done in any order; current() is the first one not
// done, which is where the player scrolls to.
//
// Only what the learner did counts (issue #26). A checkpoint is *not yet*, *shown* (met by the
// lesson's own doing: "Apply these steps", a loaded solution, "Show me") or *reached by you* (the
// learner's own edits and controls); shown settles its step and stays shown. A prediction has
// tries (PredictBlock::tries_allowed, or a teacher's number): a wrong try leaves it open while
// tries remain; it is settled by a right try, by the last wrong one, or by "show me" — the last
// two reveal the answer without a pass. grade() counts both.
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
  int attempts = 0;       // tries made (the fields above are the last one's)
  bool revealed = false;  // the answer was shown without a right try (last try, or show me)
  Timestamp when = 0;
  bool settled() const { return pass || revealed; }
};

enum class CheckpointState { NotYet, Shown, Reached };
const char* checkpoint_state_name(CheckpointState s);  // "not yet", "shown", "reached by you"

// What a learner did in one lesson, for the Lessons view and a teacher's export.
struct LessonGrade {
  std::string lesson;
  size_t steps = 0, steps_done = 0;
  size_t predictions = 0;    // predict blocks
  size_t first_try = 0;      // right at the first try
  size_t after_retries = 0;  // right after one or more wrong tries
  size_t revealed = 0;       // the answer shown without a right try
  size_t open = 0;           // not settled (not tried, or tries left)
  size_t checkpoints = 0;
  size_t reached = 0;  // by the learner's own state
  size_t shown = 0;    // met by the lesson's doing
  size_t not_yet = 0;
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

  // Records that a checkpoint's goal holds, `as` Reached (the learner's own state) or Shown (a
  // state the lesson made). False (and no change) for an id the lesson has no checkpoint block
  // for, or `as` NotYet. The first record is kept: shown stays shown (an edit after "Show me" is
  // not the learner's reach), reached stays reached.
  bool record_checkpoint(const std::string& checkpoint_id, Timestamp when = now_timestamp(),
                         CheckpointState as = CheckpointState::Reached);
  CheckpointState checkpoint_state(const std::string& checkpoint_id) const;
  bool checkpoint_reached(const std::string& checkpoint_id) const;  // by the learner
  std::optional<Timestamp> checkpoint_reached_at(const std::string& checkpoint_id) const;
  // The checkpoint ids of a step neither reached nor shown yet, in lesson order.
  std::vector<std::string> checkpoints_missing(const std::string& step_id) const;
  // Marks done every step whose predictions and checkpoints are all settled, if it has at least
  // one of either (the player calls it after each prediction and checkpoint). Returns how many it
  // newly marked.
  size_t mark_completed(Timestamp when = now_timestamp());

  // Records one try at a predict block. False (and no change) when the lesson has no predict
  // block `predict_id`, when the grade was not graded (the input did not parse, or the answer
  // could not be computed), or when the block is already settled. A wrong try that is the last
  // of `tries` (tries_for() when 0) reveals the answer.
  bool record_prediction(const std::string& predict_id, std::string_view input, const Grade& grade,
                         Timestamp when = now_timestamp(), int tries = 0);
  // "Show me": the answer revealed without a right try; false when settled or unknown.
  bool reveal_prediction(const std::string& predict_id, Timestamp when = now_timestamp());
  // The tries a block allows: the teacher's number when set (set_tries), else the block's.
  int tries_for(const std::string& predict_id) const;
  void set_tries(int tries) { m_teacher_tries = tries; }  // 0: each block's own
  const PredictionRecord* prediction(const std::string& predict_id) const;  // nullptr: no try yet
  bool prediction_settled(const std::string& predict_id) const;
  std::vector<PredictionRecord> predictions() const;  // in lesson order
  size_t passed_predictions() const;
  LessonGrade grade() const;

  // Forgets every step and prediction of the lesson, as if it were opened for the first time.
  void reset();

  // The done ids in lesson order, to save; restore() takes them back, ignoring ids the lesson no
  // longer has (it may have been edited since).
  std::vector<std::string> done_ids() const;
  void restore(const std::vector<std::string>& ids);

  // {"lesson": ID, "steps": [{"id", "done"}], "predictions": [{"id", "input", "pass", "attempts",
  //  "revealed", "when", then "value", "answer", "relative_error" (null for +inf) or "choice",
  //  "answer_choice"}], "checkpoints": [{"id", "reached", "by": "you"|"shown"}]}. A document
  //  without "checkpoints" (written before they existed) restores with none reached; a prediction
  //  without "attempts" was one try, settled (revealed unless right); a checkpoint without "by"
  //  was the learner's.
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
  std::map<std::string, int> m_predict_tries;             // predict id → the block's tries
  std::map<std::string, PredictionRecord> m_predictions;  // tried, by predict id
  int m_teacher_tries = 0;
  std::vector<std::string> m_checkpoint_ids;              // lesson order
  std::map<std::string, std::string> m_checkpoint_step;   // checkpoint id → its step ("" none)
  struct CheckpointRecord {
    Timestamp when = 0;
    bool by_learner = false;
  };
  std::map<std::string, CheckpointRecord> m_checkpoints;  // reached or shown, by checkpoint id
};

}  // namespace tilescope::lesson

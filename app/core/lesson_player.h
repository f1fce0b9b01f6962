// The lesson player: the catalogue of lessons/*.md, the open lesson and its current step, the
// learner's predictions and progress, teacher mode — and entering a step drives the workbench as
// a learner would (the step's model loaded into the model text, its machine chosen, its view
// brought forward).
//
// Building a LessonSession (models, steps, the lesson's own checks, the predict answers) can take
// a while, so it happens on a background Job; the frame thread only reads the finished result.
// The session is not thread-safe, so only one job at a time ever touches it.
//
// Pure C++ (no ImGui): tests drive it with `lesson ...` commands (lesson_commands.h) and no
// display. The learner's model text is never thrown away without saying so: a step whose model
// differs from text the learner has edited offers its model instead of loading it, and text
// replaced on request is kept to restore.
#pragma once

#include "app/core/answer_mask.h"
#include "app/core/jobs.h"
#include "app/core/markdown.h"
#include "app/core/workbench.h"
#include "sim/lesson/checker.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/predict.h"
#include "sim/lesson/progress.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::core {

// [SECTION] The catalogue and a lesson as a document

struct LessonEntry {
  std::string file;  // "lessons/02-data-movement-fusion.md"
  std::string id;    // the lesson's id (the file stem when it did not parse)
  std::shared_ptr<const lesson::Lesson> lesson;  // nullptr when it did not parse
  std::string error;                             // "file:line:col: error: ..." when it did not
};

// Every lessons/*.md of `dir` in file order, each parsed; a malformed one keeps its error and the
// others are still listed. A missing folder gives an empty list.
std::vector<LessonEntry> load_lesson_catalogue(const std::string& dir);

// The lesson text in reading order, cut where the player draws something of its own: a step
// starts (its marker or heading line), or a model/steps/check/predict block stands (drawn with
// its widgets). The prose between is Markdown (front matter dropped).
struct LessonDocItem {
  enum class Kind { Markdown, Block, Step };
  Kind kind = Kind::Markdown;
  std::vector<md::Block> markdown;  // Kind::Markdown
  int block = -1;                   // Kind::Block: index into Lesson::blocks
  int step = -1;                    // Kind::Step: index into Lesson::steps
};
std::vector<LessonDocItem> lesson_document(const lesson::Lesson& lesson);
// Whether the step of doc[i] goes on after it: the next item is not a new step (what a goal
// closes in the player and turns a page for in the handout).
inline bool step_continues_after(const std::vector<LessonDocItem>& doc, size_t i) {
  return i + 1 < doc.size() && doc[i + 1].kind != LessonDocItem::Kind::Step;
}

// [SECTION] What the background job computes for an open lesson

struct LessonProgramInfo {
  std::string model;               // the model id the steps schedule
  std::vector<std::string> steps;  // canonical text of every step, from= chains included
  bool refused = false;
  std::string refusal;
};

// "Show me" for a checkpoint: the lesson's solution as the learner's editor and history hold it.
struct CheckpointSolution {
  std::string model_text;
  std::string steps;  // canonical, "; "-separated; "" for a model solution
  std::string error;  // the solution could not be produced
};

struct LessonComputed {
  std::shared_ptr<lesson::LessonSession> session;
  std::string error;  // the session could not be built (LessonError text); nothing else is set
  std::map<int, std::vector<lesson::CheckResult>> checks;  // by check block index
  std::map<std::string, lesson::Answer> answers;           // by predict id
  std::map<std::string, std::vector<lesson::AnswerOperand>> hidden;  // by predict id
  std::map<std::string, LessonProgramInfo> programs;       // by steps id
  std::map<std::string, CheckpointSolution> solutions;     // by checkpoint id
  double seconds = 0;                                      // wall time of the job
};

// Builds the session and evaluates everything the player shows (runs on a worker thread).
LessonComputed compute_lesson(const lesson::Lesson& lesson, JobProgress& progress);

// A checkpoint as the player shows it: evaluated on the learner's own workbench state.
struct CheckpointStatus {
  bool evaluated = false;  // a result for the learner's state exists
  bool pass = false;
  bool attempted = false;  // failed after the learner changed their state: the hint shows
  bool shown = false;      // passing on a state the lesson made (counted as shown, not reached)
  std::vector<lesson::CheckResult> checks;
  std::string error;
  std::string key;  // the learner state it was evaluated on
};

// One evaluation of the current step's checkpoints on one learner state (a worker thread's
// result: the session is used by one job at a time).
struct CheckpointEvaluation {
  std::string key;
  std::map<std::string, lesson::CheckpointResult> results;  // by checkpoint id
};

// The learner's state as a checkpoint sees it (the workbench's model and schedule at the cursor),
// and the key that changes whenever it does (model text, steps, machine).
std::optional<lesson::LearnerState> learner_state(const Workbench& wb,
                                                  const std::shared_ptr<const graph::Graph>& graph,
                                                  const std::string& graph_text);
std::string learner_key(const Workbench& wb);

// [SECTION] The player's state

struct LessonPlayer {
  std::string dir = "lessons";
  std::vector<LessonEntry> catalogue;
  bool catalogue_loaded = false;
  // Progress JSON (LessonProgress::to_json) of every lesson the learner has touched, by lesson
  // id — kept for lessons not in the catalogue too, so a renamed file does not lose it.
  std::map<std::string, nlohmann::json> saved;

  // The open lesson (-1: none).
  int open = -1;
  std::shared_ptr<const lesson::Lesson> lesson;
  std::vector<LessonDocItem> doc;
  std::optional<lesson::LessonProgress> progress;
  int step = 0;  // index into lesson->steps
  Job<LessonComputed> job;
  std::vector<Job<LessonComputed>> retired;  // jobs of lessons closed while loading, reaped
  std::optional<LessonComputed> computed;
  std::map<std::string, std::string> notes;   // predict id → why the last input was not read
  std::map<std::string, std::string> drafts;  // predict id → what is typed, not yet submitted

  // Checkpoints of the open lesson, by id: the current step's are re-evaluated whenever the
  // learner's state changes (checkpoint_job), each reached one is recorded in the progress.
  std::map<std::string, CheckpointStatus> checkpoints;
  Job<CheckpointEvaluation> checkpoint_job;
  std::vector<Job<CheckpointEvaluation>> retired_checkpoints;
  std::string step_entry_key;  // the learner state when the step was entered (no attempt yet)
  bool driving = false;        // a step is setting the workbench up (no evaluation meanwhile)
  // Learner-state keys the lesson made (entering a step, "Apply these steps", "Load model",
  // "Show me"): a checkpoint met on one of them is shown, not reached by the learner.
  std::set<std::string> lesson_made;

  bool teacher = false;            // answers visible (except when presenting, until revealed)
  int tries = 0;                   // a teacher's tries per prediction (0: each block's own)
  std::set<std::string> revealed;  // predict ids revealed to the class (R in presentation)
  bool side_shows_model = false;   // the left panel shows the model text instead of the lesson
  std::string model_loaded;        // the model text the player last put into the editor
  std::string model_offer;         // a model id the step wants, not loaded over edited text
  std::string stash;               // the learner's text a requested load replaced
  std::string stash_path;          // and the file it came from
  std::string notice;              // what the player last did to the workbench, in words
  int scroll_serial = 0;           // bumps when the text should scroll (to `focus`)
  std::string focus;               // a block id to scroll to; "" = the current step's start

  bool is_open() const { return open >= 0 && lesson != nullptr; }
  bool loading() const { return job.running(); }
  // Whether the session is busy (loading, or evaluating checkpoints): a test waits for this.
  bool busy() const { return job.running() || checkpoint_job.running(); }
  const lesson::LessonStep* current_step() const;
  // Whether the lesson text is shown beside the workbench (a lesson is open and the side panel
  // has not been switched to the model text).
  bool reading() const { return is_open() && !side_shows_model; }
};

// [SECTION] Queries the views and the state JSON share (step_blocks, step_model and step_machine
// are the lesson's own: sim/lesson/lesson.h)

const lesson::Block* find_predict(const lesson::Lesson& lesson, const std::string& id);
// Whether the computed answer of predict `id` is on screen: after the learner's prediction, in
// teacher mode at a desk, or once revealed to the class.
bool answer_visible(const LessonPlayer& p, bool presenting, const std::string& id);
// Whether the rest of a checkpoint's step stays closed: what follows a goal the learner has not
// reached (nor been shown) is the lesson's own solution and what it measures, so it opens when
// the goal is reached or Show me is pressed — or at a teacher's desk (not when presenting).
bool after_checkpoint_closed(const LessonPlayer& p, bool presenting, const std::string& id);
// What the screen must not show yet (issue #26): for every prediction of the open lesson whose
// answer is not visible, its answer (band: the block's relative tolerance, 1% to 10%) and the
// values it is computed from (1%). The app masks them in every text it draws.
std::vector<AnswerMask::Hidden> hidden_answers(const LessonPlayer& p, bool presenting);
// "3/5 steps" for the catalogue: done and total steps of a lesson (from its progress, or the
// saved JSON when it is not open).
std::pair<size_t, size_t> lesson_steps_done(const LessonPlayer& p, size_t entry);
// The grade of a catalogue entry's progress (lesson::LessonProgress::grade).
lesson::LessonGrade lesson_grade(const LessonPlayer& p, size_t entry);
// The model text of a model block of the lesson: its body, or its file= read; nullopt with
// `why` for a training graph or an unreadable file.
std::optional<std::string> lesson_model_text(const lesson::Lesson& lesson, const std::string& id,
                                             std::string& why);

// [SECTION] Progress, polling, session JSON (the commands that need the whole AppState are in
// lesson_commands.h)

// Keeps the saved JSON of the open lesson's progress up to date (after any change to it).
void lesson_save_progress(LessonPlayer& p);
// Marks done each step whose predictions are made and checkpoints reached (and saves).
void lesson_refresh_done(LessonPlayer& p);
// Whether a step asks something of the learner (a prediction or a checkpoint): a step that does
// not is done when the learner moves past it.
bool step_has_work(const lesson::Lesson& lesson, int step_index);
// Closes the open lesson (its progress stays saved); a job still running is left to finish.
void lesson_close(LessonPlayer& p);
// Asks every lesson job (the open lesson's, its checkpoints', the retired ones) to stop.
void lesson_cancel_jobs(LessonPlayer& p);

// Loads the catalogue when it has not been (called before a session restore and on first use).
void lesson_ensure_catalogue(LessonPlayer& p);
// Called once per frame (update_state): takes a finished job's result, reaps retired jobs, and
// re-evaluates the current step's checkpoints when the learner's state (the workbench's schedule
// of `graph`, parsed from `graph_text`) has changed since the last evaluation.
void lesson_poll(LessonPlayer& p, const Workbench& wb,
                 const std::shared_ptr<const graph::Graph>& graph, const std::string& graph_text);

// {"open": ID, "step": ID, "focus": BLOCK_ID, "teacher": bool, "panel": "text"|"model",
//  "model_loaded": TEXT}
nlohmann::json lesson_session_json(const LessonPlayer& p);
// {ID: progress, ...} for every lesson touched, the open one as it is now.
nlohmann::json lesson_progress_json(const LessonPlayer& p);

}  // namespace tilescope::core

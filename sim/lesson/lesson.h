// Lesson files: Markdown readable on its own, with front matter and machine-readable fenced blocks.
//
//   ---                                  front matter (GitHub shows it as a table)
//   title: From model to graph           required
//   level: beginner                      required: beginner | intermediate | advanced
//   minutes: 15                          required: estimated minutes, 1..120
//   prerequisites: 01-model-to-graph     optional: comma-separated lesson ids (file stems)
//   ---
//   ```model id=tiny                     a model in the model language (or file=PATH, empty body;
//   x: [64, 1024] ...                    or train=OTHER [loss=mse|ce] [lr=0.01]: OTHER's training
//   ```                                  graph)
//   ```steps id=fused model=tiny         schedule steps as `tilescope-cli schedule --apply` takes
//   fuse(matmul0, add0, relu0)           them; from=OTHER_STEPS continues another block's result;
//   ```                                  expect=refused: the last step must be refused
//   ```check model=tiny machine=tiny     one claim per line (check_language.h); model= and
//   flops(matmul0) == 2*64*512*1024      machine= set the defaults for the lines
//   ```
//   ```predict id=ratio model=tiny       a question the learner answers before the lesson
//   question: How many times fewer ...?  reveals the computed answer (PredictBlock below);
//   answer: bytes(a) / bytes(b)          model= and machine= as for check blocks
//   within 10%
//   unit: x
//   explain: Two of the four ...
//   ```
//   ```checkpoint id=fuse model=tiny     a goal the learner reaches by their own steps: checks on
//   machine=tiny solution=fused          the subject `learner` (the learner's model and schedule
//   goal: Fuse the epilogue.             in the app); solution= names the steps (or model) block
//   hint: fuse(matmul0, add0, relu0)     that reaches it (CheckpointBlock below)
//   kernels(learner) == 1
//   ```
//   <!-- step: load-model -->            a step id for the player; or a `### Step N: title`
//   ### Step 1: Load the model           heading (id "step-N"). Checks belong to the step above.
//                                        The marker may add view=VIEW and machine=PRESET: what
//                                        the player shows when the learner enters the step.
//
// Other fenced blocks are prose only when their info string is a display language (text, python,
// cpp, ...); anything else is an error, so a misspelt `chek` block is not silently ignored.
#pragma once

#include "sim/lesson/check_language.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

enum class BlockKind { Model, Steps, Check, Predict, Checkpoint };
const char* block_kind_name(BlockKind);

struct Attribute {
  std::string key, value;
  graph::SourceLoc loc;  // where the key starts
};

// A predict block: the learner answers `question` first; then the lesson reveals `answer`,
// computed by tilescope, and `explain`. Lines are `key: value`, in any order, except that
// `explain:` comes last (it runs to the end of the block); blank lines and `#` lines are skipped.
//   question: TEXT          required, one line
//   answer: EXPR            required: a check-language expression (check_language.h) that calls
//                           at least one function, so the revealed number is computed, never typed;
//                           for multiple choice also a letter (B) or a number (see choices)
//   within 10% | within 0.5 numeric: required; N% is relative to the answer, a plain N is
//                           absolute, in the unit as shown (bytes, s, x; percentage points for %);
//                           `within 1 MiB`, `within 0.2 ms` take the unit's suffixes
//   unit: bytes             numeric, optional: bytes, B/s, s, FLOP, FLOP/s, x or %
//                           (% answers are fractions, shown ×100)
//   choices: A | B | C      multiple choice: 2 to 26 distinct, non-empty choices; the answer's
//                           value picks one by its text (a string), or a number picks the
//                           choice of that value when the choices are numbers (1 | 2 | 16),
//                           else the choice of that 1-based number
//   explain: TEXT           required; may continue on the following lines
struct PredictBlock {
  std::string id;
  std::string question;
  Expr answer;                       // unused when answer_choice >= 0
  std::string answer_text;           // as written
  graph::SourceLoc answer_loc;       // where the answer's text starts
  int answer_choice = -1;            // 0-based, when the answer is a letter or a number literal
  std::vector<std::string> choices;  // empty for a numeric question
  double tolerance = 0;              // in the unit's base (bytes, s, a fraction for %), or relative
  bool relative = true;              // `within N%`
  std::string tolerance_text;        // as written after `within`
  std::string unit;                  // "" for a plain number
  std::string explain;
  int explain_line = 0;  // the `explain:` line (the explanation runs from it to the block's end)
  std::string hint;      // shown after a wrong try, before the answer ("" for none)
  int tries = 0;         // tries before the reveal; 0: kDefaultPredictTries

  int tries_allowed() const;  // `tries`, or the default (fewer than the choices of a choice)

  bool is_choice() const { return !choices.empty(); }
  // Whether every choice reads as a plain number ("16", "2.5", "37%"): then a number names the
  // choice with that value; otherwise it names the choice with that 1-based number.
  bool numeric_choices() const;
  int choice_for_number(double v) const;  // 0-based; -1 when no choice is named
};

// Tries a learner has at a prediction before its answer is revealed (a predict block's `tries:`
// changes it, 1 to kMaxPredictTries; a teacher's setting overrides both). A multiple-choice
// question allows fewer tries than it has choices, or trying them all would always succeed.
inline constexpr int kDefaultPredictTries = 2;
inline constexpr int kMaxPredictTries = 5;

// The name a checkpoint's checks use for the learner's own state: the model in the learner's
// editor and its schedule at the history cursor. Reserved: no block may take it as its id.
inline constexpr const char* kLearner = "learner";

// A checkpoint block: a goal the learner reaches with their own steps (the player evaluates its
// checks with `learner` bound to the workbench), not by reading the lesson's solution. Lines are
// `goal:` and `hint:` (one line each, required) and check lines (check_language.h), at least one
// of which names `learner`. Attributes: id= (required), model= (required: the model the learner
// starts from), solution= (required: a steps id scheduling that model, or a model id when the
// learner is to write or edit the model), machine= (the default for simulated values).
// `lesson check` binds `learner` to the solution (every check must pass) and to the starting
// model's default lowering (at least one check must fail: a goal that holds before the learner
// acts checks nothing the learner did).
struct CheckpointBlock {
  std::string id;
  std::string goal;      // what to reach, shown with the step
  std::string hint;      // shown after a failed attempt
  std::string model;     // the starting model's id
  std::string solution;  // a steps or model id
};

struct Block {
  BlockKind kind = BlockKind::Model;
  std::vector<Attribute> attrs;
  std::string body;            // the lines between the fences, each ending in '\n'
  graph::SourceLoc loc;        // the opening fence
  int body_line = 0;           // first body line (1-based)
  std::vector<Check> checks;   // Check and Checkpoint blocks: parsed check lines
  PredictBlock predict;        // Predict blocks: the parsed body
  CheckpointBlock checkpoint;  // Checkpoint blocks: goal, hint, model, solution (checks above)
  std::string step;            // the step id this block belongs to ("" before any step)

  const Attribute* attr(const std::string& key) const;
  std::string attr_value(const std::string& key, const std::string& fallback = "") const;
};

// A step of the lesson. A marker may carry what the player sets up when the learner enters it:
// `<!-- step: id view=memory machine=tiny -->` brings the Memory view forward on `tiny`;
// `trace=assets/recorded/traces/F.json` opens a profiler trace in the Trace view (the file must
// exist, a lesson-relative path as recorded() reads); and `teaches=KEY,KEY` names the concepts of
// lessons/concepts.txt the step lets a learner do and measure (the concept table of
// lessons/README.md is made from them: concepts.h).
struct LessonStep {
  std::string id;
  std::string title;
  graph::SourceLoc loc;
  std::string view;     // "" or one of step_view_names()
  std::string machine;  // "" or a machine preset (predict::preset_names())
  std::string trace;    // "" or the path of a profiler trace, as the marker writes it
  std::vector<std::string> teaches;
  graph::SourceLoc view_loc, machine_loc, teaches_loc, trace_loc;
};

// The workbench views a step marker's view= may name: graph, schedule, tiles, memory, roofline,
// timings, trace.
const std::vector<std::string>& step_view_names();

struct Lesson {
  std::string file;
  std::string id;  // the file stem unless the front matter gives one
  std::string title;
  std::string level;
  int minutes = 0;
  std::vector<std::string> prerequisites;
  std::string text;  // the whole file
  std::vector<Block> blocks;
  std::vector<LessonStep> steps;
};

// The blocks of step `step_index`, in file order (indices into Lesson::blocks); none for an index
// out of range.
std::vector<int> step_blocks(const Lesson& lesson, int step_index);
// The model a step sets up when the player enters it: the first model the step names, in file
// order — a model block's id or another block's model= (a steps block's model= is where those
// steps start, not a model of the step's own). "" when it names none.
std::string step_model(const Lesson& lesson, int step_index);
// The machine a step sets up: its marker's machine=, else the first of its blocks'.
std::string step_machine(const Lesson& lesson, int step_index);
// The index of the step with id `step_id`; -1 when there is none.
int step_index(const Lesson& lesson, const std::string& step_id);

// Parses the file's structure: front matter, fenced blocks (check lines parsed too), step markers.
// Names inside blocks are resolved later by the checker. Throws LessonError at file:line:col.
Lesson parse_lesson(std::string_view text, const std::string& file);
Lesson load_lesson_file(const std::string& path);  // a missing file is a LessonError too

struct RenderOptions {
  bool answers = false;  // print predict answers (expression, explanation) instead of hiding them
  // Computed answers by predict id ("2.003x"), printed with --answers when present.
  std::map<std::string, std::string> computed;
};

// The text for a terminal: front matter as a header line, then the steps with their headings and
// how many checks and predictions each holds, then the text with HTML comments dropped and block
// info strings kept so a reader sees which blocks the checker reads. A predict block shows its
// question (and choices); its answer and explanation only with `answers`. A checkpoint block shows
// its goal and checks; its hint only with `answers` (the player shows it after a failed attempt).
std::string render_for_terminal(const Lesson& lesson, const RenderOptions& options = {});

}  // namespace tilescope::lesson

// Schedule transformations as data: a step (name + arguments) that parses from and prints to text,
// and apply_step(), which checks legality first and returns either the new program with an
// explanation of what changed and why it matters, or a refusal in the learner's terms.
//
// Step language (steps separated by ';' or new lines, '#' comments):
//   kernel(op)                         apply the following steps to the kernel that computes op
//   fuse(producer, consumer, ...)      elementwise consumers into the producer's epilogue
//   compute_at(producer, consumer, at=LOOP|inline)
//   split(LOOP, F)  tile(LOOP, F)      LOOP → LOOP.o × LOOP.i (tail guarded when F does not divide)
//   tile(A, B, FA, FB)                 split both, then order A.o, B.o, A.i, B.i
//   reorder(L1, L2, ...)               these loops take the positions they occupy, in this order
//   unroll(L)  vectorize(L)  parallel(L)
//   bind(L, block.x|block.y|block.z|thread.x|thread.y|thread.z)
//   stage(T, shared|scratchpad|registers, at=LOOP[, double])
//   block_order(row)  block_order(grouped, G)
//   layout(T, rowmajor|nchw|nhwc|transposed)
//   pad(T_or_tile, DIM, AMOUNT)
//   im2col(conv_op)
//   online_softmax(softmax_op)         max and sum in one pass, the sum rescaled as the max grows
//   split_k(LOOP, PARTS)               a reduction cut into parallel slices plus a sum kernel
// step_table() is the reference for the names, argument counts and options. Text is the
// replayable trace (sessions, lessons, --apply); code builds the typed steps of steps.h instead,
// and to_spec() / to_step() convert between the two.
#pragma once

#include "sim/schedule/kernel.h"
#include "sim/schedule/steps.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilescope::schedule {

struct TransformStep {
  std::string name;
  std::vector<std::string> args;                             // positional
  std::vector<std::pair<std::string, std::string>> options;  // key=value, in order
  int line = 0, col = 0;                                     // where it was parsed (0 = unknown)

  std::string option(const std::string& key, const std::string& fallback = "") const;
  std::string to_string() const;  // canonical text: "tile(i, 64)", "stage(x, shared, at=k.o)"
};

// Throws ScheduleError "line:col: message" for text that is not a step list.
std::vector<TransformStep> parse_steps(std::string_view text);
std::string steps_to_string(const std::vector<TransformStep>& steps);  // "a; b; c"

struct StepResult {
  bool ok = false;
  Program program;          // the new program when ok
  std::string explanation;  // what changed and why it matters (ok), or why not (refused)
};

StepResult apply_step(const Program& p, const TransformStep& step, const Target& target = {});
// A typed step built in code (steps.h): the same checks and primitives as its text form.
StepResult apply_step(const Program& p, const StepSpec& step, const Target& target = {});

// The typed step a parsed text step stands for; throws ScheduleError with the refusal apply_step
// gives for text that is not a step (an unknown name or option, a wrong count, a factor that is
// not a number). Refusals that need the program (no loop named 'q') come only from apply_step.
StepSpec to_spec(const TransformStep& step);
// The canonical text of a typed step: to_step(to_spec(s)).to_string() == s.to_string() for text
// in canonical spelling ("registers", not "reg"; "parallel", not "parallelize").
TransformStep to_step(const StepSpec& step);
std::string to_string(const StepSpec& step);

// One row per step kind: apply_step dispatches through this table, checks a step's argument
// count and options against it, and lists it when a step is unknown; docs and the CLI print it.
struct StepInfo {
  std::string_view name;
  std::vector<std::string_view> aliases;  // other names it answers to: parallelize
  size_t min_args = 0, max_args = 0;      // positional arguments; max SIZE_MAX: no limit
  std::vector<std::string_view> keys;     // the key=value options it reads; any other is refused
  std::string_view args_text;             // "a loop and a factor": what the refusal says it takes
  std::string_view example;               // "tile(i, j, 32, 32)"
  std::string_view help;                  // one line
  // The typed step of a text step whose count and options the table accepted; throws
  // ScheduleError for a word that is not a value of the step (a factor that is not a number).
  StepSpec (*parse)(const TransformStep& s) = nullptr;
  // The primitive: applies this row's typed step to `p` in place and returns the explanation. A
  // refusal throws ScheduleError and may leave `p` half changed: call apply_step.
  std::string (*apply)(Program& p, const StepSpec& s, const Target& t) = nullptr;
};
const std::vector<StepInfo>& step_table();         // in the order refusals list them
const StepInfo* find_step(std::string_view name);  // by name or alias; nullptr when unknown

// The bank-conflict degree of a warp's read of a shared tile in the kernel's main statement
// (1 = conflict-free), for the tile named `buffer`; 0 when no thread-bound loop indexes it.
int64_t shared_read_conflict_degree(const Kernel& k, const std::string& buffer, const Target& t);

// The first applied step of a history that a target refuses: its index in History::steps(), its
// canonical text, and the refusal apply_step gives for it there.
struct StepRefusal {
  size_t index = 0;
  std::string step;
  std::string message;
};

// History of applied steps with undo / redo; applying after an undo drops the undone steps.
class History {
 public:
  explicit History(Program initial, Target target = {});
  StepResult apply(const TransformStep& step);  // on refusal nothing changes
  StepResult apply(const StepSpec& step);       // recorded as to_step(step)
  // The capacities new steps are checked against (from the chosen machine).
  const Target& target() const { return m_target; }
  // Re-targets the history: later steps are checked against `t`, and every recorded step (undone
  // ones too) is replayed under it so programs and explanations say what `t` gives. No step is
  // ever dropped: from the first step `t` refuses on, the entries keep what the previous target
  // gave, and first_refused(target()) names that step.
  void set_target(Target t);
  // Replays the applied steps (not the redo stack) from initial() under `t`; the first one `t`
  // refuses, or nullopt when all apply. The history itself is not changed.
  std::optional<StepRefusal> first_refused(const Target& t) const;
  bool can_undo() const { return m_cursor > 0; }
  bool can_redo() const { return m_cursor < m_entries.size(); }
  bool undo();
  bool redo();
  const Program& current() const;
  const Program& initial() const { return m_initial; }
  std::vector<TransformStep> steps() const;  // applied steps up to the cursor
  const std::string& explanation(size_t i) const { return m_entries.at(i).explanation; }
  size_t size() const { return m_cursor; }
  std::string to_text() const { return steps_to_string(steps()); }
  // Replays `text` onto `initial`; throws ScheduleError naming the step that was refused.
  static History replay(Program initial, std::string_view text, Target target = {});

 private:
  void record(TransformStep step,
              const StepResult& r);  // after the cursor, dropping the redo stack
  struct Entry {
    TransformStep step;
    Program program;
    std::string explanation;
  };
  Program m_initial;
  Target m_target;
  std::vector<Entry> m_entries;
  size_t m_cursor = 0;
};

}  // namespace tilescope::schedule

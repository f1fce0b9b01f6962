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
#pragma once

#include "sim/schedule/kernel.h"

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

// The bank-conflict degree of a warp's read of a shared tile in the kernel's main statement
// (1 = conflict-free), for the tile named `buffer`; 0 when no thread-bound loop indexes it.
int64_t shared_read_conflict_degree(const Kernel& k, const std::string& buffer, const Target& t);

// A step of a history that a target refuses: its index, its text and the refusal.
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
  // The target new steps are checked against; changing it keeps every entry.
  const Target& target() const { return m_target; }
  void set_target(Target t) { m_target = t; }
  // Replays the applied steps (not the redo stack) under `t`: the first it refuses, if any.
  std::optional<StepRefusal> first_refused(const Target& t) const;
  // Replays `text` onto `initial`; throws ScheduleError naming the step that was refused.
  static History replay(Program initial, std::string_view text, Target target = {});

 private:
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

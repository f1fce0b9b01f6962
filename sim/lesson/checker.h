// The lesson checker: builds a lesson's models, applies its steps blocks, resolves every name in
// its checks, then evaluates the checks against the numbers tilescope computes.
//
// Loading (the constructor) is where a malformed lesson is rejected with file:line:col: a model
// that does not parse, a steps block refused where nobody expected it, a check (or a predict
// block's answer) naming an op the model does not have, an unknown function or machine.
// Evaluation then only computes.
//
// Values a check can read: the functions of the check language, one row each in
// check_functions.cpp's table (check_functions.h: name, its evaluation, argument kinds, group,
// example, help); check_function_reference()
// prints them
// (`tilescope-cli lesson functions`). `model=` and `machine=` keywords override the block's. In a
// checkpoint block, `learner` is a subject like a steps id: the learner's own model and schedule
// (LearnerState), bound for the evaluation of that block only.
// Simulation traces every kernel of the program, in order, through one memory hierarchy of the
// machine (tensors keep one address across kernels, so an intermediate can stay cached), then
// writes dirty lines back: a kernel's results reach memory.
#pragma once

#include "sim/graph/graph.h"
#include "sim/lesson/lesson.h"
#include "sim/lesson/recorded.h"
#include "sim/lesson/value.h"
#include "sim/predict/machine.h"
#include "sim/predict/roofline.h"
#include "sim/schedule/kernel.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tilescope::lesson {

namespace detail {
struct CheckCall;
struct MappedTrace;
}  // namespace detail

struct CheckResult {
  Check check;
  std::string step;  // the lesson step the check belongs to
  bool pass = false;
  Value lhs, rhs;
  std::string error;  // set when evaluation itself failed (the check then fails)
};

// One scheduled program of the lesson: a model's default lowering or a steps block's result.
struct LessonProgram {
  std::string id;
  std::string model;  // model id
  schedule::Program program;
  std::vector<std::string> applied;       // canonical text of each applied step
  std::vector<std::string> explanations;  // one per applied step
  bool refused = false;
  std::string refusal;  // why the refused step was refused
};

// Memory-hierarchy counters of one program on one machine: [level] for caches, then main memory.
struct SimResult {
  std::vector<std::string> level_names;  // caches, closest first, then the memory's name
  std::vector<memory::Counters> levels;
  // Per tensor (by name), one Counters per level as `levels`: misses(S, L1, B) and the like.
  std::map<std::string, std::vector<memory::Counters>> by_tensor;
  predict::Roofline roofline;  // the program's FLOPs against the bytes each level served
};

// The compiler pass a schedule step belongs to, by the step's name: "layout" (layout, pad — a
// graph-level layout pass), "fusion" (fuse, compute_at), "lowering" (im2col: the op's algorithm),
// "scheduling" (kernel, split, tile, reorder, unroll, vectorize, parallel, bind, stage,
// block_order, split_k: Halide's rfactor is a schedule directive too); "" for an unknown name.
std::string compiler_pass(std::string_view step_name);

// The learner's own state, as a checkpoint sees it: the model in their editor and its schedule at
// the history cursor (in the app, the workbench's; headless, a solution or a starting model).
struct LearnerState {
  std::shared_ptr<const graph::Graph> graph;
  schedule::Program program;
  std::vector<std::string> applied;       // canonical text of each applied step
  std::vector<std::string> explanations;  // one per applied step
};

// A checkpoint evaluated on one learner state: passed when every check holds.
struct CheckpointResult {
  const Block* block = nullptr;
  bool pass = false;
  std::vector<CheckResult> checks;
  std::string error;  // the state could not be evaluated at all (no graph)
};

// What `lesson check` verifies of a checkpoint block: its solution reaches the goal, and the
// starting model's default lowering does not (a goal that holds before the learner acts checks
// nothing the learner did).
struct CheckpointCheck {
  const Block* block = nullptr;
  CheckpointResult solution;  // `learner` bound to the solution: every check must pass
  CheckpointResult start;     // `learner` bound to the starting model: some check must fail
  // `learner` bound to the model the player loads on entering the checkpoint's step
  // (step_model), when that is another model: some check must fail there too, or the learner
  // meets the goal by pressing Next.
  std::string entry_model;
  CheckpointResult entry;
  bool pass = false;
  std::string error;  // why not, when !pass
};

class LessonSession {
 public:
  // Builds everything and validates every check; throws LessonError at file:line:col.
  explicit LessonSession(Lesson lesson);

  const Lesson& lesson() const { return m_lesson; }
  std::vector<CheckResult> run_checks();
  // Evaluates one check in the context of `block` (its model= and machine= defaults).
  CheckResult run_check(const Block& block, const Check& check);
  // Evaluates an expression in the context of `block` (a check or predict block: its model= and
  // machine= defaults). The names in `e` must have been validated (a predict block's answer is,
  // at load); false with the reason in `error` when evaluation fails.
  bool evaluate(const Block& block, const Expr& e, Value& out, std::string& error);

  // Checkpoints. run_checkpoint evaluates a checkpoint block's checks with `learner` bound to
  // `state` (the binding lasts for this call only). solution_state and start_state are the two
  // states `lesson check` binds; check_checkpoint makes that check, run_checkpoints for every
  // checkpoint block in file order.
  CheckpointResult run_checkpoint(const Block& block, const LearnerState& state);
  LearnerState solution_state(const Block& block);
  LearnerState start_state(const Block& block);
  CheckpointCheck check_checkpoint(const Block& block);
  std::vector<CheckpointCheck> run_checkpoints();
  // A learner state made headless: the checkpoint's starting model with `steps` (schedule step
  // text, as `tilescope-cli schedule --apply` takes it) applied. Throws LessonError (no location)
  // saying which step is refused or unreadable.
  LearnerState state_with_steps(const Block& block, const std::string& steps);

  // The text of a model block as the learner's editor would hold it (a file= model's file, read);
  // "" for a train= model, which has no text of its own. Throws LessonError for an unknown id.
  std::string model_text(const std::string& id) const;
  // "Show me": the model text and the steps text (canonical, "; "-separated) of a checkpoint's
  // solution. A model solution has no steps.
  std::pair<std::string, std::string> solution_of(const Block& checkpoint);

  std::shared_ptr<const graph::Graph> model(const std::string& id) const;  // nullptr if unknown
  const LessonProgram* program(const std::string& id);  // model or steps id; nullptr if unknown
  const SimResult& simulate(const std::string& program_id, const std::string& machine);

  // A flag the session's simulations watch: once set, the one running throws
  // memory::TraceCancelled within a batch of accesses (the player's job sets it on cancel or
  // quit). The flag must outlive the session's use of it; nullptr: never cancelled.
  void set_cancel(const std::atomic<bool>* cancel) { m_cancel = cancel; }

 private:
  // The check language's functions (check_functions.cpp's rows) read the session through it.
  friend struct detail::CheckCall;
  struct Context {
    std::string model;     // default model id ("" when the lesson has none yet)
    std::string machine;   // default machine ("" when not given)
    bool learner = false;  // a checkpoint block: `learner` names a subject
  };
  void validate_checkpoint(const Block& b);
  void bind_learner(const LearnerState& state);
  void unbind_learner();
  void build_model(const Block& b);
  void build_steps(const Block& b);
  Context context_of(const Block& b) const;
  void validate(const Expr& e, const Context& c) const;
  void validate_arg(const Expr& call, const Expr& arg, int kind, const Context& c) const;
  // Curriculum functions (curriculum.cpp): their argument kinds.
  void validate_curriculum_arg(const Expr& call, const Expr& arg, bool subject_list,
                               const Context& c) const;
  std::string model_for(const Expr& call, const Context& c) const;
  std::string machine_for(const Expr& call, const Context& c) const;
  Value eval(const Expr& e, const Context& c);
  Value call(const Expr& e, const Context& c);
  const predict::Machine& machine(const std::string& name) const;
  bool is_subject(const std::string& id) const;
  bool is_subject(const std::string& id, const Context& c) const;

  Lesson m_lesson;
  std::map<std::string, std::shared_ptr<const graph::Graph>> m_models;
  std::map<std::string, LessonProgram> m_programs;
  std::vector<std::string> m_model_order;  // model ids in file order
  mutable std::map<std::string, predict::Machine> m_machines;
  std::map<std::string, SimResult> m_sims;  // "program@machine"
  // Profiler traces mapped onto a model (check_trace.cpp), by "file|model|machine".
  std::map<std::string, std::shared_ptr<const detail::MappedTrace>> m_traces;
  const std::atomic<bool>* m_cancel = nullptr;
};

}  // namespace tilescope::lesson

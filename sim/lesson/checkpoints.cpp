// Checkpoints: `learner` bound to a learner's own model and schedule for one checkpoint block, the
// check `lesson check` makes of each (its solution reaches the goal, its start does not), and the
// learner states it binds.
#include "sim/lesson/checker.h"
#include "sim/lesson/checker_impl.h"

#include "sim/io/input.h"
#include "sim/lesson/recorded.h"
#include "sim/pipeline.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/transform.h"

#include <algorithm>
#include <functional>

namespace tilescope::lesson {

using detail::EvalError;
using detail::join;

namespace {

// The model id under which the learner's graph is bound while a checkpoint is evaluated: not an
// id a lesson can write (ids are letters, digits, '-' and '_'), so it never meets a lesson's own.
const char* const kLearnerModel = "\x01learner-model";

// The first difference between the learner's model and the model a checkpoint is about, or "".
// Names, shapes, dtypes, layouts and roles of the tensors, names and kinds of the ops, and the
// total cost (which differs when an attribute such as a stride does) must agree.
std::string model_difference(const graph::Graph& learner, const graph::Graph& lesson) {
  if (learner.tensors().size() != lesson.tensors().size() ||
      learner.ops().size() != lesson.ops().size())
    return "it has " + std::to_string(learner.ops().size()) + " ops and " +
           std::to_string(learner.tensors().size()) + " tensors, the lesson's " +
           std::to_string(lesson.ops().size()) + " and " + std::to_string(lesson.tensors().size());
  for (size_t i = 0; i < lesson.tensors().size(); ++i) {
    const graph::Tensor& a = learner.tensors()[i];
    const graph::Tensor& b = lesson.tensors()[i];
    if (a.name != b.name || a.shape != b.shape || a.dtype != b.dtype || a.layout != b.layout ||
        a.role != b.role)
      return "tensor " + b.name + " is " + graph::shape_to_string(b.shape) + " " +
             graph::dtype_name(b.dtype) + " in the lesson; yours is " + a.name + " " +
             graph::shape_to_string(a.shape) + " " + graph::dtype_name(a.dtype);
  }
  for (size_t i = 0; i < lesson.ops().size(); ++i)
    if (learner.ops()[i].name != lesson.ops()[i].name ||
        learner.ops()[i].kind != lesson.ops()[i].kind)
      return "op " + lesson.ops()[i].name + " differs";
  const graph::OpCost a = learner.total_cost(), b = lesson.total_cost();
  if (a.flops != b.flops || a.bytes() != b.bytes()) return "an op's attributes differ";
  return "";
}

}  // namespace

void LessonSession::validate_checkpoint(const Block& b) {
  const CheckpointBlock& cp = b.checkpoint;
  const Attribute* model_attr = b.attr("model");
  const Attribute* solution_attr = b.attr("solution");
  if (!m_models.count(cp.model))
    throw LessonError(model_attr->loc, "model=" + cp.model +
                                           ": no model block with that id comes before this "
                                           "checkpoint (known: " +
                                           join(m_model_order) + ")" +
                                           suggestion(cp.model, m_model_order));
  if (model_text(cp.model).empty())
    throw LessonError(model_attr->loc,
                      "model=" + cp.model +
                          " is a train= model: a checkpoint starts from a model the learner can "
                          "open and edit (name the model it trains instead)");
  if (m_models.count(cp.solution)) {
    if (model_text(cp.solution).empty())
      throw LessonError(solution_attr->loc, "solution=" + cp.solution +
                                                " is a train= model, which the learner's editor "
                                                "cannot hold");
  } else if (const auto it = m_programs.find(cp.solution); it != m_programs.end()) {
    if (it->second.refused)
      throw LessonError(solution_attr->loc, "solution=" + cp.solution +
                                                " ends in a refused step: a solution must reach "
                                                "the goal");
    if (it->second.model != cp.model)
      throw LessonError(solution_attr->loc, "solution=" + cp.solution + " schedules model " +
                                                it->second.model +
                                                ", but the learner starts from model=" + cp.model +
                                                " (a steps solution schedules the starting model)");
  } else {
    std::vector<std::string> known = m_model_order;
    for (const auto& [id, p] : m_programs) known.push_back(id);
    throw LessonError(solution_attr->loc, "solution=" + cp.solution +
                                              ": no steps or model block with that id comes "
                                              "before this checkpoint" +
                                              suggestion(cp.solution, known));
  }
  const Context c = context_of(b);
  bool names_learner = false;
  std::function<bool(const Expr&)> mentions = [&](const Expr& e) {
    if (e.kind == Expr::Kind::Name && e.text == kLearner) return true;
    return std::any_of(e.args.begin(), e.args.end(), mentions);
  };
  for (const Check& ch : b.checks) {
    validate(ch.lhs, c);
    validate(ch.rhs, c);
    names_learner = names_learner || mentions(ch.lhs) || mentions(ch.rhs);
  }
  if (!names_learner)
    throw LessonError(b.loc, "checkpoint " + cp.id +
                                 " never looks at the learner: at least one check must name "
                                 "`learner` (e.g. 'kernels(learner) == 1')");
}

std::string LessonSession::model_text(const std::string& id) const {
  for (const Block& b : m_lesson.blocks) {
    if (b.kind != BlockKind::Model || b.attr_value("id") != id) continue;
    if (b.attr("train")) return "";
    if (const Attribute* file = b.attr("file")) {
      std::string path;
      try {
        path = resolve_lesson_path(file->value, m_lesson.file);
      } catch (const RecordedError& e) {
        throw LessonError(file->loc, e.what());
      }
      try {
        return pipeline::read_model_file(path).text;
      } catch (const graph::GraphError& e) {
        throw LessonError(file->loc, e.message());
      }
    }
    return b.body;
  }
  throw LessonError({m_lesson.file, 0, 0}, "no model block '" + id + "'");
}

std::pair<std::string, std::string> LessonSession::solution_of(const Block& checkpoint) {
  const CheckpointBlock& cp = checkpoint.checkpoint;
  if (m_models.count(cp.solution)) return {model_text(cp.solution), ""};
  const LessonProgram* lp = program(cp.solution);
  std::string steps;
  for (const std::string& s : lp->applied) steps += (steps.empty() ? "" : "; ") + s;
  return {model_text(cp.model), steps};
}

void LessonSession::bind_learner(const LearnerState& state) {
  unbind_learner();
  m_models[kLearnerModel] = state.graph;
  LessonProgram lp;
  lp.id = kLearner;
  lp.model = kLearnerModel;
  lp.program = state.program;
  lp.applied = state.applied;
  lp.explanations = state.explanations;
  m_programs[kLearner] = std::move(lp);
}

void LessonSession::unbind_learner() {
  m_models.erase(kLearnerModel);
  m_programs.erase(kLearner);
  const std::string prefix = std::string(kLearner) + "@";
  for (auto it = m_sims.begin(); it != m_sims.end();)
    it = it->first.rfind(prefix, 0) == 0 ? m_sims.erase(it) : std::next(it);
}

CheckpointResult LessonSession::run_checkpoint(const Block& block, const LearnerState& state) {
  CheckpointResult r;
  r.block = &block;
  if (!state.graph) {
    r.error = "there is no model to check (the editor's text does not parse yet)";
    return r;
  }
  // A steps solution asks for a schedule of the lesson's model: a learner who shrank the model
  // instead would pass a DRAM-bytes goal without scheduling anything.
  const CheckpointBlock& cp = block.checkpoint;
  if (!m_models.count(cp.solution)) {
    const std::string diff = model_difference(*state.graph, *model(cp.model));
    if (!diff.empty()) {
      r.error = "this checkpoint is about the lesson's model " + cp.model +
                ", and yours differs (" + diff + "): load " + cp.model + " and schedule it";
      return r;
    }
  }
  bind_learner(state);
  // Unbound on every way out, so `learner` never leaks into a plain check.
  struct Unbind {
    LessonSession* s;
    ~Unbind() { s->unbind_learner(); }
  } unbind{this};
  r.pass = true;
  for (const Check& c : block.checks) {
    r.checks.push_back(run_check(block, c));
    r.pass = r.pass && r.checks.back().pass;
  }
  return r;
}

LearnerState LessonSession::solution_state(const Block& block) {
  const CheckpointBlock& cp = block.checkpoint;
  const LessonProgram* lp = program(cp.solution);
  LearnerState s;
  s.graph = model(m_models.count(cp.solution) ? cp.solution : lp->model);
  s.program = lp->program;
  s.applied = lp->applied;
  s.explanations = lp->explanations;
  return s;
}

LearnerState LessonSession::start_state(const Block& block) {
  const LessonProgram* lp = program(block.checkpoint.model);
  LearnerState s;
  s.graph = model(block.checkpoint.model);
  s.program = lp->program;
  return s;
}

LearnerState LessonSession::state_with_steps(const Block& block, const std::string& steps) {
  LearnerState s = start_state(block);
  std::vector<schedule::TransformStep> parsed;
  try {
    parsed = schedule::parse_steps(steps);
  } catch (const schedule::ScheduleError& e) {
    throw LessonError({}, e.what());
  }
  for (const schedule::TransformStep& step : parsed) {
    const schedule::StepResult r = schedule::apply_step(s.program, step);
    if (!r.ok) throw LessonError({}, "step " + step.to_string() + " is refused: " + r.explanation);
    s.program = r.program;
    s.applied.push_back(step.to_string());
    s.explanations.push_back(r.explanation);
  }
  return s;
}

CheckpointCheck LessonSession::check_checkpoint(const Block& block) {
  CheckpointCheck c;
  c.block = &block;
  const CheckpointBlock& cp = block.checkpoint;
  try {
    c.solution = run_checkpoint(block, solution_state(block));
    c.start = run_checkpoint(block, start_state(block));
  } catch (const EvalError& e) {
    c.error = e.message;
    return c;
  }
  if (!c.solution.pass) {
    for (const CheckResult& r : c.solution.checks)
      if (!r.pass) {
        c.error = "the solution " + cp.solution + " does not reach the goal: " + r.check.text +
                  (r.error.empty() ? " is " + r.lhs.to_string() + " against " + r.rhs.to_string()
                                   : " (" + r.error + ")");
        break;
      }
    if (c.error.empty()) c.error = "the solution " + cp.solution + " does not reach the goal";
    return c;
  }
  if (c.start.pass) {
    c.error = "the goal already holds on the starting model " + cp.model +
              ", before the learner does anything: some check must fail there";
    return c;
  }
  // Entering the step loads its model (step_model): when that is not the checkpoint's start, it
  // must not meet the goal either (issue #26: lesson 1's step 2 loaded the solution itself).
  const std::string entry = step_model(m_lesson, step_index(m_lesson, block.step));
  if (!entry.empty() && entry != cp.model && m_models.count(entry)) {
    c.entry_model = entry;
    LearnerState s;
    s.graph = model(entry);
    s.program = program(entry)->program;
    try {
      c.entry = run_checkpoint(block, s);
    } catch (const EvalError& e) {
      c.error = e.message;
      return c;
    }
    if (c.entry.pass) {
      c.error = "entering step '" + block.step + "' loads model " + entry +
                ", which already meets the goal: the learner would reach it by pressing Next "
                "(start the step on " + cp.model + ", or name " + entry + " later in the step)";
      return c;
    }
  }
  c.pass = true;
  return c;
}

std::vector<CheckpointCheck> LessonSession::run_checkpoints() {
  std::vector<CheckpointCheck> out;
  for (const Block& b : m_lesson.blocks)
    if (b.kind == BlockKind::Checkpoint) out.push_back(check_checkpoint(b));
  return out;
}

}  // namespace tilescope::lesson

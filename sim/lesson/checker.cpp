// The lesson checker: model and steps blocks built once, check names resolved at load, values
// computed from graph costs, schedules, the memory simulator, machine presets and recorded
// measurements.
//
// Index: [SECTION] Building  [SECTION] Functions  [SECTION] Validation  [SECTION] Simulation
//        [SECTION] Evaluation   (checkpoints: checkpoints.cpp; lessons 07 on: curriculum.cpp)
// Values are in value.cpp; recorded() and lesson paths in recorded.cpp.
#include "sim/lesson/checker.h"
#include "sim/lesson/check_functions.h"
#include "sim/lesson/checker_impl.h"

#include "sim/lesson/recorded.h"
#include "sim/io/input.h"

#include "sim/graph/autodiff.h"
#include "sim/memory/hierarchy.h"
#include "sim/predict/simulate.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace.h"
#include "sim/schedule/transform.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <set>

namespace tilescope::lesson {

using detail::EvalError;
using detail::join;
using namespace detail::kinds;
using detail::FunctionSpec;
using detail::find_function;
using detail::functions;

namespace {

// The most accesses a checkpoint simulates of the learner's state: the learner can make a model
// of any size, and the player must answer in seconds, not minutes (about 2 s at the simulator's
// measured rate of 50–100 M accesses/s).
constexpr double kMaxLearnerAccesses = 2e8;
// The most accesses one of the lesson's own simulations may take. A lesson is a file from a
// stranger: a check on a 16384³ GEMM ran for hours (issue #25). The curriculum's largest
// simulation is far below this (`lesson check` over all lessons).
constexpr double kMaxLessonAccesses = 1e9;

}  // namespace

// [SECTION] Building

LessonSession::LessonSession(Lesson lesson) : m_lesson(std::move(lesson)) {
  for (const Block& b : m_lesson.blocks) {
    if (b.kind == BlockKind::Model) build_model(b);
    if (b.kind == BlockKind::Steps) build_steps(b);
  }
  for (const Block& b : m_lesson.blocks) {
    if (b.kind == BlockKind::Checkpoint) validate_checkpoint(b);
    if (b.kind != BlockKind::Check && b.kind != BlockKind::Predict) continue;
    const Context c = context_of(b);
    for (const Check& ch : b.checks) {
      validate(ch.lhs, c);
      validate(ch.rhs, c);
    }
    // A predict answer given as a letter or a number is no expression.
    if (b.kind == BlockKind::Predict && b.predict.answer_choice < 0) validate(b.predict.answer, c);
  }
  // A lesson with nothing to check would pass `lesson check` while verifying nothing; an empty
  // check block is already an error, so a lesson without any check block is one too. (Last, so a
  // broken model or steps block is reported as such first.)
  const bool has_checks =
      std::any_of(m_lesson.blocks.begin(), m_lesson.blocks.end(),
                  [](const Block& b) { return b.kind == BlockKind::Check && !b.checks.empty(); });
  if (!has_checks)
    throw LessonError({m_lesson.file, 0, 0},
                      "the lesson has no checks: add a ```check block with at least one claim "
                      "(e.g. 'ops(m) == 3') so that `lesson check` verifies something");
}

void LessonSession::build_model(const Block& b) {
  const std::string id = b.attr_value("id");
  std::shared_ptr<const graph::Graph> g;
  const Attribute* file = b.attr("file");
  const Attribute* train = b.attr("train");
  const bool has_body = b.body.find_first_not_of(" \t\n") != std::string::npos;
  if ((file != nullptr) + (train != nullptr) + has_body != 1)
    throw LessonError(b.loc,
                      "a model block has exactly one source: its text, file=PATH or "
                      "train=MODEL_ID");
  if (!train && (b.attr("loss") || b.attr("lr")))
    throw LessonError((b.attr("loss") ? b.attr("loss") : b.attr("lr"))->loc,
                      "loss= and lr= belong to a train= model block");
  try {
    if (has_body) {
      g = pipeline::parse({b.body, m_lesson.file});
    } else if (file) {
      std::string path;
      try {
        path = resolve_lesson_path(file->value, m_lesson.file);
      } catch (const RecordedError& e) {
        throw LessonError(file->loc, "file=" + io::printable(file->value, 80) + ": " + e.what());
      }
      g = pipeline::parse(pipeline::read_model_file(path));
    } else {
      auto it = m_models.find(train->value);
      if (it == m_models.end())
        throw LessonError(train->loc, "train=" + train->value +
                                          ": no model block with that id comes before this one");
      graph::TrainingOptions o;
      const std::string loss = b.attr_value("loss", "mse");
      if (loss != "mse" && loss != "ce")
        throw LessonError(b.attr("loss")->loc, "loss is mse or ce, not '" + loss + "'");
      o.loss = loss == "ce" ? graph::LossKind::CrossEntropy : graph::LossKind::MSE;
      if (const Attribute* lr = b.attr("lr")) {
        try {
          o.learning_rate = std::stod(lr->value);
        } catch (const std::exception&) {
          throw LessonError(lr->loc, "lr is a number, not '" + lr->value + "'");
        }
      }
      g = std::make_shared<const graph::Graph>(graph::build_training_graph(*it->second, o));
    }
  } catch (const graph::GraphError& e) {
    graph::SourceLoc l = e.loc();
    if (has_body && l.line > 0) {
      // The model parser counts lines from the block's first body line.
      l.line += b.body_line - 1;
      l.file = m_lesson.file;
    } else if (l.line <= 0) {
      l = b.loc;
    }
    throw LessonError(l, "in model '" + id + "': " + e.message());
  }
  m_models[id] = g;
  m_model_order.push_back(id);
}

void LessonSession::build_steps(const Block& b) {
  LessonProgram lp;
  lp.id = b.attr_value("id");
  schedule::Program start;
  if (const Attribute* from = b.attr("from")) {
    auto it = m_programs.find(from->value);
    if (it == m_programs.end() || m_models.count(from->value))
      throw LessonError(
          from->loc, "from=" + from->value + ": no steps block with that id comes before this one");
    if (it->second.refused)
      throw LessonError(from->loc, "from=" + from->value + " continues a refused schedule");
    if (const Attribute* m = b.attr("model"); m && m->value != it->second.model)
      throw LessonError(m->loc, "model=" + m->value + " disagrees with from=" + from->value +
                                    ", which schedules model " + it->second.model);
    lp.model = it->second.model;
    start = it->second.program;
    lp.applied = it->second.applied;
    lp.explanations = it->second.explanations;
  } else {
    const Attribute* m = b.attr("model");
    if (!m_models.count(m->value))
      throw LessonError(m->loc, "model=" + m->value + ": no model block with that id" +
                                    (m_model_order.empty()
                                         ? std::string(" (this lesson defines none before here)")
                                         : " (known: " + join(m_model_order) + ")"));
    lp.model = m->value;
    try {
      start = program(m->value)->program;
    } catch (const EvalError& e) {
      throw LessonError(m->loc, e.message);
    }
  }
  std::vector<schedule::TransformStep> steps;
  try {
    steps = schedule::parse_steps(b.body);
  } catch (const schedule::ScheduleError& e) {
    // "line:col: message" counted from the block's first body line.
    const std::string what = e.what();
    int line = 0, col = 0;
    if (std::sscanf(what.c_str(), "%d:%d:", &line, &col) == 2) {
      const size_t at = what.find(": ");
      throw LessonError({m_lesson.file, b.body_line + line - 1, col},
                        "in steps '" + lp.id + "': " + what.substr(at + 2));
    }
    throw LessonError(b.loc, "in steps '" + lp.id + "': " + what);
  }
  if (steps.empty()) throw LessonError(b.loc, "steps block '" + lp.id + "' has no steps");
  if (lp.applied.size() + steps.size() > schedule::kMaxScheduleSteps)
    throw LessonError(b.loc, "steps block '" + lp.id + "' makes a schedule of " +
                                 std::to_string(lp.applied.size() + steps.size()) +
                                 " steps, past the limit of " +
                                 std::to_string(schedule::kMaxScheduleSteps));
  const bool expect_refused = b.attr("expect") != nullptr;
  schedule::Program p = start;
  for (size_t i = 0; i < steps.size(); ++i) {
    const graph::SourceLoc where{m_lesson.file, b.body_line + steps[i].line - 1, steps[i].col};
    const schedule::StepResult r = schedule::apply_step(p, steps[i]);
    if (!r.ok) {
      if (!expect_refused)
        throw LessonError(where, "step " + steps[i].to_string() + " is refused: " + r.explanation +
                                     " (mark the block expect=refused if that "
                                     "is the point)");
      if (i + 1 != steps.size())
        throw LessonError(where, "step " + steps[i].to_string() +
                                     " is refused, so the steps after it never run; the refused "
                                     "step must come last");
      lp.refused = true;
      lp.refusal = r.explanation;
      break;
    }
    p = r.program;
    lp.applied.push_back(steps[i].to_string());
    lp.explanations.push_back(r.explanation);
  }
  if (expect_refused && !lp.refused)
    throw LessonError(b.attr("expect")->loc,
                      "expect=refused, but every step of '" + lp.id + "' applied");
  lp.program = std::move(p);
  m_programs[lp.id] = std::move(lp);
}

std::shared_ptr<const graph::Graph> LessonSession::model(const std::string& id) const {
  auto it = m_models.find(id);
  return it == m_models.end() ? nullptr : it->second;
}

const LessonProgram* LessonSession::program(const std::string& id) {
  if (auto it = m_programs.find(id); it != m_programs.end()) return &it->second;
  auto g = m_models.find(id);
  if (g == m_models.end()) return nullptr;
  LessonProgram lp;
  lp.id = id;
  lp.model = id;
  try {
    lp.program = pipeline::lower(g->second, pipeline::target(nullptr)).current();
  } catch (const schedule::ScheduleError& e) {
    throw EvalError{"model " + id + " cannot be lowered to loop nests: " + e.what()};
  }
  return &(m_programs[id] = std::move(lp));
}

bool LessonSession::is_subject(const std::string& id) const {
  return m_models.count(id) || m_programs.count(id);
}

bool LessonSession::is_subject(const std::string& id, const Context& c) const {
  return (c.learner && id == kLearner) || is_subject(id);
}

const predict::Machine& LessonSession::machine(const std::string& name) const {
  auto it = m_machines.find(name);
  if (it != m_machines.end()) return it->second;
  // A preset, or NAME.machine in the lesson's own folder: never a path (a lesson is a stranger's
  // file, and a machine file's errors quote its lines).
  const std::string dir = std::filesystem::path(m_lesson.file).parent_path().string();
  return m_machines[name] = predict::load_machine_preset(name, dir.empty() ? "." : dir);
}

LessonSession::Context LessonSession::context_of(const Block& b) const {
  Context c;
  // The default model is the last model block above the check block.
  for (const Block& other : m_lesson.blocks) {
    if (&other == &b) break;
    if (other.kind == BlockKind::Model) c.model = other.attr_value("id");
  }
  if (const Attribute* m = b.attr("model")) {
    if (!is_subject(m->value) || !m_models.count(m->value))
      throw LessonError(m->loc, "model=" + m->value + ": no model block with that id (known: " +
                                    join(m_model_order) + ")");
    c.model = m->value;
  }
  c.learner = b.kind == BlockKind::Checkpoint;
  if (const Attribute* m = b.attr("machine")) {
    try {
      machine(m->value);
    } catch (const predict::MachineError& e) {
      throw LessonError(m->loc, "machine=" + m->value + ": " + e.what());
    }
    c.machine = m->value;
  }
  return c;
}

// [SECTION] Functions (their table is check_functions.cpp)

namespace {

std::vector<std::string> op_names(const graph::Graph& g) {
  std::vector<std::string> v;
  for (const auto& op : g.ops()) v.push_back(op.name);
  return v;
}

std::vector<std::string> level_names(const predict::Machine& m) {
  std::vector<std::string> v;
  for (const auto& l : m.levels) v.push_back(l.name);
  v.push_back(m.memory.name.empty() ? "DRAM" : m.memory.name);
  return v;
}

}  // namespace

// [SECTION] Validation

std::string LessonSession::model_for(const Expr& call, const Context& c) const {
  if (const Expr* m = call.keyword("model")) return m->text;
  return c.model;
}

std::string LessonSession::machine_for(const Expr& call, const Context& c) const {
  if (const Expr* m = call.keyword("machine")) return m->text;
  return c.machine;
}

void LessonSession::validate(const Expr& e, const Context& c) const {
  switch (e.kind) {
    case Expr::Kind::Number:
    case Expr::Kind::String:
      return;
    case Expr::Kind::Name: {
      // A bare name is an op of the check's model, or a model or steps id; it stands for its name.
      if (is_subject(e.text, c)) return;
      auto g = model(c.model);
      if (g && g->find_op(e.text)) return;
      std::vector<std::string> known = g ? op_names(*g) : std::vector<std::string>{};
      for (const auto& [id, p] : m_programs) known.push_back(id);
      for (const auto& id : m_model_order) known.push_back(id);
      throw LessonError(e.loc, "unknown name '" + e.text + "': not an op of model " +
                                   (c.model.empty() ? "(none)" : c.model) +
                                   " nor a model or steps id" + suggestion(e.text, known));
    }
    case Expr::Kind::List:
    case Expr::Kind::Negate:
    case Expr::Kind::Binary:
      for (const Expr& a : e.args) validate(a, c);
      return;
    case Expr::Kind::Call:
      break;
  }
  const FunctionSpec* f = find_function(e.text);
  if (!f) {
    std::vector<std::string> names;
    for (const auto& fn : functions()) names.push_back(fn.name);
    throw LessonError(e.loc, "unknown function '" + e.text + "'" + suggestion(e.text, names) +
                                 " (known: " + join(names, 100) + ")");
  }
  const size_t n = e.positional();
  if (n < f->required || n > f->args.size()) {
    const std::string want = f->required == f->args.size() ? std::to_string(f->required)
                                                           : std::to_string(f->required) + " to " +
                                                                 std::to_string(f->args.size());
    throw LessonError(e.loc, std::string(f->name) + "() takes " + want + " argument" +
                                 (f->args.size() == 1 ? "" : "s") + ", not " + std::to_string(n));
  }
  for (size_t k = 0; k < e.keywords.size(); ++k) {
    const std::string& kw = e.keywords[k];
    const Expr& v = e.args[n + k];
    if ((kw == "model" && f->model_kw) || (kw == "machine" && f->machine_kw)) {
      if (v.kind != Expr::Kind::Name)
        throw LessonError(v.loc, kw + "= takes a name, not " + v.to_string());
      if (kw == "model" && !m_models.count(v.text))
        throw LessonError(v.loc, "model=" + v.text + ": no model block with that id (known: " +
                                     join(m_model_order) + ")" + suggestion(v.text, m_model_order));
      if (kw == "machine") {
        try {
          machine(v.text);
        } catch (const predict::MachineError& err) {
          throw LessonError(v.loc, "machine=" + v.text + ": " + err.what());
        }
      }
      continue;
    }
    throw LessonError(v.loc, std::string(f->name) + "() has no keyword argument '" + kw + "'");
  }
  if (f->model_kw && n == 0 && model_for(e, c).empty())
    throw LessonError(e.loc, std::string(f->name) +
                                 "() needs a model, and no model block comes "
                                 "before this check");
  if (f->machine_kw && machine_for(e, c).empty())
    throw LessonError(e.loc, std::string(f->name) +
                                 "() simulates on a machine: add machine=NAME to the call or to "
                                 "the check block");
  for (size_t i = 0; i < n; ++i) validate_arg(e, e.args[i], f->args[i], c);
}

void LessonSession::validate_arg(const Expr& call, const Expr& arg, int kind,
                                 const Context& c) const {
  const bool name = arg.kind == Expr::Kind::Name;
  auto need_name = [&](const char* what) {
    if (!name)
      throw LessonError(arg.loc,
                        call.text + "() expects " + what + " here, not " + arg.to_string());
  };
  switch (kind) {
    case kNumber:
    case kString:
    case kAny:
      validate(arg, c);
      return;
    case kSubjectList:
    case kTensorOfSubject:
      validate_curriculum_arg(call, arg, kind == kSubjectList, c);
      return;
    case kSubject:
      need_name("a model or steps id");
      if (!is_subject(arg.text, c)) {
        std::vector<std::string> known = m_model_order;
        for (const auto& [id, p] : m_programs) known.push_back(id);
        throw LessonError(arg.loc, "unknown model or steps id '" + arg.text + "' (known: " +
                                       join(known) + ")" + suggestion(arg.text, known));
      }
      return;
    case kOp:
    case kOpOrSubject: {
      need_name(kind == kOp ? "an op name" : "an op name or a model or steps id");
      if (kind == kOpOrSubject && is_subject(arg.text, c)) return;
      const std::string m = model_for(call, c);
      auto g = model(m);
      if (!g)
        throw LessonError(arg.loc, "'" + arg.text +
                                       "' would be an op, but no model block comes "
                                       "before this check");
      if (!g->find_op(arg.text)) {
        const auto names = op_names(*g);
        throw LessonError(arg.loc, "model " + m + " has no op '" + arg.text + "'" +
                                       suggestion(arg.text, names) + " (its ops: " + join(names) +
                                       ")");
      }
      return;
    }
    case kTensor: {
      need_name("a tensor name");
      const std::string m = model_for(call, c);
      auto g = model(m);
      if (!g || !g->find_tensor(arg.text)) {
        std::vector<std::string> names;
        if (g)
          for (const auto& t : g->tensors()) names.push_back(t.name);
        throw LessonError(arg.loc, "model " + (m.empty() ? std::string("(none)") : m) +
                                       " has no tensor '" + arg.text + "'" +
                                       suggestion(arg.text, names));
      }
      return;
    }
    case kMachine:
      need_name("a machine preset (tiny, host, h200, ...)");
      try {
        machine(arg.text);
      } catch (const predict::MachineError& err) {
        throw LessonError(arg.loc, "unknown machine '" + arg.text + "': " + err.what());
      }
      return;
    case kLevel: {
      need_name("a memory level name (L1, L2, ...)");
      const auto levels = level_names(machine(machine_for(call, c)));
      if (std::find(levels.begin(), levels.end(), arg.text) == levels.end())
        throw LessonError(arg.loc, "machine " + machine_for(call, c) + " has no level '" +
                                       arg.text + "' (its levels: " + join(levels) + ")");
      return;
    }
  }
}

// [SECTION] Simulation

const SimResult& LessonSession::simulate(const std::string& program_id,
                                         const std::string& machine_name) {
  const std::string key = program_id + "@" + machine_name;
  if (auto it = m_sims.find(key); it != m_sims.end()) return it->second;
  const LessonProgram* lp = program(program_id);
  if (!lp) throw EvalError{"unknown program '" + program_id + "'"};
  const predict::Machine& m = machine(machine_name);
  // Sized before it starts: the learner can make a model of any size, and so can a lesson.
  const double accesses =
      pipeline::size_walk(pipeline::Walk::Simulation, lp->program, &m).accesses;
  if (program_id == kLearner && accesses > kMaxLearnerAccesses)
    throw EvalError{"your model is too large to simulate for this checkpoint: its trace has " +
                    Value::of(accesses).to_string() + " accesses, more than " +
                    Value::of(kMaxLearnerAccesses).to_string() +
                    " (make its shapes smaller, or start from the lesson's model)"};
  if (accesses > kMaxLessonAccesses)
    throw EvalError{"'" + program_id + "' is too large to simulate in a lesson: its trace has " +
                    Value::of(accesses).to_string() + " accesses, more than " +
                    Value::of(kMaxLessonAccesses).to_string() + " (use smaller shapes)"};
  // The shared pipeline: every kernel of the program in one hierarchy, outputs written back.
  predict::RunOptions options;
  if (m_cancel)
    options.wrap = [this](memory::AccessSink& next) {
      return std::make_unique<memory::CancelSink<>>(next, *m_cancel);
    };
  const predict::ProgramRun run = predict::run_program(lp->program, m, options);
  const memory::Hierarchy& h = *run.hierarchy;
  SimResult r;
  r.level_names = level_names(m);
  for (int l = 0; l <= h.level_count(); ++l) r.levels.push_back(h.counters(l));
  // The trace names tensors by their graph id (run.h's TraceOptions).
  if (const graph::Graph* g = lp->program.graph.get())
    for (size_t t = 0; t < g->tensors().size(); ++t) {
      std::vector<memory::Counters>& per = r.by_tensor[g->tensors()[t].name];
      for (int l = 0; l <= h.level_count(); ++l) per.push_back(h.counters(l, int(t)));
    }
  r.roofline = predict::roofline(m, run.flops, run.bytes, "fp32", "", {}, run.core_share);
  return m_sims[key] = std::move(r);
}

// [SECTION] Evaluation

std::vector<CheckResult> LessonSession::run_checks() {
  std::vector<CheckResult> out;
  for (const Block& b : m_lesson.blocks)
    if (b.kind == BlockKind::Check)
      for (const Check& c : b.checks) out.push_back(run_check(b, c));
  return out;
}

CheckResult LessonSession::run_check(const Block& block, const Check& check) {
  CheckResult r;
  r.check = check;
  r.step = block.step;
  if (!evaluate(block, check.lhs, r.lhs, r.error) || !evaluate(block, check.rhs, r.rhs, r.error))
    return r;
  try {
    r.pass = check_holds(r.lhs, check.op, r.rhs, check.tolerance);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

bool LessonSession::evaluate(const Block& block, const Expr& e, Value& out, std::string& error) {
  try {
    out = eval(e, context_of(block));
    return true;
  } catch (const EvalError& x) {
    error = x.message;
  } catch (const std::exception& x) {
    error = x.what();
  }
  return false;
}

Value LessonSession::eval(const Expr& e, const Context& c) {
  switch (e.kind) {
    case Expr::Kind::Number:
      return Value::of(e.number);
    case Expr::Kind::String:
    case Expr::Kind::Name:
      return Value::of(e.text);
    case Expr::Kind::List: {
      std::vector<Value> items;
      for (const Expr& a : e.args) items.push_back(eval(a, c));
      return Value::list(std::move(items));
    }
    case Expr::Kind::Negate: {
      const Value v = eval(e.args[0], c);
      if (v.kind != Value::Kind::Number) throw EvalError{"cannot negate " + v.to_string()};
      return Value::of(-v.number);
    }
    case Expr::Kind::Binary: {
      // A chain `a - b + c` folds left to right, as ((a - b) + c).
      Value acc = eval(e.args[0], c);
      for (size_t i = 0; i < e.ops.size(); ++i) {
        const char op = e.ops[i];
        const Value b = eval(e.args[i + 1], c);
        if (acc.kind != Value::Kind::Number || b.kind != Value::Kind::Number)
          throw EvalError{std::string("'") + op + "' needs numbers, not " + acc.to_string() +
                          " and " + b.to_string()};
        switch (op) {
          case '+':
            acc = Value::of(acc.number + b.number);
            break;
          case '-':
            acc = Value::of(acc.number - b.number);
            break;
          case '*':
            acc = Value::of(acc.number * b.number);
            break;
          case '/':
            if (b.number == 0)
              throw EvalError{"division by zero: " + e.args[i + 1].to_string() + " is 0 in " +
                              e.to_string()};
            acc = Value::of(acc.number / b.number);
            break;
          default:
            throw EvalError{"unknown operator"};
        }
      }
      return acc;
    }
    case Expr::Kind::Call:
      return call(e, c);
  }
  throw EvalError{"unknown expression"};
}

}  // namespace tilescope::lesson

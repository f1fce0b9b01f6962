// LessonSession::call, a check function's value by its row of the table (check_functions.cpp),
// and the CheckCall the row's function reads the session through.
#include "sim/lesson/check_call.h"
#include "sim/lesson/check_functions.h"

namespace tilescope::lesson {

using detail::EvalError;
using detail::find_function;
using detail::FunctionSpec;

Value LessonSession::call(const Expr& e, const Context& c) {
  const FunctionSpec* f = find_function(e.text);
  if (!f) throw EvalError{"unknown function '" + e.text + "'"};
  detail::CheckCall call{*this, e, c};
  return f->eval(call);
}

namespace detail {

std::string CheckCall::arg0() const {
  return e.positional() > 0 && e.args[0].kind == Expr::Kind::Name ? e.args[0].text
                                                                  : std::string();
}

Value CheckCall::arg(size_t i) { return session.eval(e.args[i], c); }

double CheckCall::num(size_t i) {
  const Value v = arg(i);
  if (v.kind != Value::Kind::Number)
    throw EvalError{e.text + "() argument " + std::to_string(i + 1) + " must be a number, not " +
                    v.to_string()};
  return v.number;
}

std::string CheckCall::str(size_t i) {
  const Value v = arg(i);
  if (v.kind != Value::Kind::String)
    throw EvalError{e.text + "() argument " + std::to_string(i + 1) + " must be a string, not " +
                    v.to_string()};
  return v.text;
}

std::string CheckCall::model_for() const { return session.model_for(e, c); }

std::string CheckCall::machine_for() const { return session.machine_for(e, c); }

std::string CheckCall::model_id() {
  if (e.positional() > 0 && e.args[0].kind == Expr::Kind::Name && is_subject(e.args[0].text)) {
    const std::string& id = e.args[0].text;
    return is_model(id) ? id : program(id)->model;
  }
  return model_for();
}

bool CheckCall::is_model(const std::string& id) const { return session.m_models.count(id) > 0; }

bool CheckCall::is_subject(const std::string& id) const { return session.is_subject(id); }

std::shared_ptr<const graph::Graph> CheckCall::model(const std::string& id) const {
  return session.model(id);
}

const graph::Graph& CheckCall::graph_of(const std::string& id) const {
  auto g = session.model(id);
  if (!g) throw EvalError{"no model '" + id + "'"};
  return *g;
}

const LessonProgram* CheckCall::program(const std::string& id) { return session.program(id); }

const SimResult& CheckCall::simulate(const std::string& program_id, const std::string& machine) {
  return session.simulate(program_id, machine);
}

const predict::Machine& CheckCall::machine(const std::string& name) const {
  return session.machine(name);
}

const std::string& CheckCall::lesson_file() const { return session.m_lesson.file; }

}  // namespace detail

}  // namespace tilescope::lesson

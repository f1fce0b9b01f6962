// What a check function reads (check_functions.cpp's rows, evaluated in check_eval.cpp and
// curriculum.cpp): one call, its block's context and the session's models, programs, simulations
// and machines. LessonSession::call, the dispatch by the table, is defined in check_call.cpp too,
// so the checker itself never needs this header.
#pragma once

#include "sim/lesson/checker.h"
#include "sim/lesson/checker_impl.h"

#include <memory>
#include <string>

namespace tilescope::lesson::detail {

// One call of a check function being evaluated: the call, its block's context and what a row's
// function may ask of the session (its models, programs, simulations and machines). The names
// in the call were validated when the lesson loaded.
struct MappedTrace;

struct CheckCall {
  LessonSession& session;
  const Expr& e;
  const LessonSession::Context& c;

  const std::string& name() const { return e.text; }
  // The first positional argument when it is a name (an op, tensor, subject or machine), else "".
  std::string arg0() const;
  // Positional argument i evaluated; as a number or a string (EvalError for another kind).
  Value arg(size_t i);
  double num(size_t i);
  std::string str(size_t i);
  // The model= keyword, else the block's model; machine= likewise.
  std::string model_for() const;
  std::string machine_for() const;
  // The model a graph function reads: its first argument when that is a subject (a model, or a
  // steps id's model), else model_for().
  std::string model_id();
  bool is_model(const std::string& id) const;
  bool is_subject(const std::string& id) const;  // a model or steps id
  std::shared_ptr<const graph::Graph> model(const std::string& id) const;
  const graph::Graph& graph_of(const std::string& id) const;  // EvalError when unknown
  const LessonProgram* program(const std::string& id);
  const SimResult& simulate(const std::string& program_id, const std::string& machine);
  const predict::Machine& machine(const std::string& name) const;
  const std::string& lesson_file() const;
  // A profiler trace (a lesson-relative path) read and mapped onto model_for() on machine_for()
  // (h200 when none is given), cached in the session (check_trace.cpp).
  const MappedTrace& trace(const std::string& file);
};

}  // namespace tilescope::lesson::detail

// The check language's functions as one table (check_functions.cpp): each row's name, argument
// kinds, group, example and help. The checker validates calls against it; the reference a lesson
// writer reads (`tilescope-cli lesson functions`) is generated from it.
#pragma once

#include <string>
#include <vector>

namespace tilescope::lesson {

// A function of the check language, as its table row describes it.
struct CheckFunctionInfo {
  std::string name, group, example, help;
  size_t min_args = 0, max_args = 0;  // positional arguments
  bool model_kw = false, machine_kw = false;
};
std::vector<CheckFunctionInfo> check_functions();
// The reference of the check language, generated from the table: each group's functions with an
// example, what it returns and the keywords it takes.
std::string check_function_reference();

namespace detail {

namespace kinds {

// What a function's positional argument must be (checked when the lesson loads).
enum ArgKind {
  kNumber,
  kString,
  kSubject,
  kOpOrSubject,
  kOp,
  kTensor,
  kMachine,
  kLevel,
  kAny,
  kSubjectList,      // [a, b, c]: model or steps ids (curriculum functions)
  kTensorOfSubject,  // a tensor of the model the previous argument (a subject) schedules
};

}  // namespace kinds

// A row of the check language's table (check_functions.cpp).
struct FunctionSpec {
  const char* name;
  std::vector<int> args;  // kinds of positional arguments
  size_t required;        // how many of them must be given
  bool model_kw;          // accepts model=
  bool machine_kw;        // accepts machine=
  const char* group;      // the reference's heading: "graph", "schedule", ...
  const char* example;    // a call as a lesson writes it
  const char* help;       // one line: what it returns
};

// The table, and its row for `name` (nullptr when there is none).
const std::vector<FunctionSpec>& functions();
const FunctionSpec* find_function(const std::string& name);

}  // namespace detail
}  // namespace tilescope::lesson

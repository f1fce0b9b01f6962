// libFuzzer harness for schedule step text (sim/schedule/transform.h): any bytes in. An input
// with a line "%%" is a model text, then step text; without one it is step text for the default
// model (x @ W.T + b, relu). The model is parsed (a GraphError ends the run: fuzz_model_parser
// covers that reader) and lowered; the steps are parsed (a ScheduleError is a correct answer) and
// applied one by one to the lowering, as `tilescope-cli schedule --apply` does, and then as text
// to the app's workbench, as a session or the Schedule view's apply does, with the fuse buttons
// the Schedule panel shows and a machine change that re-checks the history.
//
// A refusal is a correct answer when it says why and changes nothing; what was applied must print,
// its trace (History::to_text) must replay to the same steps, undo / redo must walk back to it,
// and parsed steps must print as text that parses back to the same steps. Anything else (a crash,
// another exception, a sanitizer report, a hang) is a bug.
//
// Build and run from the repository root (machines are looked up in assets/machines; new inputs
// go to the first folder, which .gitignore keeps out of the tree; make_seeds.py writes the long
// and deep seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_steps
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_steps -dict=fuzz/steps.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/steps fuzz/corpus-steps \
//       fuzz/corpus-run/seeds/steps
#include "app/core/app_state.h"
#include "app/core/fuse_options.h"
#include "app/core/workbench.h"
#include "sim/lang/parser.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/transform.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace tilescope;
using schedule::History;
using schedule::ScheduleError;
using schedule::StepResult;
using schedule::TransformStep;

namespace {

std::vector<std::string> texts(const std::vector<TransformStep>& steps) {
  std::vector<std::string> out;
  for (const TransformStep& s : steps) out.push_back(s.to_string());
  return out;
}

// Applying a step copies the program (each history entry keeps its own), so a list's cost is
// linear in its length: ~1 ms a step under ASan, for each of the five passes below. Past this many
// steps only the first are applied (a long list is slow per input, not per step); long chains
// still arrive whole, as a large model and as one fuse of thousands of ops.
constexpr size_t kMaxSteps = 1000;

// The CLI's path: typed steps on a History, checked step by step.
void apply_as_cli(const std::shared_ptr<const graph::Graph>& g,
                  const std::vector<TransformStep>& steps) {
  std::optional<History> lowered;
  try {
    lowered.emplace(pipeline::lower(g, pipeline::target(nullptr)));
  } catch (const ScheduleError& e) {
    // An op with no lowering: the workbench says so, as lower_error.
    if (std::string_view(e.what()).empty()) __builtin_trap();
    return;
  }
  History& h = *lowered;
  for (const TransformStep& s : steps) {
    const size_t before = h.size();
    const StepResult r = h.apply(s);
    if (!r.ok && (r.explanation.empty() || h.size() != before)) __builtin_trap();
  }
  const schedule::Program& p = h.current();
  (void)schedule::print_program(p);
  if (p.current >= 0 && size_t(p.current) < p.kernels.size())
    (void)schedule::emit_cpp(p.kernels[size_t(p.current)]);
  // The trace replays to the same steps.
  const std::string trace = h.to_text();
  try {
    if (pipeline::plan(g, trace, pipeline::target(nullptr)).to_text() != trace) __builtin_trap();
  } catch (const ScheduleError&) {
    __builtin_trap();
  }
  // Undo to the lowering and redo to the end: the same history.
  const size_t applied = h.size();
  while (h.undo()) {
  }
  if (h.size() != 0) __builtin_trap();
  while (h.redo()) {
  }
  if (h.size() != applied || h.to_text() != trace) __builtin_trap();
}

// The app's path: the text on the workbench, the Schedule panel's fuse buttons, a new machine.
void apply_as_app(std::string model_text, std::string_view text) {
  core::AppState state;
  state.model.text = std::move(model_text);
  if (!core::reparse_model(state)) return;
  core::update_state(state);  // lowers the graph
  core::Workbench& wb = state.workbench;
  (void)core::workbench_apply(wb, text);
  if (!wb.program()) return;
  (void)core::fuse_options(wb);
  (void)core::workbench_set_machine(wb, "tiny");
  (void)core::fuse_options(wb);
  (void)core::workbench_go_to(wb, 0);
  (void)core::workbench_go_to(wb, wb.step_texts.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string model(lang::default_model_text());
  std::string text(input);
  if (const size_t sep = input.find("%%\n");
      sep != std::string_view::npos && (sep == 0 || input[sep - 1] == '\n')) {
    model = std::string(input.substr(0, sep));
    text = std::string(input.substr(sep + 3));
  }
  std::shared_ptr<const graph::Graph> g;
  try {
    g = pipeline::parse({model, "fuzz.model"});
  } catch (const graph::GraphError&) {
    return 0;
  }
  std::vector<TransformStep> steps;
  try {
    steps = schedule::parse_steps(text);
  } catch (const ScheduleError& e) {
    if (std::string_view(e.what()).empty()) __builtin_trap();
    apply_as_app(std::move(model), text);  // the workbench says why, too
    return 0;
  }
  if (steps.size() > kMaxSteps) {
    steps.resize(kMaxSteps);
    text = schedule::steps_to_string(steps);
  }
  // Printed steps parse back to the same steps (sessions and --save store this text).
  try {
    if (texts(schedule::parse_steps(schedule::steps_to_string(steps))) != texts(steps))
      __builtin_trap();
  } catch (const ScheduleError&) {
    __builtin_trap();
  }
  apply_as_cli(g, steps);
  apply_as_app(std::move(model), text);
  return 0;
}

// The front door of tilescope's pipeline: model text → Graph → Program (the steps replayed on the
// machine's target) → the simulated run. Every front end enters here — the CLI commands, the
// workbench, the lesson checker, the CPU and GPU twins — so one model, one list of steps and one
// machine give the same program and the same numbers wherever a learner looks.
//
//   read_model("default" | "-" | PATH)          ModelText   (one loader, one error type)
//     → parse(ModelText)                        Graph       (graph::GraphError at file:line:col)
//     → lower(Graph, Target)                    History     (one kernel per op, no step yet)
//     → plan(Graph, STEPS, Target)              History     (the steps replayed, or ScheduleError)
//     → simulate(Study)                         KernelRun   (sim/predict/simulate.h: traffic, roofline)
//   size_walk(Walk, Kernel | Program, machine)  WalkSize    (a trace walk measured before it starts)
//
// A Study holds all of it for one model, steps and machine. What is below the door — the model
// language (sim/lang), lowering and the steps (sim/schedule), the hierarchy (sim/memory), the
// machine and its predictions (sim/predict) — knows nothing of this file.
#pragma once

#include "sim/graph/graph.h"
#include "sim/predict/machine.h"
#include "sim/predict/simulate.h"
#include "sim/predict/work_size.h"
#include "sim/schedule/transform.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace tilescope::pipeline {

// [SECTION] Model text

// A model's text and the name its errors are located by ("<default>", "<stdin>", a path,
// "<editor>").
struct ModelText {
  std::string text;
  std::string source;
};

// The one loader: "default" is the built-in example (lang::default_model_text), "-" reads
// `stdin_stream`, anything else is a file. A file that is missing, a directory, or larger than
// io::kMaxModelBytes (8 MiB; also from stdin) throws graph::GraphError located at the file, the
// same type a parse error throws, so a front end catches one exception for "this model".
ModelText read_model(const std::string& spec, std::istream& stdin_stream);
// What read_model accepts, for a front end's help ("Model file ('-' for stdin, …)").
inline constexpr const char* kModelSpecHelp =
    "Model file or ONNX file ('-' for stdin, 'default' for the built-in y = relu(x @ W.T + b))";
ModelText read_model(const std::string& spec);  // stdin is std::cin
// A file only ("default" and "-" are file names here): for front ends that never read stdin (the
// app, a lesson's file= model, the GPU bench). A ".onnx" file is imported (sim/import/onnx.h) and
// its model text returned; its errors are GraphErrors located at the file too.
ModelText read_model_file(const std::string& path);

// Parses the model language (both forms); graph::GraphError at source:line:col.
std::shared_ptr<const graph::Graph> parse(const ModelText& model);

// [SECTION] Schedule

// The capacities steps are checked against on `machine` (predict::target_for), or schedule::Target's
// defaults — an H200-class GPU and a recent x86 core — when no machine is named.
schedule::Target target(const predict::Machine* machine);

// The graph lowered to loop nests (one kernel per op) as the start of a history on `target`.
// Throws schedule::ScheduleError for a graph that has no loop nest (an op lowering refuses).
schedule::History lower(std::shared_ptr<const graph::Graph> graph, const schedule::Target& target);

// lower(), then the steps (the step language: ';' or newlines between steps) applied in order;
// throws schedule::ScheduleError at the first refused step, with its line:col in `steps`.
schedule::History plan(std::shared_ptr<const graph::Graph> graph, std::string_view steps,
                       const schedule::Target& target);

// [SECTION] A study: one model, its steps, one machine

struct Study {
  ModelText model;
  std::shared_ptr<const graph::Graph> graph;
  predict::Machine machine;
  schedule::History history;

  const schedule::Program& program() const { return history.current(); }
  const schedule::Kernel& kernel() const;  // the current kernel
};

// parse → plan on target(&machine). Throws what parse and plan throw.
Study study(const ModelText& model, std::string_view steps, predict::Machine machine);

// The current kernel of the study traced through its machine (predict::simulate_kernel).
predict::KernelRun simulate(const Study& s, const predict::RunOptions& options = {});

// [SECTION] Sizing: a trace walk measured before it starts
//
// A learner can write a model whose simulation takes hours or more memory than the machine has
// as easily as a small one, and a walk cannot stop with half an answer. So every front end sizes
// a walk here first and then refuses it (the CLI), holds it for the learner's "anyway" (the
// workbench) or fails the check with the reason (a lesson).

enum class Walk {
  Simulation,   // the memory hierarchy (with 3C and reuse as the options say)
  Interpreter,  // the reference interpreter: the CPU run's and --verify's check of values
  Tiles,        // the Tiles animation's walk, counting into bins
};

struct WalkSize {
  double accesses = 0;  // the trace's accesses (element accesses for the interpreter)
  std::string formula;  // the accesses over the kernel's axes (one kernel; "" for a program)
  double rate = 0;      // accesses per second measured for this walk (predict/work_size.h)
  double seconds = 0;   // accesses / rate
  uint64_t bytes = 0;   // memory the walk holds at its peak
  predict::MemoryBudget budget;  // memory there is
  bool fits() const { return bytes <= budget.bytes; }
};

struct SizeOptions {
  bool classify_misses = true;  // a simulation with 3C (predict::simulate_kernel's default)
  bool reuse_distance = false;  // and reuse distances
};

// One kernel's walk. `machine` is needed by Walk::Simulation only (its hierarchy's tables).
WalkSize size_walk(Walk walk, const schedule::Kernel& k, const predict::Machine* machine,
                   const SizeOptions& options = {});
// Every kernel of a program, one after another. The interpreter's bytes are --verify's: the
// reference evaluator's tensors and the interpreter's beside one kernel's buffers.
WalkSize size_walk(Walk walk, const schedule::Program& p, const predict::Machine* machine,
                   const SizeOptions& options = {});

}  // namespace tilescope::pipeline

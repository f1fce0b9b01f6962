// The pipeline's front door (pipeline.h): each stage is one call into the room that owns it.
#include "sim/pipeline.h"

#include "sim/import/onnx.h"
#include "sim/io/input.h"
#include "sim/lang/parser.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/trace_size.h"

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <utility>

namespace tilescope::pipeline {

// [SECTION] Model text

ModelText read_model(const std::string& spec, std::istream& stdin_stream) {
  if (spec == "default") return {std::string(lang::default_model_text()), "<default>"};
  if (spec == "-") {
    // Capped like a file: a stream that does not end is refused after 8 MiB, not held whole.
    std::string text;
    char buffer[1 << 16];
    while (stdin_stream.read(buffer, sizeof buffer) || stdin_stream.gcount() > 0) {
      text.append(buffer, size_t(stdin_stream.gcount()));
      if (text.size() > io::kMaxModelBytes)
        throw graph::GraphError(graph::SourceLoc{"<stdin>", 0, 0},
                                "the model on standard input is larger than " +
                                    std::to_string(io::kMaxModelBytes >> 20) +
                                    " MiB (the limit for a model)");
    }
    return {std::move(text), "<stdin>"};
  }
  return read_model_file(spec);
}

ModelText read_model(const std::string& spec) { return read_model(spec, std::cin); }

ModelText read_model_file(const std::string& path) {
  // An ONNX file is imported into model text (sim/import/onnx.h): from here on it is text.
  if (import::is_onnx_path(path)) return {import::import_onnx_file(path).text, path};
  // Capped: /dev/zero, a FIFO or a 4 GB log named as a model is refused after 8 MiB, not read
  // until memory runs out.
  io::TextInput in = io::read_text_input(path, io::kMaxModelBytes, "a model file");
  if (!in.ok) throw graph::GraphError(graph::SourceLoc{path, 0, 0}, in.error);
  return {std::move(in.text), path};
}

std::shared_ptr<const graph::Graph> parse(const ModelText& model) {
  return std::make_shared<const graph::Graph>(lang::parse_model(model.text, model.source));
}

// [SECTION] Schedule

schedule::Target target(const predict::Machine* machine) {
  return machine ? predict::target_for(*machine) : schedule::Target{};
}

schedule::History lower(std::shared_ptr<const graph::Graph> graph,
                        const schedule::Target& target) {
  return schedule::History(schedule::lower_graph(std::move(graph)), target);
}

schedule::History plan(std::shared_ptr<const graph::Graph> graph, std::string_view steps,
                       const schedule::Target& target) {
  return schedule::History::replay(schedule::lower_graph(std::move(graph)), steps, target);
}

// [SECTION] A study

const schedule::Kernel& Study::kernel() const {
  const schedule::Program& p = program();
  return p.kernels.at(size_t(p.current));
}

Study study(const ModelText& model, std::string_view steps, predict::Machine machine) {
  std::shared_ptr<const graph::Graph> g = parse(model);
  schedule::History h = plan(g, steps, target(&machine));
  return Study{model, std::move(g), std::move(machine), std::move(h)};
}

predict::KernelRun simulate(const Study& s, const predict::RunOptions& options) {
  return predict::simulate_kernel(s.kernel(), *s.graph, s.machine, options);
}

// [SECTION] Sizing

namespace {

double walk_rate(Walk walk, const SizeOptions& o) {
  switch (walk) {
    case Walk::Simulation:
      return predict::typical_simulation_rate(o.classify_misses, o.reuse_distance);
    case Walk::Interpreter:
      return predict::kInterpreterRate;
    case Walk::Tiles:
      // The walk alone, counting into bins: about the rate of a plain simulation.
      return predict::kSimulationRatePlain;
  }
  return predict::kSimulationRatePlain;
}

uint64_t kernel_walk_bytes(Walk walk, const schedule::Kernel& k, const predict::Machine* machine,
                           const SizeOptions& o) {
  switch (walk) {
    case Walk::Simulation:
      if (!machine) throw std::invalid_argument("size_walk: a simulation needs a machine");
      return predict::simulation_bytes(k, machine->hierarchy(), o.classify_misses,
                                       o.reuse_distance);
    case Walk::Interpreter:
      // The kernel's buffers and the interpreter's copy.
      return 2 * predict::kernel_buffer_bytes(k);
    case Walk::Tiles:
      // Bins and frames are bounded (kTileBins, kMaxTileFrames); given a machine, the walk also
      // runs through its hierarchy (counters over time), which holds its lines.
      return (64ull << 20) +
             (machine ? predict::simulation_bytes(k, machine->hierarchy(), false, false) : 0);
  }
  return 0;
}

// Memory --verify holds at its peak, from the graph's shapes: the random feeds in double and
// their float copy, the reference evaluator's double result for every tensor, the interpreter's
// float result for every tensor it produces, and one kernel's packed buffers beside them.
uint64_t verify_bytes(const schedule::Program& p) {
  double fed = 0, all = 0;
  for (const graph::Tensor& t : p.graph->tensors()) {
    const double n = double(t.numel());
    all += n;
    if (t.producer < 0) fed += n;
  }
  double widest_kernel = 0;
  for (const schedule::Kernel& k : p.kernels) {
    double elems = 0;
    for (const schedule::KernelTensor& t : k.tensors)
      elems += double(std::max<int64_t>(1, t.alloc_elems()));
    widest_kernel = std::max(widest_kernel, elems);
  }
  return uint64_t(fed * (8 + 4) + all * 8 + (all - fed) * 4 + widest_kernel * 4 * 2);
}

}  // namespace

WalkSize size_walk(Walk walk, const schedule::Kernel& k, const predict::Machine* machine,
                   const SizeOptions& options) {
  WalkSize s;
  const schedule::TraceSize t = schedule::estimate_trace_size(
      k, walk == Walk::Simulation && machine && machine->kind == "gpu");
  s.accesses = t.accesses;
  s.formula = t.formula;
  s.rate = walk_rate(walk, options);
  s.seconds = s.accesses / s.rate;
  s.bytes = kernel_walk_bytes(walk, k, machine, options);
  s.budget = predict::memory_budget();
  return s;
}

WalkSize size_walk(Walk walk, const schedule::Program& p, const predict::Machine* machine,
                   const SizeOptions& options) {
  WalkSize s;
  s.rate = walk_rate(walk, options);
  for (const schedule::Kernel& k : p.kernels) {
    s.accesses += schedule::estimate_trace_size(
                      k, walk == Walk::Simulation && machine && machine->kind == "gpu")
                      .accesses;
    // The kernels walk one after another: the peak is the largest one's (a simulation keeps one
    // hierarchy for all of them, whose tables grow with the largest footprint).
    if (walk != Walk::Interpreter)
      s.bytes = std::max(s.bytes, kernel_walk_bytes(walk, k, machine, options));
  }
  if (walk == Walk::Interpreter && p.graph) s.bytes = verify_bytes(p);
  s.seconds = s.accesses / s.rate;
  s.budget = predict::memory_budget();
  return s;
}

}  // namespace tilescope::pipeline

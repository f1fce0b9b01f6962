// The pipeline's front door (pipeline.h): each stage is one call into the room that owns it.
#include "sim/pipeline.h"

#include "sim/lang/parser.h"
#include "sim/io/input.h"
#include "sim/schedule/lower.h"

#include <iostream>
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

}  // namespace tilescope::pipeline

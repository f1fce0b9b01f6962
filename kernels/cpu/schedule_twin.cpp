// The generated half of the CPU schedule twin: the step text, the model, and the path through the
// pipeline's front door (parse, plan) and the schedule module's code generation (emit C++).
#include "kernels/cpu/schedule_twin.h"

#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/transform.h"

#include <memory>
#include <stdexcept>
#include <vector>

namespace tilescope::kernels {

std::string schedule_twin_steps(const SchedTwinTiles& tiles) {
  return "fuse(matmul0, add0, relu0); tile(j, " + std::to_string(tiles.panel_n) + "); tile(i, " +
         std::to_string(tiles.rows) + "); tile(j.i, " + std::to_string(tiles.cols) +
         "); reorder(j.o, i.o, j.i.o, k, i.i, j.i.i); unroll(i.i); vectorize(j.i.i)";
}

std::string schedule_twin_model(int m, int n, int k) {
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  return "A: [" + M + ", " + K + "]\nB: [" + K + ", " + N + "] weight\nbias: [" + N +
         "] weight\ny = relu(A @ B + bias)\n";
}

GeneratedSchedule generate_schedule(const std::string& model_text, const std::string& steps) {
  std::shared_ptr<const graph::Graph> g;
  try {
    g = pipeline::parse({model_text, "<schedule twin>"});
  } catch (const graph::GraphError& e) {
    throw std::runtime_error(std::string("the model does not parse: ") + e.what());
  }
  try {
    const schedule::History h = pipeline::plan(g, steps, pipeline::target(nullptr));
    const schedule::Program& p = h.current();
    if (p.kernels.size() != 1)
      throw std::runtime_error("the steps leave " + std::to_string(p.kernels.size()) +
                               " kernels; the JIT runs one, so fuse the whole graph first");
    const schedule::Kernel& k = p.kernels.front();
    GeneratedSchedule out;
    out.steps = h.to_text();
    out.loop_nest = schedule::print_loop_nest(k);
    out.source = schedule::emit_cpp(k);
    out.kernel = k.name;
    return out;
  } catch (const schedule::ScheduleError& e) {
    throw std::runtime_error(std::string("the schedule module rejected the steps: ") + e.what());
  }
}

}  // namespace tilescope::kernels

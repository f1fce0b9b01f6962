// The generated side of the schedule twin: the model and step text, and the CUDA source and launch
// shape that the schedule module's public API makes of them.
#include "kernels/cuda/sched_twin.h"

#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/transform.h"

#include <memory>
#include <stdexcept>

namespace tilescope::kernels::cuda {

std::string sched_twin_model_text(GemmShape s) {
  const std::string m = std::to_string(s.m), n = std::to_string(s.n), k = std::to_string(s.k);
  return "x: [" + m + ", " + k + "]\nW: [" + n + ", " + k + "] weight\nb: [" + n +
         "] weight\ny = relu(x @ W.T + b)\n";
}

std::string sched_twin_steps(const SchedTwinTiles& t) {
  const auto n = [](int v) { return std::to_string(v); };
  return "fuse(matmul0, add0, relu0); tile(i, " + n(t.block_m) + "); tile(j, " + n(t.block_n) +
         "); tile(k, " + n(t.block_k) +
         "); reorder(i.o, j.o, k.o, i.i, j.i, k.i); stage(x, shared, at=k.o); "
         "stage(W, shared, at=k.o); bind(i.o, block.y); bind(j.o, block.x); tile(i.i, " +
         n(t.thread_m) + "); tile(j.i, " + n(t.thread_n) +
         "); reorder(i.i.o, j.i.o, k.i, i.i.i, j.i.i); bind(i.i.o, thread.y); "
         "bind(j.i.o, thread.x); pad(x_shared, 1, " +
         n(t.pad) + "); pad(W_shared, 1, " + n(t.pad) + "); unroll(i.i.i); unroll(j.i.i)";
}

SchedTwinGenerated sched_twin_generate(GemmShape s, const SchedTwinTiles& t) {
  SchedTwinGenerated g;
  g.model = sched_twin_model_text(s);
  g.steps = sched_twin_steps(t);
  try {
    // A refused step throws schedule::ScheduleError (a runtime_error) naming it.
    const schedule::History h =
        pipeline::plan(pipeline::parse({g.model, "sched_twin"}), g.steps, pipeline::target(nullptr));
    for (size_t i = 0; i < h.size(); ++i) g.explanations.push_back(h.explanation(i));
    const schedule::Program& p = h.current();
    const schedule::Kernel& k = p.kernels.at(size_t(p.current));
    g.source = schedule::emit_cuda(k);
    const schedule::LaunchConfig lc = schedule::launch_config(k);
    for (int d = 0; d < 3; ++d) {
      g.launch.grid[d] = static_cast<unsigned>(lc.grid[size_t(d)]);
      g.launch.block[d] = static_cast<unsigned>(lc.block[size_t(d)]);
    }
    g.launch.dynamic_smem_bytes = static_cast<unsigned>(lc.dynamic_smem_bytes);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("the schedule twin for M=" + std::to_string(s.m) +
                             " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) +
                             " could not be generated: " + e.what());
  }
  return g;
}

}  // namespace tilescope::kernels::cuda

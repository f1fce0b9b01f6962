// The CPU schedule twin (issue #5): y = relu(A·B + bias) scheduled by transform steps, lowered and
// emitted as C++ by sim/schedule for the JIT, next to matmul_sched_twin.cpp, the same loop nest
// written by hand. One tile struct feeds both the step text and the hand-written kernel's
// constants.
#pragma once

#include "kernels/cpu/kernel_args.h"

#include <string>

namespace tilescope::kernels {

// The schedule's tile sizes (AVX-512 machine, L1d 48 KiB, L2 2 MiB):
// an 8×32 block of y is 16 zmm accumulators, fed per k step by two vector loads of B and eight
// broadcasts of A; a 256-column panel of B serves every row block of A before the next panel.
struct SchedTwinTiles {
  int panel_n = 256;  // tile(j, 256): columns of B per panel (j.o, outermost)
  int rows = 8;       // tile(i, 8): rows of y per register block (i.o; i.i unrolled)
  int cols = 32;      // tile(j.i, 32): columns per register block (j.i.o; j.i.i vectorized)
};
inline constexpr SchedTwinTiles kSchedTwinTiles{};

// The step text for `tiles`: fuse the epilogue, tile j, i and j.i, order the loops
// j.o, i.o, j.i.o, k, i.i, j.i.i, unroll i.i, vectorize j.i.i.
std::string schedule_twin_steps(const SchedTwinTiles& tiles = kSchedTwinTiles);

// The model the schedule applies to: A [m, k], B [k, n] weight, bias [n] weight,
// y = relu(A @ B + bias). Its kernel's arguments are {A, B, bias, y}, the MatMulArgs order.
std::string schedule_twin_model(int m, int n, int k);

// What the schedule module made of a model and a step text.
struct GeneratedSchedule {
  std::string steps;      // the applied steps, canonical text ("a; b; c")
  std::string loop_nest;  // print_loop_nest() of the scheduled kernel, for the learner
  std::string source;     // emit_cpp(): the translation unit the JIT compiles
  std::string kernel;     // the kernel's name ("matmul0+add0+relu0")
};

// pipeline::parse → pipeline::plan (the steps replayed) → emit_cpp. The program must end
// with a single kernel (the steps fuse the whole graph), since the JIT runs one ts_kernel.
// Throws std::runtime_error naming the step and the schedule module's reason for a refusal, or the
// model error for a bad model.
GeneratedSchedule generate_schedule(const std::string& model_text, const std::string& steps);

// The hand-written twin (matmul_sched_twin.cpp): the loop nest of schedule_twin_steps() with
// kSchedTwinTiles, for any m, n, k (partial tiles at the edges).
void matmul_sched_twin(const MatMulArgs& args);

}  // namespace tilescope::kernels

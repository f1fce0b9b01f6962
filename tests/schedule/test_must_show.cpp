// The Must-show: y = relu(x @ W.T + b) from three kernels → fuse → tile → stage both
// operands in shared memory → bind to blocks and threads, each step correct and explained.
#include "fixtures.h"

#include "sim/schedule/codegen.h"
#include "sim/schedule/loop_tree.h"

using namespace tilescope;
using namespace tilescope::schedule;

TEST_CASE("must-show: every step of the GPU schedule applies, explains itself and stays correct") {
  auto g = tsfix::linear_relu(64, 512, 1024);
  History h(lower_graph(g));
  CHECK(h.current().kernels.size() == 3);
  const auto steps = parse_steps(tsfix::kMustShowSteps);
  REQUIRE(steps.size() == 14);
  for (const auto& s : steps) {
    const StepResult r = h.apply(s);
    INFO(s.to_string(), ": ", r.explanation);
    REQUIRE(r.ok);
    CHECK(!r.explanation.empty());
  }
  const Program& p = h.current();
  REQUIRE(p.kernels.size() == 1);
  const Kernel& k = p.kernels[0];
  // Final loop order and mapping.
  std::vector<std::string> order;
  for (const auto& l : k.loops) order.push_back(l.name);
  CHECK(order ==
        std::vector<std::string>{"i.o", "j.o", "k.o", "i.i.o", "j.i.o", "k.i", "i.i.i", "j.i.i"});
  // Launch shape by hand: 64/32 = 2 row tiles (y), 512/64 = 8 column tiles (x); 8 × 16 threads;
  // shared tiles 32×16 + 64×16 floats = 1536 × 4 B.
  const LaunchConfig lc = launch_config(k);
  CHECK(lc.grid == std::array<int64_t, 3>{8, 2, 1});
  CHECK(lc.block == std::array<int64_t, 3>{16, 8, 1});
  CHECK(lc.dynamic_smem_bytes == (32 * 16 + 64 * 16) * 4);
  // Each thread keeps a 4×4 register tile of sums.
  CHECK(accumulator_bytes(build_loop_tree(k), true) == 4 * 4 * 4);
  const std::string cuda = emit_cuda(k);
  CHECK(
      cuda.find("extern \"C\" __global__ void ts_kernel(const float* __restrict__ x, const float* "
                "__restrict__ W, const float* __restrict__ b, float* __restrict__ y)") !=
      std::string::npos);
  CHECK(cuda.find("__syncthreads();") != std::string::npos);
  CHECK(cuda.find("blockIdx.y") != std::string::npos);
  CHECK(cuda.find("threadIdx.x") != std::string::npos);
  CHECK(cuda.find("float acc[16];") != std::string::npos);
}

TEST_CASE("must-show: the interpreter agrees with the reference after every step (small sizes)") {
  // Same steps on a size where the tiles do not divide (tails everywhere): 40 × 72 × 24.
  auto g = tsfix::linear_relu(40, 72, 24);
  Program p = lower_graph(g);
  CHECK(tsfix::program_error(p) < 1e-5);
  for (const auto& s : parse_steps(tsfix::kMustShowSteps)) {
    const StepResult r = apply_step(p, s);
    INFO(s.to_string(), ": ", r.explanation);
    REQUIRE(r.ok);
    p = r.program;
    CHECK(tsfix::program_error(p) < 1e-5);
  }
}

TEST_CASE("must-show: explanations quantify what changed") {
  auto g = tsfix::linear_relu(64, 512, 1024);
  Program p = tsfix::apply_all(lower_graph(g), "fuse(matmul0, add0, relu0)");
  // Fusing saves writing and reading the two 64×512 fp32 intermediates: 4 × 128 KiB.
  auto fused = tsfix::try_step(lower_graph(g), "fuse(matmul0, add0, relu0)");
  CHECK(fused.explanation.find("512 KiB") != std::string::npos);
  auto split = tsfix::try_step(p, "tile(i, 48)");
  REQUIRE(split.ok);
  // 64 = 48 + 16: the last tile has 16 of 48 iterations; 32 are skipped.
  CHECK(split.explanation.find("only 16 of 48") != std::string::npos);
  CHECK(split.explanation.find("i.o*48 + i.i < 64") != std::string::npos);
  p = tsfix::apply_all(
      p, "tile(i, 32); tile(j, 64); tile(k, 16); reorder(i.o, j.o, k.o, i.i, j.i, k.i)");
  auto st = tsfix::try_step(p, "stage(W, shared, at=k.o)");
  REQUIRE(st.ok);
  // A 64×16 tile of W = 4 KiB; without it every one of the 64·512·1024 products reads W from
  // memory; with it W is read once per tile per block: 2 row-tiles × 512 × 1024 elements.
  CHECK(st.explanation.find("64×16") != std::string::npos);
  CHECK(st.explanation.find("4 KiB") != std::string::npos);
  CHECK(st.explanation.find("33.6 M to 1.0 M") != std::string::npos);
}

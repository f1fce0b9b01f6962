// The schedule twin (issue #6): the CUDA that sim/schedule generates for the Must-show schedule
// compiles with NVRTC and launches as counted by hand (no GPU needed); on a GPU it computes what
// the plain reference evaluator does, on a size with a partial tile in every dimension, and what
// the hand-written twin computes.
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/nvrtc_runner.h"
#include "kernels/cuda/sched_twin.h"
#include "sim/graph/eval.h"
#include "sim/lang/parser.h"
#include "sim/predict/machine.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "tests/cuda/gpu_test_support.h"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using namespace tilescope;
using namespace tilescope::kernels::cuda;
using namespace tilescope::kernels::cuda::testing;

namespace {

// The bench's size, and a small one where 128, 64 and 16 divide nothing: 197 = 128 + 69,
// 93 = 64 + 29, 37 = 2·16 + 5.
constexpr GemmShape kBench{4096, 4096, 1024};
constexpr GemmShape kTails{197, 93, 37};

void check_cubin(const NvrtcCompileResult& r) {
  INFO("NVRTC log: " << r.log << " error: " << r.error);
  REQUIRE(r.ok);
  // A cubin is an ELF file: it starts with 0x7F 'E' 'L' 'F'.
  REQUIRE(r.cubin.size() > 4);
  CHECK(r.cubin[0] == 0x7F);
  CHECK(r.cubin[1] == 'E');
  CHECK(r.cubin[2] == 'L');
  CHECK(r.cubin[3] == 'F');
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("the GPU twin generates what the pipeline gives the workbench for its model and steps") {
    // Same text, same steps, the H200 as the target (as the app and `run --gpu` plan them): the
    // same kernel, so the twin's timings speak for the schedule a learner builds.
    const pipeline::Study s = pipeline::study({sched_twin_model_text(kTails), "twin.model"},
                                              sched_twin_steps(), predict::load_machine("h200"));
    const SchedTwinGenerated g = sched_twin_generate(kTails);
    CHECK(g.source == schedule::emit_cuda(s.kernel()));
    CHECK(g.explanations.size() == s.history.size());
  }

  TEST_CASE("the generated CUDA of the schedule twin compiles with NVRTC for sm_90") {
    for (const GemmShape s : {kBench, kTails}) {
      const SchedTwinGenerated g = sched_twin_generate(s);
      INFO("M=" << s.m << " N=" << s.n << " K=" << s.k << "\n" << g.source);
      // The generated-source ABI: inputs in model order, then the output.
      CHECK(g.source.find("extern \"C\" __global__ void ts_kernel(const float* __restrict__ x, "
                          "const float* __restrict__ W, const float* __restrict__ b, "
                          "float* __restrict__ y)") != std::string::npos);
      check_cubin(nvrtc_compile(g.source, "sm_90"));
    }
  }

  TEST_CASE("the generated launch shape is the one counted by hand, and the hand twin's too") {
    // 4096 columns / 64 per block = 64 blocks along x; 4096 rows / 128 = 32 along y;
    // 64 / 8 = 8 threads along x, 128 / 8 = 16 along y; shared: (128 + 64) rows × (16 + 1) floats
    // × 4 bytes = 13056 bytes.
    const SchedTwinGenerated big = sched_twin_generate(kBench);
    CHECK(big.launch.grid[0] == 64);
    CHECK(big.launch.grid[1] == 32);
    CHECK(big.launch.grid[2] == 1);
    CHECK(big.launch.block[0] == 8);
    CHECK(big.launch.block[1] == 16);
    CHECK(big.launch.block[2] == 1);
    CHECK(big.launch.dynamic_smem_bytes == 13056);
    // 93 columns → ⌈93/64⌉ = 2 blocks; 197 rows → ⌈197/128⌉ = 2; same threads and tiles.
    const SchedTwinGenerated small = sched_twin_generate(kTails);
    CHECK(small.launch.grid[0] == 2);
    CHECK(small.launch.grid[1] == 2);
    CHECK(small.launch.block[0] == 8);
    CHECK(small.launch.block[1] == 16);
    CHECK(small.launch.dynamic_smem_bytes == 13056);
    // The hand-written twin launches the same grid and block (its tiles are static shared arrays).
    for (const auto& [shape, gen] : {std::pair{kBench, big}, std::pair{kTails, small}}) {
      const LaunchConfig hand = sched_twin_hand_launch_config(shape);
      for (int d = 0; d < 3; ++d) {
        CHECK(hand.grid[d] == gen.launch.grid[d]);
        CHECK(hand.block[d] == gen.launch.block[d]);
      }
      CHECK(hand.dynamic_smem_bytes == 0);
    }
  }

  TEST_CASE(
      "every step of the twin's schedule applies, and the pads give the banks counted by hand") {
    const SchedTwinGenerated g = sched_twin_generate(kBench);
    REQUIRE(g.explanations.size() == 18);  // 16 schedule steps + unroll of the two register-tile loops
    // A warp is 8 threads along j (thread.x) × 4 along i (thread.y). Rows are 16 floats, so the 4
    // x rows a warp reads (8 rows apart = 128 floats) share a bank: 4-way; the 8 W rows (128
    // apart) too: 8-way. With 17-float rows they are 136 floats apart: x → banks 0, 8, 16, 24
    // (conflict-free); W → 8·j mod 32 takes 4 values for 8 threads: 2-way.
    const std::string& pad_x = g.explanations[14];
    const std::string& pad_w = g.explanations[15];
    CHECK(pad_x.find("conflict-free") != std::string::npos);
    CHECK(pad_x.find("before it was 4-way") != std::string::npos);
    CHECK(pad_w.find("2-way") != std::string::npos);
    CHECK(pad_w.find("before it was 8-way") != std::string::npos);
  }

  TEST_CASE("a problem smaller than a tile is refused with the step and the reason") {
    try {
      sched_twin_generate({70, 50, 33});
      FAIL("70 rows cannot hold a 128-row tile; generation should throw");
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      CHECK(what.find("tile(i, 128)") != std::string::npos);
      CHECK(what.find("70") != std::string::npos);
    }
    CHECK(sched_twin_hand_unsupported(kBench).empty());
    CHECK(sched_twin_hand_unsupported(kTails).empty());
    CHECK(sched_twin_hand_unsupported({512, 512, 512}).find("512×512×512") != std::string::npos);
  }
}

TEST_SUITE("cuda_gpu") {
  TEST_CASE("the generated schedule computes the reference at 197×93×37, and so does its twin") {
    if (!gpu_or_skip("schedule twin")) return;
    const GemmShape s = kTails;
    const graph::Graph g = lang::parse_model(sched_twin_model_text(s), "sched_twin");
    // The reference evaluator's own random inputs, rounded to the fp32 the GPU sees.
    auto feeds = graph::random_feeds(g, 2026);
    std::map<graph::TensorId, std::vector<float>> host;
    for (auto& [id, values] : feeds) {
      std::vector<float>& f = host[id];
      for (double& v : values) {
        f.push_back(static_cast<float>(v));
        v = f.back();
      }
    }
    const auto values = graph::evaluate(g, feeds);
    const graph::TensorId xid = *g.find_tensor("x"), wid = *g.find_tensor("W"),
                          bid = *g.find_tensor("b"), yid = *g.find_tensor("y");
    const std::vector<double>& want = values[size_t(yid)];
    REQUIRE(want.size() == size_t(s.m) * s.n);

    DeviceBuffer<float> x(host[xid].size()), w(host[wid].size()), b(host[bid].size()),
        y_gen(want.size()), y_hand(want.size());
    x.from_host(host[xid]);
    w.from_host(host[wid]);
    b.from_host(host[bid]);
    y_gen.poison();  // NaN: an output the kernel does not write fails the comparison
    y_hand.poison();

    const SchedTwinGenerated gen = sched_twin_generate(s);
    const NvrtcKernel jit = NvrtcKernel::compile_and_load(gen.source);
    jit.launch(gen.launch, {x.get(), w.get(), b.get()}, y_gen.get());
    sched_twin_hand_launch(s, x.get(), w.get(), b.get(), y_hand.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);

    const std::vector<float> got_gen = y_gen.to_host(), got_hand = y_hand.to_host();
    CHECK(rel_error(got_gen, want) < 1e-5);
    CHECK(rel_error(got_hand, want) < 1e-5);
    // Same algorithm, same order of fused multiply-adds: the two agree to the last bit or nearly.
    const std::vector<double> hand_d(got_hand.begin(), got_hand.end());
    CHECK(rel_error(got_gen, hand_d) < 1e-6);

    // The diagnostic variant (copies strided by blockDim) is the same function.
    y_hand.poison();
    sched_twin_hand_launch(s, x.get(), w.get(), b.get(), y_hand.get(), true);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(rel_error(y_hand.to_host(), want) < 1e-5);
  }
}

// The time model (predict/time_model.h) by hand: each term from its closed form, the tail, the
// partial overlap of issue and data stage, Little's law on DRAM, and a chain of launches. The
// recorded kernels against Nsight Compute are in tests/kernels/test_gpu_counters.cpp.
#include "sim/predict/machine.h"
#include "sim/predict/time_model.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace tilescope::predict;

namespace {

// The H200's file at a round 2 GHz, so the hand counts stay round.
Machine h200_at_2ghz() {
  Machine m = load_machine("h200");
  m.clock_hz = 2e9;
  return m;
}

// 256 threads, 64 registers, no shared memory: 4 blocks (32 warps) per SM on an H200.
KernelWork work(int64_t blocks) {
  KernelWork w;
  w.name = "k";
  w.blocks = blocks;
  w.resources = {256, 64, 0};
  return w;
}

}  // namespace

TEST_CASE("issue: FMAs / 32 plus memory instructions, 4 a cycle per SM, over the SMs") {
  const Machine m = h200_at_2ghz();
  KernelWork w = work(132 * 4);
  // 132 SMs × 4 schedulers × 1e6 cycles = 528e6 warp instructions: 1e6 cycles = 0.5 ms.
  w.fp32_fmas = 32.0 * 500e6;  // 500 M FFMA warp instructions
  w.memory_instructions = 28e6;
  const TimePrediction p = predict_time(m, w);
  REQUIRE(p.error.empty());
  CHECK(p.limiter == "issue");
  CHECK(p.seconds == doctest::Approx(0.5e-3));
  CHECK(p.tail_factor == 1.0);
  CHECK(p.clock_hz == 2e9);
  // The roofline only sees the FLOPs: 2 × 16e9 / 66.9 TFLOP/s.
  CHECK(p.bound_seconds == doctest::Approx(2 * 16e9 / 66.9e12));
  CHECK(p.summary.find("issue-bound, 500 µs") == 0);
}

TEST_CASE("data stage and issue overlap by half: the longer plus half the shorter") {
  const Machine m = h200_at_2ghz();
  KernelWork w = work(132 * 4);
  w.fp32_fmas = 32.0 * 528e6;           // issue: 1e6 cycles
  w.data_stage_wavefronts = 132 * 3e6;  // data stage: 3e6 cycles, one a cycle per SM
  const TimePrediction p = predict_time(m, w);
  CHECK(p.limiter == "data stage");
  CHECK(p.seconds == doctest::Approx((3e6 + 0.5 * 1e6) / 2e9));
  REQUIRE(p.terms.size() == 2);
  CHECK(p.terms[0].name == "issue");
  CHECK(p.terms[0].seconds == doctest::Approx(1e6 / 2e9));
  CHECK(p.terms[1].name == "data stage");
  CHECK(p.terms[1].seconds == doctest::Approx(3e6 / 2e9));
  CHECK(p.summary.find("plus 50 % of the issue's") != std::string::npos);
}

TEST_CASE("the tail: 133 blocks on 132 SMs keep one SM twice as long as the mean") {
  const Machine m = h200_at_2ghz();
  KernelWork w = work(133);
  w.fp32_fmas = 32.0 * 528e6;
  const TimePrediction p = predict_time(m, w);
  // The busiest SM runs 2 blocks where the mean is 133 / 132.
  CHECK(p.tail_factor == doctest::Approx(2.0 / (133.0 / 132.0)));
  CHECK(p.seconds == doctest::Approx(1e6 / 2e9 * 2.0 / (133.0 / 132.0)));
  CHECK(p.waves.blocks == 133);
}

TEST_CASE("DRAM: bytes over the bandwidth, or over what the warps keep in flight") {
  Machine m = h200_at_2ghz();
  m.memory.latency_ns = 500;
  KernelWork w = work(132 * 4);
  w.dram_bytes = 4.8e9;
  // No loads in flight given: the memory's 4.8 TB/s, 1 ms.
  CHECK(predict_time(m, w).seconds == doctest::Approx(1e-3));
  // 32 warps × 1 load × 128 B per SM = 4 KiB; × 132 SMs / 500 ns = 1.081 TB/s: latency-bound.
  // The time model takes the prediction under that bound (parallelism.h): a warp's round is the
  // trip, 60 ns of its own and the queue, 80 ns × ρ / (1 − ρ) — at 933.3 GB/s (ρ = 0.194) the
  // round is 579.3 ns, and 540672 B / 579.3 ns = 933.3 GB/s: 4.8 GB in 5.143 ms.
  w.loads_in_flight_per_warp = 1;
  w.bytes_per_load = 128;
  const TimePrediction p = predict_time(m, w);
  CHECK(p.limiter == "DRAM");
  CHECK(p.seconds == doctest::Approx(4.8e9 / 933.304e9).epsilon(1e-5));
  CHECK(p.summary.find("latency-bound: 32 warps × 1 load × 128 B") != std::string::npos);
  CHECK(p.summary.find("a warp's round 579 ns") != std::string::npos);
  // The roofline ignores the latency: 1 ms.
  CHECK(p.bound_seconds == doctest::Approx(1e-3));
  // A grid of 132 blocks gives each SM one block, 8 warps, whatever the occupancy allows (4):
  // 135168 B in flight; at 239.57 GB/s (ρ = 0.050) the round is 564.2 ns.
  KernelWork one = w;
  one.blocks = 132;
  CHECK(predict_time(m, one).seconds == doctest::Approx(4.8e9 / 239.5735e9).epsilon(1e-5));
  CHECK(predict_time(m, one).summary.find("240 GB/s") != std::string::npos);
  CHECK(predict_time(m, one).summary.find("a warp's round 564 ns") != std::string::npos);
}

TEST_CASE("a schedule's loads in flight: one serial iteration's global loads per warp") {
  // A GEMV as lesson 15 plans it: 128 blocks of 32 threads (one warp), k serial over 1024; each
  // warp loads x[0, k] (one 32-byte sector) and W[j, k] (four) per k.
  tilescope::schedule::Kernel k;
  k.loops = {{"i", 1, tilescope::schedule::LoopKind::BlockY},
             {"j.o", 128, tilescope::schedule::LoopKind::BlockX},
             {"j.i", 32, tilescope::schedule::LoopKind::ThreadX},
             {"k", 1024, tilescope::schedule::LoopKind::Serial}};
  tilescope::schedule::TraceSummary t;
  t.global_load_instructions = 2 * 1024 * 128;
  t.global_reads = 5 * 1024 * 128;  // sectors
  const ScheduleLoads l = schedule_loads(k, t, 128);
  CHECK(l.per_warp == 2);
  CHECK(l.bytes_per_load == 80);
  // k split 128 × 8 with the inner 8 unrolled: 16 loads go out together.
  k.loops[3] = {"k.o", 128, tilescope::schedule::LoopKind::Serial};
  k.loops.push_back({"k.i", 8, tilescope::schedule::LoopKind::Unrolled});
  CHECK(schedule_loads(k, t, 128).per_warp == 16);
  // No global loads: nothing in flight.
  CHECK(schedule_loads(k, {}, 128).per_warp == 0);
}

TEST_CASE("tensor cores at the machine's peak for the dtype") {
  const Machine m = h200_at_2ghz();
  KernelWork w = work(132 * 4);
  w.tensor_flops = 989.4e12 * 1e-3;  // 1 ms at the fp16 peak
  w.fp32_fmas = 32.0 * 528e6;        // 1e6 issue cycles at 2 GHz: 0.5 ms
  const TimePrediction p = predict_time(m, w);
  CHECK(p.limiter == "tensor");
  CHECK(p.seconds == doctest::Approx(1e-3));
  CHECK(p.terms[0].seconds == doctest::Approx(0.5e-3));
  CHECK(p.terms[1].why.find("989.4 TFLOP/s fp16 tensor peak") != std::string::npos);
}

TEST_CASE("a chain of launches adds; the limiter is the longest launch's") {
  const Machine m = h200_at_2ghz();
  KernelWork gemm = work(132 * 4);
  gemm.fp32_fmas = 32.0 * 528e6;  // 0.5 ms, issue
  KernelWork relu = work(132 * 4);
  relu.dram_bytes = 4.8e8;  // 0.1 ms, DRAM
  const TimePrediction p = predict_time(m, std::vector<KernelWork>{relu, gemm});
  CHECK(p.seconds == doctest::Approx(0.6e-3));
  CHECK(p.limiter == "issue");
  CHECK(p.summary.find("the longest of 2 launches; total 600 µs") != std::string::npos);
  const nlohmann::json j = time_prediction_json(p);
  CHECK(j["seconds"].get<double>() == doctest::Approx(0.6e-3));
  CHECK(j["limiter"] == "issue");
}

TEST_CASE("refusals: a CPU machine, a block too large, an empty grid") {
  KernelWork w = work(10);
  w.fp32_fmas = 1e6;
  CHECK(predict_time(load_machine("tiny"), w).error.find("no GPU time model") != std::string::npos);
  KernelWork big = w;
  big.resources.threads_per_block = 4096;
  CHECK_FALSE(predict_time(h200_at_2ghz(), big).error.empty());
  KernelWork none = w;
  none.blocks = 0;
  CHECK(predict_time(h200_at_2ghz(), none).error.find("no blocks") != std::string::npos);
}

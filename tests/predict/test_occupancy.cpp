// Occupancy (predict/occupancy.h): hand counts of the calculator's rules, then every kernel of the
// committed H200 counters recording against Nsight Compute's own launch metrics — theoretical
// occupancy and each block limit, exact.
#include "build_paths.h"
#include "sim/predict/machine.h"
#include "sim/predict/occupancy.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>

using namespace tilescope::predict;

TEST_CASE("occupancy by hand: SGEMM 8 on the H200 is held at 2 blocks by its registers") {
  const Machine h200 = load_machine("h200");
  // 256 threads = 8 warps at 128 registers: 128 × 32 = 4096 registers a warp (a whole number of
  // 256-register units). Each of the 4 schedulers owns 65536 / 4 = 16384: 4 warps each, 16 on
  // the SM, 2 blocks of 8 warps. Warps alone allow 64 / 8 = 8 blocks; shared memory 16640 B +
  // 1024 B reserved = 17664 B (a multiple of 128) allows 233472 / 17664 = 13.
  const Occupancy o = occupancy(h200, {256, 128, 16640});
  REQUIRE(o.error.empty());
  CHECK(o.warps_per_block == 8);
  CHECK(o.registers_per_warp == 4096);
  CHECK(o.by_registers == 2);
  CHECK(o.by_warps == 8);
  CHECK(o.by_blocks == 32);
  CHECK(o.smem_per_block_allocated == 17664);
  CHECK(o.by_smem == 13);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limiter == "registers");
  CHECK(o.warps_per_sm == 16);
  CHECK(o.occupancy == doctest::Approx(0.25));
  // At 4096³ its 128 × 128 tiles make 32 × 32 = 1024 blocks; 132 SMs × 2 = 264 a wave: 3 full
  // waves and a tail of 1024 − 792 = 232.
  const Waves w = waves(h200, o, 1024);
  CHECK(w.per_wave == 264);
  CHECK(w.full_waves == 3);
  CHECK(w.tail_blocks == 232);
  CHECK(w.waves == doctest::Approx(1024.0 / 264));
}

TEST_CASE("occupancy by hand: rounding to the register unit and ties between limits") {
  const Machine h200 = load_machine("h200");
  // 22 registers: 704 a warp, rounded up to 768; 16384 / 768 = 21 warps a scheduler, 84 an SM,
  // 10 blocks of 8 warps — but warps allow only 8 (64 / 8): warps limit, at 100 %.
  const Occupancy a = occupancy(h200, {256, 22, 0});
  CHECK(a.registers_per_warp == 768);
  CHECK(a.by_registers == 10);
  CHECK(a.blocks_per_sm == 8);
  CHECK(a.limiter == "warps");
  CHECK(a.occupancy == doctest::Approx(1.0));
  // 1024 threads at 32 registers: 1024 a warp, 16 warps a scheduler, 64 an SM = 2 blocks of 32
  // warps, and warps allow 2 too: both named.
  const Occupancy b = occupancy(h200, {1024, 32, 0});
  CHECK(b.blocks_per_sm == 2);
  CHECK(b.limiter == "warps and registers");
  // No shared memory still costs the driver's 1 KiB a block.
  CHECK(b.smem_per_block_allocated == 1024);
  CHECK(b.by_smem == 233472 / 1024);
  // 100 B of shared memory: 1124 B, rounded up to 1152 (9 × 128).
  CHECK(occupancy(h200, {128, 32, 100}).smem_per_block_allocated == 1152);
  // A smaller carve-out counts against itself: 32 KiB / 5120 B = 6 blocks.
  CHECK(occupancy(h200, {512, 56, 4096}, 32768).by_smem == 6);
}

TEST_CASE("occupancy: what cannot run says why; a CPU machine or one without limits is refused") {
  const Machine h200 = load_machine("h200");
  CHECK(occupancy(h200, {2048, 32, 0}).error.find("2048 threads cannot run") != std::string::npos);
  CHECK(occupancy(h200, {256, 300, 0}).error.find("at most 255") != std::string::npos);
  CHECK(occupancy(h200, {256, 32, 300000}).error.find("at most 232448 B") != std::string::npos);
  // 1024 threads at 255 registers: 8192 a warp × 32 warps = 262144 > 65536.
  CHECK(occupancy(h200, {1024, 255, 0}).error.find("more than the SM's 65536") !=
        std::string::npos);
  CHECK_THROWS_AS(occupancy(load_machine("tiny"), {256, 32, 0}), std::invalid_argument);
}

TEST_CASE("occupancy curves: the register curve steps down at each allocation boundary") {
  const Machine h200 = load_machine("h200");
  const auto regs = occupancy_curve(h200, {256, 32, 0}, OccupancyAxis::Registers);
  REQUIRE(!regs.empty());
  // At 256 threads: up to 32 registers 8 blocks (100 %); 40 → 1280 a warp: 12 warps a scheduler,
  // 48 an SM, 6 blocks (75 %); 64 → 2048: 8 a scheduler, 4 blocks (50 %); 128: 2 blocks (25 %).
  std::map<int64_t, int64_t> blocks;
  for (const OccupancyPoint& p : regs) blocks[p.value] = p.blocks_per_sm;
  CHECK(blocks.at(32) == 8);
  CHECK(blocks.at(40) == 6);
  CHECK(blocks.at(64) == 4);
  CHECK(blocks.at(128) == 2);
  CHECK(blocks.at(255) == 1);
  for (size_t i = 1; i < regs.size(); ++i) CHECK(regs[i].occupancy <= regs[i - 1].occupancy);
  const auto threads = occupancy_curve(h200, {0, 32, 0}, OccupancyAxis::Threads);
  CHECK(threads.size() == 32);  // 32, 64, …, 1024
  const auto smem = occupancy_curve(h200, {256, 32, 0}, OccupancyAxis::SharedMemory, 4096);
  CHECK(smem.front().blocks_per_sm == 8);
  CHECK(smem.back().blocks_per_sm == 1);
}

TEST_CASE("occupancy equals Nsight Compute's for every kernel of the H200 and H100 recordings") {
  for (const auto& [file, machine] : {std::pair{"gpu-h200-counters-2026-12-02.json", "h200"},
                                      std::pair{"gpu-h100-counters-2026-12-05.json", "h100"}}) {
    CAPTURE(file);
    std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/assets/recorded/" + file);
    REQUIRE(in);
    const nlohmann::json rec = nlohmann::json::parse(in);
    const Machine h200 = load_machine(machine);  // the machine the recording was made on
    int kernels = 0;
    std::set<std::string> names;
    for (const auto& run : rec.at("runs"))
      for (const auto& k : run.at("kernels")) {
        const auto& m = k.at("metrics");
        auto get = [&](const char* key) { return int64_t(m.at(key).get<double>()); };
        CAPTURE(k.at("name").get<std::string>());
        CAPTURE(run.at("M").get<int>());
        const KernelResources r{get("launch__block_size"), get("launch__registers_per_thread"),
                                get("launch__shared_mem_per_block_static") +
                                    get("launch__shared_mem_per_block_dynamic")};
        // ncu's block limits at the carve-out the driver chose for the launch.
        const Occupancy at_launch = occupancy(h200, r, get("launch__shared_mem_config_size"));
        REQUIRE(at_launch.error.empty());
        CHECK(at_launch.by_registers == get("launch__occupancy_limit_registers"));
        CHECK(at_launch.by_warps == get("launch__occupancy_limit_warps"));
        CHECK(at_launch.by_blocks == get("launch__occupancy_limit_blocks"));
        CHECK(at_launch.by_smem == get("launch__occupancy_limit_shared_mem"));
        CHECK(at_launch.smem_per_block_allocated == get("launch__shared_mem_per_block_allocated"));
        // Theoretical occupancy, exact — and the same at the SM's largest carve-out, which is what
        // tilescope predicts with before a launch (the driver's choice never lowers it).
        const double ncu = m.at("sm__maximum_warps_per_active_cycle_pct").get<double>();
        CHECK(100 * at_launch.occupancy == doctest::Approx(ncu).epsilon(1e-9));
        const Occupancy predicted = occupancy(h200, r);
        CHECK(100 * predicted.occupancy == doctest::Approx(ncu).epsilon(1e-9));
        CHECK(
            waves(h200, predicted, get("launch__grid_size")).waves ==
            doctest::Approx(m.at("launch__waves_per_multiprocessor").get<double>()).epsilon(0.01));
        names.insert(k.at("name").get<std::string>());
        ++kernels;
      }
    CHECK(kernels >= 40);       // 32 runs, the unfused epilogues three kernels each
    CHECK(names.size() >= 12);  // cuBLAS's two, SGEMM 1–8, HGEMM 2 twice, bias_add, relu
  }
}

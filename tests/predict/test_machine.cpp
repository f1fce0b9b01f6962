// Machine files: presets load, units parse, sysfs is read (from a fake tree), errors carry
// file:line, and geometry or counts out of range are refused before they reach the simulator.
#include <doctest/doctest.h>

#include "sim/predict/machine.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::predict;
namespace fs = std::filesystem;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_machine(text, "m.machine");
  } catch (const MachineError& e) {
    return e.what();
  }
  return "no error";
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}
}  // namespace

TEST_CASE("units: sizes, bandwidths, rates, clocks, latencies") {
  CHECK(parse_quantity("48 KiB", Quantity::Bytes) == 48 * 1024);
  CHECK(parse_quantity("48K", Quantity::Bytes) == 48 * 1024);  // sysfs spelling
  CHECK(parse_quantity("2 MiB", Quantity::Bytes) == 2 * 1024 * 1024);
  CHECK(parse_quantity("80 GB", Quantity::Bytes) == 80e9);
  CHECK(parse_quantity("3.35 TB/s", Quantity::Bandwidth) == doctest::Approx(3.35e12));
  CHECK(parse_quantity("989.4 TFLOP/s", Quantity::Rate) == doctest::Approx(989.4e12));
  CHECK(parse_quantity("1.98 GHz", Quantity::Frequency) == doctest::Approx(1.98e9));
  CHECK(parse_latency("4 cycles") == std::pair{4.0, 0.0});
  CHECK(parse_latency("80 ns") == std::pair{0.0, 80.0});
  CHECK_THROWS_AS(parse_quantity("48 furlongs", Quantity::Bytes), std::invalid_argument);
}

TEST_CASE("every preset in assets/machines loads and describes a usable hierarchy") {
  for (const char* name : {"tiny", "h100", "h200", "a100", "rtx4090"}) {
    CAPTURE(name);
    Machine m = load_machine(name);
    CHECK(m.name == name);
    CHECK(!m.levels.empty());
    CHECK(m.hierarchy().check() == "");
    CHECK(m.peak("fp32", m.kind == "gpu" ? "simt" : "simd") > 0);
  }
  Machine h100 = load_machine("h100");
  CHECK(h100.cores == 132);
  CHECK(h100.levels[1].size_bytes == 50ull * 1024 * 1024);
  CHECK(h100.memory.bandwidth_bytes_per_s == doctest::Approx(3.35e12));
  REQUIRE(h100.scratchpad.has_value());
  CHECK(h100.scratchpad->banks == 32);
  // Datasheet consistency: fp32 peak = SMs x 128 lanes x 2 flops x clock.
  CHECK(h100.peak("fp32", "simt") == doctest::Approx(132 * 128 * 2 * h100.clock_hz).epsilon(0.01));
  Machine h200 = load_machine("h200");
  CHECK(h200.memory.bandwidth_bytes_per_s == doctest::Approx(4.8e12));
}

TEST_CASE("the tiny teaching machine misses on a 16x16 fp32 GEMM") {
  // Three 16x16 fp32 matrices are 3 KiB; the tiny L1 holds 1 KiB.
  Machine m = load_machine("tiny");
  CHECK(m.levels[0].size_bytes == 1024);
  CHECK(m.levels[0].line_bytes == 64);
  CHECK(3 * 16 * 16 * 4 > m.levels[0].size_bytes);
}

TEST_CASE("caches = sysfs reads a cache directory, and sections adjust its levels") {
  fs::path root = fs::temp_directory_path() / "tilescope_fake_sysfs";
  fs::remove_all(root);
  auto index = [&](int i, const char* level, const char* type, const char* size, const char* ways) {
    fs::path d = root / "cache" / ("index" + std::to_string(i));
    put(d / "level", level);
    put(d / "type", type);
    put(d / "size", size);
    put(d / "ways_of_associativity", ways);
    put(d / "coherency_line_size", "64");
    put(d / "shared_cpu_list", "0-1");
  };
  index(0, "1", "Data", "48K", "12");
  index(1, "1", "Instruction", "32K", "8");
  index(2, "2", "Unified", "2048K", "16");
  index(3, "3", "Unified", "266240K", "20");
  put(root / "cpuinfo",
      "processor\t: 0\ncpu MHz\t\t: 2000.000\nflags\t\t: fpu avx2 avx512f\nprocessor\t: 1\n");
  SysfsPaths sys{(root / "cache").string(), (root / "cpuinfo").string(), "/nonexistent"};
  Machine m = parse_machine(
      "name = host\ncaches = sysfs\ncores = sysfs\nclock = cpuinfo\nfma_units = 2\n"
      "peak fp32 simd = cpuinfo\n[level L2]\nreplacement = plru\n",
      "host.machine", sys);
  REQUIRE(m.levels.size() == 3);  // the instruction cache is left out
  CHECK(m.levels[0].size_bytes == 48 * 1024);
  CHECK(m.levels[0].ways == 12);
  CHECK(m.levels[2].size_bytes == 260ull * 1024 * 1024);
  CHECK(m.levels[2].shared_by == 2);
  CHECK(m.levels[1].replacement == tilescope::memory::Replacement::TreePLRU);
  // 2 cores x 2 GHz x 16 lanes x 2 (FMA) x 2 units = 256 GFLOP/s
  CHECK(m.peak("fp32", "simd") == doctest::Approx(256e9));
  CHECK_THROWS_WITH_AS(
      parse_machine("name = h\ncaches = sysfs\n[level L9]\nways = 2\n", "h.machine", sys),
      doctest::Contains("h.machine:3: error: level L9 is not among"), MachineError);
  fs::remove_all(root);
}

TEST_CASE("machine file errors name file and line") {
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\nline = 64 B\nways = 2\nsize = 2 KiB\n")
            .rfind("m.machine:6: error: 'size' is already set on line 3", 0) == 0);
  CHECK(error_of("name = x\n[level L1]\nsize = 12 parsecs\nways = 2\n")
            .rfind("m.machine:3: error: size: unknown unit 'parsecs'", 0) == 0);
  CHECK(error_of("name = x\n\n[level L1]\nsize = 1 KiB\nways = 2\ncolour = blue\n")
            .rfind("m.machine:6: error: unknown key 'colour'", 0) == 0);
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\nways = 3\n")
            .rfind("m.machine:2: error: cache level L1: 16 lines do not divide", 0) == 0);
  CHECK(error_of("name = x\n[level L1\n").rfind("m.machine:2: error: a section header", 0) == 0);
  CHECK(error_of("name = x\nthis line has no equals\n").rfind("m.machine:2: error: expected", 0) ==
        0);
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\nways = 2\nreplacement = mru\n")
            .rfind("m.machine:5: error: replacement 'mru'", 0) == 0);
  CHECK(error_of("[level L1]\nsize = 1 KiB\nways = 2\n")
            .rfind("m.machine:1: error: the machine has no 'name", 0) == 0);
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\n")
            .rfind("m.machine:2: error: level L1 has no 'ways", 0) == 0);
}

TEST_CASE("an unknown machine name lists the presets") {
  CHECK_THROWS_WITH_AS(load_machine("no-such-machine"), doctest::Contains("presets: a100"),
                       MachineError);
}

TEST_CASE("counts and sizes out of range are errors, not wrapped integers") {
  const std::string head = "name = x\n[level L1]\nsize = 1 KiB\n";
  // 2^32 ways used to wrap to 0, which means fully associative.
  CHECK(error_of(head + "ways = 4294967296\n")
            .find("m.machine:4: error: ways = 4294967296 is more") == 0);
  CHECK(error_of(head + "ways = 2\nline = 64.5 B\n")
            .find("m.machine:5: error: line must be a whole") == 0);
  CHECK(error_of(head + "ways = 2\nline = 8589934592 B\n").find("m.machine:5: error: line = ") ==
        0);
  CHECK(error_of(head + "ways = 2\nline = 1e20 B\n").find("is more than the largest supported") !=
        std::string::npos);
  CHECK(error_of("name = x\ncores = 1e300\n[level L1]\nsize = 1 KiB\nways = 2\n")
            .find("m.machine:2: error: cores") == 0);
  CHECK(error_of("name = x\nclock = inf GHz\n[level L1]\nsize = 1 KiB\nways = 2\n")
            .find("m.machine:2: error: clock") == 0);
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\nways = 2\nseed = 2.5\n")
            .find("m.machine:5: error: seed must be a whole number") == 0);
}

TEST_CASE("geometry that would take gigabytes is refused at once") {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  // 256 MiB of 1-byte lines: 2^28 lines, ~32 B of simulator state each = 8 GiB.
  const std::string huge = error_of("name = x\n[level L1]\nsize = 256 MiB\nline = 1 B\nways = 8\n");
  CHECK(huge.find("268435456 lines") != std::string::npos);
  CHECK(huge.find("limit of 8388608 lines") != std::string::npos);
  // 2,000 levels: refused when the ninth section is seen.
  std::string many = "name = x\n";
  for (int i = 0; i < 2000; ++i)
    many += "[level L" + std::to_string(i) + "]\nsize = 1 KiB\nways = 2\n";
  CHECK(error_of(many).find("m.machine:26: error: more than 8 [level] sections") == 0);
  CHECK(error_of("name = x\n[level L1]\nsize = 1 KiB\nways = 2\n[scratchpad s]\nsize = 1 KiB\n"
                 "banks = 100000\n")
            .find("m.machine:7: error: banks") == 0);
  CHECK(clock::now() - start < std::chrono::seconds(2));
}

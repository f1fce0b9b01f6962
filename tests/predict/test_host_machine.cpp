// The host machine on computers that hide their caches: sysfs, then CPUID, then a labelled
// default; and machine files that are not files (endless streams, folders).
#include "build_paths.h"
#include <doctest/doctest.h>

#include "sim/predict/machine.h"
#include "tests/support/run_command.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilescope::predict;
namespace fs = std::filesystem;
using tilescope::test::scratch_dir;

namespace {

// A root that stands for `/` with nothing in it: no /sys, no /proc, as a locked-down container.
SysfsPaths empty_root(bool cpuid) {
  const fs::path root = scratch_dir() / "empty-root";
  fs::create_directories(root);
  SysfsPaths p;
  p.cache_dir = (root / "sys/devices/system/cpu/cpu0/cache").string();
  p.cpuinfo = (root / "proc/cpuinfo").string();
  p.meminfo = (root / "proc/meminfo").string();
  p.use_cpuid = cpuid;
  return p;
}

std::string host_text() {
  std::ifstream in(std::string(TILESCOPE_SOURCE_DIR) + "/assets/machines/host.machine");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("no sysfs and no CPUID: the host machine loads with the generic default, labelled") {
  const Machine m = parse_machine(host_text(), "host.machine", empty_root(false));
  // The default written in read_host_caches' contract: 32 KiB, 1 MiB, 8 MiB with 64 B lines.
  REQUIRE(m.levels.size() == 3);
  CHECK(m.levels[0].size_bytes == 32 * 1024);
  CHECK(m.levels[1].size_bytes == 1024 * 1024);
  CHECK(m.levels[2].size_bytes == 8 * 1024 * 1024);
  for (const auto& l : m.levels) CHECK(l.line_bytes == 64);
  REQUIRE(!m.notes.empty());
  CHECK(m.notes[0].find("caches: generic default") == 0);
  CHECK(m.notes[0].find("not this computer's") != std::string::npos);
  // The clock and the memory size were not readable either, and say so.
  bool clock_note = false, memory_note = false;
  for (const auto& n : m.notes) {
    clock_note |= n.find("clock: assumed 2.0 GHz") == 0;
    memory_note |= n.find("memory size:") == 0;
  }
  CHECK(clock_note);
  CHECK(memory_note);
  CHECK(m.clock_hz == 2.0e9);
  CHECK(m.peak("fp32", "simd") > 0);
  CHECK(m.hierarchy().check() == "");
}

TEST_CASE("no sysfs: CPUID (through glibc's sysconf) answers where the CPU gives it") {
  const HostCaches c = read_host_caches(empty_root(true));
  const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (l1 > 0) {
    CHECK(c.source.find("CPUID") == 0);
    REQUIRE(!c.levels.empty());
    CHECK(c.levels[0].size_bytes == static_cast<uint64_t>(l1));
    CHECK(c.levels[0].line_bytes == static_cast<uint32_t>(sysconf(_SC_LEVEL1_DCACHE_LINESIZE)));
  } else {
    MESSAGE("this C library gives no cache sizes: the generic default is the answer");
    CHECK(c.source.find("generic default") == 0);
  }
  // Either way the source names why sysfs was not used.
  CHECK(c.source.find("no such directory") != std::string::npos);
}

TEST_CASE("a fake sysfs tree is read first and named as the source") {
  const fs::path root = scratch_dir() / "fake-sysfs";
  const fs::path d = root / "index0";
  fs::create_directories(d);
  auto put = [&](const char* name, const char* v) { std::ofstream(d / name) << v << "\n"; };
  put("level", "1");
  put("type", "Data");
  put("size", "16K");
  put("ways_of_associativity", "4");
  put("coherency_line_size", "64");
  put("shared_cpu_list", "0");
  SysfsPaths p = empty_root(true);
  p.cache_dir = root.string();
  const HostCaches c = read_host_caches(p);
  CHECK(c.source == "sysfs (" + root.string() + ")");
  REQUIRE(c.levels.size() == 1);
  CHECK(c.levels[0].size_bytes == 16 * 1024);
  CHECK(c.levels[0].ways == 4);
}

TEST_CASE("TILESCOPE_SYSFS_ROOT redirects every default path") {
  setenv("TILESCOPE_SYSFS_ROOT", "/nowhere", 1);
  const SysfsPaths p;
  unsetenv("TILESCOPE_SYSFS_ROOT");
  CHECK(p.cache_dir == "/nowhere/sys/devices/system/cpu/cpu0/cache");
  CHECK(p.cpuinfo == "/nowhere/proc/cpuinfo");
  CHECK(p.meminfo == "/nowhere/proc/meminfo");
  CHECK(SysfsPaths{}.cpuinfo == "/proc/cpuinfo");
}

TEST_CASE("the CLI says which source the host machine's caches came from") {
  // A small GEMM: the line under test is printed before any simulation, which should be short
  // (the suite also runs under ASan).
  const auto model = tilescope::test::write_scratch_file(
      "small.model", "x: [8, 8]\nW: [8, 8] weight\ny = x @ W.T\n");
  const auto r = tilescope::test::run_command(
      "TILESCOPE_SYSFS_ROOT=" + (scratch_dir() / "empty-root").string() +
      " TILESCOPE_NO_CPUID=1 " TILESCOPE_CLI_PATH " simulate " + model.string() +
      " --machine host");
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK(r.out.find("caches: generic default") != std::string::npos);
}

TEST_CASE("an endless stream as a machine file is refused with the limit") {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  CHECK_THROWS_WITH_AS(load_machine_file("/dev/zero"), doctest::Contains("more than 1 MiB"),
                       MachineError);
  CHECK_THROWS_WITH_AS(load_machine_file("/"), doctest::Contains("is a directory"), MachineError);
  CHECK(clock::now() - start < std::chrono::seconds(2));
}

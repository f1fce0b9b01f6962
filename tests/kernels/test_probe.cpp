// `tilescope-cli probe`: a quick run writes a machine file that loads, with a bandwidth and a
// strided-line time for every cache level sysfs reports and for DRAM.
#include <doctest/doctest.h>

#include "sim/predict/machine.h"
#include "tests/support/run_command.h"

#include <unistd.h>

#include <filesystem>

using tilescope::test::run_cli;

TEST_CASE("probe --quick writes a loadable machine with every level measured") {
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("tilescope-probe-" + std::to_string(getpid()) + ".machine"))
                              .string();
  const auto r = run_cli("probe --quick --out " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("wrote " + out) != std::string::npos);
  const tilescope::predict::Machine m = tilescope::predict::load_machine_file(out);
  const auto sysfs = tilescope::predict::read_host_caches().levels;
  REQUIRE(m.levels.size() == sysfs.size());
  for (const auto& level : m.levels) {
    CHECK(level.bandwidth_bytes_per_s > 0);
    REQUIRE(m.strided_line_s.count(level.name) == 1);
    CHECK(m.strided_line_s.at(level.name) > 0);
  }
  CHECK(m.memory.bandwidth_bytes_per_s > 0);
  CHECK(m.strided_line_s.count(m.memory.name) == 1);
  CHECK(m.peak("fp32", "simd") > 0);
  std::filesystem::remove(out);

  // A directory that cannot exist (its parent is a file), even for root: refused before probing.
  const auto bad = run_cli("probe --quick --out " + out + ".file/y.machine", "touch " + out +
                                                                                 ".file &&");
  CHECK(bad.code == 1);
  CHECK(bad.out.find("cannot write " + out + ".file/y.machine") != std::string::npos);
  CHECK(bad.out.find("probing") == std::string::npos);
  std::filesystem::remove(out + ".file");
}

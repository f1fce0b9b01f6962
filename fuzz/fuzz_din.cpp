// libFuzzer harness for Dinero din traces: any bytes in; a TraceError is a correct answer, and
// every access read must go through a small three-level hierarchy without trouble.
//
// Build and run (new inputs go to the first folder, which .gitignore keeps out of the tree;
// make_seeds.py writes the long seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_din
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_din -dict=fuzz/din.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/din fuzz/corpus-din \
//       fuzz/corpus-run/seeds/din
#include "sim/memory/din.h"
#include "sim/memory/hierarchy.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

using namespace tilescope::memory;

namespace {

HierarchyConfig small_machine() {
  HierarchyConfig c;
  CacheConfig l1;
  l1.name = "L1";
  l1.size_bytes = 1024;
  l1.ways = 2;
  CacheConfig l2 = l1;
  l2.name = "L2";
  l2.size_bytes = 4096;
  l2.ways = 4;
  l2.sector_bytes = 32;
  CacheConfig l3 = l1;
  l3.name = "L3";
  l3.size_bytes = 16384;
  l3.ways = 0;  // fully associative
  l3.inclusion = Inclusion::Inclusive;
  c.levels = {l1, l2, l3};
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  HierarchyOptions options;
  options.classify_misses = size % 2 == 1;  // the 3C shadow caches see odd inputs
  Hierarchy h(small_machine(), options);
  try {
    DinOptions din;
    din.batch = 1 + size % 7;
    const uint64_t n = read_din(in, "fuzz.din", h, din);
    h.finish();
    if (n > size) __builtin_trap();  // at least one byte a line
  } catch (const TraceError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  return 0;
}

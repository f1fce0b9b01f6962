// libFuzzer harness for machine files: any bytes in; a MachineError is a correct answer, and a
// machine that parses must build a hierarchy and simulate a short trace without trouble.
//
// Build and run (new inputs go to the first folder, which .gitignore keeps out of the tree;
// make_seeds.py writes the long seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_machine
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_machine -dict=fuzz/machine.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/machine fuzz/corpus-machine \
//       fuzz/corpus-run/seeds/machine
#include "sim/memory/hierarchy.h"
#include "sim/predict/machine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using namespace tilescope;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // `caches = host` must not depend on the fuzzing machine: an empty root, no CPUID, so the
  // labelled generic default answers every time.
  predict::SysfsPaths sys;
  sys.cache_dir = "/nonexistent/cache";
  sys.cpuinfo = "/nonexistent/cpuinfo";
  sys.meminfo = "/nonexistent/meminfo";
  sys.use_cpuid = false;
  try {
    const predict::Machine m = predict::parse_machine(text, "fuzz.machine", sys);
    const memory::HierarchyConfig config = m.hierarchy();
    if (!config.check().empty()) __builtin_trap();  // the parser promised a usable hierarchy
    uint64_t lines = 0;
    for (const auto& l : config.levels) lines += l.lines();
    if (lines > (uint64_t{1} << 16)) return 0;  // legal, but slow to build per input
    memory::Hierarchy h(config);
    for (uint64_t i = 0; i < 64; ++i) {
      memory::Access a;
      a.addr = i * 4096 + (i % 7) * 60;
      a.size = static_cast<uint32_t>(4 << (i % 4));
      a.kind = i % 3 ? memory::AccessKind::Read : memory::AccessKind::Write;
      h.access(a);
    }
    h.finish();
  } catch (const predict::MachineError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  return 0;
}

// libFuzzer harness for profiler traces (sim/import/trace.h): any bytes in as a Chrome trace. A
// GraphError is a correct answer; a trace that reads is mapped onto a small model, and its shares
// must stay shares.
//
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_trace
//   build/fuzz/fuzz/fuzz_trace -dict=fuzz/trace.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/trace fuzz/corpus-trace
// (scripts/fuzz.sh 600 fuzz_trace does all of it.)
#include "sim/graph/graph.h"
#include "sim/import/trace.h"
#include "sim/lang/parser.h"
#include "sim/predict/machine.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

constexpr const char* kModel =
    "x: [1, 3, 8, 8]\nw: [4, 3, 3, 3] weight\nW: [10, 64] weight\nb: [10] weight\n"
    "c = conv2d(x, w, padding=1)\nr = relu(c)\np = max_pool2d(r, kernel_size=2, stride=2)\n"
    "f = flatten(p, 1)\ny = f @ W.T + b\n";

const tilescope::predict::Machine& machine() {
  static const tilescope::predict::Machine m = tilescope::predict::parse_machine(
      "name = fuzz\nkind = gpu\ncores = 2\npeak fp32 simt = 1 TFLOP/s\n"
      "[level L2]\nsize = 1 MiB\nline = 128 B\nways = 16\n[memory HBM]\nbandwidth = 1 TB/s\n",
      "fuzz.machine");
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tilescope::graph::Graph g = tilescope::lang::parse_model(kModel, "fuzz.model");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto trace = tilescope::import::read_profiler_trace(text, "fuzz.json");
    const auto m = tilescope::import::map_trace(g, kModel, trace, machine());
    if (m.mapped_us > m.total_us * (1 + 1e-9) + 1e-9 && m.total_us >= 0) __builtin_trap();
    for (const auto& k : trace.kernels)
      if (k.op >= int(trace.ops.size())) __builtin_trap();
  } catch (const tilescope::graph::GraphError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
  }
  return 0;
}

// libFuzzer harness for the ONNX importer (sim/import/onnx.h): any bytes in. A GraphError is a
// correct answer; a model that imports must come out as model text the language parses.
//
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_onnx
//   build/fuzz/fuzz/fuzz_onnx -dict=fuzz/onnx.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/onnx fuzz/corpus-onnx
// (scripts/fuzz.sh 600 fuzz_onnx does all of it.)
#include "sim/graph/graph.h"
#include "sim/import/onnx.h"
#include "sim/lang/parser.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string text;
  try {
    text = tilescope::import::import_onnx(bytes, "fuzz.onnx").text;
  } catch (const tilescope::graph::GraphError& e) {
    if (std::string(e.what()).empty()) __builtin_trap();
    return 0;
  }
  // What the importer writes, the language reads: a parse error here is an importer bug.
  try {
    tilescope::lang::parse_model(text, "fuzz.onnx");
  } catch (const tilescope::graph::GraphError&) {
    __builtin_trap();
  }
  return 0;
}

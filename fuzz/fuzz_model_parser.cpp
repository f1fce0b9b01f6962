// libFuzzer harness for the model language: any bytes in; a GraphError is a correct answer,
// anything else (a crash, another exception, a sanitizer report, a hang) is a bug.
//
// Build and run (new inputs go to the first folder, which .gitignore keeps out of the tree;
// make_seeds.py writes the deep-nesting and long-chain seeds; scripts/fuzz.sh does all of it):
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_model_parser
//   python3 fuzz/make_seeds.py
//   build/fuzz/fuzz/fuzz_model_parser -dict=fuzz/model.dict -max_len=65536 -max_total_time=600 \
//       -timeout=10 -rss_limit_mb=4096 fuzz/corpus-run/model fuzz/corpus \
//       fuzz/corpus-run/seeds/model
#include "sim/graph/autodiff.h"
#include "sim/lang/parser.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

using tilescope::graph::Graph;
using tilescope::graph::GraphError;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    Graph g = tilescope::lang::parse_model(text, "fuzz.model");
    // What the CLI and the app do next with a parsed model: cost every op, name every shape.
    int64_t flops = 0;
    for (size_t i = 0; i < g.ops().size(); ++i) {
      flops += g.op_cost(static_cast<int>(i)).flops;
    }
    for (const auto& t : g.tensors()) {
      if (tilescope::graph::shape_to_string(t.shape).empty()) __builtin_trap();
    }
    if (g.total_cost().flops != flops) __builtin_trap();  // the two sums must agree
    // `tilescope-cli graph --train` goes on to build the training graph of the same model.
    tilescope::graph::TrainingOptions options;
    options.loss =
        size % 2 ? tilescope::graph::LossKind::CrossEntropy : tilescope::graph::LossKind::MSE;
    Graph training = tilescope::graph::build_training_graph(g, options);
    (void)training.total_cost();
  } catch (const GraphError& e) {
    // The message must be usable: non-empty and formatted (this reads every byte of it).
    std::string message = e.what();
    if (message.empty() || e.message().empty()) __builtin_trap();
  }
  return 0;
}

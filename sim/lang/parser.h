// The model language: declarations + PyTorch-style expressions, or an nn.Sequential-style list, into a Graph.
//
// Form 1 (expressions):           Form 2 (sequential):
//   x: [64, 1024]                   input [1, 3, 224, 224]
//   W: [512, 1024] weight           Conv2d(3, 16, kernel_size=3, stride=1, padding=1)
//   b: [512] weight                 ReLU()
//   y = relu(x @ W.T + b)           Flatten()
//                                   Linear(in_features=16*224*224, out_features=10)
// '#' starts a comment. Errors throw graph::GraphError with file:line:col and a caret excerpt;
// an unknown name suggests the closest known one.
#pragma once

#include "sim/graph/graph.h"

#include <string>
#include <string_view>

namespace tilescope::lang {

// Parses a whole model. `file` is used in error locations only. Front ends enter through
// sim/pipeline.h (read_model, parse), which reads files with a size cap and calls this.
graph::Graph parse_model(std::string_view text, const std::string& file = "<model>");

// The default example the app and the CLI open with: y = relu(x @ W.T + b).
std::string_view default_model_text();

}  // namespace tilescope::lang

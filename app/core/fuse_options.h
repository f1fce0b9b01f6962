// The fusions the Schedule panel offers for the current kernel: the ops that consume its output
// (each alone, and the whole chain of single consumers as one epilogue) and the ops that produce
// its inputs, each tried on the current program against the machine's target, so the panel shows
// the legal ones as buttons and the others with the reason the transform gives.
//
// Pure C++ (no ImGui): the view draws the list; tests check it without a display.
#pragma once

#include "app/core/workbench.h"

#include <string>
#include <vector>

namespace tilescope::core {

struct FuseOption {
  std::string step;   // "fuse(matmul0, add0, relu0)"
  std::string label;  // the ops it brings in: "add0, relu0"
  bool legal = false;
  std::string reason;  // the refusal when not legal (the transform's own words)
};

// Empty when there is no kernel. The chain comes first, then each consumer, then each producer;
// no step is listed twice.
std::vector<FuseOption> fuse_options(const Workbench& wb);

}  // namespace tilescope::core

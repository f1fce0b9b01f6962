// The registry of numbered CPU kernel versions: number, name, what changed since the previous
// version, and the function. The bench runner and the tests iterate these lists.
#pragma once

#include "kernels/cpu/conv_versions.h"
#include "kernels/cpu/elementwise_versions.h"
#include "kernels/cpu/matmul_versions.h"

#include <string>
#include <vector>

namespace tilescope::kernels {

template <typename Fn>
struct KernelVersion {
  int number;
  std::string name;
  std::string changed;  // since the previous number; the file header tells the longer story
  Fn fn;
  bool multithreaded = false;
};

const std::vector<KernelVersion<MatMulFn>>& matmul_versions();
const std::vector<KernelVersion<ConvFn>>& conv_versions();
const std::vector<KernelVersion<BiasReluFn>>& elementwise_versions();

}  // namespace tilescope::kernels

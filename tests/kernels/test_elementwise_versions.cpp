// The bias+ReLU chain: Eigen, unfused and fused versions equal a plain loop, and fused == unfused.
#include "kernel_test_util.h"
#include "kernels/cpu/versions.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace tilescope::kernels;
using namespace tilescope::kernels::test;

TEST_CASE("every bias+ReLU version matches the plain loop, and fused equals unfused exactly") {
  const int shapes[][2] = {{1, 1}, {17, 33}, {100, 3}, {3, 100}};
  for (const auto& shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const std::size_t count = std::size_t(rows) * cols;
    const auto x = random_values(count, 5);
    const auto bias = random_values(cols, 6);
    std::vector<double> expected(count);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        expected[i * cols + j] = std::max(double(x[i * cols + j] + bias[j]), 0.0);
    std::vector<std::vector<float>> outputs;
    for (const auto& v : elementwise_versions()) {
      CAPTURE(v.name);
      auto tmp = poisoned(count), y = poisoned(count);
      v.fn(BiasReluArgs{x.data(), bias.data(), tmp.data(), y.data(), rows, cols});
      CHECK(max_scaled_error(y, expected) == 0.0);  // one fp32 add, then max: exact
      outputs.push_back(y);
    }
    CHECK(outputs[2] == outputs[1]);
  }
}

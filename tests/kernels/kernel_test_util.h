// Helpers for the kernel tests: seeded random tensors, NaN-poisoned outputs, and an error norm.
// The references themselves are written out in each test as plain double-precision loops.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tilescope::kernels::test {

// Uniform values in [-1, 1) so ReLU clips about half of every output.
inline std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::vector<float> v(count);
  std::uint32_t state = seed * 747796405u + 2891336453u;
  for (auto& x : v) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
  }
  return v;
}

inline std::vector<float> poisoned(std::size_t count) {
  return std::vector<float>(count, std::numeric_limits<float>::quiet_NaN());
}

// max |got − ref| / max(1, max |ref|); +inf when got holds a NaN (a position never written).
inline double max_scaled_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double worst = 0.0, scale = 1.0;
  for (double r : ref) scale = std::max(scale, std::abs(r));
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, std::abs(got[i] - ref[i]));
  }
  return worst / scale;
}

}  // namespace tilescope::kernels::test

// Every MatMul version equals relu(A·B + bias) computed by a plain double-precision loop and by
// Eigen (version 0), on sizes that are and are not multiples of the tiles; fused == unfused.
#include "kernel_test_util.h"
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/versions.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace tilescope::kernels;
using namespace tilescope::kernels::test;

namespace {

struct Case {
  int m, n, k;
};

// 1×1×1; primes below and above MR=8 / NR=32; K across the 256-deep k block; M across the
// 144-row A block.
const Case kCases[] = {{1, 1, 1},       {17, 33, 100}, {33, 17, 1},
                       {100, 100, 100}, {7, 65, 300},  {150, 40, 257}};

std::vector<double> reference(const std::vector<float>& a, const std::vector<float>& b,
                              const std::vector<float>& bias, const Case& c) {
  std::vector<double> y(static_cast<std::size_t>(c.m) * c.n);
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      double sum = bias[j];
      for (int p = 0; p < c.k; ++p) sum += double(a[i * c.k + p]) * b[p * c.n + j];
      y[i * c.n + j] = std::max(sum, 0.0);
    }
  return y;
}

std::vector<float> run(MatMulFn fn, const std::vector<float>& a, const std::vector<float>& b,
                       const std::vector<float>& bias, const Case& c) {
  std::vector<float> y = poisoned(static_cast<std::size_t>(c.m) * c.n);
  fn(MatMulArgs{a.data(), b.data(), bias.data(), y.data(), c.m, c.n, c.k});
  return y;
}

}  // namespace

TEST_CASE("every MatMul version matches the double-precision loop and Eigen") {
  for (const Case& c : kCases) {
    const auto a = random_values(std::size_t(c.m) * c.k, 1);
    const auto b = random_values(std::size_t(c.k) * c.n, 2);
    const auto bias = random_values(c.n, 3);
    const auto expected = reference(a, b, bias, c);
    const auto eigen = run(matmul_0_eigen, a, b, bias, c);
    const std::vector<double> eigen_d(eigen.begin(), eigen.end());
    for (const auto& v : matmul_versions()) {
      CAPTURE(v.name);
      CAPTURE(c.m);
      CAPTURE(c.n);
      CAPTURE(c.k);
      const auto y = run(v.fn, a, b, bias, c);
      // fp32 sums of k terms of size ≤ 1: error grows like k·eps at worst.
      const double tolerance = 1e-6 * (c.k + 1);
      CHECK(max_scaled_error(y, expected) <= tolerance);
      CHECK(max_scaled_error(y, eigen_d) <= tolerance);
    }
  }
}

TEST_CASE("the fused epilogue gives exactly the unfused result, and threads exactly one thread's") {
  // Versions 4, 5 and 6 run the same micro-kernel in the same k order; only where bias and ReLU
  // are applied (and which thread) differs, so the floats must be bit-identical.
  for (const Case& c : kCases) {
    const auto a = random_values(std::size_t(c.m) * c.k, 4);
    const auto b = random_values(std::size_t(c.k) * c.n, 5);
    const auto bias = random_values(c.n, 6);
    const auto unfused = run(matmul_4_microkernel, a, b, bias, c);
    const auto fused = run(matmul_5_fused_epilogue, a, b, bias, c);
    const auto threaded = run(matmul_6_threads, a, b, bias, c);
    CHECK(fused == unfused);
    CHECK(threaded == fused);
  }
}

TEST_CASE("the packed GEMM honours leading dimensions and writes only its block") {
  // A 5×7 product written into the middle of a wider, poisoned-free C: the cells around it keep
  // their sentinel value.
  const int m = 5, n = 7, k = 9, ldc = 12;
  const auto a = random_values(std::size_t(m) * k, 7);
  const auto b = random_values(std::size_t(k) * n, 8);
  std::vector<float> c(std::size_t(m + 2) * ldc, 42.0f);
  gemm::gemm(a.data(), k, b.data(), n, c.data() + ldc + 2, ldc, m, n, k);
  for (int i = 0; i < m + 2; ++i)
    for (int j = 0; j < ldc; ++j) {
      const bool inside = i >= 1 && i <= m && j >= 2 && j < 2 + n;
      if (!inside) {
        CHECK(c[i * ldc + j] == 42.0f);
        continue;
      }
      double sum = 0.0;
      for (int p = 0; p < k; ++p) sum += double(a[(i - 1) * k + p]) * b[p * n + (j - 2)];
      CHECK(c[i * ldc + j] == doctest::Approx(sum).epsilon(1e-5));
    }
}

TEST_CASE("the registry is numbered 0..N in order and says what changed") {
  const auto& versions = matmul_versions();
  REQUIRE(versions.size() == 7);
  for (std::size_t i = 0; i < versions.size(); ++i) {
    CHECK(versions[i].number == static_cast<int>(i));
    CHECK_FALSE(versions[i].changed.empty());
  }
  CHECK(versions[0].name == "eigen");
  CHECK(versions[1].name == "naive_ijk");
}

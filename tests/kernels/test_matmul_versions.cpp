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
  // are applied (and which thread, on which block of Y) differs, so the floats must be
  // bit-identical — for any thread count, including counts the matrix cannot use in full.
  const Case wide = {300, 520, 70};  // room for a 4×4 grid of blocks and more
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  cases.push_back(wide);
  for (const Case& c : cases) {
    const auto a = random_values(std::size_t(c.m) * c.k, 4);
    const auto b = random_values(std::size_t(c.k) * c.n, 5);
    const auto bias = random_values(c.n, 6);
    const auto unfused = run(matmul_4_microkernel, a, b, bias, c);
    const auto fused = run(matmul_5_fused_epilogue, a, b, bias, c);
    CHECK(fused == unfused);
    for (int threads : {0, 1, 2, 3, 4, 7, 16}) {
      CAPTURE(c.m);
      CAPTURE(c.n);
      CAPTURE(threads);
      std::vector<float> y = poisoned(static_cast<std::size_t>(c.m) * c.n);
      MatMulArgs args{a.data(), b.data(), bias.data(), y.data(), c.m, c.n, c.k};
      args.threads = threads;
      matmul_6_threads(args);
      CHECK(y == fused);
    }
  }
}

TEST_CASE("version 6's grid: as many blocks as threads where Y has room, packing least") {
  // Packing traffic of a rows × cols grid: cols·M·K (A once per column of blocks) + rows·K·N.
  // Square 1024³ on 16 threads: 4×4 costs 8·2^20·1024; 2×8 and 8×2 cost 10·2^20·1024.
  CHECK(matmul_thread_grid(16, 1024, 1024, 1024).rows == 4);
  CHECK(matmul_thread_grid(16, 1024, 1024, 1024).cols == 4);
  // 8 rows are one MR block (8 with AVX-512, 6 with AVX2: 2 blocks): at most that many rows of
  // blocks, the rest in columns; 1024 columns hold 16 NR blocks or more.
  const MatMulGrid thin = matmul_thread_grid(16, 8, 1024, 64);
  CHECK(thin.rows * thin.cols == 16);
  CHECK(thin.rows <= (8 + gemm::kMR - 1) / gemm::kMR);
  // One row and one column: a single block, whatever the threads.
  CHECK(matmul_thread_grid(16, 1, 1, 1).rows * matmul_thread_grid(16, 1, 1, 1).cols == 1);
  // 7 threads on a square: 1×7 and 7×1 pack the same (7·M·K + K·N); the first found, 1 row.
  CHECK(matmul_thread_grid(7, 512, 512, 512).rows == 1);
  CHECK(matmul_thread_grid(7, 512, 512, 512).cols == 7);
  CHECK(matmul_thread_grid(1, 512, 512, 512).rows * matmul_thread_grid(1, 512, 512, 512).cols == 1);
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
  REQUIRE(versions.size() == 8);
  for (std::size_t i = 0; i < versions.size(); ++i) {
    CHECK(versions[i].number == static_cast<int>(i));
    CHECK_FALSE(versions[i].changed.empty());
  }
  CHECK(versions[0].name == "eigen");
  CHECK(versions[1].name == "naive_ijk");
  CHECK(versions[7].name == "eigen_threads");
  CHECK(versions[6].multithreaded);
  CHECK(versions[7].multithreaded);
}

// The CPU JIT: a correct source compiles, runs and is cached; a syntax error, a missing compiler
// and a missing entry point each come back as a clear message, never an exception.
#include "kernel_test_util.h"
#include "kernels/cpu/jit.h"
#include "kernels/cpu/matmul_versions.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

using namespace tilescope::kernels;
using namespace tilescope::kernels::test;

namespace {

// A private cache per test process, so runs never see each other's objects.
JitOptions test_options() {
  JitOptions options;
  options.cache_dir =
      (std::filesystem::temp_directory_path() / ("tilescope-jit-test-" + std::to_string(getpid())))
          .string();
  return options;
}

struct CacheCleanup {
  ~CacheCleanup() {
    std::error_code ec;
    std::filesystem::remove_all(test_options().cache_dir, ec);
  }
} cleanup;

const char* kScaleSource = R"(
extern "C" void ts_kernel(float* const* args) {
  for (int i = 0; i < 4; ++i) args[1][i] = 2.0f * args[0][i] + 1.0f;
}
)";

}  // namespace

TEST_CASE("a correct source compiles, runs, and the second compile is a cache hit") {
  const JitOptions options = test_options();
  const JitResult first = jit_compile(kScaleSource, options);
  INFO(first.error, "\n", first.compiler_output);
  REQUIRE(first.ok);
  CHECK_FALSE(first.cache_hit);
  CHECK(first.command.find("-O3 -march=native") != std::string::npos);
  CHECK(first.command.find(".cpp") != std::string::npos);
  float in[4] = {0, 1, 2, 3}, out[4] = {};
  float* const args[] = {in, out};
  first.module->kernel()(args);
  CHECK(out[0] == 1.0f);
  CHECK(out[3] == 7.0f);

  const JitResult second = jit_compile(kScaleSource, options);
  REQUIRE(second.ok);
  CHECK(second.cache_hit);
  CHECK(second.cache_key == first.cache_key);
  CHECK(second.compile_seconds == 0.0);

  JitOptions other_flags = options;
  other_flags.flags = "-O2";
  CHECK(jit_compile(kScaleSource, other_flags).cache_key != first.cache_key);
}

TEST_CASE("the JIT twin of the tiled MatMul computes what the library's version 3 does") {
  const int m = 17, n = 33, k = 20;
  const auto a = random_values(std::size_t(m) * k, 1);
  const auto b = random_values(std::size_t(k) * n, 2);
  const auto bias = random_values(n, 3);
  auto y_aot = poisoned(std::size_t(m) * n), y_jit = poisoned(std::size_t(m) * n);
  matmul_3_tiled(MatMulArgs{a.data(), b.data(), bias.data(), y_aot.data(), m, n, k});
  const JitResult jit = jit_compile(tiled_matmul_jit_source(m, n, k), test_options());
  INFO(jit.error, "\n", jit.compiler_output);
  REQUIRE(jit.ok);
  float* const args[] = {const_cast<float*>(a.data()), const_cast<float*>(b.data()),
                         const_cast<float*>(bias.data()), y_jit.data()};
  jit.module->kernel()(args);
  // Same text, same flags, same compiler: the same floats (-march=native both times).
  CHECK(y_jit == y_aot);
}

TEST_CASE("a syntax error returns the compiler's message, not an exception") {
  const JitResult r =
      jit_compile("extern \"C\" void ts_kernel(float* const* args) { oops }\n", test_options());
  CHECK_FALSE(r.ok);
  CHECK(r.module == nullptr);
  CHECK(r.error.find("did not compile") != std::string::npos);
  CHECK(r.compiler_output.find("oops") != std::string::npos);
  CHECK(r.compiler_output.find("error") != std::string::npos);
}

TEST_CASE("a missing compiler (CXX=/nonexistent) is named in a clear message") {
  const char* saved = std::getenv("CXX");
  const std::string saved_value = saved ? saved : "";
  setenv("CXX", "/nonexistent", 1);
  const JitResult r = jit_compile(kScaleSource, test_options());
  if (saved) {
    setenv("CXX", saved_value.c_str(), 1);
  } else {
    unsetenv("CXX");
  }
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("'/nonexistent' was not found") != std::string::npos);
  CHECK(r.error.find("CXX") != std::string::npos);
  CHECK(r.command.rfind("/nonexistent ", 0) == 0);
}

TEST_CASE("a source without the ts_kernel entry point is explained") {
  const JitResult r =
      jit_compile("void ts_kernel(float* const* args) { (void)args; }\n", test_options());
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("extern \"C\" void ts_kernel") != std::string::npos);
}

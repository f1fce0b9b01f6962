// CUDA-side checks that need no GPU: NVRTC compiles the twin for sm_90 and reports errors with its
// log, shape checks explain themselves, and the bench refuses unknown suites / missing GPUs
// clearly.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_bench.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/jit_twin.h"
#include "kernels/cuda/nvrtc_runner.h"
#include "tests/cuda/gpu_test_support.h"

#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

using namespace tilescope::kernels;
using namespace tilescope::kernels::cuda;

TEST_SUITE("cuda_host") {
  TEST_CASE("NVRTC compiles the twin source (generated-kernel ABI) to sm_90 machine code") {
    const NvrtcCompileResult r =
        nvrtc_compile(twin_source(), "sm_90", twin_nvrtc_options({256, 256, 128}));
    INFO("log: " << r.log << " error: " << r.error);
    CHECK(r.ok);
    CHECK(r.error.empty());
    // A cubin is an ELF file: it starts with 0x7F 'E' 'L' 'F'.
    REQUIRE(r.cubin.size() > 4);
    CHECK(r.cubin[0] == 0x7F);
    CHECK(r.cubin[1] == 'E');
    CHECK(r.cubin[2] == 'L');
    CHECK(r.cubin[3] == 'F');
  }

  TEST_CASE("NVRTC failure returns the compiler's log naming the error") {
    const std::string bad =
        "extern \"C\" __global__ void ts_kernel(float* __restrict__ out) { out[0] = undeclared_x; "
        "}";
    const NvrtcCompileResult r = nvrtc_compile(bad, "sm_90");
    CHECK_FALSE(r.ok);
    CHECK(r.cubin.empty());
    CHECK(r.error.find("NVRTC could not compile") != std::string::npos);
    CHECK(r.log.find("undeclared_x") != std::string::npos);
  }

  TEST_CASE(
      "the twin without its size macros does not compile, and the log says which is missing") {
    const NvrtcCompileResult r = nvrtc_compile(twin_source(), "sm_90");
    CHECK_FALSE(r.ok);
    CHECK(r.log.find("TS_M") != std::string::npos);
  }

  TEST_CASE("shape checks explain what does not divide") {
    CHECK(sgemm_unsupported(8, {4096, 4096, 4096}).empty());
    CHECK(sgemm_unsupported(1, {17, 5, 3}).empty());  // naive handles any size
    CHECK(sgemm_unsupported(8, {100, 128, 8}) == "M = 100 is not a multiple of 128");
    CHECK(sgemm_unsupported(4, {64, 64, 12}) == "K = 12 is not a multiple of 8");
    CHECK(hgemm_unsupported(2, {128, 128, 48}) == "K = 48 is not a multiple of 32");
    CHECK(hgemm_unsupported(3, {128, 128, 96}) == "K = 96 is not a multiple of 64");
    CHECK(hgemm_unsupported(6, {128, 384, 64}) == "N = 384 is not a multiple of 256");
    CHECK(hgemm_unsupported(8, {128, 256, 64}) == "M = 128 is not a multiple of 256");
    CHECK(hgemm_unsupported(8, {256, 256, 64}).empty());
    CHECK(hgemm_unsupported(3, {128, 128, 64}, Operand16::bf16).find("no bf16") !=
          std::string::npos);
    CHECK(hgemm_unsupported(4, {128, 128, 64}, Operand16::bf16).empty());
    CHECK(hgemm_unsupported(9, {256, 256, 64}).find("does not exist (1..8)") != std::string::npos);
    CHECK(sgemm_unsupported(9, {128, 128, 8}).empty());
    CHECK(sgemm_unsupported(10, {128, 128, 8}) == "K = 8 is not a multiple of 16");
    CHECK(sgemm_unsupported(12, {128, 128, 16}).find("does not exist (1..11)") !=
          std::string::npos);
    ConvShape c{1, 8, 8, 3, 128, 3, 3, 1, 1};
    CHECK(conv_unsupported(c) == "input channels C = 3 is not a multiple of 4");
    c.c = 8;
    c.n = 2;
    CHECK(conv_unsupported(c).empty());  // M = 2·8·8 = 128, N = 128, K = 72
    CHECK(twin_unsupported({256, 256, 128}).empty());
    CHECK_FALSE(twin_unsupported({512, 512, 512}).empty());
  }

  TEST_CASE("version 11 accepts a shape when some tile candidate divides it, and says so if not") {
    CHECK(sgemm_unsupported(11, {192, 320, 48}).empty());  // the 64×64×16 candidates divide it
    CHECK(sgemm_unsupported(11, {100, 100, 100}).find("no SGEMM tile candidate") !=
          std::string::npos);
  }

  TEST_CASE("conv output size and GEMM view follow the closed form") {
    const ConvShape c{8, 9, 7, 4, 16,
                      3, 3, 1, 2};  // P = (9 + 2 − 3)/2 + 1 = 5, Q = (7 + 2 − 3)/2 + 1 = 4
    CHECK(c.p() == 5);
    CHECK(c.q() == 4);
    const GemmShape g = c.as_gemm();
    CHECK(g.m == 8 * 5 * 4);
    CHECK(g.n == 16);
    CHECK(g.k == 3 * 3 * 4);
  }

  TEST_CASE("the GPU bench rejects an unknown suite by name, before touching the GPU") {
    std::ostringstream log;
    GpuBenchOptions o;
    o.suite = "sgemm,nonsense";
    CHECK_THROWS_AS(run_gpu_bench(o, log), std::invalid_argument);
    try {
      run_gpu_bench(o, log);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("'nonsense'") != std::string::npos);
    }
  }

  TEST_CASE("without a GPU the bench and the JIT fail with a sentence, not a crash") {
    std::string reason;
    if (gpu_available(&reason)) {
      std::printf("(a GPU is present: the no-GPU error path is not exercised here)\n");
      return;
    }
    CHECK_FALSE(reason.empty());
    std::ostringstream log;
    GpuBenchOptions o;
    o.suite = "bias_relu";
    CHECK_THROWS_AS(run_gpu_bench(o, log), std::runtime_error);
    try {
      NvrtcKernel::compile_and_load(twin_source(), twin_nvrtc_options({256, 256, 128}));
      FAIL("compile_and_load should throw without a GPU");
    } catch (const GpuError& e) {
      CHECK(std::string(e.what()).find("CUDA device") != std::string::npos);
    }
  }
}

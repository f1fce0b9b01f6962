// Every hand-written CUDA kernel against a plain CPU loop in double, on fresh random inputs with
// the output poisoned first; the NVRTC twin against its nvcc build; the GPU bench's JSON shape.
// Each case prints "SKIPPED: ..." and returns on machines without a usable GPU.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_bench.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/gpu_timing.h"
#include "kernels/cuda/jit_twin.h"
#include "kernels/cuda/nvrtc_runner.h"
#include "tests/cuda/gpu_test_support.h"

#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

using namespace tilescope::kernels;
using namespace tilescope::kernels::cuda;
using namespace tilescope::kernels::cuda::testing;

namespace {

DeviceBuffer<float> upload(const std::vector<float>& host) {
  DeviceBuffer<float> d(host.size());
  d.from_host(host);
  return d;
}

// Rounds through fp16 on the device; returns the fp16 buffer and the exact fp32 values it holds.
std::pair<DeviceBuffer<std::uint16_t>, std::vector<float>> to_half(const std::vector<float>& v) {
  DeviceBuffer<float> f = upload(v);
  DeviceBuffer<std::uint16_t> h(v.size());
  f32_to_f16_launch(f.get(), h.get(), v.size());
  f16_to_f32_launch(h.get(), f.get(), v.size());
  return {std::move(h), f.to_host()};
}

// Direct convolution in double, NHWC input, RSCK filter, optional bias + ReLU.
std::vector<double> cpu_conv(const std::vector<float>& x, const std::vector<float>& w,
                             const float* bias, const ConvShape& s) {
  std::vector<double> y((std::size_t)s.n * s.p() * s.q() * s.k);
  for (int n = 0; n < s.n; ++n)
    for (int p = 0; p < s.p(); ++p)
      for (int q = 0; q < s.q(); ++q)
        for (int k = 0; k < s.k; ++k) {
          double acc = bias ? bias[k] : 0.0;
          for (int r = 0; r < s.r; ++r)
            for (int t = 0; t < s.s; ++t) {
              const int h = p * s.stride - s.pad + r, wd = q * s.stride - s.pad + t;
              if (h < 0 || h >= s.h || wd < 0 || wd >= s.w) continue;
              for (int c = 0; c < s.c; ++c)
                acc += double(x[(((std::size_t)n * s.h + h) * s.w + wd) * s.c + c]) *
                       w[((std::size_t)(r * s.s + t) * s.c + c) * s.k + k];
            }
          y[(((std::size_t)n * s.p() + p) * s.q() + q) * s.k + k] = bias ? std::max(acc, 0.0) : acc;
        }
  return y;
}

}  // namespace

TEST_SUITE("cuda_gpu") {
  TEST_CASE("every SGEMM version computes A·B (256×384×128) like a float64 loop") {
    if (!gpu_or_skip("sgemm versions")) return;
    const GemmShape s{256, 384, 128};
    for (const KernelVersion& v : sgemm_versions()) {
      const auto a = random_vector((size_t)s.m * s.k, 10 + v.number);
      const auto b = random_vector((size_t)s.k * s.n, 20 + v.number);
      const auto want = cpu_gemm(a, b, nullptr, false, false, s.m, s.n, s.k);
      DeviceBuffer<float> da = upload(a), db = upload(b), dc((size_t)s.m * s.n);
      dc.poison();
      sgemm_launch(v.number, s, da.get(), db.get(), dc.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      INFO("version " << v.number << " " << v.name);
      CHECK(rel_error(dc.to_host(), want) < 1e-5);
    }
  }

  TEST_CASE("the naive and coalesced SGEMMs handle sizes that divide nothing (67×45×13)") {
    if (!gpu_or_skip("sgemm odd sizes")) return;
    const GemmShape s{67, 45, 13};
    for (int version : {1, 2}) {
      const auto a = random_vector((size_t)s.m * s.k, 30 + version);
      const auto b = random_vector((size_t)s.k * s.n, 40 + version);
      DeviceBuffer<float> da = upload(a), db = upload(b), dc((size_t)s.m * s.n);
      dc.poison();
      sgemm_launch(version, s, da.get(), db.get(), dc.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(dc.to_host(), cpu_gemm(a, b, nullptr, false, false, s.m, s.n, s.k)) < 1e-5);
    }
  }

  TEST_CASE("SGEMM 8 with the fused epilogue computes relu(A·B + bias)") {
    if (!gpu_or_skip("sgemm fused")) return;
    const GemmShape s{256, 256, 64};
    const auto a = random_vector((size_t)s.m * s.k, 50), b = random_vector((size_t)s.k * s.n, 51),
               bias = random_vector(s.n, 52);
    DeviceBuffer<float> da = upload(a), db = upload(b), dbias = upload(bias), dc((size_t)s.m * s.n);
    dc.poison();
    sgemm_bias_relu_fused_launch(s, da.get(), db.get(), dbias.get(), dc.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(rel_error(dc.to_host(), cpu_gemm(a, b, bias.data(), true, false, s.m, s.n, s.k)) < 1e-5);
  }

  TEST_CASE(
      "tensor-core GEMMs compute A·Wᵀ on fp16 inputs (K deeper and shallower than the pipeline)") {
    if (!gpu_or_skip("hgemm")) return;
    // 256×512×320: five 64-deep k-tiles, more than any version's stages and not a multiple of
    // them, so every stage's barrier goes round more than once with both parities. 128×384×64:
    // one k-tile (versions 1–5 only; the 256-wide tiles need N % 256 == 0).
    for (const GemmShape s :
         {GemmShape{256, 256, 256}, GemmShape{128, 384, 64}, GemmShape{256, 512, 320}}) {
      auto [ah, a] = to_half(random_vector((size_t)s.m * s.k, 60 + s.k));
      auto [wh, w] = to_half(random_vector((size_t)s.n * s.k, 61 + s.k));
      const auto want = cpu_gemm(a, w, nullptr, false, true, s.m, s.n, s.k);
      for (const KernelVersion& v : hgemm_versions()) {
        if (!hgemm_unsupported(v.number, s).empty()) continue;
        DeviceBuffer<float> dc((size_t)s.m * s.n);
        dc.poison();
        hgemm_launch(v.number, s, ah.get(), wh.get(), dc.get());
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        INFO("version " << v.number << " " << s.m << "×" << s.n << "×" << s.k);
        CHECK(rel_error(dc.to_host(), want) < 1e-5);  // products exact in fp32, only order differs
      }
      if (!hgemm_unsupported(2, s).empty()) continue;
      const auto bias = random_vector(s.n, 62);
      DeviceBuffer<float> dbias = upload(bias), dc((size_t)s.m * s.n);
      dc.poison();
      hgemm_bias_relu_fused_launch(s, ah.get(), wh.get(), dbias.get(), dc.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(dc.to_host(), cpu_gemm(a, w, bias.data(), true, true, s.m, s.n, s.k)) < 1e-5);
    }
  }

  TEST_CASE("every version runs at least one shape of the fp16 test above") {
    for (const KernelVersion& v : hgemm_versions()) {
      INFO("version " << v.number);
      CHECK(hgemm_unsupported(v.number, {256, 512, 320}).empty());
    }
  }

  TEST_CASE("the bf16 tensor-core GEMMs compute A·Wᵀ on bf16-representable inputs") {
    if (!gpu_or_skip("hgemm bf16")) return;
    const GemmShape s{256, 512, 320};
    // Round through bf16 on the device; the fp32 values that come back are exact bf16 values.
    auto to_bf16 = [](const std::vector<float>& v) {
      DeviceBuffer<float> f = upload(v);
      DeviceBuffer<std::uint16_t> h(v.size());
      f32_to_bf16_launch(f.get(), h.get(), v.size());
      bf16_to_f32_launch(h.get(), f.get(), v.size());
      return std::make_pair(std::move(h), f.to_host());
    };
    auto [ah, a] = to_bf16(random_vector((size_t)s.m * s.k, 70));
    auto [wh, w] = to_bf16(random_vector((size_t)s.n * s.k, 71));
    // bf16 keeps 8 significant bits: the rounded values really differ from the originals.
    CHECK(a != random_vector((size_t)s.m * s.k, 70));
    const auto want = cpu_gemm(a, w, nullptr, false, true, s.m, s.n, s.k);
    int ran = 0;
    for (const KernelVersion& v : hgemm_versions()) {
      if (!hgemm_unsupported(v.number, s, Operand16::bf16).empty()) continue;
      DeviceBuffer<float> dc((size_t)s.m * s.n);
      dc.poison();
      hgemm_launch(v.number, s, ah.get(), wh.get(), dc.get(), Operand16::bf16);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      INFO("version " << v.number);
      CHECK(rel_error(dc.to_host(), want) < 1e-5);
      ++ran;
    }
    CHECK(ran == 5);  // versions 4–8
  }

  TEST_CASE("the persistent versions cover more tiles than there are SMs (2304×2048×192)") {
    if (!gpu_or_skip("hgemm persistent")) return;
    // 18 × 8 = 144 tiles of 128×256 (72 pairs of two for version 8): more than the H200's 132 SMs,
    // so some blocks take a second tile and the stage ring continues across tiles. The reference
    // is computed for every 5th row (all columns) to keep the CPU loop short.
    const GemmShape s{2304, 2048, 192};
    auto [ah, a] = to_half(random_vector((size_t)s.m * s.k, 80));
    auto [wh, w] = to_half(random_vector((size_t)s.n * s.k, 81));
    std::vector<double> want;
    std::vector<int> rows;
    for (int i = 0; i < s.m; i += 5) rows.push_back(i);
    for (const int i : rows)
      for (int j = 0; j < s.n; ++j) {
        double acc = 0;
        for (int p = 0; p < s.k; ++p)
          acc += double(a[(size_t)i * s.k + p]) * w[(size_t)j * s.k + p];
        want.push_back(acc);
      }
    for (const int version : {7, 8}) {
      REQUIRE(hgemm_unsupported(version, s).empty());
      DeviceBuffer<float> dc((size_t)s.m * s.n);
      dc.poison();
      hgemm_launch(version, s, ah.get(), wh.get(), dc.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      const std::vector<float> all = dc.to_host();
      std::vector<float> got;
      for (const int i : rows)
        got.insert(got.end(), all.begin() + (size_t)i * s.n, all.begin() + (size_t)(i + 1) * s.n);
      INFO("version " << version);
      CHECK(rel_error(got, want) < 1e-5);
      CHECK(std::all_of(all.begin(), all.end(), [](float x) { return std::isfinite(x); }));
    }
  }

  TEST_CASE("the autotune times every candidate that divides the shape and keeps the fastest") {
    if (!gpu_or_skip("sgemm autotune")) return;
    const GemmShape s{192, 320, 48};  // only the two 64×64×16 candidates divide it
    const auto a = random_vector((size_t)s.m * s.k, 95);
    const auto b = random_vector((size_t)s.k * s.n, 96);
    DeviceBuffer<float> da = upload(a), db = upload(b), dc((size_t)s.m * s.n);
    const SgemmAutotune& tune = sgemm_autotune(s, da.get(), db.get(), dc.get());
    const auto& tiles = sgemm_tile_candidates();
    REQUIRE(tune.median_ms.size() == 2);
    float best = tune.median_ms[0].second;
    for (const auto& [cand, ms] : tune.median_ms) {
      CHECK(tiles[size_t(cand)].bm == 64);
      CHECK(tiles[size_t(cand)].bn == 64);
      CHECK(ms > 0.f);
      best = std::min(best, ms);
    }
    CHECK(std::any_of(tune.median_ms.begin(), tune.median_ms.end(), [&](const auto& p) {
      return p.first == tune.candidate && p.second == best;
    }));
    // Remembered: a second call returns the same result without timing again.
    CHECK(&sgemm_autotune(s, da.get(), db.get(), dc.get()) == &tune);
    // And version 11 computes the product with the winner.
    dc.poison();
    sgemm_launch(11, s, da.get(), db.get(), dc.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(rel_error(dc.to_host(), cpu_gemm(a, b, nullptr, false, false, s.m, s.n, s.k)) < 1e-5);
  }

  TEST_CASE("every SGEMM tile candidate computes A·B (512×512×64) like a float64 loop") {
    if (!gpu_or_skip("sgemm tiles")) return;
    const GemmShape s{512, 512, 64};
    const auto a = random_vector((size_t)s.m * s.k, 90);
    const auto b = random_vector((size_t)s.k * s.n, 91);
    const auto want = cpu_gemm(a, b, nullptr, false, false, s.m, s.n, s.k);
    DeviceBuffer<float> da = upload(a), db = upload(b);
    for (int c = 0; c < static_cast<int>(sgemm_tile_candidates().size()); ++c) {
      REQUIRE(sgemm_tiles_unsupported(c, s).empty());
      DeviceBuffer<float> dc((size_t)s.m * s.n);
      dc.poison();
      sgemm_tiles_launch(c, s, da.get(), db.get(), dc.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      INFO("candidate " << sgemm_tile_candidates()[size_t(c)].name);
      CHECK(rel_error(dc.to_host(), want) < 1e-5);
    }
  }

  TEST_CASE("bias add, ReLU and the fused pass match the CPU exactly") {
    if (!gpu_or_skip("bias relu")) return;
    const int rows = 96, cols = 200;
    const auto x = random_vector((size_t)rows * cols, 70), bias = random_vector(cols, 71);
    std::vector<double> sum(x.size()), want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      sum[i] = x[i] + bias[i % cols];  // fp32 add, as the GPU does it
      sum[i] = static_cast<float>(sum[i]);
      want[i] = std::max(sum[i], 0.0);
    }
    DeviceBuffer<float> dx = upload(x), db = upload(bias), dt(x.size()), dy(x.size());
    dt.poison();
    dy.poison();
    bias_add_launch(dx.get(), db.get(), dt.get(), rows, cols);
    relu_launch(dt.get(), dy.get(), x.size());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(rel_error(dt.to_host(), sum) == 0.0);
    CHECK(rel_error(dy.to_host(), want) == 0.0);
    dy.poison();
    bias_relu_fused_launch(dx.get(), db.get(), dy.get(), rows, cols);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(rel_error(dy.to_host(), want) == 0.0);
  }

  TEST_CASE("Conv2D: im2col + SGEMM, implicit GEMM and the fused version match a direct loop") {
    if (!gpu_or_skip("conv2d")) return;
    // stride 1 with padding, and stride 2 (P = Q = 4) — both give GEMM M = 128, N = 128, K = 72.
    for (const ConvShape s :
         {ConvShape{2, 8, 8, 8, 128, 3, 3, 1, 1}, ConvShape{8, 8, 8, 8, 128, 3, 3, 1, 2}}) {
      REQUIRE(conv_unsupported(s).empty());
      const GemmShape g = s.as_gemm();
      const auto x = random_vector((size_t)s.n * s.h * s.w * s.c, 80 + s.stride);
      const auto w = random_vector((size_t)g.k * g.n, 81 + s.stride);
      const auto bias = random_vector(s.k, 82);
      const auto plain = cpu_conv(x, w, nullptr, s), fused = cpu_conv(x, w, bias.data(), s);
      DeviceBuffer<float> dx = upload(x), dw = upload(w), dbias = upload(bias),
                          col((size_t)g.m * g.k), dy((size_t)g.m * g.n);
      INFO("stride " << s.stride);
      col.poison();
      dy.poison();
      im2col_launch(s, dx.get(), col.get());
      sgemm_launch(8, g, col.get(), dw.get(), dy.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(dy.to_host(), plain) < 1e-5);
      dy.poison();
      conv_implicit_gemm_launch(s, dx.get(), dw.get(), nullptr, dy.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(dy.to_host(), plain) < 1e-5);
      dy.poison();
      conv_implicit_gemm_launch(s, dx.get(), dw.get(), dbias.get(), dy.get());
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(dy.to_host(), fused) < 1e-5);
    }
  }

  TEST_CASE("the NVRTC-compiled twin computes what its nvcc build does, and both are timed") {
    if (!gpu_or_skip("nvrtc twin")) return;
    const GemmShape s{256, 256, 128};
    const auto a = random_vector((size_t)s.m * s.k, 90), b = random_vector((size_t)s.k * s.n, 91),
               bias = random_vector(s.n, 92);
    const auto want = cpu_gemm(a, b, bias.data(), true, false, s.m, s.n, s.k);
    DeviceBuffer<float> da = upload(a), db = upload(b), dbias = upload(bias), y1((size_t)s.m * s.n),
                        y2((size_t)s.m * s.n);
    NvrtcKernel jit = NvrtcKernel::compile_and_load(twin_source(), twin_nvrtc_options(s));
    MESSAGE("NVRTC: " << jit.arch() << ", " << jit.compile_ms() << " ms, "
                      << jit.registers_per_thread() << " registers/thread");
    y1.poison();
    y2.poison();
    twin_nvcc_launch(s, da.get(), db.get(), dbias.get(), y1.get());
    jit.launch(twin_launch_config(s), {da.get(), db.get(), dbias.get()}, y2.get());
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    const auto got1 = y1.to_host(), got2 = y2.to_host();
    CHECK(rel_error(got1, want) < 1e-5);
    CHECK(rel_error(got2, want) < 1e-5);
    const KernelTiming t_jit =
        jit.time(twin_launch_config(s), {da.get(), db.get(), dbias.get()}, y2.get(), 3, 20);
    TimingOptions opt;
    opt.warmup = 3;
    const KernelTiming t_nvcc =
        time_gpu([&] { twin_nvcc_launch(s, da.get(), db.get(), dbias.get(), y1.get()); }, opt);
    MESSAGE("twin 256×256×128: nvcc " << t_nvcc.median_ms << " ms, NVRTC " << t_jit.median_ms
                                      << " ms (ratio " << t_jit.median_ms / t_nvcc.median_ms
                                      << ")");
    CHECK(t_jit.repeats >= 3);
    CHECK(t_jit.median_ms > 0);
  }

  TEST_CASE("a kernel name the source does not define is reported by name") {
    if (!gpu_or_skip("nvrtc missing entry")) return;
    const std::string src =
        "extern \"C\" __global__ void other(float* __restrict__ out) { out[0] = 1.f; }";
    try {
      NvrtcKernel::compile_and_load(src);
      FAIL("expected a GpuError");
    } catch (const GpuError& e) {
      CHECK(std::string(e.what()).find("'ts_kernel'") != std::string::npos);
    }
  }

  TEST_CASE("the quick GPU bench writes tilescope-bench/1 JSON with every version verified") {
    if (!gpu_or_skip("gpu bench")) return;
    std::ostringstream log;
    GpuBenchOptions o;
    o.suite = "bias_relu,jit_twin";
    o.quick = true;
    o.repeats = 5;
    const nlohmann::json j = run_gpu_bench(o, log);
    MESSAGE(log.str());
    CHECK(j["schema"] == "tilescope-bench/1");
    CHECK(j["kind"] == "gpu");
    CHECK(j["device"].contains("name"));
    CHECK(j["device"].contains("driver"));
    CHECK(j["peaks"]["gbps"].get<double>() > 0);
    REQUIRE(j["suites"].size() == 2);
    for (const auto& suite : j["suites"]) {
      CHECK(suite["results"].size() >= 2);
      for (const auto& r : suite["results"]) {
        INFO(suite["name"] << " v" << r["version"] << " " << r.value("note", ""));
        CHECK(r["verified"] == true);
        CHECK(r["median_ms"].get<double>() > 0);
      }
    }
  }
}

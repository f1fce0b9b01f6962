// The attention versions (kernels/cuda/attention.h) against float64 CPU rows, on every output of
// small problems: fp16 and bf16, head dim 64 and 128, causal and not, one and several key tiles.
// Host-only cases: the CPU row by hand, the suites' problems, folding PyTorch's results in.
#include "kernels/cuda/attention.h"
#include "kernels/cuda/attention_bench.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/hgemm_hopper.h"
#include "tests/cuda/gpu_test_support.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <doctest/doctest.h>

#include <cmath>

using namespace tilescope::kernels;
using namespace tilescope::kernels::cuda;
using namespace tilescope::kernels::cuda::testing;

namespace {

// Inputs rounded to the 16-bit type on the device; returns the 16-bit buffer and its exact values.
std::pair<DeviceBuffer<std::uint16_t>, std::vector<float>> to_16bit(const std::vector<float>& v,
                                                                    Operand16 type) {
  DeviceBuffer<float> f(v.size());
  f.from_host(v);
  DeviceBuffer<std::uint16_t> h(v.size());
  if (type == Operand16::bf16) {
    f32_to_bf16_launch(f.get(), h.get(), v.size());
    bf16_to_f32_launch(h.get(), f.get(), v.size());
  } else {
    f32_to_f16_launch(f.get(), h.get(), v.size());
    f16_to_f32_launch(h.get(), f.get(), v.size());
  }
  return {std::move(h), f.to_host()};
}

std::vector<float> widen(const DeviceBuffer<std::uint16_t>& h, Operand16 type) {
  DeviceBuffer<float> f(h.size());
  if (type == Operand16::bf16)
    bf16_to_f32_launch(h.get(), f.get(), h.size());
  else
    f16_to_f32_launch(h.get(), f.get(), h.size());
  return f.to_host();
}

std::vector<float> scaled(std::vector<float> v, float by) {
  for (float& x : v) x *= by;
  return v;
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("the float64 attention row by hand: two keys, d = 1") {
    // q = 2, keys 1 and 0, scale 1/√1: scores 2 and 0, p = e²/(e²+1) and 1/(e²+1); values 3, -1.
    AttentionShape s;
    s.n = 2;
    s.d = 1;
    const float q[] = {2.f, 0.f}, k[] = {1.f, 0.f}, v[] = {3.f, -1.f};
    double out = 0.0;
    attention_row_cpu(s, q, k, v, 0, 0, &out);
    const double e2 = std::exp(2.0);
    CHECK(out == doctest::Approx((3.0 * e2 - 1.0) / (e2 + 1.0)).epsilon(1e-12));
    s.causal = true;  // query 0 sees key 0 only: the output is v0
    attention_row_cpu(s, q, k, v, 0, 0, &out);
    CHECK(out == doctest::Approx(3.0).epsilon(1e-12));
  }

  TEST_CASE("attention suites: the issue's problem, FLOPs by formula, shapes the script reads") {
    const auto s = attention_suite_shape("attention", false);
    REQUIRE(s);
    CHECK(s->batch == 4);
    CHECK(s->heads == 16);
    CHECK(s->n == 4096);
    CHECK(s->d == 128);
    CHECK_FALSE(s->causal);
    CHECK(s->flops() == doctest::Approx(4.0 * 64 * 4096.0 * 4096.0 * 128));
    const auto c = attention_suite_shape("attention_causal_16384", false);
    REQUIRE(c);
    CHECK(c->causal);
    CHECK(c->flops() == doctest::Approx(2.0 * 64 * 16384.0 * 16384.0 * 128));
    // S and P, each written and read once, against Q, K, V, O: 4·N² / (4·N·d) = N/d = 32 at 4096.
    CHECK(4.0 * s->score_bytes() / s->compulsory_bytes() == doctest::Approx(32.0));
    CHECK_FALSE(attention_suite_shape("attention_4095", false));
    const auto shapes = attention_shapes_json(false);
    CHECK(shapes["attention_bf16"]["dtype"] == "bf16");
    CHECK(shapes["attention_d64"]["d"] == 64);
    CHECK(shapes.size() == attention_suites().size());
  }

  TEST_CASE("attention versions say why a shape does not fit") {
    AttentionShape s;
    s.n = 4096;
    s.d = 96;
    CHECK(attention_unsupported(3, s).find("head dim 96") != std::string::npos);
    s.d = 64;
    s.n = 100;
    CHECK(attention_unsupported(2, s).find("multiple of 64") != std::string::npos);
    s.n = 128;
    CHECK(attention_unsupported(4, s).empty());
    CHECK(attention_unsupported(7, s) == "attention has versions 1–6");
    s.n = 192;  // versions 5 and 6 tile by 128
    CHECK(attention_unsupported(5, s).find("multiple of 128") != std::string::npos);
    CHECK(attention_unsupported(6, s).find("version 6's tiles") != std::string::npos);
  }

  TEST_CASE("PyTorch's SDPA times fold into the matching suite, with the comparison") {
    BenchReport report;
    SuiteResult suite;
    suite.name = "attention";
    suite.flops = 1e12;
    suite.min_bytes = 1e9;
    VersionResult v1, v3;
    v1.version = 1;
    v1.verified = true;
    v1.timing = Timing{10.0, 9.0, 20};
    v3.version = 3;
    v3.verified = true;
    v3.timing = Timing{4.0, 3.9, 20};
    suite.results = {v1, v3};
    report.suites.push_back(suite);
    const nlohmann::json sdpa = {{"schema", "tilescope-sdpa/1"},
                                 {"torch", "2.11.0"},
                                 {"results",
                                  {{{"suite", "attention"},
                                    {"backend", "flash"},
                                    {"verified", true},
                                    {"rel_error", 1e-3},
                                    {"median_ms", 5.0},
                                    {"min_ms", 4.8},
                                    {"repeats", 20}},
                                   {{"suite", "attention"},
                                    {"backend", "cudnn"},
                                    {"verified", true},
                                    {"rel_error", 1e-3},
                                    {"median_ms", 3.0},
                                    {"min_ms", 2.9},
                                    {"repeats", 20}},
                                   {{"suite", "attention"},
                                    {"backend", "efficient"},
                                    {"verified", false},
                                    {"error", "not supported"}},
                                   {{"suite", "other"},
                                    {"backend", "flash"},
                                    {"verified", true},
                                    {"median_ms", 1.0},
                                    {"min_ms", 1.0}}}}};
    fold_sdpa_results(report, sdpa);
    const SuiteResult& out = report.suites[0];
    REQUIRE(out.results.size() == 5);
    CHECK(out.results[2].name == "torch_sdpa_flash");
    CHECK(out.results[2].version == 11);
    CHECK(out.results[3].version == 12);
    CHECK_FALSE(out.results[4].timing);
    CHECK(out.results[4].note == "not supported");
    REQUIRE(out.comparisons.size() == 1);
    CHECK(out.comparisons[0].slower == 12);  // cuDNN, the fastest backend
    CHECK(out.comparisons[0].faster == 3);   // the best own version
    REQUIRE(out.comparisons[0].time_ratio);
    CHECK(*out.comparisons[0].time_ratio == doctest::Approx(3.0 / 4.0));
    CHECK(*out.results[3].pct_of_reference == doctest::Approx(100.0 * 10.0 / 3.0));
    CHECK_THROWS(fold_sdpa_results(report, nlohmann::json{{"schema", "other"}}));
  }
}

TEST_SUITE("cuda_gpu") {
  TEST_CASE("every attention version equals float64 rows on every output") {
    if (!gpu_or_skip("attention versions")) return;
    cublasHandle_t cublas = nullptr;
    REQUIRE(cublasCreate(&cublas) == CUBLAS_STATUS_SUCCESS);
    struct Case {
      int batch, heads, n, d;
      bool causal;
      Operand16 type;
    };
    // N = 64: one key tile (the diagonal one when causal); 192: three, so the online rescale runs
    // and causal blocks see full tiles before the diagonal. Version 5 tiles by 128: N = 128 is its
    // single diagonal tile, 384 three tiles, so its two-stage ring wraps (barrier phases 0, 1, 0).
    const Case cases[] = {
        {1, 2, 64, 64, false, Operand16::f16},    {1, 2, 192, 128, false, Operand16::f16},
        {2, 1, 192, 128, true, Operand16::f16},   {1, 2, 192, 64, true, Operand16::f16},
        {1, 2, 192, 128, false, Operand16::bf16}, {1, 1, 128, 64, true, Operand16::bf16},
        {1, 2, 384, 128, false, Operand16::f16},  {2, 1, 384, 128, true, Operand16::f16},
        {1, 2, 384, 64, false, Operand16::f16},   {1, 2, 256, 128, true, Operand16::bf16}};
    int seed = 700;
    for (const Case& c : cases) {
      AttentionShape s;
      s.batch = c.batch;
      s.heads = c.heads;
      s.n = c.n;
      s.d = c.d;
      s.causal = c.causal;
      s.type = c.type;
      const std::size_t count = s.qkv_count();
      auto [q, qf] = to_16bit(scaled(random_vector(count, ++seed), 2.f), s.type);
      auto [k, kf] = to_16bit(scaled(random_vector(count, ++seed), 2.f), s.type);
      auto [v, vf] = to_16bit(random_vector(count, ++seed), s.type);
      std::vector<double> want(count);
      for (int bh = 0; bh < s.bh(); ++bh)
        for (int row = 0; row < s.n; ++row)
          attention_row_cpu(s, qf.data(), kf.data(), vf.data(), bh, row,
                            want.data() + ((std::size_t)bh * s.n + row) * s.d);
      for (const KernelVersion& version : attention_versions()) {
        INFO(s.text() << ", version " << version.number << " " << version.name);
        if (!attention_unsupported(version.number, s).empty()) continue;  // v5, v6 at N = 192
        if (version.number >= 5 && !hopper_device_unsupported().empty()) continue;
        DeviceBuffer<std::uint16_t> o(count), scratch(attention_scratch_count(version.number, s));
        o.poison();
        attention_launch(version.number, s, q.get(), k.get(), v.get(), o.get(), scratch.get(),
                         cublas);
        REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
        CHECK(rel_error(widen(o, s.type), want) < (s.type == Operand16::bf16 ? 1.6e-2 : 2e-3));
      }
      // The fp32 reference the bench checks against, on every output, far tighter.
      DeviceBuffer<float> v32(count), s32((std::size_t)s.n * s.n), ref(count);
      attention_reference_launch(s, q.get(), k.get(), v.get(), v32.get(), s32.get(), 1, ref.get(),
                                 cublas);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      CHECK(rel_error(ref.to_host(), want) < 1e-5);
    }
    cublasDestroy(cublas);
  }
}

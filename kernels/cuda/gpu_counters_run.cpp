// The counters run: ncu driven once per version (the parent), and the one profiled launch (the
// child, --profile-one). See gpu_counters_run.h.
#include "kernels/cuda/gpu_counters_run.h"

#include "kernels/bench_types.h"
#include "kernels/cuda/counters_runner.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_device.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/gpu_memory.h"

#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <ostream>
#include <sstream>

namespace tilescope::kernels {
namespace {

using cuda::DeviceBuffer;
using cuda::GemmShape;
using cuda::GpuError;

// Runs `command` through the shell and returns its exit status and everything it printed.
std::pair<int, std::string> capture(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The last few lines of a long output, for an error message.
std::string tail(const std::string& text, size_t lines) {
  size_t pos = text.size();
  for (size_t i = 0; i <= lines && pos > 0; ++i) pos = text.rfind('\n', pos - 1);
  return text.substr(pos == std::string::npos ? 0 : pos + 1);
}

// cuBLAS in strict fp32, row-major C = A·B (column-major Cᵀ = Bᵀ·Aᵀ): version 0 and the check.
class Blas {
 public:
  Blas() {
    if (cublasCreate(&m_h) != CUBLAS_STATUS_SUCCESS) throw GpuError("cublasCreate failed");
    cublasSetMathMode(m_h, CUBLAS_DEFAULT_MATH);
  }
  ~Blas() { cublasDestroy(m_h); }
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  void sgemm(GemmShape s, const float* a, const float* b, float* c) const {
    const float one = 1.f, zero = 0.f;
    if (cublasGemmEx(m_h, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, CUDA_R_32F, s.n, a,
                     CUDA_R_32F, s.k, &zero, c, CUDA_R_32F, s.n, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
      throw GpuError("cublasGemmEx failed");
  }

 private:
  cublasHandle_t m_h = nullptr;
};

}  // namespace

std::vector<std::string> counters_suites() {
  return {"sgemm", "gemm_epilogue", "grid_order"};
}

std::vector<std::pair<int, std::string>> counters_versions(const std::string& suite) {
  if (suite == "sgemm") {
    std::vector<std::pair<int, std::string>> v = {{0, "cublas"}};
    for (const cuda::KernelVersion& kv : cuda::sgemm_versions()) {
      if (kv.number <= 8) v.push_back({kv.number, kv.name});  // the progression the twins describe
    }
    return v;
  }
  if (suite == "gemm_epilogue") {
    return {{0, "cublas+bias+relu"},
            {1, "sgemm8+bias+relu"},
            {2, "sgemm8_fused"},
            {3, "hgemm2+bias+relu"},
            {4, "hgemm2_fused"}};
  }
  if (suite == "grid_order") return {{1, "sgemm8_row_major"}, {2, "sgemm8_grouped16"}};
  return {};
}

std::string find_ncu(const std::string& requested, std::string* reason) {
  namespace fs = std::filesystem;
  std::vector<std::string> candidates;
  if (!requested.empty()) candidates.push_back(requested);
  if (const char* env = std::getenv("TILESCOPE_NCU")) candidates.push_back(env);
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty()) candidates.push_back(d + "/ncu");
  }
  candidates.push_back("/usr/local/cuda/bin/ncu");
  std::error_code ec;
  if (fs::is_directory("/opt/nvidia/nsight-compute", ec))
    for (const auto& e : fs::directory_iterator("/opt/nvidia/nsight-compute", ec))
      candidates.push_back((e.path() / "ncu").string());
  for (const std::string& c : candidates)
    if (fs::is_regular_file(c, ec) && access(c.c_str(), X_OK) == 0) return c;
  if (reason) {
    *reason = requested.empty()
                  ? "Nsight Compute (ncu) was not found on PATH, in /usr/local/cuda/bin or "
                    "/opt/nvidia/nsight-compute (set TILESCOPE_NCU to its path)"
                  : "ncu not found at " + requested;
  }
  return {};
}

CounterReport run_counters(const CountersOptions& o, const std::string& self_path,
                           std::ostream& log) {
  std::string reason;
  const std::string ncu = find_ncu(o.ncu, &reason);
  if (ncu.empty()) throw GpuError(reason);
  const std::vector<std::string> suites = select_suites(o.suite, counters_suites(), "counters");

  CounterReport report;
  report.date = utc_timestamp();
  report.device = cuda::describe_device();
  report.ncu_version = tail(capture(quote(ncu) + " --version").second, 1);
  while (!report.ncu_version.empty() && report.ncu_version.back() == '\n')
    report.ncu_version.pop_back();

  // Keep only the metrics this ncu knows: one unknown name makes ncu refuse the whole run.
  const auto [qrc, qtext] = capture(quote(ncu) + " --query-metrics --chip gh100");
  const std::vector<std::string> known = parse_ncu_metric_list(qtext);
  std::string metric_list;
  for (const CounterMetric& m : counter_metrics()) {
    const bool ok = qrc != 0 || known.empty() ||
                    std::find(known.begin(), known.end(), ncu_base_name(m.ncu)) != known.end();
    if (!ok) {
      report.metrics_unavailable.push_back(m.key);
      continue;
    }
    report.metrics.push_back(m);
    metric_list += (metric_list.empty() ? "" : ",") + m.ncu;
  }
  log << "ncu: " << ncu << " (" << report.ncu_version << "), " << report.metrics.size()
      << " metrics";
  if (!report.metrics_unavailable.empty()) {
    log << "; unknown here:";
    for (const std::string& k : report.metrics_unavailable) log << " " << k;
  }
  log << "\n" << std::flush;

  // Clocks as they are (never locked: the card is shared), caches flushed before every kernel so
  // every version starts cold, as the simulator's trace does; only the launch the child brackets
  // with cudaProfilerStart/Stop is profiled.
  report.ncu_command =
      "ncu --clock-control none --cache-control all --profile-from-start off --launch-count 8 "
      "--csv --page raw --print-units base --metrics <the table>";
  for (const int size : o.sizes) {
    for (const std::string& suite : suites) {
      for (const auto& [version, name] : counters_versions(suite)) {
        CounterRun run;
        run.suite = suite;
        run.version = version;
        run.name = name;
        run.m = run.n = run.k = size;
        const std::string command =
            "timeout --kill-after=5 " + std::to_string(o.timeout_s) + " " + quote(ncu) +
            " --clock-control none --cache-control all --profile-from-start off --launch-count 8"
            " --csv --page raw --print-units base --metrics " +
            metric_list + " " + quote(self_path) + " --profile-one " + suite + ":" +
            std::to_string(version) + " --size " + std::to_string(size);
        const auto [rc, text] = capture(command);
        try {
          run.kernels = parse_ncu_csv(text, suite + ":" + std::to_string(version));
        } catch (const CountersParseError& e) {
          run.error = e.what();
        }
        if (rc != 0) {
          run.error = "ncu exited with " + std::to_string(rc) + ": " + tail(text, 6);
        } else if (!run.error && run.kernels.empty()) {
          run.error = "ncu profiled no kernel: " + tail(text, 6);
        }
        sum_kernel_metrics(run, report.metrics);
        log << "  " << suite << " " << size << "³ v" << version << " " << name << ": "
            << (run.error ? "ERROR " + *run.error
                          : std::to_string(run.kernels.size()) + " kernel(s), DRAM " +
                                std::to_string(run.measured["dram_read_bytes"] / 1e6) + " MB read")
            << "\n"
            << std::flush;
        report.runs.push_back(std::move(run));
      }
    }
  }
  return report;
}

int profile_one(const std::string& suite, int version, int size, std::ostream& log) {
  try {
    if (size <= 0 || size % 128 != 0) {
      log << "--size must be a positive multiple of 128 (got " << size << ")\n";
      return 1;
    }
    const GemmShape s{size, size, size};
    const std::size_t mk = (size_t)size * size;
    const Blas blas;
    DeviceBuffer<float> a(mk), b(mk), bias(size), c(mk), tmp(mk), out(mk), ref(mk), ref2(mk);
    DeviceBuffer<std::uint16_t> ah, wh;
    cuda::fill_uniform_launch(a.get(), mk, 1000, -1.f, 1.f);
    cuda::fill_uniform_launch(b.get(), mk, 1001, -1.f, 1.f);
    cuda::fill_uniform_launch(bias.get(), size, 1002, -1.f, 1.f);
    const bool tensor = suite == "gemm_epilogue" && version >= 3;
    if (tensor) {  // fp16-representable inputs, W = Bᵀ for the tensor-core layout
      ah = DeviceBuffer<std::uint16_t>(mk);
      wh = DeviceBuffer<std::uint16_t>(mk);
      cuda::f32_to_f16_launch(a.get(), ah.get(), mk);
      cuda::f16_to_f32_launch(ah.get(), a.get(), mk);
      cuda::f32_to_f16_launch(b.get(), wh.get(), mk);
      cuda::f16_to_f32_launch(wh.get(), b.get(), mk);
      cuda::transpose_launch(b.get(), tmp.get(), size, size);
      cuda::f32_to_f16_launch(tmp.get(), wh.get(), mk);
    }
    const bool epilogue = suite == "gemm_epilogue";
    auto chain = [&] {
      cuda::bias_add_launch(c.get(), bias.get(), tmp.get(), size, size);
      cuda::relu_launch(tmp.get(), out.get(), mk);
    };
    std::function<void()> run;
    if (suite == "sgemm") {
      if (version == 0) {
        run = [&] { blas.sgemm(s, a.get(), b.get(), out.get()); };
      } else if (version >= 1 && version <= 8) {
        run = [&] { cuda::sgemm_launch(version, s, a.get(), b.get(), out.get()); };
      }
    } else if (suite == "gemm_epilogue") {
      switch (version) {
        case 0:
          run = [&] { blas.sgemm(s, a.get(), b.get(), c.get()), chain(); };
          break;
        case 1:
          run = [&] { cuda::sgemm_launch(8, s, a.get(), b.get(), c.get()), chain(); };
          break;
        case 2:
          run = [&] {
            cuda::sgemm_bias_relu_fused_launch(s, a.get(), b.get(), bias.get(), out.get());
          };
          break;
        case 3:
          run = [&] { cuda::hgemm_launch(2, s, ah.get(), wh.get(), c.get()), chain(); };
          break;
        case 4:
          run = [&] {
            cuda::hgemm_bias_relu_fused_launch(s, ah.get(), wh.get(), bias.get(), out.get());
          };
          break;
        default:
          break;
      }
    } else if (suite == "grid_order") {
      if (version == 1 || version == 2) {
        const int group = version == 1 ? 0 : 16;
        run = [&, group] { cuda::sgemm8_ordered_launch(group, s, a.get(), b.get(), out.get()); };
      }
    }
    if (!run) {
      log << "--profile-one: no version " << version << " in counters suite '" << suite << "'\n";
      return 1;
    }
    run();  // warm-up: module loading and cuBLAS's heuristics stay out of the profile
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    out.poison();
    TS_CUDA_CHECK(cudaProfilerStart());
    run();
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    TS_CUDA_CHECK(cudaProfilerStop());
    // The profiled launch computed the right thing (fp32 reference; fp16-exact inputs for the
    // tensor-core versions, so one tolerance per kind).
    blas.sgemm(s, a.get(), b.get(), ref.get());
    const float* want = ref.get();
    if (epilogue) {
      cuda::bias_relu_fused_launch(ref.get(), bias.get(), ref2.get(), size, size);
      want = ref2.get();
    }
    TS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got = out.to_host(), w(mk);
    TS_CUDA_CHECK(cudaMemcpy(w.data(), want, mk * sizeof(float), cudaMemcpyDeviceToHost));
    const double err = relative_error(got.data(), w.data(), mk);
    const double tol = tensor ? 1e-3 : 1e-4;
    log << "profile-one " << suite << ":" << version << " " << size << "³: rel_error " << err
        << (err <= tol ? " ok" : " FAILED") << "\n";
    return err <= tol ? 0 : 3;
  } catch (const std::exception& e) {
    log << "profile-one: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace tilescope::kernels

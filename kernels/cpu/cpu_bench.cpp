// The CPU benchmark runner: builds each suite's buffers and version list, verifies every version
// against version 0 (Eigen) on a poisoned output, times the verified ones, and writes the JSON.
//
// Index: [SECTION] Suite machinery · [SECTION] matmul · [SECTION] conv · [SECTION] bias_relu ·
//        [SECTION] jit · [SECTION] schedule_twin · [SECTION] Entry point
#include "kernels/cpu/cpu_bench.h"

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/harness.h"
#include "kernels/cpu/schedule_twin.h"
#include "kernels/cpu/versions.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>

namespace tilescope::kernels {

using nlohmann::json;

namespace {

// [SECTION] Suite machinery

struct Buffer {
  explicit Buffer(std::size_t n) : data(gemm::aligned_floats(n)), count(n) {}
  gemm::AlignedFloats data;
  std::size_t count;
  float* get() const { return data.get(); }
};

struct VersionRun {
  int number = 0;
  std::string name, changed;
  std::function<void(int rotation)> run;
  double bytes = 0.0;  // compulsory traffic of this version's passes
  bool multithreaded = false;
  std::string source = "hand";   // "hand" or "generated"
  std::string compiled = "aot";  // "aot" (with the library) or "jit" (at run time)
  std::string unavailable;       // non-empty: the version could not be built; why
  json extra = json::object();   // merged into the result (JIT command, compile time)
};

struct Comparison {
  std::string label;
  int slower = 0, faster = 0;  // version numbers: the expected-slower one first
};

struct Suite {
  std::string name, problem, reference = "eigen";
  std::string bound = "compute";  // which peak the % of peak is taken against
  double flops = 0.0, min_bytes = 0.0, tolerance = 1e-4;
  int rotations = 1;
  json sizes = json::object();
  std::size_t output_count = 0;
  std::function<float*(int rotation)> output;
  std::vector<VersionRun> versions;
  std::vector<Comparison> comparisons;
};

std::string format_number(double value, int precision) {
  std::ostringstream out;
  out << std::setprecision(precision) << value;
  return out.str();
}

json run_suite(Suite& suite, const CpuBenchOptions& options, const Peaks& peaks,
               std::ostream& log) {
  log << "suite " << suite.name << ": " << suite.problem << "\n";
  float* out0 = suite.output(0);
  // The reference: version 0 on a poisoned output.
  poison(out0, suite.output_count);
  const auto reference_t0 = std::chrono::steady_clock::now();
  suite.versions.front().run(0);
  const double reference_first_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - reference_t0).count();
  const std::vector<float> reference(out0, out0 + suite.output_count);
  const bool reference_finite =
      std::all_of(reference.begin(), reference.end(), [](float v) { return std::isfinite(v); });

  TimingOptions timing;
  timing.repeats = options.repeats;
  timing.rotations = suite.rotations;

  json results = json::array();
  std::vector<std::size_t> timed;             // indices into results
  std::vector<const VersionRun*> timed_runs;  // the verified versions, in order
  std::vector<double> timed_first_s;          // their verification run's time
  std::vector<double> first_run_s;            // every version's verification run's time
  double reference_ms = 0.0;
  std::map<int, json> by_number;
  for (auto& v : suite.versions) {
    json r = {{"version", v.number},
              {"name", v.name},
              {"changed", v.changed},
              {"source", v.source},
              {"compiled", v.compiled},
              {"bytes", v.bytes},
              {"multithreaded", v.multithreaded}};
    r.update(v.extra);
    log << "  v" << v.number << " " << v.name << ": ";
    if (!v.unavailable.empty()) {
      r["verified"] = false;
      r["rel_error"] = nullptr;
      r["note"] = v.unavailable;
      log << "not run: " << v.unavailable << "\n";
      results.push_back(r);
      continue;
    }
    double error = 0.0;
    if (v.number == suite.versions.front().number) {
      error = reference_finite ? 0.0 : std::numeric_limits<double>::infinity();
      first_run_s.push_back(reference_first_s);
    } else {
      poison(out0, suite.output_count);
      const auto t0 = std::chrono::steady_clock::now();
      v.run(0);
      first_run_s.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      error = relative_error(out0, reference.data(), suite.output_count);
    }
    const bool verified = error <= suite.tolerance;
    r["verified"] = verified;
    r["rel_error"] = std::isfinite(error) ? json(error) : json(nullptr);
    if (!verified) {
      r["note"] = std::isfinite(error)
                      ? "output differs from the reference: relative error " +
                            format_number(error, 3) + " > tolerance " +
                            format_number(suite.tolerance, 3) + "; not timed"
                      : std::string(
                            "output holds NaN or infinity where the poisoned buffer was "
                            "never written (or the reference failed); not timed");
      log << "FAILED verification (" << r["note"].get<std::string>() << ")\n";
      results.push_back(r);
      continue;
    }
    log << "verified (rel err " << format_number(error, 2) << ")\n";
    timed.push_back(results.size());
    timed_runs.push_back(&v);
    timed_first_s.push_back(first_run_s.back());
    results.push_back(r);
  }

  // Timing, after every version was verified. Versions within kSlowFactor of the reference's
  // first run are timed round-robin, so load from other processes falls on all of them alike and
  // their ratios hold; much slower ones (naive loops) are timed alone, or they would set the pace.
  constexpr double kSlowFactor = 20.0;
  std::vector<Timing> timings(timed_runs.size());
  std::vector<std::size_t> together, alone;
  for (std::size_t i = 0; i < timed_runs.size(); ++i)
    (timed_first_s[i] <= kSlowFactor * std::max(reference_first_s, 1e-6) ? together : alone)
        .push_back(i);
  if (!together.empty()) {
    std::vector<std::function<void(int)>> runs;
    for (std::size_t i : together) runs.push_back(timed_runs[i]->run);
    log << "  timing " << runs.size() << " versions round-robin...\n";
    const std::vector<Timing> round_robin = time_runs_interleaved(runs, timing);
    for (std::size_t j = 0; j < together.size(); ++j) timings[together[j]] = round_robin[j];
  }
  for (std::size_t i : alone) {
    log << "  timing v" << timed_runs[i]->number << " " << timed_runs[i]->name << " alone...";
    log.flush();
    timings[i] = time_runs(timed_runs[i]->run, timing);
    log << " " << format_number(timings[i].median_ms, 4) << " ms\n";
  }
  for (std::size_t i = 0; i < timed_runs.size(); ++i) {
    const VersionRun& v = *timed_runs[i];
    const Timing& t = timings[i];
    json& r = results[timed[i]];
    const double seconds = t.median_ms * 1e-3;
    const double gflops = suite.flops / seconds / 1e9;
    const double gbps = v.bytes / seconds / 1e9;
    if (v.number == suite.versions.front().number) reference_ms = t.median_ms;
    r["median_ms"] = t.median_ms;
    r["min_ms"] = t.min_ms;
    r["repeats"] = t.repeats;
    r["gflops"] = gflops;
    r["gbps"] = gbps;
    const double peak = suite.bound == "memory" ? peaks.gbps : peaks.gflops_fp32;
    if (peak > 0) r["pct_of_peak"] = 100.0 * (suite.bound == "memory" ? gbps : gflops) / peak;
    if (v.multithreaded)
      r["note"] = "uses " + std::to_string(matmul_thread_count()) +
                  " threads; the reference and the peaks are one thread's";
  }
  for (auto& r : results) {
    if (reference_ms > 0 && r.contains("median_ms"))
      r["pct_of_reference"] = 100.0 * reference_ms / r["median_ms"].get<double>();
    by_number[r["version"].get<int>()] = r;
  }

  json comparisons = json::array();
  for (const auto& c : suite.comparisons) {
    const json& slow = by_number[c.slower];
    const json& fast = by_number[c.faster];
    json entry = {
        {"label", c.label},
        {"slower", c.slower},
        {"faster", c.faster},
        {"byte_ratio", slow.value("bytes", 0.0) / std::max(1.0, fast.value("bytes", 0.0))}};
    if (slow.contains("median_ms") && fast.contains("median_ms")) {
      entry["time_ratio"] = slow["median_ms"].get<double>() / fast["median_ms"].get<double>();
      // Interference from other processes only ever adds time, so on a shared machine the ratio
      // of the fastest runs is the steadier of the two.
      entry["min_time_ratio"] = slow["min_ms"].get<double>() / fast["min_ms"].get<double>();
    } else {
      entry["time_ratio"] = nullptr;
      entry["min_time_ratio"] = nullptr;
    }
    comparisons.push_back(entry);
  }

  return {{"name", suite.name},   {"problem", suite.problem},     {"sizes", suite.sizes},
          {"flops", suite.flops}, {"min_bytes", suite.min_bytes}, {"reference", suite.reference},
          {"bound", suite.bound}, {"tolerance", suite.tolerance}, {"rotations", suite.rotations},
          {"results", results},   {"comparisons", comparisons}};
}

Buffer random_buffer(std::size_t count, unsigned seed) {
  Buffer b(count);
  fill_uniform(b.get(), count, seed);
  return b;
}

// [SECTION] matmul

json run_matmul_suite(const CpuBenchOptions& options, const Peaks& peaks, std::ostream& log) {
  // Quick sizes are deliberately not multiples of any tile (MR, NR, 256) so edges are exercised.
  const int m = options.quick ? 160 : 1024, n = options.quick ? 200 : 1024,
            k = options.quick ? 176 : 1024;
  const double mk = double(m) * k, kn = double(k) * n, mn = double(m) * n;
  Buffer a = random_buffer(m * std::size_t(k), 1), b = random_buffer(k * std::size_t(n), 2),
         bias = random_buffer(n, 3), y(m * std::size_t(n));
  const MatMulArgs args{a.get(), b.get(), bias.get(), y.get(), m, n, k};

  Suite s;
  s.name = "matmul";
  s.problem = "Y = relu(A·B + bias), M=" + std::to_string(m) + " N=" + std::to_string(n) +
              " K=" + std::to_string(k) + ", fp32, row-major (A M×K, B K×N, bias N)";
  s.sizes = {{"M", m}, {"N", n}, {"K", k}};
  s.flops = 2.0 * m * n * k + 2.0 * mn;  // the product, plus the bias add and the max per output
  const double compulsory = 4.0 * (mk + kn + n + mn);
  s.min_bytes = compulsory;
  s.output_count = y.count;
  s.output = [&](int) { return y.get(); };
  for (const auto& v : matmul_versions()) {
    VersionRun run;
    run.number = v.number;
    run.name = v.name;
    run.changed = v.changed;
    run.multithreaded = v.multithreaded;
    run.run = [fn = v.fn, args](int) { fn(args); };
    // Versions ≥ 5 fuse the epilogue; Eigen makes one extra pass over Y (read + write), versions
    // 1–4 two (bias, then ReLU).
    const int extra_passes = v.number >= 5 ? 0 : (v.number == 0 ? 1 : 2);
    run.bytes = compulsory + extra_passes * 2.0 * 4.0 * mn;
    s.versions.push_back(std::move(run));
  }
  s.comparisons = {{"register-blocked micro-kernel (4) vs naive ijk (1)", 1, 4},
                   {"fused bias+ReLU epilogue (5) vs two passes (4)", 4, 5},
                   {"threads (6) vs one thread (5)", 5, 6}};
  return run_suite(s, options, peaks, log);
}

// [SECTION] conv

json run_conv_suite(const CpuBenchOptions& options, const Peaks& peaks, std::ostream& log) {
  ConvArgs args;
  if (options.quick) {
    args.n = 2, args.c = 5, args.h = 13, args.wd = 11, args.f = 7, args.r = 3, args.s = 3;
  } else {
    args.n = 1, args.c = 64, args.h = 56, args.wd = 56, args.f = 128, args.r = 3, args.s = 3;
  }
  args.stride = 1, args.pad = 1;
  const int P = args.p(), Q = args.q();
  const double x_count = double(args.n) * args.c * args.h * args.wd;
  const double w_count = double(args.f) * args.c * args.r * args.s;
  const double y_count = double(args.n) * args.f * P * Q;
  const double col_count = double(args.n) * args.c * args.r * args.s * P * Q;
  Buffer x = random_buffer(std::size_t(x_count), 11), w = random_buffer(std::size_t(w_count), 12),
         bias = random_buffer(args.f, 13), y(static_cast<std::size_t>(y_count));
  args.x = x.get(), args.w = w.get(), args.bias = bias.get(), args.y = y.get();

  Suite s;
  s.name = "conv";
  std::ostringstream problem;
  problem << "Y = relu(conv2d(X, W) + bias), NCHW, N=" << args.n << " C=" << args.c
          << " H=" << args.h << " W=" << args.wd << ", F=" << args.f << " " << args.r << "×"
          << args.s << ", stride " << args.stride << ", pad " << args.pad << " → " << P << "×" << Q
          << ", fp32";
  s.problem = problem.str();
  s.sizes = {{"N", args.n}, {"C", args.c}, {"H", args.h},           {"W", args.wd},   {"F", args.f},
             {"R", args.r}, {"S", args.s}, {"stride", args.stride}, {"pad", args.pad}};
  s.flops = 2.0 * y_count * args.c * args.r * args.s + 2.0 * y_count;
  const double compulsory = 4.0 * (x_count + w_count + args.f + y_count);
  s.min_bytes = compulsory;
  s.output_count = y.count;
  s.output = [&](int) { return y.get(); };
  for (const auto& v : conv_versions()) {
    VersionRun run;
    run.number = v.number;
    run.name = v.name;
    run.changed = v.changed;
    run.run = [fn = v.fn, args](int) { fn(args); };
    const bool uses_col = v.number != 1;
    const int extra_passes = v.number == 3 ? 0 : (v.number == 0 ? 1 : 2);
    run.bytes =
        compulsory + (uses_col ? 2.0 * 4.0 * col_count : 0.0) + extra_passes * 2.0 * 4.0 * y_count;
    s.versions.push_back(std::move(run));
  }
  s.comparisons = {{"im2col + micro-kernel GEMM (2) vs direct (1)", 1, 2},
                   {"fused conv+bias+ReLU (3) vs two passes (2)", 2, 3}};
  return run_suite(s, options, peaks, log);
}

// [SECTION] bias_relu

json run_bias_relu_suite(const CpuBenchOptions& options, const Peaks& peaks, const HostInfo& host,
                         std::ostream& log) {
  const int rows = options.quick ? 300 : 4096, cols = options.quick ? 257 : 4096;
  const std::size_t count = std::size_t(rows) * cols;
  // The point is DRAM traffic: rotate through enough input/output sets that together they are
  // twice the last-level cache, so each run finds its operands evicted.
  const double set_bytes = 3.0 * 4.0 * count;  // X, T, Y
  int rotations = 1;
  if (!options.quick && host.llc_bytes > 0)
    rotations = std::clamp(static_cast<int>(std::ceil(2.0 * host.llc_bytes / set_bytes)), 1, 16);
  std::vector<Buffer> xs, ts, ys;
  for (int r = 0; r < rotations; ++r) {
    xs.push_back(random_buffer(count, 21 + r));
    ts.emplace_back(count);
    ys.emplace_back(count);
    poison(ts.back().get(), count);  // touch every page now, not inside a timed run
    poison(ys.back().get(), count);
  }
  Buffer bias = random_buffer(cols, 20);
  auto args_for = [&](int r) {
    return BiasReluArgs{xs[r].get(), bias.get(), ts[r].get(), ys[r].get(), rows, cols};
  };

  Suite s;
  s.name = "bias_relu";
  s.problem = "Y = relu(X + bias), " + std::to_string(rows) + "×" + std::to_string(cols) +
              " fp32 (" + format_number(4.0 * count / (1 << 20), 4) +
              " MiB per tensor), bias per column, " + std::to_string(rotations) +
              " rotating input/output sets";
  s.sizes = {{"rows", rows}, {"cols", cols}};
  s.bound = "memory";
  s.tolerance = 1e-6;
  s.rotations = rotations;
  s.flops = 2.0 * count;
  const double fused_bytes = 4.0 * (2.0 * count + cols);    // read X, write Y
  const double unfused_bytes = 4.0 * (4.0 * count + cols);  // + write T, read T
  s.min_bytes = fused_bytes;
  s.output_count = count;
  s.output = [&](int r) { return ys[r].get(); };
  for (const auto& v : elementwise_versions()) {
    VersionRun run;
    run.number = v.number;
    run.name = v.name;
    run.changed = v.changed;
    run.run = [fn = v.fn, args_for](int r) { fn(args_for(r)); };
    run.bytes = v.number == 1 ? unfused_bytes : fused_bytes;
    s.versions.push_back(std::move(run));
  }
  s.comparisons = {{"fused (2) vs unfused (1)", 1, 2}};
  return run_suite(s, options, peaks, log);
}

// [SECTION] jit

json run_jit_suite(const CpuBenchOptions& options, const Peaks& peaks, std::ostream& log) {
  const int size = options.quick ? 100 : 1024;
  const int m = size, n = size, k = size;
  const double mn = double(m) * n;
  Buffer a = random_buffer(std::size_t(m) * k, 31), b = random_buffer(std::size_t(k) * n, 32),
         bias = random_buffer(n, 33), y(std::size_t(m) * n);
  const MatMulArgs args{a.get(), b.get(), bias.get(), y.get(), m, n, k};

  Suite s;
  s.name = "jit";
  s.problem = "Y = relu(A·B + bias), M=N=K=" + std::to_string(size) +
              ", fp32: MatMul version 3 compiled with the library vs the same text JIT-compiled";
  s.sizes = {{"M", m}, {"N", n}, {"K", k}};
  s.flops = 2.0 * m * n * k + 2.0 * mn;
  const double compulsory = 4.0 * (double(m) * k + double(k) * n + n + mn);
  s.min_bytes = compulsory;
  s.output_count = y.count;
  s.output = [&](int) { return y.get(); };

  const auto& mm = matmul_versions();
  VersionRun eigen;
  eigen.number = 0;
  eigen.name = mm[0].name;
  eigen.changed = mm[0].changed;
  eigen.run = [args](int) { matmul_0_eigen(args); };
  eigen.bytes = compulsory + 2.0 * 4.0 * mn;
  VersionRun aot;
  aot.number = 1;
  aot.name = "tiled_aot";
  aot.changed = "MatMul version 3, compiled with the library (" + kernel_flags() + ")";
  aot.run = [args](int) { matmul_3_tiled(args); };
  aot.bytes = compulsory + 4.0 * 2.0 * 4.0 * mn;
  VersionRun jit = aot;
  jit.number = 2;
  jit.name = "tiled_jit";
  jit.compiled = "jit";
  log << "  compiling the JIT twin...\n";
  const JitResult compiled = jit_compile(tiled_matmul_jit_source(m, n, k), options.jit);
  jit.changed = "the same text behind the ts_kernel ABI, shapes baked in, compiled at run time";
  jit.extra = {{"jit_command", compiled.command},
               {"cache_hit", compiled.cache_hit},
               {"compile_seconds", compiled.compile_seconds},
               {"cache_key", compiled.cache_key}};
  if (compiled.ok) {
    std::shared_ptr<JitModule> module = compiled.module;
    jit.run = [module, args](int) {
      float* const tensors[] = {const_cast<float*>(args.a), const_cast<float*>(args.b),
                                const_cast<float*>(args.bias), args.y};
      module->kernel()(tensors);
    };
  } else {
    jit.unavailable =
        compiled.error +
        (compiled.compiler_output.empty() ? std::string() : "\n" + compiled.compiler_output);
  }
  s.versions = {eigen, aot, jit};
  s.comparisons = {{"JIT-compiled twin (2) vs ahead-of-time (1)", 1, 2}};
  return run_suite(s, options, peaks, log);
}

// [SECTION] schedule_twin

// A version built by the schedule module: the step text goes through parse → lower → apply →
// emit_cpp, and the source through the JIT. A refusal or a compile error makes the version
// unavailable with the reason, not the run.
VersionRun generated_version(int number, const std::string& name, const std::string& changed,
                             const std::string& steps, int m, int n, int k, const MatMulArgs& args,
                             const CpuBenchOptions& options, std::ostream& log) {
  VersionRun v;
  v.number = number;
  v.name = name;
  v.changed = changed;
  v.source = "generated";
  v.compiled = "jit";
  log << "  generating and compiling v" << number << " " << name << "...\n";
  GeneratedSchedule generated;
  try {
    generated = generate_schedule(schedule_twin_model(m, n, k), steps);
  } catch (const std::exception& e) {
    v.unavailable = e.what();
    v.extra = {{"steps", steps}};
    return v;
  }
  const JitResult compiled = jit_compile(generated.source, options.jit);
  v.extra = {{"steps", generated.steps},
             {"jit_command", compiled.command},
             {"cache_hit", compiled.cache_hit},
             {"compile_seconds", compiled.compile_seconds},
             {"cache_key", compiled.cache_key},
             {"note", "steps: " + generated.steps + " | JIT: " + compiled.command}};
  if (!compiled.ok) {
    v.unavailable =
        compiled.error +
        (compiled.compiler_output.empty() ? std::string() : "\n" + compiled.compiler_output);
    return v;
  }
  std::shared_ptr<JitModule> module = compiled.module;
  v.run = [module, args](int) {
    float* const tensors[] = {const_cast<float*>(args.a), const_cast<float*>(args.b),
                              const_cast<float*>(args.bias), args.y};
    module->kernel()(tensors);
  };
  return v;
}

json run_schedule_twin_suite(const CpuBenchOptions& options, const Peaks& peaks,
                             std::ostream& log) {
  // Quick sizes leave partial tiles on every loop the schedule splits (20 = 2·8 + 4 rows,
  // 300 = 256 + 32 + 12 columns), so the guards of the generated code and the edge blocks of the
  // hand-written twin are both exercised.
  const int m = options.quick ? 20 : 1024, n = options.quick ? 300 : 1024,
            k = options.quick ? 40 : 1024;
  const double mn = double(m) * n;
  Buffer a = random_buffer(std::size_t(m) * k, 41), b = random_buffer(std::size_t(k) * n, 42),
         bias = random_buffer(n, 43), y(std::size_t(m) * n);
  const MatMulArgs args{a.get(), b.get(), bias.get(), y.get(), m, n, k};

  Suite s;
  s.name = "schedule_twin";
  s.problem = "Y = relu(A·B + bias), M=" + std::to_string(m) + " N=" + std::to_string(n) +
              " K=" + std::to_string(k) +
              ", fp32, row-major: one schedule generated by sim/schedule and JIT-compiled vs the "
              "same loop nest written by hand";
  s.sizes = {{"M", m}, {"N", n}, {"K", k}};
  s.flops = 2.0 * m * n * k + 2.0 * mn;
  const double compulsory = 4.0 * (double(m) * k + double(k) * n + n + mn);
  s.min_bytes = compulsory;
  s.output_count = y.count;
  s.output = [&](int) { return y.get(); };

  const std::string steps = schedule_twin_steps();
  VersionRun eigen;
  eigen.number = 0;
  eigen.name = matmul_versions()[0].name;
  eigen.changed = matmul_versions()[0].changed;
  eigen.run = [args](int) { matmul_0_eigen(args); };
  eigen.bytes = compulsory + 2.0 * 4.0 * mn;
  VersionRun hand;
  hand.number = 1;
  hand.name = "sched_twin_hand";
  hand.changed = "the loop nest of `" + steps +
                 "` written by hand (matmul_sched_twin.cpp), compiled with the library (" +
                 kernel_flags() + ")";
  hand.run = [args](int) { matmul_sched_twin(args); };
  hand.bytes = compulsory;
  hand.extra = {{"steps", steps}};
  VersionRun generated = generated_version(
      2, "sched_twin_generated",
      "the same steps applied by sim/schedule, emitted by emit_cpp, compiled by the JIT", steps, m,
      n, k, args, options, log);
  generated.bytes = compulsory;
  // The progression, generated too: what the default lowering and one reorder give on their own.
  const std::string fuse = "fuse(matmul0, add0, relu0)";
  VersionRun ijk = generated_version(
      3, "generated_ijk", "default lowering with the epilogue fused: i, j, k with k innermost",
      fuse, m, n, k, args, options, log);
  ijk.bytes = compulsory;
  VersionRun ikj = generated_version(
      4, "generated_ikj", "reorder(i, k, j): j innermost, so B and y are read along rows",
      fuse + "; reorder(i, k, j)", m, n, k, args, options, log);
  ikj.bytes = compulsory;
  const SchedTwinTiles t = kSchedTwinTiles;
  VersionRun tiled = generated_version(
      5, "generated_tiled_no_hints",
      "the twin's tiles and order without unroll(i.i) and vectorize(j.i.i): what the hints add",
      fuse + "; tile(j, " + std::to_string(t.panel_n) + "); tile(i, " + std::to_string(t.rows) +
          "); tile(j.i, " + std::to_string(t.cols) + "); reorder(j.o, i.o, j.i.o, k, i.i, j.i.i)",
      m, n, k, args, options, log);
  tiled.bytes = compulsory;
  s.versions = {eigen, hand, generated, ijk, ikj, tiled};
  s.comparisons = {{"generated + JIT (2) vs its hand-written twin (1)", 1, 2},
                   {"generated ikj (4) vs generated ijk (3)", 3, 4},
                   {"generated twin schedule (2) vs generated ikj (4)", 4, 2},
                   {"unroll + vectorize hints (2) vs without (5)", 5, 2}};
  return run_suite(s, options, peaks, log);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one.empty() ? "unknown" : one + " " + five + " " + fifteen;
}

}  // namespace

// [SECTION] Entry point

std::vector<std::string> cpu_bench_suites() {
  return {"matmul", "conv", "bias_relu", "jit", "schedule_twin"};
}

json run_cpu_bench(const CpuBenchOptions& options, std::ostream& log) {
  const auto suites = cpu_bench_suites();
  if (!options.suite.empty() &&
      std::find(suites.begin(), suites.end(), options.suite) == suites.end()) {
    std::string known;
    for (const auto& s : suites) known += (known.empty() ? "" : ", ") + s;
    throw BenchError("unknown CPU suite '" + options.suite + "': the suites are " + known);
  }
  if (options.repeats < 1)
    throw BenchError("--repeats must be at least 1 (got " + std::to_string(options.repeats) + ")");

  eigen_use_one_thread();  // the reference is single-threaded, like versions 0–5
  const HostInfo host = host_info();
  const std::string load_before = load_average();
  log << "host: " << host.cpu << ", " << host.cores << " hardware threads, " << host.caches
      << "; load average " << load_before << "\n";
  log << "measuring single-thread peaks...\n";
  const Peaks peaks = measure_peaks(options.quick);
  log << "peaks: " << format_number(peaks.gflops_fp32, 4) << " GFLOP/s fp32, "
      << format_number(peaks.gbps, 4) << " GB/s (" << peaks.source << ")\n";

  json report = {{"schema", "tilescope-bench/1"},
                 {"kind", "cpu"},
                 {"date", utc_now()},
                 {"host",
                  {{"cpu", host.cpu},
                   {"cores", host.cores},
                   {"caches", host.caches},
                   {"vector_isa", host.vector_isa},
                   {"load_average_before", load_before}}},
                 {"compiler", kernel_compiler()},
                 {"flags", kernel_flags()},
                 {"quick", options.quick},
                 {"peaks", {{"gflops_fp32", peaks.gflops_fp32}, {"gbps", peaks.gbps}}},
                 {"peaks_source", peaks.source}};
  json out_suites = json::array();
  for (const auto& name : suites) {
    if (!options.suite.empty() && name != options.suite) continue;
    if (name == "matmul") out_suites.push_back(run_matmul_suite(options, peaks, log));
    if (name == "conv") out_suites.push_back(run_conv_suite(options, peaks, log));
    if (name == "bias_relu") out_suites.push_back(run_bias_relu_suite(options, peaks, host, log));
    if (name == "jit") out_suites.push_back(run_jit_suite(options, peaks, log));
    if (name == "schedule_twin") out_suites.push_back(run_schedule_twin_suite(options, peaks, log));
  }
  report["suites"] = out_suites;
  report["host"]["load_average_after"] = load_average();
  return report;
}

}  // namespace tilescope::kernels

// The CPU benchmark runner: builds each suite's buffers and version list, verifies every version
// against version 0 (Eigen) on a poisoned output, times the verified ones, and fills the report.
//
// Index: [SECTION] Suite machinery · [SECTION] matmul · [SECTION] conv · [SECTION] bias_relu ·
//        [SECTION] jit · [SECTION] schedule_twin · [SECTION] Entry point
#include "kernels/cpu/cpu_bench.h"

#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/harness.h"
#include "kernels/cpu/schedule_twin.h"
#include "kernels/cpu/versions.h"
#include "kernels/gemm_problem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

namespace tilescope::kernels {

namespace {

// [SECTION] Suite machinery

struct Buffer {
  explicit Buffer(std::size_t n) : data(gemm::aligned_floats(n)), count(n) {}
  gemm::AlignedFloats data;
  std::size_t count;
  float* get() const { return data.get(); }
};

// One version: its description (number, name, what changed, bytes, how it was built) as it will
// appear in the report, and how to run it.
struct VersionRun {
  VersionResult info;
  std::function<void(int rotation)> run;
  std::string unavailable;  // non-empty: the version could not be built; why
};

// One suite: its description (problem, sizes, FLOPs, tolerance, comparisons by version number),
// its output buffer(s) and its versions, version 0 (the reference) first.
struct Suite {
  SuiteResult info;
  std::size_t output_count = 0;
  std::function<float*(int rotation)> output;
  std::vector<VersionRun> versions;
};

Suite make_suite(const std::string& name, const std::string& problem) {
  Suite s;
  s.info.name = name;
  s.info.problem = problem;
  s.info.reference = "eigen";
  s.info.bound = "compute";
  s.info.tolerance = kGemmToleranceFp32;
  s.info.rotations = 1;
  return s;
}

VersionRun make_version(int number, const std::string& name, const std::string& changed) {
  VersionRun v;
  v.info.version = number;
  v.info.name = name;
  v.info.changed = changed;
  v.info.source = "hand";
  v.info.compiled = "aot";
  v.info.multithreaded = false;
  return v;
}

void add_comparison(Suite& s, const std::string& label, int slower, int faster) {
  Comparison c;
  c.label = label;
  c.slower = slower;
  c.faster = faster;
  s.info.comparisons.push_back(c);
}

std::string format_number(double value, int precision) {
  std::ostringstream out;
  out << std::setprecision(precision) << value;
  return out.str();
}

SuiteResult run_suite(Suite& suite, const CpuBenchOptions& options, const Peaks& peaks,
                      std::ostream& log) {
  SuiteResult result = suite.info;
  const double tolerance = result.tolerance.value_or(kGemmToleranceFp32);
  log << "suite " << result.name << ": " << result.problem << "\n";
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
  timing.rotations = result.rotations.value_or(1);

  std::vector<std::size_t> timed;             // indices into result.results
  std::vector<const VersionRun*> timed_runs;  // the verified versions, in order
  std::vector<double> timed_first_s;          // their verification run's time
  for (auto& v : suite.versions) {
    VersionResult r = v.info;
    log << "  v" << r.version << " " << r.name << ": ";
    if (!v.unavailable.empty()) {
      r.verified = false;
      r.rel_error = std::nullopt;
      r.note = v.unavailable;
      log << "not run: " << v.unavailable << "\n";
      result.results.push_back(r);
      continue;
    }
    double error = 0.0;
    double first_s = reference_first_s;
    if (&v == &suite.versions.front()) {
      error = reference_finite ? 0.0 : std::numeric_limits<double>::infinity();
    } else {
      poison(out0, suite.output_count);
      const auto t0 = std::chrono::steady_clock::now();
      v.run(0);
      first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      error = relative_error(out0, reference.data(), suite.output_count);
    }
    r.verified = error <= tolerance;
    r.rel_error = std::isfinite(error) ? std::optional<double>(error) : std::nullopt;
    if (!r.verified) {
      r.note = std::isfinite(error)
                   ? "output differs from the reference: relative error " +
                         format_number(error, 3) + " > tolerance " + format_number(tolerance, 3) +
                         "; not timed"
                   : std::string(
                         "output holds NaN or infinity where the poisoned buffer was "
                         "never written (or the reference failed); not timed");
      log << "FAILED verification (" << *r.note << ")\n";
      result.results.push_back(r);
      continue;
    }
    log << "verified (rel err " << format_number(error, 2) << ")\n";
    timed.push_back(result.results.size());
    timed_runs.push_back(&v);
    timed_first_s.push_back(first_s);
    result.results.push_back(r);
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
    log << "  timing v" << timed_runs[i]->info.version << " " << timed_runs[i]->info.name
        << " alone...";
    log.flush();
    timings[i] = time_runs(timed_runs[i]->run, timing);
    log << " " << format_number(timings[i].median_ms, 4) << " ms\n";
  }
  for (std::size_t i = 0; i < timed_runs.size(); ++i) {
    VersionResult& r = result.results[timed[i]];
    r.timing = timings[i];
    if (r.multithreaded.value_or(false) && !r.note)
      r.note = "uses " +
               std::to_string(options.threads > 0 ? options.threads : matmul_thread_count()) +
               " threads; the peaks are one thread's";
  }
  const PeakRates peak_rates{peaks.gflops_fp32, peaks.gbps};
  derive_rates(result, suite.versions.front().info.version, &peak_rates);
  return result;
}

Buffer random_buffer(std::size_t count, std::uint64_t seed) {
  Buffer b(count);
  fill_uniform(b.get(), count, static_cast<unsigned>(seed));
  return b;
}

// The buffers of a GEMM problem: A, B and the bias from its seeds, Y for the output.
struct GemmBuffers {
  explicit GemmBuffers(const GemmProblem& p)
      : a(random_buffer(p.a_count(), p.seed)),
        b(random_buffer(p.b_count(), p.seed + 1)),
        bias(random_buffer(std::size_t(p.n), p.seed + 2)),
        y(p.y_count()) {}
  Buffer a, b, bias, y;
  MatMulArgs args(const GemmProblem& p) const {
    return {a.get(), b.get(), bias.get(), y.get(), p.m, p.n, p.k};
  }
};

// A GEMM suite's description from its problem: sizes, FLOPs, compulsory bytes, the output.
Suite make_gemm_suite(const std::string& name, const std::string& problem_text,
                      const GemmProblem& p, GemmBuffers& buffers) {
  Suite s = make_suite(name, problem_text);
  s.info.reference = p.reference;
  s.info.sizes = p.sizes();
  s.info.flops = p.flops();
  s.info.min_bytes = p.compulsory_bytes();
  s.output_count = buffers.y.count;
  s.output = [&buffers](int) { return buffers.y.get(); };
  return s;
}

// [SECTION] matmul

SuiteResult run_matmul_suite(const CpuBenchOptions& options, const Peaks& peaks,
                             std::ostream& log) {
  GemmProblem p = gemm_problem(GemmSuite::cpu_matmul, options.quick);
  if (options.size > 0) p.m = p.n = p.k = options.size;
  GemmBuffers buffers(p);
  MatMulArgs args = buffers.args(p);
  const int threads = options.threads > 0 ? options.threads : matmul_thread_count();
  args.threads = threads;
  Suite s = make_gemm_suite(
      "matmul",
      "Y = relu(A·B + bias), " + p.shape_text() + ", fp32, row-major (A M×K, B K×N, bias N)", p,
      buffers);
  for (const auto& v : matmul_versions()) {
    VersionRun run = make_version(v.number, v.name, v.changed);
    run.info.multithreaded = v.multithreaded;
    run.run = [fn = v.fn, args](int) { fn(args); };
    // Versions 5 and 6 fuse the epilogue; Eigen (0 and 7) makes one extra pass over Y (read +
    // write), versions 1–4 two (bias, then ReLU).
    const bool eigen = v.number == 0 || v.number == 7;
    run.info.bytes = p.bytes(eigen ? 1 : (v.number >= 5 ? 0 : 2));
    if (v.number == 6) {
      const MatMulGrid grid = matmul_thread_grid(threads, p.m, p.n, p.k);
      run.info.note = "uses " + std::to_string(grid.rows * grid.cols) + " of " +
                      std::to_string(threads) + " threads: Y in " + std::to_string(grid.rows) +
                      "×" + std::to_string(grid.cols) + " blocks; the peaks are one thread's";
    }
    if (v.number == 7) {
      if (eigen_threads_available()) {
        std::string note = "Eigen on " + std::to_string(threads) + " OpenMP threads";
        // GNU OpenMP's threads spin after each call (for milliseconds) unless told to sleep; in
        // a round-robin they take the cores of the version timed next — version 6's pool — so
        // the side-by-side is fair only with OMP_WAIT_POLICY=passive (read at program start).
        const char* policy = std::getenv("OMP_WAIT_POLICY");
        if (!policy || std::string(policy) != "passive")
          note +=
              "; OMP_WAIT_POLICY is not passive: its threads spin after each call and slow the "
              "version timed next (set OMP_WAIT_POLICY=passive for a fair 6 vs 7)";
        run.info.note = note;
      }
      else
        run.unavailable =
            "Eigen was built without OpenMP here (the compiler's OpenMP was not found when "
            "tilescope was configured), so it cannot run on several threads";
    }
    s.versions.push_back(std::move(run));
  }
  add_comparison(s, "register-blocked micro-kernel (4) vs naive ijk (1)", 1, 4);
  add_comparison(s, "fused bias+ReLU epilogue (5) vs two passes (4)", 4, 5);
  add_comparison(s, "micro-kernel, fused (5) vs Eigen (0), one thread", 0, 5);
  add_comparison(s, "threads (6) vs one thread (5)", 5, 6);
  add_comparison(s, "threads (6) vs Eigen on the same " + std::to_string(threads) + " threads (7)",
                 7, 6);
  return run_suite(s, options, peaks, log);
}

// [SECTION] conv

SuiteResult run_conv_suite(const CpuBenchOptions& options, const Peaks& peaks, std::ostream& log) {
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

  std::ostringstream problem;
  problem << "Y = relu(conv2d(X, W) + bias), NCHW, N=" << args.n << " C=" << args.c
          << " H=" << args.h << " W=" << args.wd << ", F=" << args.f << " " << args.r << "×"
          << args.s << ", stride " << args.stride << ", pad " << args.pad << " → " << P << "×" << Q
          << ", fp32";
  Suite s = make_suite("conv", problem.str());
  s.info.sizes = {{"N", args.n},  {"C", args.c},           {"H", args.h},
                  {"W", args.wd}, {"F", args.f},           {"R", args.r},
                  {"S", args.s},  {"stride", args.stride}, {"pad", args.pad}};
  s.info.flops = 2.0 * y_count * args.c * args.r * args.s + 2.0 * y_count;
  const double compulsory = 4.0 * (x_count + w_count + args.f + y_count);
  s.info.min_bytes = compulsory;
  s.output_count = y.count;
  s.output = [&](int) { return y.get(); };
  for (const auto& v : conv_versions()) {
    VersionRun run = make_version(v.number, v.name, v.changed);
    run.run = [fn = v.fn, args](int) { fn(args); };
    const bool uses_col = v.number != 1;
    const int extra_passes = v.number == 3 ? 0 : (v.number == 0 ? 1 : 2);
    run.info.bytes =
        compulsory + (uses_col ? 2.0 * 4.0 * col_count : 0.0) + extra_passes * 2.0 * 4.0 * y_count;
    s.versions.push_back(std::move(run));
  }
  add_comparison(s, "im2col + micro-kernel GEMM (2) vs direct (1)", 1, 2);
  add_comparison(s, "fused conv+bias+ReLU (3) vs two passes (2)", 2, 3);
  return run_suite(s, options, peaks, log);
}

// [SECTION] bias_relu

SuiteResult run_bias_relu_suite(const CpuBenchOptions& options, const Peaks& peaks,
                                const HostInfo& host, std::ostream& log) {
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

  Suite s = make_suite("bias_relu", "Y = relu(X + bias), " + std::to_string(rows) + "×" +
                                        std::to_string(cols) + " fp32 (" +
                                        format_number(4.0 * count / (1 << 20), 4) +
                                        " MiB per tensor), bias per column, " +
                                        std::to_string(rotations) + " rotating input/output sets");
  s.info.sizes = {{"rows", rows}, {"cols", cols}};
  s.info.bound = "memory";
  s.info.tolerance = 1e-6;
  s.info.rotations = rotations;
  s.info.flops = 2.0 * count;
  const double fused_bytes = 4.0 * (2.0 * count + cols);    // read X, write Y
  const double unfused_bytes = 4.0 * (4.0 * count + cols);  // + write T, read T
  s.info.min_bytes = fused_bytes;
  s.output_count = count;
  s.output = [&](int r) { return ys[r].get(); };
  for (const auto& v : elementwise_versions()) {
    VersionRun run = make_version(v.number, v.name, v.changed);
    run.run = [fn = v.fn, args_for](int r) { fn(args_for(r)); };
    run.info.bytes = v.number == 1 ? unfused_bytes : fused_bytes;
    s.versions.push_back(std::move(run));
  }
  add_comparison(s, "fused (2) vs unfused (1)", 1, 2);
  return run_suite(s, options, peaks, log);
}

// [SECTION] jit

// A JIT build's record in the report: the command, whether the cache served it, how long it took.
void record_jit_build(VersionResult& info, const JitResult& compiled) {
  info.jit_command = compiled.command;
  info.cache_hit = compiled.cache_hit;
  info.compile_seconds = compiled.compile_seconds;
  info.cache_key = compiled.cache_key;
}

// Runs a JIT-compiled ts_kernel on the GEMM arguments {A, B, bias, Y}.
std::function<void(int)> jit_gemm_run(std::shared_ptr<JitModule> module, const MatMulArgs& args) {
  return [module, args](int) {
    float* const tensors[] = {const_cast<float*>(args.a), const_cast<float*>(args.b),
                              const_cast<float*>(args.bias), args.y};
    module->kernel()(tensors);
  };
}

std::string jit_failure(const JitResult& compiled) {
  return compiled.error +
         (compiled.compiler_output.empty() ? std::string() : "\n" + compiled.compiler_output);
}

// Version 0 of every GEMM suite: Eigen, then one fused bias+ReLU pass over Y.
VersionRun eigen_gemm_version(const GemmProblem& p, const MatMulArgs& args) {
  const auto& mm = matmul_versions();
  VersionRun eigen = make_version(0, mm[0].name, mm[0].changed);
  eigen.run = [args](int) { matmul_0_eigen(args); };
  eigen.info.bytes = p.bytes(1);
  return eigen;
}

SuiteResult run_jit_suite(const CpuBenchOptions& options, const Peaks& peaks, std::ostream& log) {
  const GemmProblem p = gemm_problem(GemmSuite::cpu_jit, options.quick);
  GemmBuffers buffers(p);
  const MatMulArgs args = buffers.args(p);
  Suite s = make_gemm_suite(
      "jit",
      "Y = relu(A·B + bias), M=N=K=" + std::to_string(p.m) +
          ", fp32: MatMul version 3 compiled with the library vs the same text JIT-compiled",
      p, buffers);

  VersionRun aot = make_version(
      1, "tiled_aot", "MatMul version 3, compiled with the library (" + kernel_flags() + ")");
  aot.run = [args](int) { matmul_3_tiled(args); };
  aot.info.bytes = p.bytes(2);  // version 3 adds the bias, then applies the ReLU: two passes
  VersionRun jit = aot;
  jit.info.version = 2;
  jit.info.name = "tiled_jit";
  jit.info.compiled = "jit";
  jit.info.changed =
      "the same text behind the ts_kernel ABI, shapes baked in, compiled at run time";
  log << "  compiling the JIT twin...\n";
  const JitResult compiled = jit_compile(tiled_matmul_jit_source(p.m, p.n, p.k), options.jit);
  record_jit_build(jit.info, compiled);
  if (compiled.ok)
    jit.run = jit_gemm_run(compiled.module, args);
  else
    jit.unavailable = jit_failure(compiled);
  s.versions = {eigen_gemm_version(p, args), aot, jit};
  add_comparison(s, "JIT-compiled twin (2) vs ahead-of-time (1)", 1, 2);
  return run_suite(s, options, peaks, log);
}

// [SECTION] schedule_twin

// A version built by the schedule module: the step text goes through parse → lower → apply →
// emit_cpp, and the source through the JIT. A refusal or a compile error makes the version
// unavailable with the reason, not the run. All fuse the epilogue: compulsory bytes only.
VersionRun generated_version(int number, const std::string& name, const std::string& changed,
                             const std::string& steps, const GemmProblem& p, const MatMulArgs& args,
                             const CpuBenchOptions& options, std::ostream& log) {
  VersionRun v = make_version(number, name, changed);
  v.info.source = "generated";
  v.info.compiled = "jit";
  v.info.bytes = p.compulsory_bytes();
  log << "  generating and compiling v" << number << " " << name << "...\n";
  GeneratedSchedule generated;
  try {
    generated = generate_schedule(schedule_twin_model(p.m, p.n, p.k), steps);
  } catch (const std::exception& e) {
    v.unavailable = e.what();
    v.info.steps = steps;
    return v;
  }
  const JitResult compiled = jit_compile(generated.source, options.jit);
  v.info.steps = generated.steps;
  record_jit_build(v.info, compiled);
  v.info.note = "steps: " + generated.steps + " | JIT: " + compiled.command;
  if (!compiled.ok) {
    v.unavailable = jit_failure(compiled);
    return v;
  }
  v.run = jit_gemm_run(compiled.module, args);
  return v;
}

SuiteResult run_schedule_twin_suite(const CpuBenchOptions& options, const Peaks& peaks,
                                    std::ostream& log) {
  const GemmProblem p = gemm_problem(GemmSuite::cpu_schedule_twin, options.quick);
  GemmBuffers buffers(p);
  const MatMulArgs args = buffers.args(p);
  Suite s = make_gemm_suite(
      "schedule_twin",
      "Y = relu(A·B + bias), " + p.shape_text() +
          ", fp32, row-major: one schedule generated by sim/schedule and JIT-compiled vs the "
          "same loop nest written by hand",
      p, buffers);

  const std::string steps = schedule_twin_steps();
  VersionRun hand = make_version(1, "sched_twin_hand",
                                 "the loop nest of `" + steps +
                                     "` written by hand (matmul_sched_twin.cpp), compiled with "
                                     "the library (" +
                                     kernel_flags() + ")");
  hand.run = [args](int) { matmul_sched_twin(args); };
  hand.info.bytes = p.compulsory_bytes();
  hand.info.steps = steps;
  VersionRun generated = generated_version(
      2, "sched_twin_generated",
      "the same steps applied by sim/schedule, emitted by emit_cpp, compiled by the JIT", steps, p,
      args, options, log);
  // The progression, generated too: what the default lowering and one reorder give on their own.
  const std::string fuse = "fuse(matmul0, add0, relu0)";
  VersionRun ijk = generated_version(
      3, "generated_ijk", "default lowering with the epilogue fused: i, j, k with k innermost",
      fuse, p, args, options, log);
  VersionRun ikj = generated_version(
      4, "generated_ikj", "reorder(i, k, j): j innermost, so B and y are read along rows",
      fuse + "; reorder(i, k, j)", p, args, options, log);
  const SchedTwinTiles t = kSchedTwinTiles;
  VersionRun tiled = generated_version(
      5, "generated_tiled_no_hints",
      "the twin's tiles and order without unroll(i.i) and vectorize(j.i.i): what the hints add",
      fuse + "; tile(j, " + std::to_string(t.panel_n) + "); tile(i, " + std::to_string(t.rows) +
          "); tile(j.i, " + std::to_string(t.cols) + "); reorder(j.o, i.o, j.i.o, k, i.i, j.i.i)",
      p, args, options, log);
  s.versions = {eigen_gemm_version(p, args), hand, generated, ijk, ikj, tiled};
  add_comparison(s, "generated + JIT (2) vs its hand-written twin (1)", 1, 2);
  add_comparison(s, "generated ikj (4) vs generated ijk (3)", 3, 4);
  add_comparison(s, "generated twin schedule (2) vs generated ikj (4)", 4, 2);
  add_comparison(s, "unroll + vectorize hints (2) vs without (5)", 5, 2);
  return run_suite(s, options, peaks, log);
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

BenchReport run_cpu_bench(const CpuBenchOptions& options, std::ostream& log) {
  const std::vector<std::string> suites = select_suites(options.suite, cpu_bench_suites(), "CPU");
  if (options.repeats < 1)
    throw BenchError("--repeats must be at least 1 (got " + std::to_string(options.repeats) + ")");
  if (options.size < 0 || options.size > kMaxMatMulSize)
    throw BenchError("--size must be between 1 and " + std::to_string(kMaxMatMulSize) + " (got " +
                     std::to_string(options.size) + ")");
  if (options.threads < 0 || options.threads > kMaxBenchThreads)
    throw BenchError("--threads must be between 1 and " + std::to_string(kMaxBenchThreads) +
                     " (got " + std::to_string(options.threads) + ")");

  eigen_use_one_thread();  // the reference is single-threaded, like versions 0–5
  const HostInfo host = host_info();
  const std::string load_before = load_average();
  log << "host: " << host.cpu << ", " << host.cores << " hardware threads, " << host.caches
      << "; load average " << load_before << "\n";
  log << "measuring single-thread peaks...\n";
  const Peaks peaks = measure_peaks(options.quick);
  log << "peaks: " << format_number(peaks.gflops_fp32, 4) << " GFLOP/s fp32, "
      << format_number(peaks.gbps, 4) << " GB/s (" << peaks.source << ")\n";

  BenchReport report;
  report.kind = "cpu";
  report.date = utc_timestamp();
  HostDescription described;
  described.cpu = host.cpu;
  described.cores = host.cores;
  described.caches = host.caches;
  described.vector_isa = host.vector_isa;
  described.load_average_before = load_before;
  report.compiler = kernel_compiler();
  report.flags = kernel_flags();
  report.quick = options.quick;
  report.peaks = PeakRates{peaks.gflops_fp32, peaks.gbps};
  report.peaks_source = peaks.source;
  for (const auto& name : suites) {
    if (name == "matmul") report.suites.push_back(run_matmul_suite(options, peaks, log));
    if (name == "conv") report.suites.push_back(run_conv_suite(options, peaks, log));
    if (name == "bias_relu")
      report.suites.push_back(run_bias_relu_suite(options, peaks, host, log));
    if (name == "jit") report.suites.push_back(run_jit_suite(options, peaks, log));
    if (name == "schedule_twin")
      report.suites.push_back(run_schedule_twin_suite(options, peaks, log));
  }
  described.load_average_after = load_average();
  report.host = described;
  return report;
}

}  // namespace tilescope::kernels

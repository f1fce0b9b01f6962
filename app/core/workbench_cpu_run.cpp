// The workbench's CPU run: the current kernel generated as C++, JIT-compiled, checked against the
// interpreter and timed on this computer (and the GPU run's job), cached per schedule.
#include "app/core/workbench.h"

#include "app/core/baseline.h"

#include "kernels/cpu/bench_report.h"
#include "kernels/cpu/harness.h"
#include "kernels/cpu/jit.h"
#include "sim/schedule/codegen.h"
#include "sim/predict/simulate.h"
#include "sim/schedule/interpreter.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace tilescope::core {

CpuRunResult run_kernel_on_cpu(const schedule::Kernel& k, int64_t flops, JobProgress& progress) {
  CpuRunResult r;
  r.kernel = k.name;
  r.flops = flops;
  progress.set_phase("compiling the generated C++");
  const kernels::JitResult jit = kernels::jit_compile(schedule::emit_cpp(k));
  r.compile_command = jit.command;
  r.compile_seconds = jit.compile_seconds;
  r.cache_hit = jit.cache_hit;
  if (!jit.ok) throw std::runtime_error(jit.error + "\n" + jit.compiler_output);
  progress.fraction = 0.2;
  if (progress.cancel) throw JobCancelled();

  // Inputs: the harness's deterministic values; outputs poisoned so an unwritten element shows.
  std::vector<std::vector<float>> buffers;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    const schedule::KernelTensor& t = k.tensors[i];
    std::vector<float> b(static_cast<size_t>(std::max<int64_t>(t.alloc_elems(), 1)));
    if (t.role == schedule::TensorRole::Input)
      kernels::fill_uniform(b.data(), b.size(), 17u + static_cast<unsigned>(i));
    else
      kernels::poison(b.data(), b.size());
    buffers.push_back(std::move(b));
  }
  progress.set_phase("running the reference interpreter");
  std::vector<std::vector<float>> reference = buffers;
  schedule::interpret_kernel(k, reference);
  progress.fraction = 0.4;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("verifying");
  std::vector<float*> args;
  for (auto& b : buffers) args.push_back(b.data());
  const kernels::JitKernelFn fn = jit.module->kernel();
  fn(args.data());
  r.rel_error = 0;
  for (size_t i = 0; i < k.tensors.size(); ++i) {
    if (k.tensors[i].role != schedule::TensorRole::Output) continue;
    r.rel_error = std::max(
        r.rel_error,
        kernels::relative_error(buffers[i].data(), reference[i].data(), buffers[i].size()));
  }
  r.verified = r.rel_error <= kVerifyTolerance;
  if (!r.verified) return r;  // an unverified kernel is not timed
  progress.fraction = 0.5;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("timing (median of repeats)");
  kernels::TimingOptions to;
  to.repeats = 10;
  to.max_seconds = 3.0;
  const kernels::Timing t = kernels::time_runs([&](int) { fn(args.data()); }, to);
  r.median_ms = t.median_ms;
  r.min_ms = t.min_ms;
  r.repeats = t.repeats;
  progress.fraction = 0.8;
  if (progress.cancel) throw JobCancelled();

  progress.set_phase("measuring this CPU's peaks");
  const kernels::Peaks peaks = kernels::measure_peaks(true);
  r.peak_gflops = peaks.gflops_fp32;
  r.peak_gbps = peaks.gbps;
  r.dependent_fma_ns = peaks.dependent_fma_ns;
  r.peaks_source = peaks.source;
  progress.fraction = 1.0;
  return r;
}

std::string workbench_run_cpu(Workbench& wb, bool anyway) {
  const schedule::Kernel* k = wb.kernel();
  if (!k) return "run-cpu: there is no kernel to run";
  const std::string key = wb.schedule_key();
  if (wb.cpu_cache.count(key)) return {};
  if (wb.cpu_job.running() && wb.cpu_job.key() == key) return {};
  wb.cpu_errors.erase(key);
  const pipeline::WalkSize size = pipeline::size_walk(pipeline::Walk::Interpreter, *k, nullptr);
  if (std::optional<HeldJob> held =
          hold_for(size, "Checking " + k->name + " against the interpreter", anyway)) {
    wb.cpu_held[key] = *held;
    return {};
  }
  wb.cpu_held.erase(key);
  const auto flops = static_cast<int64_t>(predict::kernel_flops(*k, *wb.program()->graph));
  wb.cpu_job.start(
      key, [kernel = *k, flops](JobProgress& p) { return run_kernel_on_cpu(kernel, flops, p); });
  return {};
}

std::string workbench_run_gpu(Workbench& wb) {
  if (!wb.kernel()) return "run-gpu: there is no kernel to run";
  if (std::string why = gpu_run_unavailable(); !why.empty()) return "run-gpu: " + why;
  const std::string key = wb.schedule_key();
  if (wb.gpu_cache.count(key)) return {};
  if (wb.gpu_job.running() && wb.gpu_job.key() == key) return {};
  wb.gpu_errors.erase(key);
  wb.gpu_job.start(key, [text = wb.graph_text, steps = wb.steps_text()](JobProgress& p) {
    return run_schedule_on_gpu(text, steps, 20, p);
  });
  return {};
}

void workbench_cancel(Workbench& wb) {
  wb.memory_job.cancel();
  wb.cpu_job.cancel();
  wb.gpu_job.cancel();
  wb.tiles_job.cancel();
  wb.gpu_tiles_job.cancel();
  wb.baseline_job.cancel();
  autotune_cancel(wb.autotune);
}

void workbench_poll(Workbench& wb) {
  autotune_poll(wb.autotune);
  std::optional<MemoryResult> mem;
  std::string error;
  if (wb.memory_job.poll(mem, error)) {
    if (mem) {
      wb.memory_cache[wb.memory_job.key()] = std::move(*mem);
      wb.last_memory_key = wb.memory_job.key();
    } else
      wb.memory_errors[wb.memory_job.key()] = error;
  }
  std::optional<TilesResult> tiles;
  if (wb.tiles_job.poll(tiles, error) && wb.tiles_job.key() == wb.tiles_key) {
    wb.tiles = std::move(tiles);
    wb.tiles_error = error;
  }
  std::optional<GpuTilesResult> gpu_tiles;
  if (wb.gpu_tiles_job.poll(gpu_tiles, error) && wb.gpu_tiles_job.key() == wb.gpu_tiles_key) {
    wb.gpu_tiles = std::move(gpu_tiles);
    wb.gpu_tiles_error = error;
    // A new pick opens where the picked block starts (the wave's earlier blocks may run first).
    if (wb.gpu_tiles) wb.tiles_frame = double(wb.gpu_tiles->first_block_frame);
  }
  std::optional<CpuRunResult> run;
  if (wb.cpu_job.poll(run, error)) {
    if (run)
      wb.cpu_cache[wb.cpu_job.key()] = std::move(*run);
    else
      wb.cpu_errors[wb.cpu_job.key()] = error;
  }
  std::optional<GpuRunResult> gpu;
  if (wb.gpu_job.poll(gpu, error)) {
    if (gpu)
      wb.gpu_cache[wb.gpu_job.key()] = std::move(*gpu);
    else
      wb.gpu_errors[wb.gpu_job.key()] = error;
  }
  baseline_poll(wb);  // after the Memory job's result is cached: A may be that schedule
}

}  // namespace tilescope::core

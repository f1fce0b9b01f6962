// The current schedule on the GPU (run_schedule.h): generate, compile, verify, time, compare.
#include "kernels/cuda/run_schedule.h"

#include "kernels/bench_types.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_device.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/gpu_timing.h"
#include "kernels/cuda/nvrtc_runner.h"
#include "sim/graph/eval.h"
#include "sim/pipeline.h"
#include "sim/schedule/codegen.h"
#include "sim/schedule/lower.h"
#include "sim/schedule/transform.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <map>
#include <memory>
#include <ostream>
#include <random>

namespace tilescope::kernels {

using json = nlohmann::json;

namespace {

struct ChainKernel {
  const schedule::Kernel* kernel = nullptr;
  cuda::LaunchConfig launch;
  cuda::NvrtcKernel jit;
  std::vector<const float*> inputs;
  float* output = nullptr;
};

}  // namespace

json run_schedule_on_gpu(const std::string& model_text, const std::string& where,
                         const std::string& steps, int repeats, std::ostream& log) {
  const auto g = pipeline::parse({model_text, where});
  const schedule::Program p = pipeline::plan(g, steps, pipeline::target(nullptr)).current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  const std::vector<size_t> chain = schedule::scratch_chain(p, size_t(p.current));
  // The generated code takes one dense row-major buffer per tensor and writes one output.
  for (size_t ki : chain) {
    const schedule::Kernel& ck = p.kernels[ki];
    for (const schedule::KernelTensor& t : ck.tensors)
      if (t.layout != graph::Layout::RowMajor || t.alloc_elems() != t.numel())
        throw std::runtime_error("tensor " + t.name + " of kernel " + ck.name +
                                 " is not dense row-major after the steps (layout or padding); "
                                 "run --gpu compares with the graph's row-major values");
    if (static_cast<int>(ck.tensors.size()) != ck.num_inputs() + 1)
      throw std::runtime_error("kernel " + ck.name + " has " +
                               std::to_string(ck.tensors.size() - size_t(ck.num_inputs())) +
                               " outputs; run --gpu checks kernels with one");
  }

  json out;
  out["kernel"] = k.name;
  out["summary"] = k.summary;
  out["steps"] = schedule::steps_to_string(schedule::parse_steps(steps));
  out["device"] = cuda::describe_device();

  // Random values for every tensor no op produces; the reference evaluator gives every other.
  std::map<graph::TensorId, std::vector<float>> feeds;
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t id = 0; id < g->tensors().size(); ++id) {
    const graph::Tensor& t = g->tensors()[id];
    if (t.producer >= 0) continue;
    std::vector<float> v(static_cast<size_t>(t.numel()));
    for (float& x : v) x = dist(rng);
    feeds[static_cast<graph::TensorId>(id)] = std::move(v);
  }
  const std::vector<std::vector<float>> values = graph::evaluate_f32(*g, feeds);

  // Device buffers by tensor name: graph values copied in, kernel outputs and scratch poisoned.
  std::map<std::string, cuda::DeviceBuffer<float>> buffers;
  auto buffer = [&](const schedule::KernelTensor& t, bool output) -> cuda::DeviceBuffer<float>& {
    auto it = buffers.find(t.name);
    if (it != buffers.end()) return it->second;
    cuda::DeviceBuffer<float>& b =
        buffers.emplace(t.name, cuda::DeviceBuffer<float>(static_cast<size_t>(t.numel())))
            .first->second;
    if (output || t.id < 0)
      b.poison();
    else
      b.from_host(values.at(size_t(t.id)));
    return b;
  };
  std::vector<ChainKernel> runs;
  json kernels = json::array();
  for (size_t ki : chain) {
    const schedule::Kernel& ck = p.kernels[ki];
    const std::string source = schedule::emit_cuda(ck);
    const schedule::LaunchConfig lc = schedule::launch_config(ck);
    cuda::LaunchConfig launch;
    for (int d = 0; d < 3; ++d) {
      launch.grid[d] = static_cast<unsigned>(lc.grid[size_t(d)]);
      launch.block[d] = static_cast<unsigned>(lc.block[size_t(d)]);
    }
    launch.dynamic_smem_bytes = static_cast<unsigned>(lc.dynamic_smem_bytes);
    ChainKernel run{&ck, launch, cuda::NvrtcKernel::compile_and_load(source), {}, nullptr};
    log << "run --gpu: " << ck.name << " compiled by NVRTC for " << run.jit.arch() << " ("
        << run.jit.registers_per_thread() << " registers/thread)\n";
    for (int i = 0; i < ck.num_inputs(); ++i)
      run.inputs.push_back(buffer(ck.tensors[size_t(i)], false).get());
    run.output = buffer(ck.tensors.back(), true).get();
    json launch_json = {
        {"grid", lc.grid}, {"block", lc.block}, {"dynamic_smem_bytes", lc.dynamic_smem_bytes}};
    if (&ck == &k) {
      out["source"] = source;
      out["launch"] = launch_json;
      out["registers"] = run.jit.registers_per_thread();
      out["nvrtc_ms"] = run.jit.compile_ms();
    }
    kernels.push_back({{"kernel", ck.name},
                       {"summary", ck.summary},
                       {"launch", launch_json},
                       {"registers", run.jit.registers_per_thread()},
                       {"source", source}});
    runs.push_back(std::move(run));
  }
  auto launch_all = [&] {
    for (const ChainKernel& r : runs) r.jit.launch(r.launch, r.inputs, r.output);
  };
  launch_all();
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  // Every graph tensor the chain writes, against the reference evaluator.
  double err = 0;
  for (const ChainKernel& r : runs) {
    const schedule::KernelTensor& y = r.kernel->tensors.back();
    if (y.id < 0) continue;
    const std::vector<float> got = buffers.at(y.name).to_host();
    const std::vector<float>& want = values.at(size_t(y.id));
    const double e = relative_error(got.data(), want.data(), got.size());
    err = std::isfinite(e) ? std::max(err, e) : e;
    if (!std::isfinite(err)) break;
  }
  const bool ok = std::isfinite(err) && err <= 1e-4;
  out["verified"] = ok;
  if (std::isfinite(err)) out["rel_error"] = err;
  if (!ok) {
    out["kernels"] = kernels;
    out["note"] = "NOT TIMED: relative error against the graph's reference evaluator over 1e-4";
    return out;
  }
  if (runs.size() == 1) {
    const ChainKernel& r = runs.front();
    const cuda::KernelTiming t = r.jit.time(r.launch, r.inputs, r.output, 3, std::max(3, repeats));
    out["median_ms"] = t.median_ms;
    out["min_ms"] = t.min_ms;
    kernels[0]["median_ms"] = t.median_ms;
  } else {
    // The chain as one piece of work (what the model's layer costs), and each kernel alone.
    cuda::TimingOptions to;
    to.warmup = 3;
    to.repeats = std::max(3, repeats);
    const cuda::KernelTiming t = cuda::time_gpu(launch_all, to);
    out["median_ms"] = t.median_ms;
    out["min_ms"] = t.min_ms;
    for (size_t i = 0; i < runs.size(); ++i) {
      const ChainKernel& r = runs[i];
      const cuda::KernelTiming ti =
          r.jit.time(r.launch, r.inputs, r.output, 3, std::max(3, repeats));
      kernels[i]["median_ms"] = ti.median_ms;
      kernels[i]["min_ms"] = ti.min_ms;
    }
  }
  out["kernels"] = kernels;

  // cuBLAS beside it: the same matrix product (M×K by K×N, fp32, no TF32) when the kernel has one.
  out["cublas"] = nullptr;
  std::vector<graph::OpId> chain_ops;
  for (size_t ki : chain)
    for (graph::OpId op : p.kernels[ki].ops) chain_ops.push_back(op);
  for (graph::OpId op : chain_ops) {
    const graph::Op& o = g->op(op);
    if (o.kind != graph::OpKind::MatMul) continue;
    const graph::Shape& c = g->tensor(o.outputs.at(0)).shape;
    const graph::Shape& a = g->tensor(o.inputs.at(0)).shape;
    if (c.size() != 2 || a.size() != 2) break;
    // The product's depth: A's dimension that is not M (A may be read transposed).
    const int M = int(c[0]), N = int(c[1]), K = int(a[0] == c[0] ? a[1] : a[0]);
    cuda::DeviceBuffer<float> da(size_t(M) * K), db(size_t(K) * N), dc(size_t(M) * N);
    cuda::fill_uniform_launch(da.get(), da.size(), 1, -1.f, 1.f);
    cuda::fill_uniform_launch(db.get(), db.size(), 2, -1.f, 1.f);
    cublasHandle_t h = nullptr;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw cuda::GpuError("cublasCreate failed");
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    const float one = 1.f, zero = 0.f;
    auto gemm = [&] {
      cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, db.get(), CUDA_R_32F, N, da.get(),
                   CUDA_R_32F, K, &zero, dc.get(), CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT);
    };
    cuda::TimingOptions to;
    to.repeats = std::max(3, repeats);
    const cuda::KernelTiming ct = cuda::time_gpu(gemm, to);
    cublasDestroy(h);
    out["cublas"] = {{"what", "cuBLAS SGEMM of the kernel's matrix product, M=" +
                                  std::to_string(M) + " N=" + std::to_string(N) +
                                  " K=" + std::to_string(K) + " (fp32, no TF32; no epilogue)"},
                     {"median_ms", ct.median_ms}};
    break;
  }
  return out;
}

}  // namespace tilescope::kernels

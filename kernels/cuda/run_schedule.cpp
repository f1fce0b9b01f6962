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

// The generated code takes one dense row-major buffer per tensor and writes one output: throws
// when a kernel of the chain does not fit that.
void check_chain_is_dense(const schedule::Program& p, const std::vector<size_t>& chain) {
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
}

// Random values for every tensor no op produces; the reference evaluator gives every other.
std::vector<std::vector<float>> reference_values(const graph::Graph& g) {
  std::map<graph::TensorId, std::vector<float>> feeds;
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t id = 0; id < g.tensors().size(); ++id) {
    const graph::Tensor& t = g.tensors()[id];
    if (t.producer >= 0) continue;
    std::vector<float> v(static_cast<size_t>(t.numel()));
    for (float& x : v) x = dist(rng);
    feeds[static_cast<graph::TensorId>(id)] = std::move(v);
  }
  return graph::evaluate_f32(g, feeds);
}

// Device buffers by tensor name: graph values copied in, kernel outputs and scratch poisoned.
struct ChainBuffers {
  const std::vector<std::vector<float>>& values;
  std::map<std::string, cuda::DeviceBuffer<float>> by_name;

  // Tensor t's buffer, made (and filled or poisoned) the first time a kernel asks for it.
  cuda::DeviceBuffer<float>& get(const schedule::KernelTensor& t, bool output) {
    auto it = by_name.find(t.name);
    if (it != by_name.end()) return it->second;
    cuda::DeviceBuffer<float>& b =
        by_name.emplace(t.name, cuda::DeviceBuffer<float>(static_cast<size_t>(t.numel())))
            .first->second;
    if (output || t.id < 0)
      b.poison();
    else
      b.from_host(values.at(size_t(t.id)));
    return b;
  }
};

// Compiles every kernel of the chain with NVRTC and binds its buffers; records each kernel in
// `kernels` and the current kernel `k`'s source, launch and registers in `out`.
std::vector<ChainKernel> compile_chain(const schedule::Program& p, const std::vector<size_t>& chain,
                                       const schedule::Kernel& k, ChainBuffers& buffers, json& out,
                                       json& kernels, std::ostream& log) {
  std::vector<ChainKernel> runs;
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
      run.inputs.push_back(buffers.get(ck.tensors[size_t(i)], false).get());
    run.output = buffers.get(ck.tensors.back(), true).get();
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
  return runs;
}

// Launches the chain's kernels once, in order.
void launch_chain(const std::vector<ChainKernel>& runs) {
  for (const ChainKernel& r : runs) r.jit.launch(r.launch, r.inputs, r.output);
}

// The largest relative error of every graph tensor the chain writes against the reference
// evaluator (not finite as soon as one is not).
double chain_error(const std::vector<ChainKernel>& runs, const ChainBuffers& buffers) {
  double err = 0;
  for (const ChainKernel& r : runs) {
    const schedule::KernelTensor& y = r.kernel->tensors.back();
    if (y.id < 0) continue;
    const std::vector<float> got = buffers.by_name.at(y.name).to_host();
    const std::vector<float>& want = buffers.values.at(size_t(y.id));
    const double e = relative_error(got.data(), want.data(), got.size());
    err = std::isfinite(e) ? std::max(err, e) : e;
    if (!std::isfinite(err)) break;
  }
  return err;
}

// Times the chain into `out` (as one piece of work) and each kernel alone into `kernels`.
void time_chain(const std::vector<ChainKernel>& runs, int repeats, json& out, json& kernels) {
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
    const cuda::KernelTiming t = cuda::time_gpu([&] { launch_chain(runs); }, to);
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
}

// cuBLAS beside it: the same matrix product (M×K by K×N, fp32, no TF32) when the chain has one;
// null when it has none.
json cublas_beside(const graph::Graph& g, const schedule::Program& p,
                   const std::vector<size_t>& chain, int repeats) {
  std::vector<graph::OpId> chain_ops;
  for (size_t ki : chain)
    for (graph::OpId op : p.kernels[ki].ops) chain_ops.push_back(op);
  for (graph::OpId op : chain_ops) {
    const graph::Op& o = g.op(op);
    if (o.kind != graph::OpKind::MatMul) continue;
    const graph::Shape& c = g.tensor(o.outputs.at(0)).shape;
    const graph::Shape& a = g.tensor(o.inputs.at(0)).shape;
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
    return {{"what", "cuBLAS SGEMM of the kernel's matrix product, M=" + std::to_string(M) +
                         " N=" + std::to_string(N) + " K=" + std::to_string(K) +
                         " (fp32, no TF32; no epilogue)"},
            {"median_ms", ct.median_ms}};
  }
  return nullptr;
}

}  // namespace

json run_schedule_on_gpu(const std::string& model_text, const std::string& where,
                         const std::string& steps, int repeats, std::ostream& log) {
  const auto g = pipeline::parse({model_text, where});
  const schedule::Program p = pipeline::plan(g, steps, pipeline::target(nullptr)).current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  const std::vector<size_t> chain = schedule::scratch_chain(p, size_t(p.current));
  check_chain_is_dense(p, chain);

  json out;
  out["kernel"] = k.name;
  out["summary"] = k.summary;
  out["steps"] = schedule::steps_to_string(schedule::parse_steps(steps));
  out["device"] = cuda::describe_device();

  const std::vector<std::vector<float>> values = reference_values(*g);
  ChainBuffers buffers{values, {}};
  json kernels = json::array();
  const std::vector<ChainKernel> runs = compile_chain(p, chain, k, buffers, out, kernels, log);
  launch_chain(runs);
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  const double err = chain_error(runs, buffers);
  const bool ok = std::isfinite(err) && err <= 1e-4;
  out["verified"] = ok;
  if (std::isfinite(err)) out["rel_error"] = err;
  if (!ok) {
    out["kernels"] = kernels;
    out["note"] = "NOT TIMED: relative error against the graph's reference evaluator over 1e-4";
    return out;
  }
  time_chain(runs, repeats, out, kernels);
  out["kernels"] = kernels;

  out["cublas"] = cublas_beside(*g, p, chain, repeats);
  return out;
}

}  // namespace tilescope::kernels

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
#include "sim/graph/model_parser.h"
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

json run_schedule_on_gpu(const std::string& model_text, const std::string& where,
                         const std::string& steps, int repeats, std::ostream& log) {
  auto g = std::make_shared<const graph::Graph>(graph::parse_model(model_text, where));
  const schedule::Program p =
      schedule::History::replay(schedule::lower_graph(g), steps, schedule::Target{}).current();
  const schedule::Kernel& k = p.kernels.at(size_t(p.current));
  // The generated code takes one dense row-major buffer per tensor; a kernel whose tensors were
  // re-laid out or that needs scratch buffers has no matching graph values to check against.
  for (const schedule::KernelTensor& t : k.tensors) {
    if (t.id < 0)
      throw std::runtime_error("kernel " + k.name + " needs the scratch buffer " + t.name +
                               " (im2col's); run --gpu takes kernels over graph tensors only");
    if (t.layout != graph::Layout::RowMajor || t.alloc_elems() != t.numel())
      throw std::runtime_error("tensor " + t.name + " of kernel " + k.name +
                               " is not dense row-major after the steps (layout or padding); "
                               "run --gpu compares with the graph's row-major values");
  }
  const int inputs = k.num_inputs();
  if (static_cast<int>(k.tensors.size()) != inputs + 1)
    throw std::runtime_error("kernel " + k.name + " has " +
                             std::to_string(k.tensors.size() - size_t(inputs)) +
                             " outputs; run --gpu checks kernels with one");

  json out;
  out["kernel"] = k.name;
  out["summary"] = k.summary;
  out["steps"] = schedule::steps_to_string(schedule::parse_steps(steps));
  out["device"] = cuda::describe_device();
  const std::string source = schedule::emit_cuda(k);
  out["source"] = source;
  const schedule::LaunchConfig lc = schedule::launch_config(k);
  cuda::LaunchConfig launch;
  for (int d = 0; d < 3; ++d) {
    launch.grid[d] = static_cast<unsigned>(lc.grid[size_t(d)]);
    launch.block[d] = static_cast<unsigned>(lc.block[size_t(d)]);
  }
  launch.dynamic_smem_bytes = static_cast<unsigned>(lc.dynamic_smem_bytes);
  out["launch"] = {
      {"grid", lc.grid}, {"block", lc.block}, {"dynamic_smem_bytes", lc.dynamic_smem_bytes}};
  const cuda::NvrtcKernel jit = cuda::NvrtcKernel::compile_and_load(source);
  out["registers"] = jit.registers_per_thread();
  out["nvrtc_ms"] = jit.compile_ms();
  log << "run --gpu: " << k.name << " compiled by NVRTC for " << jit.arch() << " ("
      << jit.registers_per_thread() << " registers/thread)\n";

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
  std::vector<cuda::DeviceBuffer<float>> buffers;
  std::vector<const float*> args;
  for (int i = 0; i < inputs; ++i) {
    buffers.emplace_back(static_cast<size_t>(k.tensors[size_t(i)].numel()));
    buffers.back().from_host(values.at(size_t(k.tensors[size_t(i)].id)));
    args.push_back(buffers.back().get());
  }
  const schedule::KernelTensor& y = k.tensors.back();
  cuda::DeviceBuffer<float> result(static_cast<size_t>(y.numel()));
  result.poison();
  jit.launch(launch, args, result.get());
  TS_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> got = result.to_host();
  const std::vector<float>& want = values.at(size_t(y.id));
  const double err = relative_error(got.data(), want.data(), got.size());
  const bool ok = std::isfinite(err) && err <= 1e-4;
  out["verified"] = ok;
  if (std::isfinite(err)) out["rel_error"] = err;
  if (!ok) {
    out["note"] = "NOT TIMED: relative error against the graph's reference evaluator over 1e-4";
    return out;
  }
  const cuda::KernelTiming t = jit.time(launch, args, result.get(), 3, std::max(3, repeats));
  out["median_ms"] = t.median_ms;
  out["min_ms"] = t.min_ms;

  // cuBLAS beside it: the same matrix product (M×K by K×N, fp32, no TF32) when the kernel has one.
  out["cublas"] = nullptr;
  for (graph::OpId op : k.ops) {
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

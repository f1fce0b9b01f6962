// NVRTC → cubin → driver-API module → ts_kernel launches, timed with CUDA events.
#include "kernels/cuda/nvrtc_runner.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_timing.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvrtc.h>

#include <chrono>

namespace tilescope::kernels::cuda {
namespace {

// The driver API, reached through the runtime's cudaGetDriverEntryPointByVersion instead of linking
// libcuda: a binary that links libcuda.so.1 does not even start on a machine without the NVIDIA
// driver (CI, a laptop), and tilescope-cli must keep its CPU paths there.
struct DriverApi {
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuModuleUnload) module_unload = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
  decltype(&cuFuncGetAttribute) func_get_attribute = nullptr;
  decltype(&cuFuncSetAttribute) func_set_attribute = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
  decltype(&cuGetErrorString) get_error_string = nullptr;
};

template <class Fn>
void resolve(const char* symbol, Fn& fn) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(symbol, &p, CUDART_VERSION, cudaEnableDefault, &found);
  if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
    throw GpuError(std::string("the CUDA driver does not provide ") + symbol + " (" +
                   cudaGetErrorString(err) +
                   "); is the NVIDIA driver installed and recent enough?");
  }
  fn = reinterpret_cast<Fn>(p);
}

const DriverApi& driver() {
  static const DriverApi api = [] {
    DriverApi d;
    resolve("cuModuleLoadData", d.module_load_data);
    resolve("cuModuleGetFunction", d.module_get_function);
    resolve("cuModuleUnload", d.module_unload);
    resolve("cuLaunchKernel", d.launch_kernel);
    resolve("cuFuncGetAttribute", d.func_get_attribute);
    resolve("cuFuncSetAttribute", d.func_set_attribute);
    resolve("cuGetErrorName", d.get_error_name);
    resolve("cuGetErrorString", d.get_error_string);
    return d;
  }();
  return api;
}

void check_cu(CUresult res, const char* call) {
  if (res == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  driver().get_error_name(res, &name);
  driver().get_error_string(res, &text);
  throw GpuError(std::string(call) + " failed: " + (name ? name : "?") + " (" +
                 (text ? text : "no description") + ")");
}

// The runtime API creates and makes current the device's primary context; modules loaded through
// the driver API then live in the same context as the runtime's allocations and events.
void ensure_context() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    throw GpuError(std::string("no usable CUDA device: ") +
                   (err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount found 0"));
  }
  TS_CUDA_CHECK(cudaFree(nullptr));
}

}  // namespace

std::string current_device_arch() {
  ensure_context();
  int device = 0, major = 0, minor = 0;
  TS_CUDA_CHECK(cudaGetDevice(&device));
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  TS_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

NvrtcCompileResult nvrtc_compile(const std::string& source, const std::string& arch,
                                 const std::vector<std::string>& options) {
  NvrtcCompileResult result;
  result.arch = arch;
  nvrtcProgram program = nullptr;
  nvrtcResult res =
      nvrtcCreateProgram(&program, source.c_str(), "ts_generated.cu", 0, nullptr, nullptr);
  if (res != NVRTC_SUCCESS) {
    result.error = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(res);
    return result;
  }
  std::vector<std::string> all = {"--gpu-architecture=" + arch, "--std=c++17", "-lineinfo"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());

  const auto t0 = std::chrono::steady_clock::now();
  res = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    result.log.resize(log_size);
    nvrtcGetProgramLog(program, result.log.data());
    while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) {
      result.log.pop_back();
    }
  }
  if (res != NVRTC_SUCCESS) {
    result.error = std::string("NVRTC could not compile the kernel for ") + arch + ": " +
                   nvrtcGetErrorString(res) + " (the compile log says why)";
  } else {
    size_t cubin_size = 0;
    res = nvrtcGetCUBINSize(program, &cubin_size);
    if (res == NVRTC_SUCCESS && cubin_size > 0) {
      result.cubin.resize(cubin_size);
      res = nvrtcGetCUBIN(program, result.cubin.data());
    }
    if (res != NVRTC_SUCCESS || cubin_size == 0) {
      result.error = std::string("NVRTC produced no machine code for ") + arch + ": " +
                     nvrtcGetErrorString(res);
    } else {
      result.ok = true;
    }
  }
  nvrtcDestroyProgram(&program);
  return result;
}

struct NvrtcKernel::Impl {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  std::string log;
  std::string arch;
  double compile_ms = 0.0;
  int registers = 0;
  int static_smem = 0;
  unsigned smem_opt_in = 0;  // dynamic shared memory the function is allowed so far
  ~Impl() {
    if (module) driver().module_unload(module);
  }
};

NvrtcKernel::NvrtcKernel(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
NvrtcKernel::NvrtcKernel(NvrtcKernel&&) noexcept = default;
NvrtcKernel& NvrtcKernel::operator=(NvrtcKernel&&) noexcept = default;
NvrtcKernel::~NvrtcKernel() = default;

NvrtcKernel NvrtcKernel::compile_and_load(const std::string& source,
                                          const std::vector<std::string>& options,
                                          const std::string& entry) {
  const std::string arch = current_device_arch();
  NvrtcCompileResult compiled = nvrtc_compile(source, arch, options);
  if (!compiled.ok) {
    throw GpuError(compiled.error + (compiled.log.empty() ? "" : "\n" + compiled.log));
  }
  auto impl = std::make_unique<Impl>();
  impl->log = std::move(compiled.log);
  impl->arch = arch;
  impl->compile_ms = compiled.compile_ms;
  check_cu(driver().module_load_data(&impl->module, compiled.cubin.data()), "cuModuleLoadData");
  const CUresult found = driver().module_get_function(&impl->function, impl->module, entry.c_str());
  if (found != CUDA_SUCCESS) {
    throw GpuError("the compiled source has no kernel named '" + entry +
                   "' (declare it extern \"C\" __global__ so its name is not mangled)");
  }
  check_cu(
      driver().func_get_attribute(&impl->registers, CU_FUNC_ATTRIBUTE_NUM_REGS, impl->function),
      "cuFuncGetAttribute(NUM_REGS)");
  check_cu(driver().func_get_attribute(&impl->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                       impl->function),
           "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  return NvrtcKernel(std::move(impl));
}

void NvrtcKernel::launch(const LaunchConfig& c, const std::vector<const float*>& inputs,
                         float* output) const {
  if (c.dynamic_smem_bytes > 48 * 1024 && c.dynamic_smem_bytes > m_impl->smem_opt_in) {
    check_cu(driver().func_set_attribute(m_impl->function,
                                         CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(c.dynamic_smem_bytes)),
             "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    m_impl->smem_opt_in = c.dynamic_smem_bytes;
  }
  std::vector<const float*> pointers(inputs);
  pointers.push_back(output);
  std::vector<void*> params;
  for (const float*& p : pointers) params.push_back(static_cast<void*>(&p));
  check_cu(driver().launch_kernel(m_impl->function, c.grid[0], c.grid[1], c.grid[2], c.block[0],
                                  c.block[1], c.block[2], c.dynamic_smem_bytes, nullptr,
                                  params.data(), nullptr),
           "cuLaunchKernel(ts_kernel)");
}

KernelTiming NvrtcKernel::time(const LaunchConfig& config, const std::vector<const float*>& inputs,
                               float* output, int warmup, int repeats) const {
  TimingOptions options;
  options.warmup = warmup;
  options.repeats = repeats;
  return time_gpu([&] { launch(config, inputs, output); }, options);
}

const std::string& NvrtcKernel::log() const {
  return m_impl->log;
}
const std::string& NvrtcKernel::arch() const {
  return m_impl->arch;
}
double NvrtcKernel::compile_ms() const {
  return m_impl->compile_ms;
}
int NvrtcKernel::registers_per_thread() const {
  return m_impl->registers;
}
int NvrtcKernel::static_smem_bytes() const {
  return m_impl->static_smem;
}

}  // namespace tilescope::kernels::cuda

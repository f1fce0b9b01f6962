// Device description for the GPU bench: runtime attributes, NVML (loaded with dlopen, so the build
// needs no NVML headers or library) for the driver version and clocks, cuBLAS version, copy
// bandwidth.
#include "kernels/cuda/gpu_device.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/gpu_timing.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdio>

namespace tilescope::kernels::cuda {
namespace {

// The few NVML entry points we use, declared by hand (same ABI as nvml.h).
struct Nvml {
  using Device = void*;
  int (*init)() = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*handle_by_pci)(const char*, Device*) = nullptr;
  int (*clock_info)(Device, int, unsigned*) = nullptr;
  int (*max_clock_info)(Device, int, unsigned*) = nullptr;
  Device device = nullptr;
  bool ok = false;
  static constexpr int kClockSm = 1, kClockMem = 2;
};

Nvml& nvml() {
  static Nvml n = [] {
    Nvml v;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return v;
    v.init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    v.driver_version =
        reinterpret_cast<int (*)(char*, unsigned)>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    v.handle_by_pci = reinterpret_cast<int (*)(const char*, Nvml::Device*)>(
        dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    v.clock_info = reinterpret_cast<int (*)(Nvml::Device, int, unsigned*)>(
        dlsym(lib, "nvmlDeviceGetClockInfo"));
    v.max_clock_info = reinterpret_cast<int (*)(Nvml::Device, int, unsigned*)>(
        dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    if (!v.init || !v.driver_version || !v.handle_by_pci || !v.clock_info || !v.max_clock_info)
      return v;
    if (v.init() != 0) return v;
    char bus[64] = {};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
      return v;
    }
    v.ok = v.handle_by_pci(bus, &v.device) == 0;
    return v;
  }();
  return n;
}

std::string version_string(int v) {  // 13000 → "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

bool gpu_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason) {
      *reason = std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(err) +
                ": " + cudaGetErrorString(err) + ")";
    }
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no CUDA device found (cudaGetDeviceCount returned 0)";
    return false;
  }
  if (reason) reason->clear();
  return true;
}

int fp32_lanes_per_sm(int major, int minor) {
  if (major == 8 && minor == 0) return 64;  // A100
  if (major >= 8) return 128;               // sm_86/89/90/100/120
  return 64;
}

nlohmann::json describe_device() {
  int device = 0;
  TS_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  TS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  int runtime = 0, driver_api = 0;
  TS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  TS_CUDA_CHECK(cudaDriverGetVersion(&driver_api));
  nlohmann::json d;
  d["name"] = prop.name;
  d["cc"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  d["sms"] = prop.multiProcessorCount;
  d["cuda_runtime"] = version_string(runtime);
  d["cuda_driver_api"] = version_string(driver_api);
  d["clock_mhz"] = attr(cudaDevAttrClockRate) / 1000;  // peak SM clock
  d["mem_clock_mhz"] = attr(cudaDevAttrMemoryClockRate) / 1000;
  d["l2_bytes"] = prop.l2CacheSize;
  d["memory_bytes"] = prop.totalGlobalMem;
  d["smem_per_block_optin"] = prop.sharedMemPerBlockOptin;
  d["driver"] = "unknown (NVML not loadable); CUDA driver API " + version_string(driver_api);
  Nvml& n = nvml();
  if (n.ok) {
    char text[96] = {};
    if (n.driver_version(text, sizeof text) == 0) d["driver"] = text;
    unsigned mhz = 0;
    if (n.max_clock_info(n.device, Nvml::kClockSm, &mhz) == 0) d["clock_mhz"] = mhz;
    if (n.max_clock_info(n.device, Nvml::kClockMem, &mhz) == 0) d["mem_clock_mhz"] = mhz;
    if (n.clock_info(n.device, Nvml::kClockSm, &mhz) == 0) d["sm_clock_mhz_at_start"] = mhz;
  }
  int cublas_version = 0;
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS) {
    cublasGetVersion(handle, &cublas_version);
    cublasDestroy(handle);
    d["cublas"] = std::to_string(cublas_version / 10000) + "." +
                  std::to_string((cublas_version / 100) % 100) + "." +
                  std::to_string(cublas_version % 100);
  }
  return d;
}

int current_sm_clock_mhz() {
  Nvml& n = nvml();
  unsigned mhz = 0;
  if (!n.ok || n.clock_info(n.device, Nvml::kClockSm, &mhz) != 0) return -1;
  return static_cast<int>(mhz);
}

double measure_copy_gbps(std::size_t bytes) {
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  TS_CUDA_CHECK(cudaMemset(src.get(), 1, bytes));
  TimingOptions options;
  options.warmup = 2;
  options.repeats = 10;
  options.flush_l2 = false;  // 1 GiB is far beyond any L2
  const KernelTiming t = time_gpu(
      [&] {
        TS_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
      },
      options);
  return 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e6);
}

}  // namespace tilescope::kernels::cuda

// What the GPU is: presence check (never throws), device/driver/clock description for the bench
// JSON and a measured copy bandwidth. Plain C++ header.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tilescope::kernels::cuda {

// True when a CUDA device can be used; otherwise `reason` says why in one line (no driver, no
// device, driver older than the runtime, ...). Never throws.
bool gpu_available(std::string* reason);

// {"name", "cc", "sms", "driver", "cuda_runtime", "cuda_driver_api", "clock_mhz", "mem_clock_mhz",
//  "l2_bytes", "memory_bytes", "smem_per_block_optin", "cublas"}. Driver version and clocks come
// from NVML when libnvidia-ml can be loaded.
nlohmann::json describe_device();

// Current SM clock in MHz read through NVML, or -1 when NVML is not available.
int current_sm_clock_mhz();

// FP32 lanes per SM for a compute capability (128 on sm_90), for the stated fp32 peak.
int fp32_lanes_per_sm(int major, int minor);

// Device-to-device copy of `bytes`, counted as bytes read + bytes written per second (GB/s).
double measure_copy_gbps(std::size_t bytes);

}  // namespace tilescope::kernels::cuda

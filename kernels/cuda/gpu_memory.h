// Owning device buffers for harnesses and tests (C++ side, CUDA runtime API only).
#pragma once

#include "kernels/cuda/cuda_check.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace tilescope::kernels::cuda {

// `count` elements of T in device memory; freed on destruction. Allocation failure throws GpuError
// (with the out-of-memory hint).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : m_count(count) {
    if (count > 0) TS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&m_ptr), bytes()));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : m_ptr(std::exchange(o.m_ptr, nullptr)), m_count(std::exchange(o.m_count, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      m_ptr = std::exchange(o.m_ptr, nullptr);
      m_count = std::exchange(o.m_count, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  T* get() const { return m_ptr; }
  std::size_t size() const { return m_count; }
  std::size_t bytes() const { return m_count * sizeof(T); }

  // Every byte 0xFF: for floats a NaN, so an element a kernel forgets to write cannot pass.
  void poison() const { TS_CUDA_CHECK(cudaMemset(m_ptr, 0xFF, bytes())); }
  std::vector<T> to_host() const {
    std::vector<T> host(m_count);
    TS_CUDA_CHECK(cudaMemcpy(host.data(), m_ptr, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void from_host(const std::vector<T>& host) const {
    if (host.size() != m_count) throw GpuError("DeviceBuffer::from_host: size mismatch");
    TS_CUDA_CHECK(cudaMemcpy(m_ptr, host.data(), bytes(), cudaMemcpyHostToDevice));
  }

 private:
  void release() {
    if (m_ptr) cudaFree(m_ptr);
    m_ptr = nullptr;
  }
  T* m_ptr = nullptr;
  std::size_t m_count = 0;
};

}  // namespace tilescope::kernels::cuda

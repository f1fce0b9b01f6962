// Launches of the Hopper tensor-core GEMM versions 3–8 and the tensor maps their TMA copies read.
// Built for sm_90a only (kernels/cuda/CMakeLists.txt): wgmma and setmaxnreg exist nowhere else.
#include "kernels/cuda/hgemm_hopper.h"
#include "kernels/cuda/hopper_tensor_map.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/hgemm/03_tma.cuh"
#include "kernels/cuda/hgemm/04_wgmma.cuh"
#include "kernels/cuda/hgemm/05_warp_specialized.cuh"
#include "kernels/cuda/hgemm/06_large_tiles.cuh"
#include "kernels/cuda/hgemm/07_persistent_grouped.cuh"
#include "kernels/cuda/hgemm/08_cluster_multicast.cuh"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace tilescope::kernels::cuda {
namespace {

// [SECTION] tensor maps

// cuTensorMapEncodeTiled is a driver-API function; it is reached through the runtime (as
// nvrtc_runner.cpp does) so the binary does not link libcuda and still starts without a driver.
using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

EncodeTiled encode_tiled() {
  static const EncodeTiled fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    const cudaError_t err = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000,
                                                             cudaEnableDefault, &found);
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      throw GpuError(std::string("the CUDA driver does not provide cuTensorMapEncodeTiled (") +
                     cudaGetErrorString(err) + "); TMA needs a driver for CUDA 12 or newer");
    }
    return reinterpret_cast<EncodeTiled>(p);
  }();
  return fn;
}

// A row-major rows × k matrix of 16-bit elements, read in boxes of box_rows × 64 (128 bytes, the
// widest box the 128-byte swizzle allows), swizzled as wgmma's descriptors and swizzle_128b expect.
struct MapKey {
  const void* base;
  int rows, k, box_rows;
  Operand16 type;
  bool operator==(const MapKey& o) const {
    return base == o.base && rows == o.rows && k == o.k && box_rows == o.box_rows && type == o.type;
  }
};

CUtensorMap make_map(const MapKey& key) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(key.k), static_cast<cuuint64_t>(key.rows)};
  const cuuint64_t row_stride[1] = {static_cast<cuuint64_t>(key.k) * 2};  // bytes
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(key.box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r =
      encode_tiled()(&map,
                     key.type == Operand16::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                     2, const_cast<void*>(key.base), dims, row_stride, box, unit,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw GpuError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) +
                   ") for a " + std::to_string(key.rows) + "×" + std::to_string(key.k) +
                   " matrix in boxes of " + std::to_string(key.box_rows) + "×64");
  }
  return map;
}

// Encoding takes microseconds of host time; inside a timed region that would be counted against
// the kernel (the GPU idles between the start event and the launch), so maps are made once per
// buffer and shape and reused.
CUtensorMap tensor_map(const MapKey& key) {
  static std::mutex mutex;
  static std::vector<std::pair<MapKey, CUtensorMap>> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  for (const auto& [k, map] : cache)
    if (k == key) return map;
  if (cache.size() >= 64) cache.clear();  // buffers come and go between suites
  cache.emplace_back(key, make_map(key));
  return cache.back().second;
}

// [SECTION] launches

// Asked once: a device query costs microseconds of host time, which a timed launch would count.
int sm_count() {
  static const int sms = [] {
    int device = 0, n = 0;
    TS_CUDA_CHECK(cudaGetDevice(&device));
    TS_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
    return n;
  }();
  return sms;
}

// Dynamic shared memory above 48 KB needs an opt-in per kernel; once per instantiation.
template <class Kernel>
void opt_in(Kernel kernel, int bytes) {
  TS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

// How many clusters of version 8 fit on the GPU at once: a cluster's two blocks must sit in one
// GPC (a group of ~16–18 SMs), so an odd SM out in a GPC stays idle. Asked once per type.
template <class T>
int max_active_clusters_08() {
  static const int n = [] {
    auto* const kernel = hgemm_08_cluster_multicast<T>;
    opt_in(kernel, hgemm08::Shape::kSmemBytes);
    cudaLaunchConfig_t probe{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = hgemm08::kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    probe.gridDim = dim3(hgemm08::kCluster * sm_count());
    probe.blockDim = dim3(hgemm08::kThreads);
    probe.dynamicSmemBytes = hgemm08::Shape::kSmemBytes;
    probe.attrs = attr;
    probe.numAttrs = 1;
    int clusters = 0;
    TS_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &probe));
    if (clusters < 1) throw GpuError("hgemm version 8: no cluster of 2 blocks fits on this GPU");
    return clusters;
  }();
  return n;
}

template <class T>
void launch_typed(int version, GemmShape s, const void* a, const void* w, float* c,
                  Operand16 type) {
  const HgemmTile tile = hopper_hgemm_tile(version);
  // Version 8's blocks each load half of the W tile; the others load a whole tile per operand.
  const int a_box = 128, w_box = version == 8 ? hgemm08::kWSlice : tile.bn;
  const CUtensorMap ma = tensor_map({a, s.m, s.k, a_box, type});
  const CUtensorMap mw = tensor_map({w, s.n, s.k, w_box, type});
  const dim3 grid2d(s.n / tile.bn, s.m / tile.bm);
  switch (version) {
    case 4: {  // 2 warpgroups, 64×128 each; 99 KB → two blocks per SM
      static const bool once = (opt_in(hgemm_04_wgmma<T>, hgemm04::kSmemBytes), true);
      (void)once;
      hgemm_04_wgmma<T>
          <<<grid2d, hgemm04::kThreads, hgemm04::kSmemBytes>>>(s.m, s.n, s.k, ma, mw, c);
      break;
    }
    case 5: {  // producer + 2 consumers, 128×128, 5 stages (161 KB) → one block per SM
      auto* const kernel = hgemm_05_warp_specialized<T, 128, 5>;
      constexpr int bytes = hgemm05::Shape<128, 5>::kSmemBytes;
      static const bool once = (opt_in(kernel, bytes), true);
      (void)once;
      kernel<<<grid2d, hgemm05::kThreads, bytes>>>(s.m, s.n, s.k, ma, mw, c);
      break;
    }
    case 6: {  // the same kernel at 128×256, 4 stages (193 KB)
      auto* const kernel = hgemm_05_warp_specialized<T, hgemm06::kBN, hgemm06::kStages>;
      constexpr int bytes = hgemm05::Shape<hgemm06::kBN, hgemm06::kStages>::kSmemBytes;
      static const bool once = (opt_in(kernel, bytes), true);
      (void)once;
      kernel<<<grid2d, hgemm05::kThreads, bytes>>>(s.m, s.n, s.k, ma, mw, c);
      break;
    }
    case 7: {  // persistent: one block per SM, never more blocks than tiles
      auto* const kernel = hgemm_07_persistent_grouped<T>;
      static const bool once = (opt_in(kernel, hgemm07::Shape::kSmemBytes), true);
      (void)once;
      const int tiles = (s.m / hgemm07::kBM) * (s.n / hgemm07::kBN);
      const int blocks = std::min(tiles, sm_count());
      kernel<<<blocks, hgemm07::kThreads, hgemm07::Shape::kSmemBytes>>>(s.m, s.n, s.k, ma, mw, c);
      break;
    }
    case 8: {  // clusters of two; as many as fit on the GPU at once (not every SM pairs up)
      auto* const kernel = hgemm_08_cluster_multicast<T>;
      constexpr int bytes = hgemm08::Shape::kSmemBytes;
      static const bool once = (opt_in(kernel, bytes), true);
      (void)once;
      cudaLaunchConfig_t config{};
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = hgemm08::kCluster;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      config.blockDim = dim3(hgemm08::kThreads);
      config.dynamicSmemBytes = bytes;
      config.attrs = attr;
      config.numAttrs = 1;
      const int max_clusters = max_active_clusters_08<T>();
      const int pairs = (s.m / (hgemm08::kCluster * hgemm08::kBM)) * (s.n / hgemm08::kBN);
      config.gridDim = dim3(hgemm08::kCluster * std::min(pairs, max_clusters));
      config.stream = nullptr;
      TS_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, s.m, s.n, s.k, ma, mw, c));
      break;
    }
    default:
      throw GpuError("hgemm version " + std::to_string(version) + " has no " +
                     (type == Operand16::bf16 ? "bf16" : "fp16") + " launch");
  }
  TS_CUDA_CHECK_LAUNCH();
}

// Whether this process's device (device 0: the bench and the tests use no other) is a Hopper GPU.
std::string device_unsupported_uncached() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    return "no usable CUDA device";
  }
  if (major != 9 || minor != 0) {
    return "versions 3–8 are built for sm_90a (TMA, wgmma, setmaxnreg) and run only on a Hopper "
           "GPU (compute capability 9.0); this device is " +
           std::to_string(major) + "." + std::to_string(minor);
  }
  return {};
}

}  // namespace

CUtensorMap hopper_tensor_map_16bit(const void* base, int rows, int k, int box_rows,
                                    Operand16 type) {
  return tensor_map({base, rows, k, box_rows, type});
}

HgemmTile hopper_hgemm_tile(int version) {
  switch (version) {
    case 3:
    case 4:
    case 5:
      return {128, 128, 64};
    case 6:
    case 7:
      return {128, 256, 64};
    case 8:
      return {256, 256, 64};
    default:
      return {0, 0, 0};
  }
}

bool hopper_hgemm_has_bf16(int version) {
  return version >= 4 && version <= kLastHopperHgemm;
}

std::string hopper_device_unsupported() {
  static const std::string why = device_unsupported_uncached();
  return why;
}

std::string hopper_hgemm_launch_note(int version, Operand16 type) {
  if (version == 7) return "persistent grid: one block per SM (" + std::to_string(sm_count()) + ")";
  if (version == 8) {
    const int clusters = type == Operand16::bf16 ? max_active_clusters_08<__nv_bfloat16>()
                                                 : max_active_clusters_08<__half>();
    return "persistent grid: " + std::to_string(clusters) +
           " clusters of 2 resident at once (cudaOccupancyMaxActiveClusters) on " +
           std::to_string(sm_count()) + " SMs";
  }
  return {};
}

void hopper_hgemm_launch(int version, GemmShape s, const void* a, const void* w, float* c,
                         Operand16 type) {
  if (const std::string why = hopper_device_unsupported(); !why.empty()) throw GpuError(why);
  if (version == 3) {
    if (type != Operand16::f16) throw GpuError("hgemm version 3 (mma.sync f16) has no bf16 form");
    const CUtensorMap ma = tensor_map({a, s.m, s.k, hgemm03::kBM, type});
    const CUtensorMap mw = tensor_map({w, s.n, s.k, hgemm03::kBN, type});
    static const bool once = (opt_in(hgemm_03_tma, hgemm03::kSmemBytes), true);
    (void)once;
    hgemm_03_tma<<<dim3(s.n / hgemm03::kBN, s.m / hgemm03::kBM), hgemm03::kThreads,
                   hgemm03::kSmemBytes>>>(s.m, s.n, s.k, ma, mw, c);
    TS_CUDA_CHECK_LAUNCH();
  } else if (type == Operand16::bf16) {
    launch_typed<__nv_bfloat16>(version, s, a, w, c, type);
  } else {
    launch_typed<__half>(version, s, a, w, c, type);
  }
}

}  // namespace tilescope::kernels::cuda

// The one runner of the hand-written CUDA kernels: every launch configuration and why it is what it
// is, plus the shape checks that turn an unsupported problem into a sentence instead of a fault.
#include "kernels/cuda/conv/01_im2col.cuh"
#include "kernels/cuda/conv/02_implicit_gemm.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/epilogue_bias_relu.cuh"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/gpu_memory.h"
#include "kernels/cuda/gpu_timing.h"
#include "kernels/cuda/hgemm/01_wmma.cuh"
#include "kernels/cuda/hgemm/02_mma_multistage.cuh"
#include "kernels/cuda/hgemm_hopper.h"
#include "kernels/cuda/sgemm/01_naive.cuh"
#include "kernels/cuda/sgemm/02_coalesced.cuh"
#include "kernels/cuda/sgemm/03_smem_tiled.cuh"
#include "kernels/cuda/sgemm/04_1d_blocktiling.cuh"
#include "kernels/cuda/sgemm/05_2d_blocktiling.cuh"
#include "kernels/cuda/sgemm/06_vectorized.cuh"
#include "kernels/cuda/sgemm/07_warptiling.cuh"
#include "kernels/cuda/sgemm/08_double_buffered.cuh"
#include "kernels/cuda/sgemm/09_tiles.cuh"
#include "kernels/cuda/sgemm/10_async.cuh"
#include "kernels/cuda/util_kernels.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <tuple>

namespace tilescope::kernels::cuda {
namespace {

// Elementwise passes: 256 threads (8 warps) per block, one float4 per thread. Enough blocks that
// every SM holds its maximum of resident warps many times over; memory-bound, so nothing else
// matters as long as loads are 16 bytes and coalesced.
constexpr int kElementwiseThreads = 256;

unsigned blocks_for(size_t items, int threads) {
  return static_cast<unsigned>((items + threads - 1) / threads);
}

std::string divisibility(const char* what, int value, int by) {
  std::ostringstream os;
  os << what << " = " << value << " is not a multiple of " << by;
  return os.str();
}

// Tile sizes per version: {BM, BN, BK}; M, N, K must be multiples (the kernels have no edge code,
// which keeps each one about its single idea).
struct Tiles {
  int bm, bn, bk;
};
Tiles sgemm_tiles(int version) {
  switch (version) {
    case 1:
    case 2:
      return {1, 1, 1};
    case 3:
      return {32, 32, 32};
    case 4:
      return {64, 64, 8};
    default:
      return {128, 128, 8};
  }
}

}  // namespace

// [SECTION] SGEMM

const std::vector<KernelVersion>& sgemm_versions() {
  static const std::vector<KernelVersion> versions = {
      {1, "naive", "one thread per output; consecutive threads own consecutive rows (uncoalesced)"},
      {2, "coalesced",
       "consecutive threads own consecutive columns: loads of B and stores of C coalesce"},
      {3, "smem_tiled", "32×32 tiles of A and B staged in shared memory, each reused 32 times"},
      {4, "1d_blocktiling", "each thread computes 8 outputs down a column (64×64×8 tiles)"},
      {5, "2d_blocktiling",
       "each thread computes an 8×8 block from register vectors (128×128×8 tiles)"},
      {6, "vectorized", "float4 global loads/stores; A transposed in shared memory for LDS.128"},
      {7, "warptiling",
       "32×64 warp tiles, 2×2 sub-blocks of 4×4 per thread: conflict-free LDS.128"},
      {8, "double_buffered",
       "two shared buffers + register prefetch: one barrier per tile, loads overlap math"},
      {9, "swizzled_template",
       "version 8 as a tile-shape template: A's tile XOR-swizzled instead of padded, streaming "
       "(evict-first) stores of C; 128×128×8 here"},
      {10, "at_cp_async",
       "A transposed once (Aᵀ K×M), then both tiles copied by cp.async, 3 stages in flight, no "
       "register staging; 128×128×16"},
      {11, "tuned_tiles",
       "version 9's or 10's kernel at the block tile, warp tile and depth measured fastest for "
       "this size"},
  };
  return versions;
}

// [SECTION] SGEMM tile candidates (versions 9 and 10's kernels)
// Each row: the template arguments and how many blocks per SM the registers must allow
// (__launch_bounds__' second argument). Thread tiles are 8×8 for 32×64 warp tiles, 8×4 for 32×32
// and 16×8 for 64×64 (128 accumulators: fewer, fatter threads).
namespace {
template <int kBM, int kBN, int kBK, int kWM, int kWN, int kMinBlocks>
void launch_k9(GemmShape s, const float* a, const float* b, float* c) {
  constexpr int threads = (kBM / kWM) * (kBN / kWN) * 32;
  sgemm_09_tiles<kBM, kBN, kBK, kWM, kWN, kMinBlocks>
      <<<dim3(s.n / kBN, s.m / kBM), threads>>>(s.m, s.n, s.k, a, b, c);
}

// Version 10 reads Aᵀ: one transpose into a workspace kept between calls (it grows when a larger
// problem comes; the first call of a size allocates, outside any timed run since the bench
// verifies before it times).
float* transposed_a_workspace(std::size_t count) {
  static DeviceBuffer<float> workspace;
  if (workspace.size() < count) workspace = DeviceBuffer<float>(count);
  return workspace.get();
}

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kStages, int kMinBlocks>
void launch_k10(GemmShape s, const float* a, const float* b, float* c) {
  constexpr int threads = (kBM / kWM) * (kBN / kWN) * 32;
  constexpr int bytes = sgemm10::smem_bytes<kBM, kBN, kBK, kStages>();
  auto* const kernel = sgemm_10_async<kBM, kBN, kBK, kWM, kWN, kStages, kMinBlocks>;
  static const bool once = [&] {
    if (bytes > 48 * 1024)
      TS_CUDA_CHECK(
          cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)once;
  float* at = transposed_a_workspace((std::size_t)s.m * s.k);
  transpose_launch(a, at, s.m, s.k);
  kernel<<<dim3(s.n / kBN, s.m / kBM), threads, bytes>>>(s.m, s.n, s.k, at, b, c);
}

struct TileEntry {
  SgemmTiles tiles;
  void (*launch)(GemmShape, const float*, const float*, float*);
};
const std::vector<TileEntry>& tile_entries() {
  static const std::vector<TileEntry> entries = {
      {{"k9_128x128x8_w32x64", 9, 128, 128, 8, 32, 64, 2}, launch_k9<128, 128, 8, 32, 64, 2>},
      {{"k9_64x128x8_w32x64", 9, 64, 128, 8, 32, 64, 2}, launch_k9<64, 128, 8, 32, 64, 3>},
      {{"k9_64x128x16_w32x64", 9, 64, 128, 16, 32, 64, 2}, launch_k9<64, 128, 16, 32, 64, 2>},
      {{"k9_64x64x16_w32x32", 9, 64, 64, 16, 32, 32, 2}, launch_k9<64, 64, 16, 32, 32, 4>},
      {{"k9_128x256x8_w64x64", 9, 128, 256, 8, 64, 64, 2}, launch_k9<128, 256, 8, 64, 64, 1>},
      {{"k9_128x128x16_w32x64_1blk", 9, 128, 128, 16, 32, 64, 2},
       launch_k9<128, 128, 16, 32, 64, 1>},
      {{"k10_128x128x16_w32x64_s3", 10, 128, 128, 16, 32, 64, 3},
       launch_k10<128, 128, 16, 32, 64, 3, 2>},
      {{"k10_128x128x8_w32x64_s4", 10, 128, 128, 8, 32, 64, 4},
       launch_k10<128, 128, 8, 32, 64, 4, 2>},
      {{"k10_128x128x16_w64x64_s3", 10, 128, 128, 16, 64, 64, 3},
       launch_k10<128, 128, 16, 64, 64, 3, 2>},
      {{"k10_64x128x16_w32x64_s3", 10, 64, 128, 16, 32, 64, 3},
       launch_k10<64, 128, 16, 32, 64, 3, 3>},
      {{"k10_128x256x8_w64x64_s4", 10, 128, 256, 8, 64, 64, 4},
       launch_k10<128, 256, 8, 64, 64, 4, 1>},
      {{"k10_64x64x16_w32x32_s4", 10, 64, 64, 16, 32, 32, 4}, launch_k10<64, 64, 16, 32, 32, 4, 4>},
      {{"k10_128x128x32_w32x64_s3", 10, 128, 128, 32, 32, 64, 3},
       launch_k10<128, 128, 32, 32, 64, 3, 2>},
      {{"k10_128x128x16_w32x64_s4", 10, 128, 128, 16, 32, 64, 4},
       launch_k10<128, 128, 16, 32, 64, 4, 2>},
      {{"k10_64x128x32_w32x64_s3", 10, 64, 128, 32, 32, 64, 3},
       launch_k10<64, 128, 32, 32, 64, 3, 3>},
  };
  return entries;
}
// Versions 9 and 10 are these candidates; version 11 times them all on first use of a shape.
constexpr int kVersion9Candidate = 0, kVersion10Candidate = 6;
}  // namespace

const std::vector<SgemmTiles>& sgemm_tile_candidates() {
  static const std::vector<SgemmTiles> tiles = [] {
    std::vector<SgemmTiles> t;
    for (const TileEntry& e : tile_entries()) t.push_back(e.tiles);
    return t;
  }();
  return tiles;
}

std::string sgemm_tiles_unsupported(int candidate, GemmShape s) {
  const auto& all = tile_entries();
  if (candidate < 0 || candidate >= static_cast<int>(all.size()))
    return "SGEMM tile candidate " + std::to_string(candidate) + " does not exist (0.." +
           std::to_string(all.size() - 1) + ")";
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return "GEMM sizes must be positive";
  const SgemmTiles& t = all[size_t(candidate)].tiles;
  if (s.m % t.bm) return divisibility("M", s.m, t.bm);
  if (s.n % t.bn) return divisibility("N", s.n, t.bn);
  if (s.k % t.bk) return divisibility("K", s.k, t.bk);
  return {};
}

const SgemmAutotune& sgemm_autotune(GemmShape s, const float* a, const float* b, float* c) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int>, SgemmAutotune> done;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(s.m, s.n, s.k);
  if (const auto it = done.find(key); it != done.end()) return it->second;
  SgemmAutotune result;
  // Timed exactly as the bench times a version (gpu_timing.h: warm-up, L2 flushed before each
  // repeat, median), so the winner is the winner of the measurement that gets reported. Without
  // the flush, a 1024³ problem (12 MB) sits in the 60 MB L2 and the kernels that hide DRAM latency
  // worst look best.
  TimingOptions timing;
  timing.warmup = 1;
  timing.repeats = kAutotuneRepeats;
  timing.min_repeats = kAutotuneRepeats;
  for (int cand = 0; cand < static_cast<int>(tile_entries().size()); ++cand) {
    if (!sgemm_tiles_unsupported(cand, s).empty()) continue;
    const KernelTiming t = time_gpu([&] { sgemm_tiles_launch(cand, s, a, b, c); }, timing);
    result.median_ms.emplace_back(cand, static_cast<float>(t.median_ms));
  }
  if (result.median_ms.empty())
    throw GpuError("SGEMM autotune: no tile candidate divides M = " + std::to_string(s.m) +
                   ", N = " + std::to_string(s.n) + ", K = " + std::to_string(s.k));
  result.candidate =
      std::min_element(result.median_ms.begin(), result.median_ms.end(),
                       [](const auto& x, const auto& y) { return x.second < y.second; })
          ->first;
  return done.emplace(key, std::move(result)).first->second;
}

void sgemm_tiles_launch(int candidate, GemmShape s, const float* a, const float* b, float* c) {
  if (const std::string why = sgemm_tiles_unsupported(candidate, s); !why.empty()) {
    throw GpuError("sgemm tiles " + std::to_string(candidate) + ": " + why);
  }
  tile_entries()[size_t(candidate)].launch(s, a, b, c);
  TS_CUDA_CHECK_LAUNCH();
}

std::string sgemm_unsupported(int version, GemmShape s) {
  if (version < 1 || version > 11)
    return "SGEMM version " + std::to_string(version) + " does not exist (1..11)";
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return "GEMM sizes must be positive";
  if (version == 9) return sgemm_tiles_unsupported(kVersion9Candidate, s);
  if (version == 10) return sgemm_tiles_unsupported(kVersion10Candidate, s);
  if (version == 11) {
    for (int cand = 0; cand < static_cast<int>(tile_entries().size()); ++cand)
      if (sgemm_tiles_unsupported(cand, s).empty()) return {};
    return "no SGEMM tile candidate divides M = " + std::to_string(s.m) +
           ", N = " + std::to_string(s.n) + ", K = " + std::to_string(s.k);
  }
  const Tiles t = sgemm_tiles(version);
  if (s.m % t.bm) return divisibility("M", s.m, t.bm);
  if (s.n % t.bn) return divisibility("N", s.n, t.bn);
  if (s.k % t.bk) return divisibility("K", s.k, t.bk);
  return {};
}

void sgemm_launch(int version, GemmShape s, const float* a, const float* b, float* c) {
  if (const std::string why = sgemm_unsupported(version, s); !why.empty()) {
    throw GpuError("sgemm version " + std::to_string(version) + ": " + why);
  }
  switch (version) {
    case 1: {  // 32×32 threads; x walks M (the "wrong" way round, on purpose)
      const dim3 block(32, 32);
      sgemm_01_naive<<<dim3((s.m + 31) / 32, (s.n + 31) / 32), block>>>(s.m, s.n, s.k, a, b, c);
      break;
    }
    case 2:  // 1024 threads as a 32×32 tile, x-fastest along N
      sgemm_02_coalesced<32>
          <<<dim3((s.n + 31) / 32, (s.m + 31) / 32), 1024>>>(s.m, s.n, s.k, a, b, c);
      break;
    case 3:  // one thread per output of a 32×32 tile: 8 KB of shared memory, 1024 threads
      sgemm_03_smem_tiled<32><<<dim3(s.n / 32, s.m / 32), 1024>>>(s.m, s.n, s.k, a, b, c);
      break;
    case 4:  // 64×64 tile / 8 outputs per thread = 512 threads; each loads 1 A and 1 B element
      sgemm_04_1d_blocktiling<64, 64, 8, 8>
          <<<dim3(s.n / 64, s.m / 64), 512>>>(s.m, s.n, s.k, a, b, c);
      break;
    case 5:  // 128×128 tile / 64 outputs per thread = 256 threads
      sgemm_05_2d_blocktiling<128, 128, 8, 8, 8>
          <<<dim3(s.n / 128, s.m / 128), 256>>>(s.m, s.n, s.k, a, b, c);
      break;
    case 6:
      sgemm_06_vectorized<128, 128, 8, 8, 8>
          <<<dim3(s.n / 128, s.m / 128), 256>>>(s.m, s.n, s.k, a, b, c);
      break;
    case 7:
      sgemm_07_warptiling<<<dim3(s.n / sgemm07::kBN, s.m / sgemm07::kBM), sgemm07::kThreads>>>(
          s.m, s.n, s.k, a, b, c);
      break;
    case 8:  // 16.6 KB static shared memory and ≤128 registers: two blocks (16 warps) per SM
      sgemm_08_double_buffered<LoadADense, EpilogueStore>
          <<<dim3(s.n / sgemm08::kBN, s.m / sgemm08::kBM), sgemm08::kThreads>>>(
              s.m, s.n, s.k, LoadADense::Params{a, s.k}, b, EpilogueStore::Params{}, c);
      break;
    case 9:  // version 8's block and warp tiles in the template
      sgemm_tiles_launch(kVersion9Candidate, s, a, b, c);
      break;
    case 10:
      sgemm_tiles_launch(kVersion10Candidate, s, a, b, c);
      break;
    case 11:  // the first call for a shape times every candidate; the winner computes C
      sgemm_tiles_launch(sgemm_autotune(s, a, b, c).candidate, s, a, b, c);
      break;
  }
  TS_CUDA_CHECK_LAUNCH();
}

void sgemm_bias_relu_fused_launch(GemmShape s, const float* a, const float* b, const float* bias,
                                  float* c) {
  if (const std::string why = sgemm_unsupported(8, s); !why.empty()) {
    throw GpuError("fused sgemm + bias + ReLU: " + why);
  }
  sgemm_08_double_buffered<LoadADense, EpilogueBiasRelu>
      <<<dim3(s.n / sgemm08::kBN, s.m / sgemm08::kBM), sgemm08::kThreads>>>(
          s.m, s.n, s.k, LoadADense::Params{a, s.k}, b, EpilogueBiasRelu::Params{bias}, c);
  TS_CUDA_CHECK_LAUNCH();
}

// [SECTION] Tensor-core GEMM

const char* operand16_name(Operand16 type) {
  return type == Operand16::bf16 ? "bf16" : "fp16";
}

const std::vector<KernelVersion>& hgemm_versions() {
  static const std::vector<KernelVersion> versions = {
      {1, "wmma",
       "tensor cores through WMMA 16×16×16 fragments; synchronous shared-memory staging"},
      {2, "mma_ldmatrix_cp_async",
       "mma.sync m16n8k16, ldmatrix.x4, swizzled smem, 4-stage cp.async pipeline, 64×64 warp "
       "tiles"},
      {3, "tma_mbarrier",
       "tiles copied by TMA (one thread, a tensor map) completing on an mbarrier per stage; "
       "128-byte swizzle, 64-deep tiles; math still mma.sync"},
      {4, "wgmma",
       "warpgroup MMA (wgmma.m64n128k16) reading both operands from shared memory through "
       "descriptors; no ldmatrix, no fragments in registers"},
      {5, "warp_specialized",
       "producer warpgroup (TMA) + 2 consumer warpgroups (wgmma), full/empty mbarriers, "
       "setmaxnreg, one k-tile of wgmma in flight, 5 stages"},
      {6, "tiles_128x256",
       "version 5 at 128×256 tiles: wgmma.m64n256k16, 128 accumulators per consumer thread, "
       "1.5× fewer bytes per FLOP"},
      {7, "persistent_grouped",
       "one block per SM looping over tiles (loads of the next tile overlap this one's stores), "
       "tiles in grouped (L2-friendly) order"},
      {8, "cluster_multicast",
       "clusters of 2 blocks sharing the W tile: each loads half and TMA multicasts it to both "
       "(a third less L2 traffic)"},
  };
  return versions;
}

std::string hgemm_unsupported(int version, GemmShape s, Operand16 type) {
  const int last = kLastHopperHgemm;
  if (version < 1 || version > last)
    return "tensor-core GEMM version " + std::to_string(version) + " does not exist (1.." +
           std::to_string(last) + ")";
  if (type == Operand16::bf16 && !hopper_hgemm_has_bf16(version))
    return "tensor-core GEMM version " + std::to_string(version) + " has no bf16 form (4.." +
           std::to_string(last) + " do)";
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return "GEMM sizes must be positive";
  const HgemmTile t =
      version >= kFirstHopperHgemm ? hopper_hgemm_tile(version) : HgemmTile{128, 128, 32};
  if (s.m % t.bm) return divisibility("M", s.m, t.bm);
  if (s.n % t.bn) return divisibility("N", s.n, t.bn);
  if (s.k % t.bk) return divisibility("K", s.k, t.bk);
  return {};
}

namespace {
template <bool kBiasRelu>
void launch_hgemm02(GemmShape s, const void* a, const void* w, const float* bias, float* c) {
  // 64 KB of dynamic shared memory is over the 48 KB default: opt in once per instantiation.
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(hgemm_02_mma_multistage<kBiasRelu>,
                           cudaFuncAttributeMaxDynamicSharedMemorySize, hgemm02::kSmemBytes);
  TS_CUDA_CHECK(opt_in);
  hgemm_02_mma_multistage<kBiasRelu>
      <<<dim3(s.n / hgemm02::kBN, s.m / hgemm02::kBM), hgemm02::kThreads, hgemm02::kSmemBytes>>>(
          s.m, s.n, s.k, static_cast<const __half*>(a), static_cast<const __half*>(w), bias, c);
  TS_CUDA_CHECK_LAUNCH();
}
}  // namespace

void hgemm_launch(int version, GemmShape s, const void* a, const void* w, float* c,
                  Operand16 type) {
  if (const std::string why = hgemm_unsupported(version, s, type); !why.empty()) {
    throw GpuError("tensor-core gemm version " + std::to_string(version) + ": " + why);
  }
  if (version >= kFirstHopperHgemm) {
    hopper_hgemm_launch(version, s, a, w, c, type);
  } else if (version == 1) {  // 8 warps, 64×32 each; 20 KB static shared memory
    hgemm_01_wmma<<<dim3(s.n / hgemm01::kBN, s.m / hgemm01::kBM), hgemm01::kThreads>>>(
        s.m, s.n, s.k, static_cast<const __half*>(a), static_cast<const __half*>(w), c);
    TS_CUDA_CHECK_LAUNCH();
  } else {
    launch_hgemm02<false>(s, a, w, nullptr, c);
  }
}

std::string hgemm_launch_note(int version, Operand16 type) {
  if (version < kFirstHopperHgemm || !hopper_device_unsupported().empty()) return {};
  return hopper_hgemm_launch_note(version, type);
}

void hgemm_bias_relu_fused_launch(GemmShape s, const void* a, const void* w, const float* bias,
                                  float* c) {
  if (const std::string why = hgemm_unsupported(2, s); !why.empty()) {
    throw GpuError("fused tensor-core gemm + bias + ReLU: " + why);
  }
  launch_hgemm02<true>(s, a, w, bias, c);
}

// [SECTION] Elementwise epilogue passes

namespace {
void check_bias_shape(const char* what, int rows, int cols) {
  if (rows <= 0 || cols <= 0 || cols % 4 != 0) {
    throw GpuError(std::string(what) + ": needs rows > 0 and cols a positive multiple of 4 (got " +
                   std::to_string(rows) + "×" + std::to_string(cols) + ")");
  }
}
}  // namespace

void bias_add_launch(const float* in, const float* bias, float* out, int rows, int cols) {
  check_bias_shape("bias add", rows, cols);
  const size_t n4 = (size_t)rows * cols / 4;
  bias_add_kernel<<<blocks_for(n4, kElementwiseThreads), kElementwiseThreads>>>(
      reinterpret_cast<const float4*>(in), reinterpret_cast<const float4*>(bias),
      reinterpret_cast<float4*>(out), n4, cols / 4);
  TS_CUDA_CHECK_LAUNCH();
}

void relu_launch(const float* in, float* out, std::size_t count) {
  if (count == 0 || count % 4 != 0) {
    throw GpuError("relu: the element count must be a positive multiple of 4 (got " +
                   std::to_string(count) + ")");
  }
  const size_t n4 = count / 4;
  relu_kernel<<<blocks_for(n4, kElementwiseThreads), kElementwiseThreads>>>(
      reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), n4);
  TS_CUDA_CHECK_LAUNCH();
}

void bias_relu_fused_launch(const float* in, const float* bias, float* out, int rows, int cols) {
  check_bias_shape("fused bias + ReLU", rows, cols);
  const size_t n4 = (size_t)rows * cols / 4;
  bias_relu_fused_kernel<<<blocks_for(n4, kElementwiseThreads), kElementwiseThreads>>>(
      reinterpret_cast<const float4*>(in), reinterpret_cast<const float4*>(bias),
      reinterpret_cast<float4*>(out), n4, cols / 4);
  TS_CUDA_CHECK_LAUNCH();
}

// [SECTION] Conv2D

std::string conv_unsupported(ConvShape s) {
  if (s.n <= 0 || s.h <= 0 || s.w <= 0 || s.c <= 0 || s.k <= 0 || s.r <= 0 || s.s <= 0 ||
      s.stride <= 0 || s.pad < 0) {
    return "conv sizes must be positive (pad may be 0)";
  }
  if (s.p() <= 0 || s.q() <= 0) return "the filter is larger than the padded input";
  if (s.c % 4) return divisibility("input channels C", s.c, 4);
  const GemmShape g = s.as_gemm();
  if (g.m % 128) return divisibility("N·P·Q (GEMM M)", g.m, 128);
  if (g.n % 128) return divisibility("output channels K (GEMM N)", g.n, 128);
  if (g.k % 8) return divisibility("R·S·C (GEMM K)", g.k, 8);
  return {};
}

void im2col_launch(ConvShape s, const float* x, float* col) {
  if (const std::string why = conv_unsupported(s); !why.empty()) throw GpuError("im2col: " + why);
  const Im2colShape sh{s.n, s.h, s.w, s.c, s.r, s.s, s.pad, s.stride, s.p(), s.q()};
  const size_t total = (size_t)s.n * s.p() * s.q() * s.r * s.s * s.c / 4;
  im2col_nhwc_kernel<<<blocks_for(total, kElementwiseThreads), kElementwiseThreads>>>(sh, x, col);
  TS_CUDA_CHECK_LAUNCH();
}

void conv_implicit_gemm_launch(ConvShape s, const float* x, const float* w_rsck, const float* bias,
                               float* y) {
  if (const std::string why = conv_unsupported(s); !why.empty()) {
    throw GpuError("implicit-GEMM conv: " + why);
  }
  const GemmShape g = s.as_gemm();
  const LoadAIm2col::Params ap{x, s.h, s.w, s.c, s.s, s.pad, s.stride, s.p(), s.q()};
  const dim3 grid(g.n / sgemm08::kBN, g.m / sgemm08::kBM);
  if (bias == nullptr) {
    sgemm_08_double_buffered<LoadAIm2col, EpilogueStore>
        <<<grid, sgemm08::kThreads>>>(g.m, g.n, g.k, ap, w_rsck, EpilogueStore::Params{}, y);
  } else {
    sgemm_08_double_buffered<LoadAIm2col, EpilogueBiasRelu>
        <<<grid, sgemm08::kThreads>>>(g.m, g.n, g.k, ap, w_rsck, EpilogueBiasRelu::Params{bias}, y);
  }
  TS_CUDA_CHECK_LAUNCH();
}

// [SECTION] Helpers

void fill_uniform_launch(float* data, std::size_t count, std::uint64_t seed, float lo, float hi) {
  if (count == 0) return;
  fill_uniform_kernel<<<blocks_for(count, kElementwiseThreads), kElementwiseThreads>>>(
      data, count, seed, lo, hi);
  TS_CUDA_CHECK_LAUNCH();
}

void f32_to_f16_launch(const float* in, void* out_half, std::size_t count) {
  if (count == 0) return;
  f32_to_f16_kernel<<<blocks_for(count, kElementwiseThreads), kElementwiseThreads>>>(
      in, static_cast<__half*>(out_half), count);
  TS_CUDA_CHECK_LAUNCH();
}

void f16_to_f32_launch(const void* in_half, float* out, std::size_t count) {
  if (count == 0) return;
  f16_to_f32_kernel<<<blocks_for(count, kElementwiseThreads), kElementwiseThreads>>>(
      static_cast<const __half*>(in_half), out, count);
  TS_CUDA_CHECK_LAUNCH();
}

void f32_to_bf16_launch(const float* in, void* out_bf16, std::size_t count) {
  if (count == 0) return;
  f32_to_bf16_kernel<<<blocks_for(count, kElementwiseThreads), kElementwiseThreads>>>(
      in, static_cast<__nv_bfloat16*>(out_bf16), count);
  TS_CUDA_CHECK_LAUNCH();
}

void bf16_to_f32_launch(const void* in_bf16, float* out, std::size_t count) {
  if (count == 0) return;
  bf16_to_f32_kernel<<<blocks_for(count, kElementwiseThreads), kElementwiseThreads>>>(
      static_cast<const __nv_bfloat16*>(in_bf16), out, count);
  TS_CUDA_CHECK_LAUNCH();
}

void transpose_launch(const float* in, float* out, int rows, int cols) {
  if (rows <= 0 || cols <= 0) throw GpuError("transpose: sizes must be positive");
  transpose_kernel<<<dim3((cols + 31) / 32, (rows + 31) / 32), dim3(32, 8)>>>(in, out, rows, cols);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace tilescope::kernels::cuda

// Tensor-core GEMM version 7 — a persistent kernel that walks the tiles in an L2-friendly order.
// C (fp32) = A (M×K) · Wᵀ (W N×K), 16-bit inputs (fp16 or bf16), fp32 accumulate.
// Changed since version 6: (1) one block per SM for the whole GEMM (grid = number of SMs), each
// looping over tiles blockIdx.x, + gridDim.x, ...; the stage ring and its phases simply continue
// from one tile to the next, so while the consumers store tile i the producer is already loading
// tile i+1, and no block pays a launch, barrier set-up or pipeline fill again; (2) tile t is not
// the t-th tile in row-major order but in "grouped" order: kGroupM block-rows at a time, walked
// column by column, so the ~132 tiles in flight share a few A row-panels and W column-panels
// instead of reading a whole row of W panels (at 8192² W alone is 128 MB, twice the L2).
// Run: tilescope-gpu-bench --suite hgemm (this is version 7; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include "kernels/cuda/hgemm/05_warp_specialized.cuh"

namespace hgemm07 {
constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4;
constexpr int kConsumers = hgemm05::kConsumers, kThreads = hgemm05::kThreads;
constexpr int kGroupM = 16;  // block-rows per group: 16 × 128 rows of A next to 8 × 256 of W
using Shape = hgemm05::Shape<kBN, kStages>;

// Tile `tile` of a tiles_m × tiles_n grid in grouped order: groups of kGroupM block-rows (the last
// group may be shorter), each walked column-major, so consecutive tiles share their W panel and
// the next kGroupM share their A panels.
__device__ __forceinline__ void grouped_tile(int tile, int tiles_m, int tiles_n, int group_m,
                                             int& tm, int& tn) {
  const int per_group = group_m * tiles_n;
  const int first_m = (tile / per_group) * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int in_group = tile % per_group;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}
}  // namespace hgemm07

template <class T>
__global__ void __launch_bounds__(hgemm07::kThreads, 1)
    hgemm_07_persistent_grouped(int M, int N, int K, const __grid_constant__ CUtensorMap tma_a,
                                const __grid_constant__ CUtensorMap tma_w, float* C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace hgemm07;
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);
  T* sA = reinterpret_cast<T*>(smem);
  T* sW = sA + kStages * Shape::kAElems;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(sW + kStages * Shape::kWElems);
  std::uint64_t* empty = full + kStages;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const int tiles_m = M / kBM, tiles_n = N / kBN, num_tiles = tiles_m * tiles_n;
  const int k_tiles = K / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kConsumers);
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (wg == 0) {  // producer: `it` counts k-tiles over all of this block's tiles
    setmaxnreg_dec<hgemm05::kProducerRegs>();
    if (t == 0) {
      int it = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int tm, tn;
        grouped_tile(tile, tiles_m, tiles_n, kGroupM, tm, tn);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) mbar_wait(&empty[s], ((it / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full[s], Shape::kStageBytes);
          tma_load_2d(sA + s * Shape::kAElems, &tma_a, &full[s], kt * kBK, tm * kBM);
          tma_load_2d(sW + s * Shape::kWElems, &tma_w, &full[s], kt * kBK, tn * kBN);
        }
      }
    }
  } else {
    setmaxnreg_inc<hgemm05::kConsumerRegs>();
    const int c = wg - 1;
    int it = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int tm, tn;
      grouped_tile(tile, tiles_m, tiles_n, kGroupM, tm, tn);
      float acc[kBN / 2];
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        const int s = it % kStages;
        mbar_wait(&full[s], (it / kStages) & 1);
        const std::uint64_t da = desc_sw128(sA + s * Shape::kAElems + c * 64 * kBK);
        const std::uint64_t db = desc_sw128(sW + s * Shape::kWElems);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kBK / 16; ++ks) wgmma_m64k16<kBN, T>(acc, da + 2 * ks, db + 2 * ks);
        wgmma_commit();
        wgmma_wait<1>();
        if (kt > 0 && t == 0) mbar_arrive(&empty[(it - 1) % kStages]);
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      if (t == 0) mbar_arrive(&empty[(it - 1) % kStages]);  // the tile's last stage, too

      const int row = tm * kBM + c * 64 + (t / 32) * 16 + (t % 32) / 4;
#pragma unroll
      for (int j = 0; j < kBN / 8; ++j) {
        const int col = tn * kBN + j * 8 + (t % 4) * 2;
        *reinterpret_cast<float2*>(&C[(size_t)row * N + col]) =
            make_float2(acc[4 * j], acc[4 * j + 1]);
        *reinterpret_cast<float2*>(&C[(size_t)(row + 8) * N + col]) =
            make_float2(acc[4 * j + 2], acc[4 * j + 3]);
      }
    }
  }
#else
  (void)M, (void)N, (void)K, (void)tma_a, (void)tma_w, (void)C;
  __trap();  // built without sm_90a: the runner refuses this version before launching it
#endif
}

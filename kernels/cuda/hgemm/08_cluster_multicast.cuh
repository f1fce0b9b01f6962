// Tensor-core GEMM version 8 — thread-block clusters of two with TMA multicast.
// C (fp32) = A (M×K) · Wᵀ (W N×K), 16-bit inputs (fp16 or bf16), fp32 accumulate.
// Changed since version 7: (1) blocks run in clusters of two on neighbouring SMs, the two computing
// vertically adjacent tiles (block-rows 2p and 2p+1, the same W panel); (2) each block loads its
// own 128×64 slice of A but only half of the shared 256×64 slice of W, and the copy engine
// multicasts that half into both blocks' shared memory: per k-tile a block pulls 32 KB from L2
// instead of 48 KB, a third less L2 → SM traffic; (3) a stage is refilled by both producers, so its
// "empty" barrier now waits for the consumers of both blocks (4 arrivals, two of them remote,
// through mapa), and "full" still expects 48 KB, half of which the peer sends; (4) the grid is as
// many clusters as can be resident at once (cudaOccupancyMaxActiveClusters), persistent as in 7,
// walking pairs of block-rows in grouped order.
// Run: tilescope-gpu-bench --suite hgemm (this is version 8; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include "kernels/cuda/hgemm/07_persistent_grouped.cuh"

namespace hgemm08 {
constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kCluster = 2;
constexpr int kConsumers = hgemm05::kConsumers, kThreads = hgemm05::kThreads;
constexpr int kWSlice = kBN / kCluster;  // W rows each block of the cluster loads and multicasts
using Shape = hgemm05::Shape<kBN, kStages>;
}  // namespace hgemm08

template <class T>
__global__ void __launch_bounds__(hgemm08::kThreads, 1)
    hgemm_08_cluster_multicast(int M, int N, int K, const __grid_constant__ CUtensorMap tma_a,
                               const __grid_constant__ CUtensorMap tma_w, float* C) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace hgemm08;
  using namespace hopper;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = align_1024(smem_raw);  // the same offset in both blocks of the cluster
  T* sA = reinterpret_cast<T*>(smem);
  T* sW = sA + kStages * Shape::kAElems;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(sW + kStages * Shape::kWElems);
  std::uint64_t* empty = full + kStages;
  const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
  const unsigned rank = cluster_ctarank();
  const int cluster = blockIdx.x / kCluster, clusters = gridDim.x / kCluster;
  const int pairs_m = M / (kCluster * kBM), tiles_n = N / kBN, num_pairs = pairs_m * tiles_n;
  const int k_tiles = K / kBK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], kConsumers * kCluster);
    }
    fence_barrier_init();
  }
  __syncthreads();
  cluster_sync();  // the peer's barriers exist before anyone multicasts or arrives remotely

  if (wg == 0) {
    setmaxnreg_dec<hgemm05::kProducerRegs>();
    if (t == 0) {
      int it = 0;
      for (int pair = cluster; pair < num_pairs; pair += clusters) {
        int pm, tn;
        hgemm07::grouped_tile(pair, pairs_m, tiles_n, hgemm07::kGroupM / kCluster, pm, tn);
        const int tm = pm * kCluster + static_cast<int>(rank);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) mbar_wait(&empty[s], ((it / kStages) - 1) & 1);
          mbar_arrive_expect_tx(&full[s], Shape::kStageBytes);
          tma_load_2d(sA + s * Shape::kAElems, &tma_a, &full[s], kt * kBK, tm * kBM);
          tma_load_2d_multicast(sW + s * Shape::kWElems + rank * kWSlice * kBK, &tma_w, &full[s],
                                kt * kBK, tn * kBN + static_cast<int>(rank) * kWSlice,
                                static_cast<std::uint16_t>((1u << kCluster) - 1));
        }
      }
    }
  } else {
    setmaxnreg_inc<hgemm05::kConsumerRegs>();
    const int c = wg - 1;
    int it = 0;
    for (int pair = cluster; pair < num_pairs; pair += clusters) {
      int pm, tn;
      hgemm07::grouped_tile(pair, pairs_m, tiles_n, hgemm07::kGroupM / kCluster, pm, tn);
      const int tm = pm * kCluster + static_cast<int>(rank);
      float acc[kBN / 2];
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;
      // Frees stage s in both blocks (both producers write into it): thread p of the warpgroup
      // signals block p, so the two arrivals go out at once instead of one after the other.
      auto release = [&](int s) {
        if (t < kCluster) mbar_arrive_cluster(&empty[s], static_cast<unsigned>(t));
      };
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
        if (kt > 0) release((it - 1) % kStages);
      }
      wgmma_wait<0>();
      fence_accumulators(acc);
      release((it - 1) % kStages);

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
  cluster_sync();  // no block leaves while its peer may still multicast into it or signal it
#else
  (void)M, (void)N, (void)K, (void)tma_a, (void)tma_w, (void)C;
  __trap();  // built without sm_90a: the runner refuses this version before launching it
#endif
}

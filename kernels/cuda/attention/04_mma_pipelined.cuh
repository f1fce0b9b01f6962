// Attention version 4 — version 3 with a cp.async pipeline: two K/V stages in shared memory, so the
// next tile of keys and values is in flight while this one is multiplied (one barrier pair per
// tile, as before, but no tile's copy latency is exposed after the first). Changed since version 3:
// the stage count only; 80 KB of shared memory at d = 128, still two blocks per SM. The kernel body
// is 03_mma_online_softmax.cuh's.
//
// Run: tilescope-gpu-bench --suite attention (this is version 4).
#pragma once

#include "kernels/cuda/attention/03_mma_online_softmax.cuh"

namespace attn {

template <class T, int kD>
__global__ void __launch_bounds__(kMmaThreads)
    attention_04_mma_pipelined(const T* Q, const T* K, const T* V, T* O, int n, float scale_log2e,
                               bool causal) {
  mma_online_softmax_body<T, kD, 2>(Q, K, V, O, n, scale_log2e, causal);
}

}  // namespace attn

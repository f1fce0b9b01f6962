// The launch of attention version 5 (attention_hopper.h): three tensor maps over the [B·H·N][d]
// views of Q, K and V (boxes of 128 query rows, or of 64 or 128 key rows, by 64 columns), grid
// (N/128, B·H), 288 threads (two consumer warpgroups and a producer warp), one block per SM.
#include "kernels/cuda/attention_hopper.h"

#include "kernels/cuda/attention/05_hopper_wgmma.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/hopper_tensor_map.h"

#include <cuda_runtime.h>

#include <cmath>

namespace tilescope::kernels::cuda {
namespace {

template <class T, int kD>
void launch(int heads, int n, bool causal, Operand16 type, const void* q, const void* k,
            const void* v, void* o) {
  const int rows = heads * n;
  const CUtensorMap mq = hopper_tensor_map_16bit(q, rows, kD, attn05::kBr, type);
  const CUtensorMap mk = hopper_tensor_map_16bit(k, rows, kD, attn05::Shape<kD>::kBc, type);
  const CUtensorMap mv = hopper_tensor_map_16bit(v, rows, kD, attn05::Shape<kD>::kBc, type);
  constexpr int smem = attn05::Shape<kD>::kSmemBytes;
  auto* kernel = attention_05_hopper_wgmma<T, kD>;
  // Dynamic shared memory above 48 KB needs an opt-in per kernel: once, not at every timed launch.
  static const bool ready = [&] {
    TS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    return true;
  }();
  (void)ready;
  const float scale_log2e = static_cast<float>(1.0 / std::sqrt(double(kD))) * attn::kLog2e;
  kernel<<<dim3(n / attn05::kBr, heads), attn05::kThreads, smem>>>(mq, mk, mv, static_cast<T*>(o),
                                                                   n, scale_log2e, causal);
  TS_CUDA_CHECK_LAUNCH();
}

}  // namespace

void attention_hopper_launch(int heads, int n, int d, bool causal, Operand16 type, const void* q,
                             const void* k, const void* v, void* o) {
  const bool bf16 = type == Operand16::bf16;
  if (d == 64)
    bf16 ? launch<__nv_bfloat16, 64>(heads, n, causal, type, q, k, v, o)
         : launch<__half, 64>(heads, n, causal, type, q, k, v, o);
  else
    bf16 ? launch<__nv_bfloat16, 128>(heads, n, causal, type, q, k, v, o)
         : launch<__half, 128>(heads, n, causal, type, q, k, v, o);
}

}  // namespace tilescope::kernels::cuda

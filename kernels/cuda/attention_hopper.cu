// The launches of attention versions 5 and 6 (attention_hopper.h): three tensor maps over the
// [B·H·N][d] views of Q, K and V (boxes of 128 query rows, or of 64 or 128 key rows, by 64
// columns), grid (N/128, B·H), one block per SM: version 5 has 288 threads (two consumer
// warpgroups and a producer warp), version 6 256 (two warpgroups that also issue the copies).
#include "kernels/cuda/attention_hopper.h"

#include "kernels/cuda/attention/05_hopper_wgmma.cuh"
#include "kernels/cuda/attention/06_hopper_pingpong.cuh"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/hopper_tensor_map.h"

#include <cuda_runtime.h>

#include <cmath>

namespace tilescope::kernels::cuda {
namespace {

// One version's launch: queries per block kBr, keys per tile kBc, kThreads threads, kSmem bytes of
// dynamic shared memory.
template <class T, int kD, int kBr, int kBc, int kThreads, int kSmem, class Kernel>
void launch(Kernel* kernel, int heads, int n, bool causal, Operand16 type, const void* q,
            const void* k, const void* v, void* o) {
  const int rows = heads * n;
  const CUtensorMap mq = hopper_tensor_map_16bit(q, rows, kD, kBr, type);
  const CUtensorMap mk = hopper_tensor_map_16bit(k, rows, kD, kBc, type);
  const CUtensorMap mv = hopper_tensor_map_16bit(v, rows, kD, kBc, type);
  // Dynamic shared memory above 48 KB needs an opt-in per kernel: once, not at every timed launch.
  static const bool ready = [&] {
    TS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    return true;
  }();
  (void)ready;
  const float scale_log2e = static_cast<float>(1.0 / std::sqrt(double(kD))) * attn::kLog2e;
  kernel<<<dim3(n / kBr, heads), kThreads, kSmem>>>(mq, mk, mv, static_cast<T*>(o), n, scale_log2e,
                                                    causal);
  TS_CUDA_CHECK_LAUNCH();
}

template <class T, int kD>
void launch_version(int version, int heads, int n, bool causal, Operand16 type, const void* q,
                    const void* k, const void* v, void* o) {
  if (version == 5) {
    using S = attn05::Shape<kD>;
    launch<T, kD, attn05::kBr, S::kBc, attn05::kThreads, S::kSmemBytes>(
        attention_05_hopper_wgmma<T, kD>, heads, n, causal, type, q, k, v, o);
  } else {
    using S = attn06::Shape<kD>;
    launch<T, kD, attn06::kBr, attn06::kBc, attn06::kThreads, S::kSmemBytes>(
        attention_06_hopper_pingpong<T, kD>, heads, n, causal, type, q, k, v, o);
  }
}

}  // namespace

void attention_hopper_launch(int version, int heads, int n, int d, bool causal, Operand16 type,
                             const void* q, const void* k, const void* v, void* o) {
  const bool bf16 = type == Operand16::bf16;
  if (d == 64)
    bf16 ? launch_version<__nv_bfloat16, 64>(version, heads, n, causal, type, q, k, v, o)
         : launch_version<__half, 64>(version, heads, n, causal, type, q, k, v, o);
  else
    bf16 ? launch_version<__nv_bfloat16, 128>(version, heads, n, causal, type, q, k, v, o)
         : launch_version<__half, 128>(version, heads, n, causal, type, q, k, v, o);
}

}  // namespace tilescope::kernels::cuda

// Attention versions 5 and 6 (TMA, wgmma; a producer warp, or FlashAttention-3's ping-pong) as
// attention_runner.cu calls them.
// Its own translation unit in the sm_90a library (wgmma and setmaxnreg exist nowhere else), like
// hgemm_hopper.h. Plain C++ header: no CUDA types.
#pragma once

#include "kernels/cuda/gpu_shapes.h"

namespace tilescope::kernels::cuda {

// Launches version 5 or 6 on `heads` (B·H) heads of N×d; d 64 or 128 and N a multiple of 128
// (checked by attention_unsupported), on a Hopper GPU (hopper_device_unsupported() says why not).
// The tensors are [heads][N][d] of `type` (attention.h's layout).
void attention_hopper_launch(int version, int heads, int n, int d, bool causal, Operand16 type,
                             const void* q, const void* k, const void* v, void* o);

}  // namespace tilescope::kernels::cuda

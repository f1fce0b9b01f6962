// Tensor-core GEMM version 6 — larger tiles: version 5's kernel at 128×256 per block.
// Changed since version 5: each consumer warpgroup now owns a 64×256 tile and issues
// wgmma.m64n256k16 (128 fp32 accumulators per thread — this is where the register reallocation of
// version 5 starts to matter: 128 accumulators plus addresses do not fit the 168 registers a
// 384-thread block gets evenly, but fit the consumers' 232). Per 64-deep k-tile a block now reads
// 16 KB of A and 32 KB of W for 4.2 MFLOP instead of 16 + 16 KB for 2.1 MFLOP: 1.5 times fewer
// shared-memory and L2 bytes per FLOP. Four stages of 48 KB (192 KB). The code is version 5's; only
// the template arguments change.
// Run: tilescope-gpu-bench --suite hgemm (this is version 6; version 0 is cuBLAS (fp16 in, fp32 accumulate)).
#pragma once

#include "kernels/cuda/hgemm/05_warp_specialized.cuh"

namespace hgemm06 {
constexpr int kBN = 256, kStages = 4;
}  // namespace hgemm06

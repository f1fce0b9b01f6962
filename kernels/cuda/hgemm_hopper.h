// The Hopper tensor-core GEMM versions (3–8: TMA, wgmma, warp specialization, persistent grouped
// tiles, cluster multicast) as gpu_runner.cu calls them. They live in their own translation unit
// because wgmma and setmaxnreg need the architecture-specific target sm_90a, which the rest of the
// CUDA code is not built for. Plain C++ header: no CUDA types.
#pragma once

#include "kernels/cuda/gpu_shapes.h"

#include <string>

namespace tilescope::kernels::cuda {

constexpr int kFirstHopperHgemm = 3, kLastHopperHgemm = 8;

// The tile a version needs M, N and K to be multiples of ({BM, BN, BK}); version 8 covers two
// block-rows per cluster, so its BM is 256.
struct HgemmTile {
  int bm, bn, bk;
};
HgemmTile hopper_hgemm_tile(int version);
// Whether the version has a bf16 instantiation (3 is mma.sync with fp16 fragments only).
bool hopper_hgemm_has_bf16(int version);
// Empty when this device can run the sm_90a kernels (compute capability 9.0), otherwise why not.
std::string hopper_device_unsupported();
// How version 7 or 8 sizes its persistent grid on this GPU, for the bench's notes; empty for the
// others. Needs a Hopper GPU (see hopper_device_unsupported).
std::string hopper_hgemm_launch_note(int version, Operand16 type);
// Launches version 3..8 (shapes already checked by hgemm_unsupported).
void hopper_hgemm_launch(int version, GemmShape shape, const void* a, const void* w, float* c,
                         Operand16 type);

}  // namespace tilescope::kernels::cuda

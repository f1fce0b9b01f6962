// MatMul version 4: packed panels and a register-blocked micro-kernel (gemm_packed.h).
//
// Changed since version 3: A and B are copied into contiguous, zero-padded micro-panels, and an
// MR×NR block of Y (8×32 with AVX-512) lives in 16 vector registers for the whole k loop. Y is now
// touched once per 256-deep k block instead of once per k step, so the loads per FMA drop from
// three (Y, B, store Y) to about one (B, plus an A broadcast shared by a 32-wide row).
// Bias and ReLU are still two separate passes over Y.
#include "kernels/cpu/gemm_packed.h"
#include "kernels/cpu/matmul_versions.h"

namespace tilescope::kernels {

void matmul_4_microkernel(const MatMulArgs& args) {
  gemm::gemm(args.a, args.k, args.b, args.n, args.y, args.n, args.m, args.n, args.k);
  bias_cols_pass(args.y, args.bias, args.y, args.m, args.n);
  relu_pass(args.y, args.y, static_cast<std::size_t>(args.m) * args.n);
}

}  // namespace tilescope::kernels

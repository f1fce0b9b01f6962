// MatMul version 3: cache tiling of the i-k-j loops (the text lives in matmul_3_tiled.inc).
//
// Changed since version 2: the j and k loops are cut into 256×256 tiles of B. A tile (256 KiB) is
// loaded from L3 once and reused by all M rows of A, instead of all of B streaming past every row.
// The inner loop is unchanged, so the kernel is now limited by L1 loads and stores of the Y row:
// each 16-wide FMA needs a load of Y, a load of B and a store of Y.
#include "kernels/cpu/matmul_versions.h"

#include "kernels/cpu/matmul_3_tiled.inc"
#include "kernels/cpu/matmul_3_tiled_text.h"  // generated: the .inc's text as a string

namespace tilescope::kernels {

std::string tiled_matmul_jit_source(int m, int n, int k) {
  return std::string(kTiledMatMulText) +
         "\n// Entry point with the ABI of generated kernels: args = {A, B, bias, Y}, shapes baked "
         "in.\n"
         "extern \"C\" void ts_kernel(float* const* args) {\n"
         "  constexpr int M = " +
         std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ";\n"
         "  tiled_matmul_bias_relu(args[0], args[1], args[2], args[3], M, N, K);\n"
         "}\n";
}

void matmul_3_tiled(const MatMulArgs& args) {
  tiled_matmul_bias_relu(args.a, args.b, args.bias, args.y, args.m, args.n, args.k);
}

}  // namespace tilescope::kernels

// The numbered CPU Conv2D versions (Y = relu(conv2d(X, W) + bias), NCHW) and their shared im2col.
#pragma once

#include "kernels/cpu/kernel_args.h"

namespace tilescope::kernels {

void conv_0_eigen(const ConvArgs&);
void conv_1_direct(const ConvArgs&);
void conv_2_im2col_gemm(const ConvArgs&);
void conv_3_fused(const ConvArgs&);

// Unrolls image `image` of X into col, a (C·R·S)×(P·Q) row-major matrix: row (c, r, s) holds the
// input pixel each output position (p, q) multiplies by W[f][c][r][s], or 0 in the padding.
// Then conv = W (F×CRS) · col, one GEMM per image.
void im2col(const ConvArgs& args, int image, float* col);

}  // namespace tilescope::kernels

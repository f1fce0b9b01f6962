// The TMA tensor maps the Hopper kernels (hgemm versions 3–8, attention version 5) read: a
// row-major rows × k matrix of 16-bit elements in boxes of box_rows × 64 (128-byte rows, swizzled
// as wgmma's descriptors expect), made once per buffer and shape (hgemm_hopper.cu caches them, so
// a timed launch does not pay the encoding). Needs <cuda.h> for CUtensorMap (a plain struct).
#pragma once

#include "kernels/cuda/gpu_shapes.h"

#include <cuda.h>

namespace tilescope::kernels::cuda {

CUtensorMap hopper_tensor_map_16bit(const void* base, int rows, int k, int box_rows,
                                    Operand16 type);

}  // namespace tilescope::kernels::cuda

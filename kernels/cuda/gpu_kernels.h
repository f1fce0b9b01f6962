// Plain C++ entry points to the hand-written CUDA kernels (no CUDA headers): each launcher checks
// the shape, launches on the default stream and checks the launch. Implemented in gpu_runner.cu,
// the one runner that holds every launch configuration and the reasoning behind it, except the
// Hopper tensor-core versions (sm_90a only), whose launches are in hgemm_hopper.cu.
#pragma once

#include "kernels/cuda/gpu_shapes.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tilescope::kernels::cuda {

// [SECTION] SGEMM progression (fp32, CUDA cores): versions 1..11; version 0 is cuBLAS. Version 9
// is version 8 as a tile-shape template (swizzled A tile, streaming stores); version 10 reads A
// transposed (one transpose pass first) through a cp.async pipeline; version 11 is whichever of the
// two kernels, at whichever tile shape, it measures fastest for the problem's shape (autotuned on
// first use).
const std::vector<KernelVersion>& sgemm_versions();
// Empty when `version` can run `shape`; otherwise why not, in the user's terms.
std::string sgemm_unsupported(int version, GemmShape shape);
void sgemm_launch(int version, GemmShape shape, const float* a, const float* b, float* c);
// The tile shapes versions 9 and 10's kernels are built for (the autotuning candidates), in a
// fixed order; `name` reads "k9_128x128x8_w32x64" (kernel, block BM×BN×BK, warp tile WM×WN, and
// for kernel 10 "_sN", its pipeline stages).
struct SgemmTiles {
  std::string name;
  int kernel;  // 9: registers stage the next tile; 10: Aᵀ + cp.async
  int bm, bn, bk, wm, wn;
  int stages;  // tiles in shared memory at once
  int threads() const { return (bm / wm) * (bn / wn) * 32; }
};
const std::vector<SgemmTiles>& sgemm_tile_candidates();
// Version 11's choice for a shape: on the first call for that shape every candidate that divides
// it is timed as the bench times a version (gpu_timing.h: a warm-up, then kAutotuneRepeats runs
// with the L2 flushed before each) on the caller's buffers; the candidate with the smallest median
// wins and is remembered for the process's lifetime (as cuDNN's benchmark mode does). `c` is overwritten by whichever candidate ran last. Throws GpuError
// when no candidate divides the shape.
inline constexpr int kAutotuneRepeats = 5;
struct SgemmAutotune {
  int candidate = -1;                            // index into sgemm_tile_candidates()
  std::vector<std::pair<int, float>> median_ms;  // every candidate timed, in table order
};
const SgemmAutotune& sgemm_autotune(GemmShape shape, const float* a, const float* b, float* c);
std::string sgemm_tiles_unsupported(int candidate, GemmShape shape);
void sgemm_tiles_launch(int candidate, GemmShape shape, const float* a, const float* b, float* c);
// The best version (8) with bias + ReLU applied to each output before it is stored.
void sgemm_bias_relu_fused_launch(GemmShape shape, const float* a, const float* b,
                                  const float* bias, float* c);

// [SECTION] Tensor-core GEMM: C (fp32, M×N) = A (16-bit, M×K) · Wᵀ with W (16-bit) stored N×K, i.e.
// the model's `x @ W.T`; fp32 accumulation. Versions 1 (WMMA), 2 (mma.sync + ldmatrix + cp.async),
// then the Hopper path: 3 (TMA + mbarrier), 4 (wgmma), 5 (warp specialization + setmaxnreg),
// 6 (128×256 tiles), 7 (persistent, grouped tile order), 8 (clusters + TMA multicast).

const char* operand16_name(Operand16 type);  // "fp16" / "bf16"

const std::vector<KernelVersion>& hgemm_versions();
// Empty when `version` can run `shape` with inputs of `type`; otherwise why not, in the user's
// terms. Shapes only: versions 3–8 also need a Hopper GPU, which hgemm_launch checks.
std::string hgemm_unsupported(int version, GemmShape shape, Operand16 type = Operand16::f16);
// `a` and `w` point to 16-bit data (__half or __nv_bfloat16 as `type` says); void* keeps CUDA
// types out of this header.
void hgemm_launch(int version, GemmShape shape, const void* a, const void* w, float* c,
                  Operand16 type = Operand16::f16);
// What a version's launch decided on this GPU that a reader of its timing should know (the
// persistent grid of versions 7 and 8); empty when nothing, or when the GPU cannot run it.
std::string hgemm_launch_note(int version, Operand16 type = Operand16::f16);
// Version 2 with bias + ReLU fused into the epilogue.
void hgemm_bias_relu_fused_launch(GemmShape shape, const void* a, const void* w, const float* bias,
                                  float* c);

// [SECTION] Elementwise epilogue passes on a rows×cols fp32 matrix, bias per column (cols % 4 ==
// 0).
void bias_add_launch(const float* in, const float* bias, float* out, int rows, int cols);
void relu_launch(const float* in, float* out, std::size_t count);
void bias_relu_fused_launch(const float* in, const float* bias, float* out, int rows, int cols);

// [SECTION] Conv2D, NHWC. im2col writes the (N·P·Q)×(R·S·C) row-major patch matrix.
std::string conv_unsupported(ConvShape shape);
void im2col_launch(ConvShape shape, const float* x, float* col);
// Implicit GEMM: the im2col gather happens inside the GEMM's tile loads; `bias` may be null (plain
// conv) or not (conv + bias + ReLU fused in the epilogue).
void conv_implicit_gemm_launch(ConvShape shape, const float* x, const float* w_rsck,
                               const float* bias, float* y);

// [SECTION] Helpers for harnesses and tests.
// Fills `count` floats with a counter-based hash of (seed, index), uniform in [lo, hi): fresh
// inputs for each seed, reproducible, never zeros by accident.
void fill_uniform_launch(float* data, std::size_t count, std::uint64_t seed, float lo, float hi);
// fp32 → fp16 (round to nearest) and back; the back-conversion gives the exact fp32 values the
// tensor cores multiply.
void f32_to_f16_launch(const float* in, void* out_half, std::size_t count);
void f16_to_f32_launch(const void* in_half, float* out, std::size_t count);
// The same for bf16 (round to nearest even).
void f32_to_bf16_launch(const float* in, void* out_bf16, std::size_t count);
void bf16_to_f32_launch(const void* in_bf16, float* out, std::size_t count);
// out (cols×rows) = inᵀ (in is rows×cols), both row-major.
void transpose_launch(const float* in, float* out, int rows, int cols);

}  // namespace tilescope::kernels::cuda

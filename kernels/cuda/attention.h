// Attention, O = softmax(Q·Kᵀ · scale [+ causal mask]) · V, per (batch, head): the numbered CUDA
// versions (issue #31) and the fp32 reference they are checked against. Plain C++: no CUDA
// headers. Launchers are in attention_runner.cu, the kernels in kernels/cuda/attention/.
//
// Layout: Q, K, V and O are [batch][heads][N][d] row-major 16-bit tensors (PyTorch's
// (B, H, N, d) contiguous), fp16 or bf16; scale = 1/√d; causal means query i sees keys j ≤ i.
#pragma once

#include "kernels/cuda/gpu_shapes.h"

#include <cstddef>
#include <string>
#include <vector>

namespace tilescope::kernels::cuda {

struct AttentionShape {
  int batch = 1, heads = 1, n = 0, d = 0;
  bool causal = false;
  Operand16 type = Operand16::f16;

  int bh() const { return batch * heads; }
  std::size_t qkv_count() const { return (std::size_t)batch * heads * n * d; }
  double scale() const;
  // Multiply-adds of the two GEMMs, as FlashAttention's papers count them: 4·B·H·N²·d, halved
  // when causal (the masked half is skipped by the fused kernels; the unfused one computes it).
  double flops() const;
  // What any version must move at least: Q, K, V read and O written once.
  double compulsory_bytes() const { return 4.0 * (double)qkv_count() * 2.0; }
  // The N×N scores of every head at the 16-bit width: what the unfused version writes and reads
  // twice (S written, read by softmax; P written, read by the second GEMM).
  double score_bytes() const { return (double)bh() * n * (double)n * 2.0; }
  std::string text() const;  // "B=4 H=16 N=4096 d=128, fp16, non-causal"
};

// Versions 1–6 (version numbers as in the bench; 0 is not used: the reference is fp32).
const std::vector<KernelVersion>& attention_versions();
// Empty when `version` can run `shape`; otherwise why not.
std::string attention_unsupported(int version, const AttentionShape& shape);

// Scratch the unfused version needs: the scores S (then P, in place), B·H·N² 16-bit values.
std::size_t attention_scratch_count(int version, const AttentionShape& shape);

// Launches version `version` on the default stream. q, k, v, o point to 16-bit data of the shape's
// type; `scratch` to attention_scratch_count(...) 16-bit values (may be null when that is 0).
// `cublas_handle` is a cublasHandle_t (void* keeps cuBLAS out of this header), used by version 1.
void attention_launch(int version, const AttentionShape& shape, const void* q, const void* k,
                      const void* v, void* o, void* scratch, void* cublas_handle);

// The reference: S in fp32 (cuBLAS, fp32 accumulate and out), softmax in fp32, P·V in fp32 with V
// widened, `heads_per_chunk` heads at a time so S fits in `s32` (heads_per_chunk · N² floats);
// `v32` holds B·H·N·d floats (V widened), `out` B·H·N·d floats.
void attention_reference_launch(const AttentionShape& shape, const void* q, const void* k,
                                const void* v, float* v32, float* s32, int heads_per_chunk,
                                float* out, void* cublas_handle);

// One row of the problem in float64 on the CPU: the output of query `row` of head `bh` (b·H + h),
// from the inputs as fp32 (their exact 16-bit values), written to `out` (d values).
void attention_row_cpu(const AttentionShape& shape, const float* q, const float* k, const float* v,
                       int bh, int row, double* out);

}  // namespace tilescope::kernels::cuda

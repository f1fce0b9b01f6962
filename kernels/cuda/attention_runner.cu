// The attention versions' launches (attention.h): version 1 through cuBLAS and the softmax kernel,
// versions 2–4 as single kernels, and the fp32 reference. Launch configurations and why:
// - v1: two cublasGemmStridedBatchedEx (one batch entry per head), 16-bit in and out, fp32
//   accumulate, as PyTorch's math path does; the softmax is one 256-thread block per row of S.
// - v2: 64 queries per block, 256 threads, 112 KB (d = 128) of fp32 tiles: one block per SM.
// - v3: 64 queries per block, 128 threads, 48 KB (d = 128); v4 80 KB (two K/V stages): two
//   blocks per SM. v5 (attention_hopper.cu, sm_90a): 128 queries, 288 threads, 96 KB, one block
//   per SM, grid (N/128, B·H); v6 the same grid, 256 threads, 225 KB. Grid (N/64, B·H) for v2–v4;
//   causal grids start with the longest rows (the kernels map blockIdx.x = 0 to the last query
//   tile).
#include "kernels/cuda/attention.h"

#include "kernels/cuda/attention/01_unfused.cuh"
#include "kernels/cuda/attention/02_fused_cuda_cores.cuh"
#include "kernels/cuda/attention/03_mma_online_softmax.cuh"
#include "kernels/cuda/attention/04_mma_pipelined.cuh"
#include "kernels/cuda/attention_hopper.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/gpu_kernels.h"
#include "kernels/cuda/hgemm_hopper.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace tilescope::kernels::cuda {

double AttentionShape::scale() const {
  return 1.0 / std::sqrt(static_cast<double>(d));
}

double AttentionShape::flops() const {
  const double full = 4.0 * bh() * (double)n * (double)n * d;
  return causal ? full / 2.0 : full;
}

std::string AttentionShape::text() const {
  return "B=" + std::to_string(batch) + " H=" + std::to_string(heads) + " N=" + std::to_string(n) +
         " d=" + std::to_string(d) + ", " + operand16_name(type) +
         (causal ? ", causal" : ", non-causal");
}

const std::vector<KernelVersion>& attention_versions() {
  static const std::vector<KernelVersion> versions = {
      {1, "unfused",
       "three kernels: S = Q·Kᵀ (cuBLAS), softmax of each row of S (in place), O = P·V (cuBLAS); "
       "the N×N scores go to HBM and back"},
      {2, "fused_cuda_cores",
       "one kernel on CUDA cores (fp32): 64 queries per block, keys streamed through shared "
       "memory 64 at a time, online softmax (running max and sum, earlier output rescaled); the "
       "scores never leave the SM"},
      {3, "mma_online_softmax",
       "both GEMMs on tensor cores (mma.sync m16n8k16); each warp keeps its 16 rows' Q, scores "
       "and output in registers, and the score fragments are the A operand of P·V (P never "
       "touches shared memory); K/V by cp.async into swizzled shared rows, read by ldmatrix"},
      {4, "mma_pipelined",
       "two K/V stages: the next tile is loaded by cp.async while this one is multiplied"},
      {5, "hopper_wgmma",
       "Hopper: both GEMMs as warpgroup MMAs (wgmma; P from registers, V from shared memory "
       "transposed by the instruction), K and V by TMA from a producer warp into a two-stage "
       "ring with full/empty barriers, two consumer warpgroups of 64 queries, key tiles of "
       "128 (d = 64) or 64 (d = 128)"},
      {6, "hopper_pingpong",
       "FlashAttention-3's overlaps: the two warpgroups take turns issuing GEMMs (one's softmax "
       "runs during the other's MMAs), and each issues tile j's S GEMM with tile j-1's P·V so "
       "its softmax runs while P·V does; no producer warp (256 threads may hold 255 registers "
       "each), the last warpgroup to free a stage refills it by TMA; three K/V stages, 128-key "
       "tiles at d = 128"},
  };
  return versions;
}

std::string attention_unsupported(int version, const AttentionShape& s) {
  if (version < 1 || version > 6) return "attention has versions 1–6";
  if (s.d != 64 && s.d != 128)
    return "head dim " + std::to_string(s.d) + ": versions take 64 or 128";
  if (s.n <= 0 || s.n % 64 != 0) return "N = " + std::to_string(s.n) + " is not a multiple of 64";
  if (s.bh() <= 0 || s.bh() > 65535) return "B·H must be 1..65535 (the grid's y)";
  if (version >= 5 && s.n % 128 != 0)
    return "N = " + std::to_string(s.n) + " is not a multiple of 128 (version " +
           std::to_string(version) + "'s tiles)";
  return {};
}

std::size_t attention_scratch_count(int version, const AttentionShape& s) {
  return version == 1 ? (std::size_t)s.bh() * s.n * s.n : 0;
}

namespace {

void check_cublas(cublasStatus_t st, const char* what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw GpuError(std::string(what) + " failed: " + cublasGetStatusString(st));
}

cudaDataType data_type(Operand16 t) {
  return t == Operand16::bf16 ? CUDA_R_16BF : CUDA_R_16F;
}

// Row-major S (N×N per head) = Q·Kᵀ is column-major Sᵀ = Kᵀᵀ·… : cuBLAS sees K (d×N column-major)
// transposed times Q (d×N column-major), giving the keys × queries column-major matrix whose
// memory is S row-major. `heads` batch entries from `first`.
void scores_gemm(cublasHandle_t h, const AttentionShape& s, const void* q, const void* k, void* out,
                 cudaDataType out_type, int heads) {
  const float one = 1.f, zero = 0.f;
  const long long nd = (long long)s.n * s.d, nn = (long long)s.n * s.n;
  check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, s.n, s.n, s.d, &one, k,
                                          data_type(s.type), s.d, nd, q, data_type(s.type), s.d, nd,
                                          &zero, out, out_type, s.n, nn, heads, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (S = Q·Kᵀ)");
}

// Row-major O (N×d) = P (N×N) · V (N×d): column-major Oᵀ = Vᵀ · Pᵀ.
void output_gemm(cublasHandle_t h, const AttentionShape& s, const void* p, const void* v, void* o,
                 cudaDataType type, int heads) {
  const float one = 1.f, zero = 0.f;
  const long long nd = (long long)s.n * s.d, nn = (long long)s.n * s.n;
  check_cublas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.d, s.n, s.n, &one, v, type,
                                          s.d, nd, p, type, s.n, nn, &zero, o, type, s.d, nd, heads,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx (O = P·V)");
}

template <class S>
void softmax_rows(S* scores, std::size_t rows, const AttentionShape& s) {
  const float scale_log2e = static_cast<float>(s.scale()) * attn::kLog2e;
  attn::attention_softmax_rows<S>
      <<<(unsigned)rows, attn::kSoftmaxThreads>>>(scores, s.n, scale_log2e, s.causal);
  TS_CUDA_CHECK_LAUNCH();
}

// Dynamic shared memory above 48 KB needs an opt-in per kernel; the launches below ask once per
// kernel, not at every (timed) launch.
template <class Kernel>
void allow_smem(Kernel kernel, int bytes) {
  TS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <class T, int kD>
void launch_fused(int version, const AttentionShape& s, const T* q, const T* k, const T* v, T* o) {
  const float scale_log2e = static_cast<float>(s.scale()) * attn::kLog2e;
  const dim3 grid(s.n / 64, s.bh());
  if (version == 2) {
    constexpr int smem = attn::v2_smem_bytes<kD>();
    static const bool ready =
        (allow_smem(attn::attention_02_fused_cuda_cores<T, kD>, smem), true);  // once per kernel
    (void)ready;
    attn::attention_02_fused_cuda_cores<T, kD>
        <<<grid, attn::kV2Threads, smem>>>(q, k, v, o, s.n, scale_log2e, s.causal);
  } else if (version == 3) {
    constexpr int smem = attn::mma_smem_bytes<kD, 1>();
    static const bool ready =
        (allow_smem(attn::attention_03_mma_online_softmax<T, kD>, smem), true);  // once per kernel
    (void)ready;
    attn::attention_03_mma_online_softmax<T, kD>
        <<<grid, attn::kMmaThreads, smem>>>(q, k, v, o, s.n, scale_log2e, s.causal);
  } else {
    constexpr int smem = attn::mma_smem_bytes<kD, 2>();
    static const bool ready =
        (allow_smem(attn::attention_04_mma_pipelined<T, kD>, smem), true);  // once per kernel
    (void)ready;
    attn::attention_04_mma_pipelined<T, kD>
        <<<grid, attn::kMmaThreads, smem>>>(q, k, v, o, s.n, scale_log2e, s.causal);
  }
  TS_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_typed(int version, const AttentionShape& s, const void* q, const void* k, const void* v,
                  void* o) {
  const T *qt = static_cast<const T*>(q), *kt = static_cast<const T*>(k),
          *vt = static_cast<const T*>(v);
  if (s.d == 64)
    launch_fused<T, 64>(version, s, qt, kt, vt, static_cast<T*>(o));
  else
    launch_fused<T, 128>(version, s, qt, kt, vt, static_cast<T*>(o));
}

}  // namespace

void attention_launch(int version, const AttentionShape& s, const void* q, const void* k,
                      const void* v, void* o, void* scratch, void* cublas_handle) {
  if (const std::string why = attention_unsupported(version, s); !why.empty())
    throw GpuError("attention version " + std::to_string(version) + ": " + why);
  if (version == 1) {
    if (!scratch || !cublas_handle) throw GpuError("attention version 1 needs scratch and cuBLAS");
    auto h = static_cast<cublasHandle_t>(cublas_handle);
    scores_gemm(h, s, q, k, scratch, data_type(s.type), s.bh());
    const std::size_t rows = (std::size_t)s.bh() * s.n;
    if (s.type == Operand16::bf16)
      softmax_rows(static_cast<__nv_bfloat16*>(scratch), rows, s);
    else
      softmax_rows(static_cast<__half*>(scratch), rows, s);
    output_gemm(h, s, scratch, v, o, data_type(s.type), s.bh());
    return;
  }
  if (version >= 5) {
    if (const std::string why = hopper_device_unsupported(); !why.empty())
      throw GpuError("attention version " + std::to_string(version) + ": " + why);
    attention_hopper_launch(version, s.bh(), s.n, s.d, s.causal, s.type, q, k, v, o);
    return;
  }
  if (s.type == Operand16::bf16)
    launch_typed<__nv_bfloat16>(version, s, q, k, v, o);
  else
    launch_typed<__half>(version, s, q, k, v, o);
}

void attention_reference_launch(const AttentionShape& s, const void* q, const void* k,
                                const void* v, float* v32, float* s32, int heads_per_chunk,
                                float* out, void* cublas_handle) {
  auto h = static_cast<cublasHandle_t>(cublas_handle);
  if (s.type == Operand16::bf16)
    bf16_to_f32_launch(v, v32, s.qkv_count());
  else
    f16_to_f32_launch(v, v32, s.qkv_count());
  const std::size_t head = (std::size_t)s.n * s.d;
  const int elem = 2;
  for (int first = 0; first < s.bh(); first += heads_per_chunk) {
    const int heads = std::min(heads_per_chunk, s.bh() - first);
    const auto* qc = static_cast<const char*>(q) + first * head * elem;
    const auto* kc = static_cast<const char*>(k) + first * head * elem;
    scores_gemm(h, s, qc, kc, s32, CUDA_R_32F, heads);
    softmax_rows(s32, (std::size_t)heads * s.n, s);
    output_gemm(h, s, s32, v32 + first * head, out + first * head, CUDA_R_32F, heads);
  }
}

void attention_row_cpu(const AttentionShape& s, const float* q, const float* k, const float* v,
                       int bh, int row, double* out) {
  const std::size_t head = (std::size_t)bh * s.n * s.d;
  const float* qr = q + head + (std::size_t)row * s.d;
  const int keys = s.causal ? row + 1 : s.n;
  std::vector<double> p(keys);
  double mx = -INFINITY;
  for (int j = 0; j < keys; ++j) {
    const float* kr = k + head + (std::size_t)j * s.d;
    double dot = 0.0;
    for (int c = 0; c < s.d; ++c) dot += double(qr[c]) * kr[c];
    p[j] = dot * s.scale();
    mx = std::max(mx, p[j]);
  }
  double sum = 0.0;
  for (double& x : p) sum += (x = std::exp(x - mx));
  for (int c = 0; c < s.d; ++c) out[c] = 0.0;
  for (int j = 0; j < keys; ++j) {
    const float* vr = v + head + (std::size_t)j * s.d;
    for (int c = 0; c < s.d; ++c) out[c] += p[j] / sum * vr[c];
  }
}

}  // namespace tilescope::kernels::cuda

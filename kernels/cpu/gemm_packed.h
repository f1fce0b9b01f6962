// The packed, register-blocked GEMM shared by MatMul versions 4–6 and the im2col Conv2D versions:
// panels of A and B are copied into contiguous, zero-padded buffers sized for L2 and L1, and a
// micro-kernel keeps an MR×NR block of C in vector registers for the whole k loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace tilescope::kernels::gemm {

// The block sizes below depend on the instruction set this translation unit is compiled for, and
// the kernels are built with -march=native while tests and tools are not. An inline namespace per
// instruction set gives each variant its own symbols, so the linker can never mix an AVX-512
// caller's packing layout with a plain build's micro-kernel (an ODR violation that showed up as
// wrong results once ASan stopped the inlining).
#if defined(__AVX512F__)
#define TILESCOPE_GEMM_ISA isa_avx512
#elif defined(__AVX__)
#define TILESCOPE_GEMM_ISA isa_avx
#else
#define TILESCOPE_GEMM_ISA isa_generic
#endif
inline namespace TILESCOPE_GEMM_ISA {

// [SECTION] Blocking parameters and why
//
// Register block: MR×NR accumulators must fit the vector register file with room for one row of B
// and a broadcast of A. With AVX-512 (32 registers of 16 floats) 8×32 uses 16 accumulators; with
// AVX/AVX2 (16 registers of 8 floats) 6×16 uses 12; the plain fallback uses 4×16.
#if defined(__AVX512F__)
inline constexpr int kMR = 8;
inline constexpr int kNR = 32;
#elif defined(__AVX__)
inline constexpr int kMR = 6;
inline constexpr int kNR = 16;
#else
inline constexpr int kMR = 4;
inline constexpr int kNR = 16;
#endif
// Cache blocks: a kKC×kNR micro-panel of B (256×32×4 = 32 KiB) stays in L1 while the micro-kernel
// walks down kMC rows of A; the kMC×kKC block of A (144×256×4 = 144 KiB) stays in L2; the kKC×kNC
// block of B (256×1024×4 = 1 MiB) sits in L2/L3 and is reused by all of M.
inline constexpr int kKC = 256;
inline constexpr int kMC = 144;  // multiple of every kMR above
inline constexpr int kNC = 1024;

// What happens to C when the last k block is stored.
enum class Epilogue {
  kNone,          // C = A·B
  kBiasColsRelu,  // C = relu(A·B + bias[j])   (dense layer: one bias per output column)
  kBiasRowsRelu,  // C = relu(A·B + bias[i])   (conv as GEMM: one bias per filter row)
};

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

inline AlignedFloats aligned_floats(std::size_t count) {
  const std::size_t bytes = ((count * sizeof(float) + 63) / 64) * 64;
  return AlignedFloats(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// Packing buffer `which` (0: B panels, 1: A panels) of the calling thread, at least `count` floats.
// Kept between calls: a fresh buffer per call costs an allocation and, above the allocator's mmap
// threshold, a page fault per 4 KiB — at 256³ a tenth of the kernel's time.
inline float* scratch_floats(int which, std::size_t count) {
  thread_local AlignedFloats buffers[2];
  thread_local std::size_t sizes[2] = {0, 0};
  if (sizes[which] < count) {
    buffers[which] = aligned_floats(count);
    sizes[which] = count;
  }
  return buffers[which].get();
}

// [SECTION] Packing

// A block (mc×kc, row stride lda) → micro-panels of kMR rows, each stored k-major (kMR floats per
// k step), rows past mc filled with zeros so the micro-kernel never branches.
inline void pack_a(const float* a, std::size_t lda, int mc, int kc, float* __restrict out) {
  for (int i0 = 0; i0 < mc; i0 += kMR) {
    const int rows = std::min(kMR, mc - i0);
    for (int p = 0; p < kc; ++p) {
      for (int i = 0; i < rows; ++i) out[p * kMR + i] = a[(i0 + i) * lda + p];
      for (int i = rows; i < kMR; ++i) out[p * kMR + i] = 0.0f;
    }
    out += static_cast<std::size_t>(kc) * kMR;
  }
}

// B block (kc×nc, row stride ldb) → micro-panels of kNR columns, each stored k-major.
inline void pack_b(const float* b, std::size_t ldb, int kc, int nc, float* __restrict out) {
  for (int j0 = 0; j0 < nc; j0 += kNR) {
    const int cols = std::min(kNR, nc - j0);
    for (int p = 0; p < kc; ++p) {
      const float* src = b + p * ldb + j0;
      for (int j = 0; j < cols; ++j) out[p * kNR + j] = src[j];
      for (int j = cols; j < kNR; ++j) out[p * kNR + j] = 0.0f;
    }
    out += static_cast<std::size_t>(kc) * kNR;
  }
}

// [SECTION] Micro-kernel

// acc = Ap·Bp over kc steps, the accumulators held in vector registers for the whole loop.
// With GCC or Clang the block is written with their portable vector types (vector_size): one
// kLanes-float vector per register, compiled to whatever the target has (AVX-512, AVX2, NEON).
// Plain nested loops over float c[MR][NR] vectorise too, but whether the compiler then keeps c in
// registers varies with the compiler version (g++ 12 did, g++ 13 streamed it through memory at a
// third of the speed), so the plain loops are only the fallback for other compilers.
#if defined(__AVX512F__)
inline constexpr int kLanes = 16;
#elif defined(__AVX__)
inline constexpr int kLanes = 8;
#else
inline constexpr int kLanes = 4;
#endif
static_assert(kNR % kLanes == 0, "a register row of the block is whole vectors");

#if defined(__GNUC__)
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

inline void micro_kernel(int kc, const float* __restrict ap, const float* __restrict bp,
                         float (&acc)[kMR][kNR]) {
  constexpr int kVecs = kNR / kLanes;
  Vec c[kMR][kVecs] = {};
  for (int p = 0; p < kc; ++p) {
    Vec b[kVecs];
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) std::memcpy(&b[v], bp + p * kNR + v * kLanes, sizeof(Vec));
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i) {
      const Vec a = ap[p * kMR + i] - Vec{};  // broadcast (x − 0 folds away; x + 0 would not)
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) c[i][v] += a * b[v];
    }
  }
  for (int i = 0; i < kMR; ++i) std::memcpy(acc[i], c[i], sizeof(c[i]));
}
#else
inline void micro_kernel(int kc, const float* __restrict ap, const float* __restrict bp,
                         float (&acc)[kMR][kNR]) {
  float c[kMR][kNR] = {};
  for (int p = 0; p < kc; ++p) {
    for (int i = 0; i < kMR; ++i) {
      const float a_ip = ap[p * kMR + i];
      for (int j = 0; j < kNR; ++j) c[i][j] += a_ip * bp[p * kNR + j];
    }
  }
  for (int i = 0; i < kMR; ++i)
    for (int j = 0; j < kNR; ++j) acc[i][j] = c[i][j];
}
#endif

// Writes an acc block into C (rows×cols valid), adding to what earlier k blocks left unless this
// is the first, and applying the epilogue on the last k block only.
inline void store_block(const float (&acc)[kMR][kNR], float* c, std::size_t ldc, int rows, int cols,
                        bool first_k, bool last_k, Epilogue epilogue, const float* bias_row_or_col,
                        int bias_offset_i, int bias_offset_j) {
  for (int i = 0; i < rows; ++i) {
    float* c_row = c + i * ldc;
    for (int j = 0; j < cols; ++j) {
      float v = first_k ? acc[i][j] : c_row[j] + acc[i][j];
      if (last_k) {
        if (epilogue == Epilogue::kBiasColsRelu) {
          v = std::max(v + bias_row_or_col[bias_offset_j + j], 0.0f);
        } else if (epilogue == Epilogue::kBiasRowsRelu) {
          v = std::max(v + bias_row_or_col[bias_offset_i + i], 0.0f);
        }
      }
      c_row[j] = v;
    }
  }
}

// [SECTION] Driver

// C (m×n, row stride ldc) = A (m×k, lda) · B (k×n, ldb), with the epilogue fused into the store of
// the last k block. Packs into its thread's own buffers, so concurrent calls on disjoint C are
// safe.
inline void gemm(const float* a, std::size_t lda, const float* b, std::size_t ldb, float* c,
                 std::size_t ldc, int m, int n, int k, Epilogue epilogue = Epilogue::kNone,
                 const float* bias = nullptr) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // empty sum: C = epilogue(0)
    float zero[kMR][kNR] = {};
    for (int i0 = 0; i0 < m; i0 += kMR)
      for (int j0 = 0; j0 < n; j0 += kNR)
        store_block(zero, c + i0 * ldc + j0, ldc, std::min(kMR, m - i0), std::min(kNR, n - j0),
                    true, true, epilogue, bias, i0, j0);
    return;
  }
  const int nc_max = std::min(kNC, (n + kNR - 1) / kNR * kNR);
  const int mc_max = std::min(kMC, (m + kMR - 1) / kMR * kMR);
  float* const packed_b = scratch_floats(0, static_cast<std::size_t>(kKC) * nc_max);
  float* const packed_a = scratch_floats(1, static_cast<std::size_t>(kKC) * mc_max);
  float acc[kMR][kNR];
  for (int j0 = 0; j0 < n; j0 += kNC) {
    const int nc = std::min(kNC, n - j0);
    for (int p0 = 0; p0 < k; p0 += kKC) {
      const int kc = std::min(kKC, k - p0);
      const bool first_k = p0 == 0, last_k = p0 + kc >= k;
      pack_b(b + p0 * ldb + j0, ldb, kc, nc, packed_b);
      for (int i0 = 0; i0 < m; i0 += kMC) {
        const int mc = std::min(kMC, m - i0);
        pack_a(a + i0 * lda + p0, lda, mc, kc, packed_a);
        for (int jr = 0; jr < nc; jr += kNR) {
          const float* bp = packed_b + static_cast<std::size_t>(jr) * kc;
          for (int ir = 0; ir < mc; ir += kMR) {
            const float* ap = packed_a + static_cast<std::size_t>(ir) * kc;
            micro_kernel(kc, ap, bp, acc);
            store_block(acc, c + (i0 + ir) * ldc + j0 + jr, ldc, std::min(kMR, mc - ir),
                        std::min(kNR, nc - jr), first_k, last_k, epilogue, bias, i0 + ir, j0 + jr);
          }
        }
      }
    }
  }
}

}  // namespace TILESCOPE_GEMM_ISA
}  // namespace tilescope::kernels::gemm

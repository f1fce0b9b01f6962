// The Hopper (sm_90 / sm_90a) instructions the tensor-core GEMM versions 3–8 are built from, each a
// thin inline-PTX wrapper with the one fact a reader needs: mbarriers (arrive, expected bytes,
// phase-parity wait), the bulk tensor copy engine (TMA: cp.async.bulk.tensor), warpgroup MMA
// (wgmma) and its shared-memory descriptors, register reallocation (setmaxnreg), clusters.
//
// Index: [SECTION] shared-memory addresses · [SECTION] mbarrier · [SECTION] TMA ·
//        [SECTION] wgmma · [SECTION] setmaxnreg and clusters · [SECTION] named barriers
#pragma once

#include <cuda.h>  // CUtensorMap: the 128-byte tensor map TMA reads (a kernel parameter here)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace hopper {

// [SECTION] shared-memory addresses

// PTX's shared-memory instructions take 32-bit addresses in the shared window.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// TMA's 128-byte swizzle repeats every 8 rows of 128 bytes: a tile must start on a 1024-byte
// boundary for the hardware's pattern and ours (swizzle_128b below, the wgmma descriptor) to agree.
// Dynamic shared memory is only promised 16-byte alignment, so kernels round up themselves.
__device__ __forceinline__ unsigned char* align_1024(unsigned char* p) {
  const std::uint32_t s = smem_u32(p);
  return p + ((1024u - (s & 1023u)) & 1023u);
}

// Where TMA's 128-byte swizzle puts 16-byte chunk `chunk` (0..7) of 128-byte row `row` of a tile of
// 16-bit elements, in elements from the tile's start: the chunk index is XORed with row % 8, so
// the 8 rows an ldmatrix phase reads at one logical column land in 8 different bank groups.
__device__ __forceinline__ int swizzle_128b(int row, int chunk) {
  return row * 64 + ((chunk ^ (row & 7)) << 3);
}

// [SECTION] mbarrier
// A 64-bit shared-memory barrier with a phase: it completes when the expected number of arrivals
// has happened AND the bytes announced with expect_tx have landed; then the next phase starts.
// Waiters name the parity of the phase they wait for (0, 1, 0, ... for the uses of one stage).

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals));
}

// Makes the initialised barriers visible to the copy engine and to the other CTAs of a cluster.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of TMA traffic the phase must wait for.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// An arrival on the barrier at the same offset in CTA `cta` of this cluster (the consumer of a
// multicast stage tells every CTA whose producer writes into it that the stage is free). Default
// semantics (release, CTA scope), as CUTLASS's cluster barrier uses: the reads being released were
// the tensor cores', and they completed at wgmma.wait_group.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, unsigned cta) {
  asm volatile(
      "{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
      "r"(cta)
      : "memory");
}

// Spins until the phase of parity `parity` has completed. A pipeline bug (a stage never filled or
// never released) would otherwise hang the GPU: after ~2 s of waiting the kernel traps, so the
// bench reports a launch failure instead of freezing.
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  const std::uint32_t addr = smem_u32(bar);
  std::uint32_t done = 0;
  std::uint64_t start = 0;
  for (unsigned polls = 0;; ++polls) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
    if (done) return;
    if ((polls & 1023u) == 1023u) {
      std::uint64_t now;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
      if (start == 0) {
        start = now;
      } else if (now - start > 2000000000ull) {
        __trap();
      }
    }
  }
}

// [SECTION] TMA (the bulk tensor copy engine)

// Asks the copy engine for the box at element coordinates (c0 = innermost, c1 = row) of the tensor
// map; the bytes land swizzled in shared memory and count against `bar`'s expected bytes.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar,
                                            int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// The same box delivered to the same shared offset, and signalled on the same barrier offset, in
// every CTA of the cluster whose bit is set in `cta_mask`: one L2 read feeds several SMs.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map,
                                                      std::uint64_t* bar, int c0, int c1,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_u32(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar)), "h"(cta_mask)
      : "memory");
}

// [SECTION] wgmma (warpgroup MMA: 4 warps, 128 threads, operands read from shared memory)

// The 64-bit shared-memory matrix descriptor of a K-major tile laid out by TMA's 128-byte swizzle:
// start address >> 4 (bits 0–13), leading-dimension offset (unused for swizzled K-major; 1),
// stride between 8-row groups = 1024 bytes >> 4 (bits 32–45), swizzle mode 1 = 128B (bits 62–63).
// Stepping K by 16 elements inside the 128-byte row adds 32 bytes, i.e. 2, to the descriptor.
__device__ __forceinline__ std::uint64_t desc_sw128(const void* tile) {
  return (std::uint64_t(smem_u32(tile) & 0x3FFFF) >> 4) | (std::uint64_t(1) << 16) |
         (std::uint64_t(1024 >> 4) << 32) | (std::uint64_t(1) << 62);
}

// Orders this thread's register and shared-memory accesses before the wgmmas that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most `kPending` committed groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// After wgmma.wait_group the accumulators hold their final values, but the compiler sees them as
// written by the wgmma asm long before: without this, it may copy them (to pair registers for a
// store, say) ahead of the wait and read values the tensor cores are still producing.
template <int kCount>
__device__ __forceinline__ void fence_accumulators(float (&d)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulators as inline-asm operands. Inline PTX cannot loop, so the operand lists are
// spelt out: 8 registers per macro step.
#define TS_WG_D8(i)                                                                           \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
      "+f"(d[i + 6]), "+f"(d[i + 7])
#define TS_WG_D64(i)                                                                  \
  TS_WG_D8(i), TS_WG_D8(i + 8), TS_WG_D8(i + 16), TS_WG_D8(i + 24), TS_WG_D8(i + 32), \
      TS_WG_D8(i + 40), TS_WG_D8(i + 48), TS_WG_D8(i + 56)
#define TS_WG_R32                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TS_WG_R64                                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "           \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define TS_WG_R128                                                                       \
  TS_WG_R64                                                                              \
  ", "                                                                                   \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "     \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "     \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "     \
  "%110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, " \
  "%124, %125, %126, %127"
// The tail of every wgmma below: D += A·Bᵀ, both operands K-major (no transpose), unit scales.
#define TS_WG_TAIL(a, b, s) \
  "}, %" #a ", %" #b ", p, 1, 1, 0, 0;\n}\n" : TS_WG_ACC : "l"(desc_a), "l"(desc_b), "r"(s)

// D (64 × kN fp32, kN/2 registers per thread) += A (64×16, shared) · B (kN×16, shared)ᵀ, 16-bit
// inputs of type T (__half or __nv_bfloat16). scale_d = 0 overwrites D instead of adding to it.
// Thread t of the warpgroup holds rows 16·(t/32) + (t%32)/4 + 8h, columns 8j + 2·(t%4) + c in
// d[4j + 2h + c].
template <int kN, class T>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[kN / 2], std::uint64_t desc_a,
                                             std::uint64_t desc_b, int scale_d = 1) {
  static_assert(kN == 64 || kN == 128 || kN == 256,
                "wgmma_m64k16 is spelt out for N = 64, 128 and 256");
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  static_assert(kBf16 || std::is_same_v<T, __half>, "16-bit inputs: __half or __nv_bfloat16");
#define TS_WG_PRED "{\n .reg .pred p;\n setp.ne.b32 p, %"
  if constexpr (kN == 64) {
#define TS_WG_ACC TS_WG_D8(0), TS_WG_D8(8), TS_WG_D8(16), TS_WG_D8(24)
    if constexpr (kBf16) {
      asm volatile(
          TS_WG_PRED
          "34, 0;\n wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" TS_WG_R32 TS_WG_TAIL(
              32, 33, scale_d));
    } else {
      asm volatile(
          TS_WG_PRED
          "34, 0;\n wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" TS_WG_R32 TS_WG_TAIL(
              32, 33, scale_d));
    }
#undef TS_WG_ACC
  } else if constexpr (kN == 128) {
#define TS_WG_ACC TS_WG_D64(0)
    if constexpr (kBf16) {
      asm volatile(
          TS_WG_PRED
          "66, 0;\n wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" TS_WG_R64 TS_WG_TAIL(
              64, 65, scale_d));
    } else {
      asm volatile(
          TS_WG_PRED
          "66, 0;\n wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" TS_WG_R64 TS_WG_TAIL(
              64, 65, scale_d));
    }
#undef TS_WG_ACC
  } else {
#define TS_WG_ACC TS_WG_D64(0), TS_WG_D64(64)
    if constexpr (kBf16) {
      asm volatile(
          TS_WG_PRED
          "130, 0;\n wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" TS_WG_R128 TS_WG_TAIL(
              128, 129, scale_d));
    } else {
      asm volatile(
          TS_WG_PRED
          "130, 0;\n wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" TS_WG_R128 TS_WG_TAIL(
              128, 129, scale_d));
    }
#undef TS_WG_ACC
  }
#undef TS_WG_PRED
}
// D (64 × kN fp32) += A (64×16, registers) · B (16 × kN, shared, MN-major: N contiguous, so the
// descriptor is desc_mn_sw128's and the instruction's imm-trans-b is 1). A is four registers of
// two 16-bit values per thread, laid out as mma.sync's m16n8k16 A fragment within each warp's 16
// rows — the layout the accumulators of a previous wgmma already have, once packed to 16 bits.
template <int kN, class T>
__device__ __forceinline__ void wgmma_m64k16_rs_tnsp(float (&d)[kN / 2], const unsigned (&a)[4],
                                                     std::uint64_t desc_b) {
  static_assert(kN == 64 || kN == 128, "wgmma_m64k16_rs_tnsp is spelt out for N = 64 and 128");
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  static_assert(kBf16 || std::is_same_v<T, __half>, "16-bit inputs: __half or __nv_bfloat16");
  if constexpr (kN == 128) {
    if constexpr (kBf16) {
      asm volatile(
          "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
          " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" TS_WG_R64
          "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
          : TS_WG_D64(0)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
    } else {
      asm volatile(
          "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
          " wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" TS_WG_R64
          "}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
          : TS_WG_D64(0)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
    }
  } else {
    if constexpr (kBf16) {
      asm volatile(
          "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
          " wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {" TS_WG_R32
          "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
          : TS_WG_D8(0), TS_WG_D8(8), TS_WG_D8(16), TS_WG_D8(24)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
    } else {
      asm volatile(
          "{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"
          " wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" TS_WG_R32
          "}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
          : TS_WG_D8(0), TS_WG_D8(8), TS_WG_D8(16), TS_WG_D8(24)
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b));
    }
  }
}

// The descriptor of an MN-major tile laid out by TMA's 128-byte swizzle (the B operand with N
// contiguous, as V is in P·V: a 128-byte row holds 64 columns of N for one k): consecutive 8-row
// groups of K are 1024 bytes apart (stride offset), and the next 64 columns of N begin
// `mn_atom_bytes` further on (leading offset: where the next 64-column sub-tile starts). Stepping
// K by 16 rows adds 16 × 128 = 2048 bytes, i.e. 128, to the descriptor.
__device__ __forceinline__ std::uint64_t desc_mn_sw128(const void* tile, unsigned mn_atom_bytes) {
  return (std::uint64_t(smem_u32(tile) & 0x3FFFF) >> 4) |
         (std::uint64_t((mn_atom_bytes & 0x3FFFF) >> 4) << 16) | (std::uint64_t(1024 >> 4) << 32) |
         (std::uint64_t(1) << 62);
}

#undef TS_WG_TAIL
#undef TS_WG_R128
#undef TS_WG_R32
#undef TS_WG_R64
#undef TS_WG_D64
#undef TS_WG_D8

// [SECTION] setmaxnreg and clusters

// Register reallocation between warpgroups: the producer gives registers back, the consumers take
// them. Takes effect only under a register cap at entry (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every CTA in the cluster arrives and waits: the cluster's barriers are
// initialised before anyone signals a peer, and no CTA exits while a peer may still signal it.
// Not the .aligned form: a producer warp reaches it with one lane still in its copy loop.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive;\nbarrier.cluster.wait;\n" ::: "memory");
}

// [SECTION] named barriers
// Hardware barriers 1..15 (0 is __syncthreads) over a chosen number of threads: sync waits until
// `threads` have arrived or synced on it; arrive counts this warp and goes on. Two warpgroups take
// turns with a pair of them (attention version 6).
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// A shared-memory counter's old value, incremented with acquire-release order in the CTA: what this
// thread did before is visible to whoever reads the count after it, and the reverse.
__device__ __forceinline__ unsigned atomic_inc_acq_rel(unsigned* counter) {
  unsigned old;
  asm volatile("atom.acq_rel.cta.shared::cta.add.u32 %0, [%1], 1;\n"
               : "=r"(old)
               : "r"(smem_u32(counter))
               : "memory");
  return old;
}

}  // namespace hopper

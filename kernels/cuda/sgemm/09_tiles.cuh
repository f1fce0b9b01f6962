// SGEMM version 9 — version 8 as a template over its tile shapes, with A's shared tile swizzled
// instead of padded and streaming stores of C; versions 10 and 11 build on it.
// Changed since version 8: (1) block tile (BM × BN × BK) and warp tile (WM × WN) are template
// parameters; a lane still owns 4×4 sub-blocks spaced 16 rows and 32 columns apart (conflict-free
// LDS.128 as in version 7), now (WM/16) × (WN/32) of them; (2) A's transposed tile has no pad
// column: the row a float4 is stored at is XORed with (k/4)·(128/BK), so the k-quads a warp
// writes land in disjoint groups of banks, and readers, who share one k, undo it with the same XOR;
// (3) C is written with st.global.cs (streaming: evict first), so the output does not push A and B
// out of L2 while other blocks still read them. Version 9 itself is 128×128×8 with 32×64 warp
// tiles, version 8's shape: BK = 16 at 8×8 outputs per thread needs more than the 128 registers
// two blocks per SM allow and spilled (measured 80.9 % of cuBLAS against 85.0 % at BK = 8).
// Run: tilescope-gpu-bench --suite sgemm (this is version 9; version 0 is cuBLAS SGEMM).
#pragma once

namespace sgemm09 {
// A lane owns 4×4 outputs per sub-block; lanes are laid out 4 (M) × 8 (N) in a warp.
constexpr int kLanesN = 8, kSubM = 16, kSubN = 32;

// XOR applied to the M index of A's transposed tile at depth k: one k-quad per (128 / BK) rows.
template <int kBK>
__device__ __forceinline__ int a_swizzle(int k) {
  return (k >> 2) * (128 / kBK);
}
}  // namespace sgemm09

template <int kBM, int kBN, int kBK, int kWM, int kWN, int kMinBlocks>
__global__ void __launch_bounds__((kBM / kWM) * (kBN / kWN) * 32, kMinBlocks)
    sgemm_09_tiles(int M, int N, int K, const float* A, const float* B, float* C) {
  using namespace sgemm09;
  constexpr int kWarpsN = kBN / kWN, kThreads = (kBM / kWM) * kWarpsN * 32;
  constexpr int kRM = kWM / kSubM, kRN = kWN / kSubN;  // sub-blocks per lane along M and N
  constexpr int kAQuads = kBK / 4;                     // float4 per row of the A tile
  constexpr int kALoads = kBM * kBK / 4 / kThreads, kBLoads = kBK * kBN / 4 / kThreads;
  static_assert(kALoads * kThreads * 4 == kBM * kBK && kBLoads * kThreads * 4 == kBK * kBN,
                "every thread loads the same number of float4 of each tile");
  static_assert(kWM % kSubM == 0 && kWN % kSubN == 0 && kBM % 32 == 0 && kBK % 4 == 0,
                "warp tiles are whole 16×32 sub-block grids; the swizzle needs BM % 32 == 0");
  __shared__ alignas(16) float As[2][kBK][kBM];  // transposed and swizzled: As[buf][k][m ^ s(k)]
  __shared__ alignas(16) float Bs[2][kBK][kBN];
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m0 = (warp / kWarpsN) * kWM + (lane / kLanesN) * 4;
  const int n0 = (warp % kWarpsN) * kWN + (lane % kLanesN) * 4;
  const float* a_blk = A + (size_t)blockIdx.y * kBM * K;
  const float* b_blk = B + (size_t)blockIdx.x * kBN;

  float4 a_next[kALoads], b_next[kBLoads];
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int idx = tid + i * kThreads, row = idx / kAQuads, quad = idx % kAQuads;
      a_next[i] = *reinterpret_cast<const float4*>(a_blk + (size_t)row * K + k0 + quad * 4);
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int idx = tid + i * kThreads, k = idx / (kBN / 4), quad = idx % (kBN / 4);
      b_next[i] = *reinterpret_cast<const float4*>(b_blk + (size_t)(k0 + k) * N + quad * 4);
    }
  };
  auto store = [&](int buf) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      const int idx = tid + i * kThreads, row = idx / kAQuads, quad = idx % kAQuads;
      const int m = row ^ a_swizzle<kBK>(quad * 4);
      As[buf][quad * 4 + 0][m] = a_next[i].x;
      As[buf][quad * 4 + 1][m] = a_next[i].y;
      As[buf][quad * 4 + 2][m] = a_next[i].z;
      As[buf][quad * 4 + 3][m] = a_next[i].w;
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int idx = tid + i * kThreads, k = idx / (kBN / 4), quad = idx % (kBN / 4);
      *reinterpret_cast<float4*>(&Bs[buf][k][quad * 4]) = b_next[i];
    }
  };

  load(0);
  store(0);
  __syncthreads();
  float acc[4 * kRM][4 * kRN] = {};
  const int num_tiles = K / kBK;
  for (int t = 0; t < num_tiles; ++t) {
    const int cur = t & 1;
    const bool has_next = t + 1 < num_tiles;
    if (has_next) load((t + 1) * kBK);  // in flight while this tile is multiplied
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float ra[4 * kRM], rb[4 * kRN];
      const int sw = a_swizzle<kBK>(k);
#pragma unroll
      for (int r = 0; r < kRM; ++r) {
        const float4 v = *reinterpret_cast<const float4*>(&As[cur][k][(m0 + r * kSubM) ^ sw]);
        ra[4 * r] = v.x, ra[4 * r + 1] = v.y, ra[4 * r + 2] = v.z, ra[4 * r + 3] = v.w;
      }
#pragma unroll
      for (int r = 0; r < kRN; ++r) {
        const float4 v = *reinterpret_cast<const float4*>(&Bs[cur][k][n0 + r * kSubN]);
        rb[4 * r] = v.x, rb[4 * r + 1] = v.y, rb[4 * r + 2] = v.z, rb[4 * r + 3] = v.w;
      }
#pragma unroll
      for (int i = 0; i < 4 * kRM; ++i)
#pragma unroll
        for (int j = 0; j < 4 * kRN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    if (has_next) store(cur ^ 1);  // that buffer's last readers passed the previous barrier
    __syncthreads();
  }

  float* c_blk = C + (size_t)blockIdx.y * kBM * N + (size_t)blockIdx.x * kBN;
#pragma unroll
  for (int i = 0; i < 4 * kRM; ++i) {
    const int row = m0 + (i / 4) * kSubM + i % 4;
#pragma unroll
    for (int r = 0; r < kRN; ++r) {
      const float4 v =
          make_float4(acc[i][4 * r], acc[i][4 * r + 1], acc[i][4 * r + 2], acc[i][4 * r + 3]);
      __stcs(reinterpret_cast<float4*>(&c_blk[(size_t)row * N + n0 + r * kSubN]), v);
    }
  }
}

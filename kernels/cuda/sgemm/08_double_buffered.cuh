// SGEMM version 8 — double buffering: while the block multiplies tile t from one pair of shared
// buffers, each thread already holds tile t+1 in registers (issued before the math) and writes it
// into the other pair afterwards. One __syncthreads per tile instead of two, and the global-load
// latency hides behind 512 FMAs per thread.
// Changed since version 7: two shared buffers and register prefetch; __launch_bounds__(256, 2) asks
// for two resident blocks per SM (≤ 128 registers per thread). The kernel is also a template over
// how A is loaded (dense, or gathered im2col-style by the implicit-GEMM convolution) and what the
// epilogue does (store, or bias + ReLU fused), so the Conv2D and fused-epilogue versions are this
// very kernel.
// Run: tilescope-gpu-bench --suite sgemm (this is version 8; version 0 is cuBLAS SGEMM).
#pragma once

namespace sgemm08 {
constexpr int kBM = 128, kBN = 128, kBK = 8, kThreads = 256;
constexpr int kWarpsN = 2, kWM = 32, kWN = 64, kLanesN = 8, kPadA = 4;
}  // namespace sgemm08

// A is an M×K row-major matrix: a thread's float4 at (row, k0 + kq) is 16 contiguous bytes.
struct LoadADense {
  struct Params {
    const float* a;
    int k;
  };
  const float* ptr;
  __device__ LoadADense(const Params& p, int row, int kq) : ptr(p.a + (size_t)row * p.k + kq) {}
  __device__ float4 operator()(int k0) const { return *reinterpret_cast<const float4*>(ptr + k0); }
};

struct EpilogueStore {
  struct Params {};
  __device__ static float4 apply(float4 v, int, const Params&) { return v; }
};

// relu(v + bias[col]) on four consecutive columns, in registers, before the only store.
struct EpilogueBiasRelu {
  struct Params {
    const float* bias;
  };
  __device__ static float4 apply(float4 v, int col, const Params& p) {
    const float4 b = *reinterpret_cast<const float4*>(p.bias + col);
    return make_float4(fmaxf(v.x + b.x, 0.f), fmaxf(v.y + b.y, 0.f), fmaxf(v.z + b.z, 0.f),
                       fmaxf(v.w + b.w, 0.f));
  }
};

// Which output tile a block computes. LaunchOrder: blockIdx as launched (x along N, rows of
// blocks one after another). GroupedOrder: the launch walks `kGroup` rows of blocks column by
// column, so the blocks resident at once share fewer, shorter panels of A and B (more L2 hits when
// the panels a row-major wave touches exceed L2).
struct LaunchOrder {
  __device__ static int2 tile() { return make_int2(blockIdx.x, blockIdx.y); }
};
template <int kGroup>
struct GroupedOrder {
  __device__ static int2 tile() {
    const int id = blockIdx.y * gridDim.x + blockIdx.x;
    const int per_group = kGroup * gridDim.x;
    const int first_row = (id / per_group) * kGroup;
    const int rows = min(kGroup, static_cast<int>(gridDim.y) - first_row);
    const int in_group = id % per_group;
    return make_int2(in_group / rows, first_row + in_group % rows);
  }
};

template <class LoadA, class Epilogue, class Order = LaunchOrder>
__global__ void __launch_bounds__(sgemm08::kThreads, 2)
    sgemm_08_double_buffered(int M, int N, int K, typename LoadA::Params a_params, const float* B,
                             typename Epilogue::Params epi, float* C) {
  using namespace sgemm08;
  __shared__ alignas(16) float As[2][kBK][kBM + kPadA];  // transposed: As[buf][k][m]
  __shared__ alignas(16) float Bs[2][kBK][kBN];
  (void)M;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = (warp / kWarpsN) * kWM + (lane / kLanesN) * 4;
  const int col0 = (warp % kWarpsN) * kWN + (lane % kLanesN) * 4;
  const int a_row = tid / 2, a_k = (tid % 2) * 4;
  const int b_k = tid / 32, b_col = (tid % 32) * 4;
  const int2 tile = Order::tile();
  const LoadA load_a(a_params, tile.y * kBM + a_row, a_k);
  const float* b_ptr = B + (size_t)b_k * N + tile.x * kBN + b_col;

  float4 a_next = load_a(0);
  float4 b_next = *reinterpret_cast<const float4*>(b_ptr);
  As[0][a_k + 0][a_row] = a_next.x;
  As[0][a_k + 1][a_row] = a_next.y;
  As[0][a_k + 2][a_row] = a_next.z;
  As[0][a_k + 3][a_row] = a_next.w;
  *reinterpret_cast<float4*>(&Bs[0][b_k][b_col]) = b_next;
  __syncthreads();

  float acc[8][8] = {};
  const int num_tiles = K / kBK;
  for (int t = 0; t < num_tiles; ++t) {
    const int cur = t & 1;
    const bool has_next = t + 1 < num_tiles;
    if (has_next) {  // issue the next tile's loads now; they land while we compute
      a_next = load_a((t + 1) * kBK);
      b_next = *reinterpret_cast<const float4*>(b_ptr + (size_t)(t + 1) * kBK * N);
    }
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float ra[8], rb[8];
      float4 v = *reinterpret_cast<const float4*>(&As[cur][k][row0]);
      ra[0] = v.x, ra[1] = v.y, ra[2] = v.z, ra[3] = v.w;
      v = *reinterpret_cast<const float4*>(&As[cur][k][row0 + 16]);
      ra[4] = v.x, ra[5] = v.y, ra[6] = v.z, ra[7] = v.w;
      v = *reinterpret_cast<const float4*>(&Bs[cur][k][col0]);
      rb[0] = v.x, rb[1] = v.y, rb[2] = v.z, rb[3] = v.w;
      v = *reinterpret_cast<const float4*>(&Bs[cur][k][col0 + 32]);
      rb[4] = v.x, rb[5] = v.y, rb[6] = v.z, rb[7] = v.w;
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += ra[i] * rb[j];
    }
    if (has_next) {  // the other buffer's last readers finished before the previous barrier
      const int nxt = cur ^ 1;
      As[nxt][a_k + 0][a_row] = a_next.x;
      As[nxt][a_k + 1][a_row] = a_next.y;
      As[nxt][a_k + 2][a_row] = a_next.z;
      As[nxt][a_k + 3][a_row] = a_next.w;
      *reinterpret_cast<float4*>(&Bs[nxt][b_k][b_col]) = b_next;
    }
    __syncthreads();
  }

  const int block_col = tile.x * kBN;
  C += (size_t)tile.y * kBM * N + block_col;
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = row0 + (i / 4) * 16 + i % 4;
#pragma unroll
    for (int jh = 0; jh < 2; ++jh) {
      const int col = col0 + jh * 32;
      const float4 v =
          make_float4(acc[i][jh * 4], acc[i][jh * 4 + 1], acc[i][jh * 4 + 2], acc[i][jh * 4 + 3]);
      *reinterpret_cast<float4*>(&C[(size_t)row * N + col]) =
          Epilogue::apply(v, block_col + col, epi);
    }
  }
}

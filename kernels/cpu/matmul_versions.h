// The numbered CPU MatMul versions (Y = relu(A·B + bias)); each file's header says what changed.
#pragma once

#include "kernels/cpu/kernel_args.h"

#include <string>

namespace tilescope::kernels {

void matmul_0_eigen(const MatMulArgs&);
void matmul_1_naive_ijk(const MatMulArgs&);
void matmul_2_ikj(const MatMulArgs&);
void matmul_3_tiled(const MatMulArgs&);
void matmul_4_microkernel(const MatMulArgs&);
void matmul_5_fused_epilogue(const MatMulArgs&);
void matmul_6_threads(const MatMulArgs&);
void matmul_7_eigen_threads(const MatMulArgs&);

// Eigen::setNbThreads(1): the reference runs on one thread (version 7 threads it explicitly).
void eigen_use_one_thread();
// Whether Eigen was built with OpenMP here, without which version 7 runs on one thread.
bool eigen_threads_available();

// Threads versions 6 and 7 use when MatMulArgs::threads is 0: std::thread::hardware_concurrency(),
// at least 1.
int matmul_thread_count();

// How version 6 cuts Y among `threads` threads: rows × cols blocks (rows · cols ≤ threads).
struct MatMulGrid {
  int rows = 1, cols = 1;
};
MatMulGrid matmul_thread_grid(int threads, int m, int n, int k);

// Version 3's text (matmul_3_tiled.inc) plus an entry point with the JIT ABI for an m×n×k
// problem: args = {A, B, bias, Y}, shapes baked in as constants. Compiled by jit_compile(), it is
// version 3's twin: the same code, compiled at run time instead of with the library.
std::string tiled_matmul_jit_source(int m, int n, int k);

}  // namespace tilescope::kernels

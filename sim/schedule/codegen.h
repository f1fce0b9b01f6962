// Printers for a scheduled kernel: readable pseudo-code of the loop nest, a self-contained C++
// translation unit for the CPU, a CUDA C++ translation unit for NVRTC, and the CUDA launch shape.
//
// ABI of the generated code (the CPU JIT and the NVRTC runner rely on it):
//   CPU:  extern "C" void ts_kernel(float* const* args);
//   CUDA: extern "C" __global__ void ts_kernel(const float* __restrict__ <in0>, ...,
//                                             float* __restrict__ <out>);
// args are Kernel::tensors in order (inputs first, then outputs), fp32, each laid out with that
// KernelTensor's strides (alloc_elems() floats); shapes are baked in as constants. The CPU source
// includes only <algorithm>, <cmath>, <cstdint> and, with a parallel loop, <thread>. The CUDA
// source includes nothing; shared tiles live in dynamic shared memory (launch_config's
// dynamic_smem_bytes: above 48 KiB the runner must raise
// cudaFuncAttributeMaxDynamicSharedMemorySize).
#pragma once

#include "sim/schedule/kernel.h"

#include <array>
#include <cstdint>
#include <string>

namespace tilescope::schedule {

// The loop nest as indented pseudo-code with one line per loop, guard, tile copy and statement.
std::string print_loop_nest(const Kernel& k);
// Every kernel of a program, separated by blank lines; the current one is marked.
std::string print_program(const Program& p);

std::string emit_cpp(const Kernel& k);
std::string emit_cuda(const Kernel& k);

struct LaunchConfig {
  std::array<int64_t, 3> grid{1, 1, 1};   // x, y, z
  std::array<int64_t, 3> block{1, 1, 1};  // x, y, z
  int64_t dynamic_smem_bytes = 0;
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
  int64_t threads() const { return block[0] * block[1] * block[2]; }
};
LaunchConfig launch_config(const Kernel& k);
// Whether any loop of `k` is bound to GPU blocks: before that its launch is one block.
bool binds_blocks(const Kernel& k);
// The launch as a learner reads it: "grid 64×32×1 = 2048 blocks, block 16×8×1 = 128 threads,
// dynamic shared memory 13056 B". Before any loop is bound to blocks or threads it says so: one
// thread of one block would run the whole loop nest, and bind() is what spreads it over the GPU.
std::string describe_launch(const LaunchConfig& lc);

// The block-bound loop values block number `pid` (in launch order) runs: index 0 = block.x loop,
// 1 = block.y, 2 = block.z. Row-major: x fastest. Grouped (Triton's matmul tutorial): a 1-D grid
// walks `group` rows of tiles (the block.y loop) column by column before moving on, so the tiles of
// one operand stay in L2 while the other's are reused. The CUDA source does the same arithmetic.
std::array<int64_t, 3> block_coords(const Kernel& k, int64_t pid);

}  // namespace tilescope::schedule

// Grouped block order (Triton's matmul tutorial): the block → tile mapping and what the first wave
// of blocks touches, by hand count.
#include "fixtures.h"

#include "sim/schedule/codegen.h"

#include <algorithm>

using namespace tilescope;
using namespace tilescope::schedule;

namespace {

Program tiled_gpu(int64_t M, int64_t N) {
  return tsfix::apply_all(lower_graph(tsfix::linear_relu(M, N, 64)),
                          "fuse(matmul0, add0, relu0); tile(i, 64); tile(j, 64); "
                          "reorder(i.o, j.o, i.i, j.i); bind(i.o, block.y); bind(j.o, block.x)");
}

}  // namespace

TEST_CASE("block order: row-major walks x fastest; grouped walks G rows down each column") {
  // 1024/64 = 16 rows of tiles (block.y), 2048/64 = 32 columns (block.x).
  Program p = tiled_gpu(1024, 2048);
  const Kernel& row = p.kernels[0];
  CHECK(block_coords(row, 0) == std::array<int64_t, 3>{0, 0, 0});
  CHECK(block_coords(row, 33) == std::array<int64_t, 3>{1, 1, 0});  // 33 = 1 row of 32 + 1
  p = tsfix::apply_all(p, "block_order(grouped, 8)");
  const Kernel& g = p.kernels[0];
  // Group 0 = rows 0..7; pid 9 → row 9 % 8 = 1, column 9 / 8 = 1; pid 256 starts group 1 (row 8).
  CHECK(block_coords(g, 9) == std::array<int64_t, 3>{1, 1, 0});
  CHECK(block_coords(g, 255) == std::array<int64_t, 3>{31, 7, 0});
  CHECK(block_coords(g, 256) == std::array<int64_t, 3>{0, 8, 0});
  // The grid becomes 1-D: 16 × 32 = 512 blocks.
  CHECK(launch_config(g).grid == std::array<int64_t, 3>{512, 1, 1});
  // Every tile is visited exactly once.
  std::vector<int> seen(512, 0);
  for (int64_t pid = 0; pid < 512; ++pid) {
    auto c = block_coords(g, pid);
    ++seen[size_t(c[1] * 32 + c[0])];
  }
  CHECK(std::count(seen.begin(), seen.end(), 1) == 512);
}

TEST_CASE("block order: the explanation counts the panels the first wave needs in L2") {
  const Program p = tiled_gpu(1024, 2048);
  const StepResult r = tsfix::try_step(p, "block_order(grouped, 8)");
  REQUIRE(r.ok);
  // First 132 blocks. Row-major: 132 / 32 → rows 0..4 (5 rows) × all 32 columns = 37 panels.
  // Grouped by 8: columns 0..16 (131 / 8 = 16) × rows 0..7 = 8 + 17 = 25 panels.
  CHECK(r.explanation.find("touch 8 rows × 17 columns of tiles = 25 operand panels") !=
        std::string::npos);
  CHECK(r.explanation.find("against 5 + 32 = 37 in row-major order") != std::string::npos);
  // A grouped order needs a 2-D grid.
  const Program one = tsfix::apply_all(lower_graph(tsfix::linear_relu(64, 64, 8)),
                                       "fuse(matmul0, add0, relu0); bind(i, block.x)");
  CHECK_FALSE(tsfix::try_step(one, "block_order(grouped, 4)").ok);
  CHECK_FALSE(tsfix::try_step(p, "block_order(grouped, 0)").ok);
  CHECK_FALSE(tsfix::try_step(p, "block_order(diagonal)").ok);
}
